"""F1.

f1@k = 2 · P@k · R@k / (P@k + R@k), with precision@k and recall@k as defined in their modules;
0 when no relevant document is in the top k. Without k it is trec_eval's ``set_F`` (beta 1)
over the whole ranking.
"""

from __future__ import annotations

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.measures import precision, recall
from rag_judge.retrieval.measures._common import safe_divide
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query F1 (see the module docstring)."""
    p = precision.compute(ranked, measure)
    r = recall.compute(ranked, measure)
    return safe_divide(2.0 * p * r, p + r)
