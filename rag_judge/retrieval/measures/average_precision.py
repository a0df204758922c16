"""Average precision; its mean over queries is MAP.

AP@k = (Σ over relevant documents at rank r <= k of precision@r) / |relevant in the qrels|,
trec_eval ``map`` and ``map_cut_k``: relevant documents never retrieved add 0, and the divisor
is the number of relevant documents in the qrels, not min(k, that number).
"""

from __future__ import annotations

import numpy as np

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.measures._common import safe_divide
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query average precision (see the module docstring)."""
    width = ranked.depth if measure.cutoff is None else min(measure.cutoff, ranked.depth)
    relevant = ranked.relevant[:, :width]
    ranks = np.arange(1, width + 1, dtype=np.float64)
    precision_at_hits = np.where(relevant, ranked.relevant_cumsum[:, :width] / ranks, 0.0)
    # Sequential summation in rank order, as trec_eval adds them.
    summed = np.cumsum(precision_at_hits, axis=1)[:, -1]
    return safe_divide(summed, ranked.num_rel)
