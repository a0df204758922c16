"""Precision.

precision@k = |relevant in top k| / k. The divisor is k even when fewer than k documents were
retrieved (trec_eval ``P_k``). Without k: |relevant retrieved| / |retrieved| (trec_eval
``set_P``), 0 for an empty ranking.
"""

from __future__ import annotations

import numpy as np

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.measures._common import safe_divide
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query precision (see the module docstring)."""
    hits = ranked.relevant_in_top(measure.cutoff)
    if measure.cutoff is None:
        return safe_divide(hits, ranked.num_ret)
    return hits.astype(np.float64) / float(measure.cutoff)
