"""Reciprocal rank (trec_eval ``recip_rank``); its mean over queries is MRR.

mrr@k = 1 / rank of the first relevant document if that rank is <= k, else 0. Without k the
whole ranking counts.
"""

from __future__ import annotations

import numpy as np

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query reciprocal rank (see the module docstring)."""
    relevant = ranked.relevant
    first = np.argmax(relevant, axis=1)
    found = relevant[np.arange(len(first)), first]
    if measure.cutoff is not None:
        found &= first < measure.cutoff
    out = np.zeros(len(first), dtype=np.float64)
    out[found] = 1.0 / (first[found] + 1.0)
    return out
