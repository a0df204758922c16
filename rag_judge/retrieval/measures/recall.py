"""Recall.

recall@k = |relevant in top k| / |relevant in the qrels|; without k the whole ranking counts
(trec_eval ``recall_k`` and ``set_recall``). 0 when the qrels hold no relevant document.
"""

from __future__ import annotations

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.measures._common import safe_divide
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query recall (see the module docstring)."""
    return safe_divide(ranked.relevant_in_top(measure.cutoff), ranked.num_rel)
