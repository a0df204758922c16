"""Normalised discounted cumulative gain with graded relevance.

DCG@k = Σ_{r=1..k} gain(grade at r) / log2(r + 1); nDCG@k = DCG@k / IDCG@k, where IDCG@k is
the DCG of the judged documents sorted by gain, best first. Gains:

* ``ndcg``: gain = grade (trec_eval, linear), or a custom grade -> gain map
  (``ndcg[1=3,2=9]``; unlisted grades keep gain = grade, as trec_eval's ``ndcg.1=3,2=9``);
* ``ndcg_exp``: gain = 2^grade - 1 (Burges et al.).

Unjudged documents and negative grades have gain 0 and never enter the ideal ranking; only
positive gains do. Without k the whole ranking and every judged document count (trec_eval
``ndcg``); with k, trec_eval ``ndcg_cut_k``. 0 when the ideal DCG is 0.
"""

from __future__ import annotations

import numpy as np

from rag_judge.core.errors import InputError
from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.measures._common import rank_discounts, safe_divide
from rag_judge.retrieval.ranking import FloatArray, RankedGrades

MAX_EXP_GRADE = 1000
"""The largest grade ``ndcg_exp`` takes: 2^1023 is a float's largest power of two, and a sum of
such gains must stay finite (else nDCG would be inf / inf = NaN)."""


def level_gains(levels: np.ndarray, measure: Measure) -> FloatArray:
    """Gain of each grade level for this measure (see the module docstring)."""
    values = levels.astype(np.float64)
    if measure.family == "ndcg_exp":
        if values.size and values.max() > MAX_EXP_GRADE:
            raise InputError(
                f"grade {int(values.max())} is too large for {measure.name}: its gain "
                f"2^grade - 1 is beyond a float at grades over {MAX_EXP_GRADE}; use ndcg "
                "(gain = grade) or a gain map such as ndcg[1=1,2=3]",
                field="relevance",
            )
        return np.power(2.0, values) - 1.0
    if measure.gains:
        custom = dict(measure.gains)
        return np.array([custom.get(int(level), float(level)) for level in levels])
    return values


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query nDCG (see the module docstring)."""
    gains = level_gains(ranked.levels, measure)
    dcg = _dcg(ranked, gains, measure.cutoff)
    idcg = _ideal_dcg(ranked, gains, measure.cutoff)
    return safe_divide(dcg, idcg)


def _dcg(ranked: RankedGrades, gains: FloatArray, cutoff: int | None) -> FloatArray:
    width = ranked.depth if cutoff is None else min(cutoff, ranked.depth)
    grades = ranked.grades[:, :width]
    gained = np.zeros(grades.shape, dtype=np.float64)
    for level, gain in zip(ranked.levels, gains, strict=True):
        if gain != 0.0:
            gained[grades == level] = gain
    # Sequential sum in rank order, as trec_eval accumulates it.
    return np.cumsum(gained / rank_discounts(width), axis=1)[:, -1]


def _ideal_dcg(ranked: RankedGrades, gains: FloatArray, cutoff: int | None) -> FloatArray:
    order = [j for j in np.argsort(-gains, kind="stable") if gains[j] > 0.0]
    n_queries = len(ranked.query_ids)
    if not order:
        return np.zeros(n_queries, dtype=np.float64)
    positives = ranked.level_counts[:, order].sum(axis=1)
    width = max(int(positives.max(initial=0)), 1)
    if cutoff is not None:
        width = min(width, cutoff)
    position = np.arange(width)
    ideal = np.zeros((n_queries, width), dtype=np.float64)
    start = np.zeros(n_queries, dtype=np.int64)
    for j in order:
        end = start + ranked.level_counts[:, j]
        ideal[(position >= start[:, None]) & (position < end[:, None])] = gains[j]
        start = end
    return np.cumsum(ideal / rank_discounts(width), axis=1)[:, -1]
