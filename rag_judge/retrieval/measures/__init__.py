"""One module per measure family, each a pure function of :class:`RankedGrades`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.measures import (
    average_precision,
    counts,
    f1,
    hit_rate,
    joint_recall,
    mrr,
    ndcg,
    precision,
    recall,
    rprec,
)
from rag_judge.retrieval.ranking import FloatArray, RankedGrades

Compute = Callable[[RankedGrades, Measure], FloatArray]

COMPUTE: Final[dict[str, Compute]] = {
    "precision": precision.compute,
    "recall": recall.compute,
    "f1": f1.compute,
    "hit_rate": hit_rate.compute,
    "mrr": mrr.compute,
    "map": average_precision.compute,
    "ndcg": ndcg.compute,
    "ndcg_exp": ndcg.compute,
    "rprec": rprec.compute,
    "joint_recall": joint_recall.compute,
    "num_ret": counts.compute,
    "num_rel": counts.compute,
    "num_rel_ret": counts.compute,
}


def compute_measure(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query values of one measure, in ``ranked.query_ids`` order."""
    return COMPUTE[measure.family](ranked, measure)
