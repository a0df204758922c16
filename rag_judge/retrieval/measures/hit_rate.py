"""Hit rate (trec_eval ``success``).

hit_rate@k = 1 if at least one relevant document is in the top k, else 0.
"""

from __future__ import annotations

import numpy as np

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query hit rate (see the module docstring)."""
    return (ranked.relevant_in_top(measure.cutoff) > 0).astype(np.float64)
