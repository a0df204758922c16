"""The recommendation: the cheapest k whose objective is, with stated confidence, within a margin
of the best; or the ks the data cannot yet tell apart, and about how many questions would.

Pure: a complete question x k table of objective values (every k over the same questions), a
cost per k, and which ks may be recommended. Every paired difference between two ks gets a
simultaneous interval (:func:`~rag_judge.core.simultaneous.pairwise_intervals`: all pairs at
once, family-wise ``confidence``), so the rule can read any pair without a second look costing
coverage:

- k's **regret bound** is the largest upper bound of ``mean_j - mean_k`` over every other j: with
  the stated confidence, no k beats it by more (so the best does not either);
- the **recommended k** is the cheapest eligible k whose regret bound is at most the margin.
  With probability at least ``confidence`` (asymptotically) it is truly within the margin of the
  best, whichever k that is;
- with no such k, the decision is **undecided between** the eligible ks that no other k beats
  with confidence (those that could still be the best), and the **questions needed** is the size
  at which, if the means and spreads stayed as measured, the first of them would be confirmed
  with 80% power (the usual sample-size formula, with the sweep's own critical value).

A k that refused every answerable question is never eligible: it answers nothing, however close
its mean (0) is to a poor best.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.core.errors import InputError
from rag_judge.core.simultaneous import PairwiseIntervals, pairwise_intervals
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    DEFAULT_RESAMPLES,
    check_margin,
)

POWER_Z = 0.8416
"""The standard normal quantile for 80% power, in the questions-needed estimate."""


@dataclass(frozen=True)
class KStanding:
    """One k against the others, over the decision's questions."""

    k: int
    mean: float
    """Mean objective over the decision's questions (every question counted)."""
    cost: float
    """What serving this k costs: mean generator prompt tokens (or k when unknown)."""
    difference: float
    """``mean - mean`` of the reference k (the recommended one, else the best by mean)."""
    difference_low: float
    """Simultaneous lower bound of that paired difference."""
    difference_high: float
    """Simultaneous upper bound of that paired difference."""
    regret_bound: float
    """With the stated confidence, no k's mean exceeds this k's by more than this (>= 0)."""
    within_margin: bool
    """``regret_bound <= margin``: confirmed within the margin of the best."""
    could_be_best: bool
    """No other k is better with confidence."""
    eligible: bool
    """May be recommended (False: it refused every answerable question)."""


@dataclass(frozen=True)
class Recommendation:
    """What the table says about k, with the numbers behind it."""

    standings: tuple[KStanding, ...]
    """One per k, ascending (none when no question could be compared at every k)."""
    recommended_k: int | None
    """The cheapest eligible k within the margin of the best; None when undecided."""
    best_k_by_mean: int | None
    """The eligible k with the highest mean (ties: the cheaper)."""
    reference_k: int | None
    """The k the differences are taken against: recommended, else the best by mean."""
    undecided_between: tuple[int, ...]
    """When nothing is recommended: the eligible ks that could still be the best."""
    questions_needed: int | None
    """When undecided: about how many questions in all would settle it (None: cannot say)."""
    margin: float
    confidence: float
    n_questions: int
    critical: float
    """The simultaneous critical value (x standard error) every bound uses."""
    method: str

    def standing(self, k: int) -> KStanding:
        """The standing of ``k``."""
        return next(s for s in self.standings if s.k == k)


def recommend(
    table: ArrayLike,
    ks: Sequence[int],
    *,
    costs: Sequence[float] | None = None,
    eligible: Sequence[bool] | None = None,
    margin: float = DEFAULT_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Recommendation:
    """Recommend a k from an ``(n_questions, len(ks))`` table (see the module docstring).

    Args:
        table: Objective values in [0, 1], one row per question, one column per k; complete.
        ks: The ks of the columns, ascending.
        costs: Per k, what serving it costs (default: k itself).
        eligible: Per k, whether it may be recommended (default: all).
        margin: How much worse than the best a recommended k may be, on the objective's scale.
        confidence: Family-wise confidence of every bound.
        n_resamples: Bootstrap resamples of the questions.
        seed: Their seed.

    Raises:
        InputError: a table that does not match ``ks``, a negative margin, bad lengths.

    >>> rows = [[0, 1, 1], [0, 1, 1], [0, 1, 1], [1, 1, 1]] * 10
    >>> found = recommend(rows, [1, 2, 3], margin=0.05, n_resamples=500)
    >>> found.recommended_k, found.best_k_by_mean
    (2, 2)
    """
    chosen = [int(k) for k in ks]
    y = np.asarray(table, dtype=np.float64)
    if y.size == 0 and chosen:
        y = y.reshape(0, len(chosen))
    if y.ndim != 2 or not chosen or y.shape[1] != len(chosen) or chosen != sorted(set(chosen)):
        raise InputError("the table needs one column per k, ks ascending", field="ks")
    margin = check_margin(margin)
    cost = np.asarray(costs if costs is not None else chosen, dtype=np.float64)
    allowed = np.asarray(eligible if eligible is not None else [True] * len(chosen), dtype=bool)
    if cost.shape != (len(chosen),) or allowed.shape != (len(chosen),):
        raise InputError("costs and eligible need one value per k", field="ks")
    if y.shape[0] == 0:
        return _empty(margin, confidence)
    found = pairwise_intervals(y, confidence=confidence, n_resamples=n_resamples, seed=seed)
    regret = np.clip(
        np.where(np.eye(len(chosen), dtype=bool), 0.0, found.high).max(axis=0), 0, None
    )
    within = (regret <= margin + 1e-12) & allowed
    could_be_best = ~np.any(found.low > 1e-12, axis=0)
    by_cost = sorted(range(len(chosen)), key=lambda i: (cost[i], chosen[i]))
    recommended = next((i for i in by_cost if within[i]), None)
    best = _best_by_mean(found.means, cost, allowed, chosen)
    reference = recommended if recommended is not None else best
    undecided = (
        ()
        if recommended is not None
        else tuple(chosen[i] for i in range(len(chosen)) if could_be_best[i] and allowed[i])
    )
    needed = None
    if recommended is None and undecided:
        needed = _questions_needed(found, allowed & could_be_best, margin, y.shape[0])
    standings = tuple(
        KStanding(
            k=chosen[i],
            mean=float(found.means[i]),
            cost=float(cost[i]),
            difference=0.0 if reference is None else float(found.difference[i, reference]),
            difference_low=0.0 if reference is None else float(found.low[i, reference]),
            difference_high=0.0 if reference is None else float(found.high[i, reference]),
            regret_bound=float(regret[i]),
            within_margin=bool(within[i]),
            could_be_best=bool(could_be_best[i]),
            eligible=bool(allowed[i]),
        )
        for i in range(len(chosen))
    )
    return Recommendation(
        standings=standings,
        recommended_k=None if recommended is None else chosen[recommended],
        best_k_by_mean=None if best is None else chosen[best],
        reference_k=None if reference is None else chosen[reference],
        undecided_between=undecided,
        questions_needed=needed,
        margin=float(margin),
        confidence=float(confidence),
        n_questions=int(y.shape[0]),
        critical=found.critical,
        method=found.method,
    )


def _best_by_mean(
    means: np.ndarray, cost: np.ndarray, allowed: np.ndarray, ks: list[int]
) -> int | None:
    candidates = [i for i in range(len(ks)) if allowed[i]]
    if not candidates:
        return None
    return min(candidates, key=lambda i: (-round(float(means[i]), 12), cost[i], ks[i]))


def _questions_needed(
    found: PairwiseIntervals, candidates: np.ndarray, margin: float, n: int
) -> int | None:
    """The smallest total of questions at which some candidate k would be confirmed within the
    margin with 80% power, if every mean and spread stayed as measured (None: no k could be)."""
    if margin <= 0:
        return None
    spread = found.sd  # per-question sd of each paired difference, as measured
    z = found.critical + POWER_Z
    best: float | None = None
    for k in np.flatnonzero(candidates):
        others = [j for j in range(found.n_columns) if j != k]
        gaps = margin - found.difference[others, k]
        if np.any(gaps <= 0):
            continue
        # n needs z * max(sd / sqrt(n), 1 / n) <= gap for every other j (the se floor)
        needed = max(float(np.max((z * spread[others, k] / gaps) ** 2)), float(np.max(z / gaps)))
        best = needed if best is None else min(best, needed)
    return None if best is None else max(n + 1, math.ceil(best))


def _empty(margin: float, confidence: float) -> Recommendation:
    """No question could be compared at every k: nothing to recommend."""
    return Recommendation(
        standings=(),
        recommended_k=None,
        best_k_by_mean=None,
        reference_k=None,
        undecided_between=(),
        questions_needed=None,
        margin=float(margin),
        confidence=float(confidence),
        n_questions=0,
        critical=0.0,
        method="no question has a value at every k",
    )
