"""Counts: ``num_ret`` (retrieved), ``num_rel`` (relevant in the qrels), ``num_rel_ret``."""

from __future__ import annotations

import numpy as np

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query count named by the measure family."""
    if measure.family == "num_ret":
        return ranked.num_ret.astype(np.float64)
    if measure.family == "num_rel":
        return ranked.num_rel.astype(np.float64)
    return ranked.relevant_in_top(None).astype(np.float64)
