"""R-precision (trec_eval ``Rprec``).

rprec = |relevant in top R| / R, R = |relevant in the qrels|. When fewer than R documents were
retrieved the missing ranks count as non-relevant; 0 when R = 0.
"""

from __future__ import annotations

import numpy as np

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.measures._common import safe_divide
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query R-precision (see the module docstring)."""
    del measure
    look = np.minimum(np.minimum(ranked.num_ret, ranked.num_rel), ranked.depth)
    rows = np.arange(len(look))
    hits = np.where(look > 0, ranked.relevant_cumsum[rows, np.maximum(look - 1, 0)], 0)
    return safe_divide(hits, ranked.num_rel)
