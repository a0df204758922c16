"""The recommendation: the cheapest k whose objective is, with stated confidence, within a margin
of the best; or the ks that could still be recommended.

Pure: a question x k table of objective values (NaN where a k has none: its call failed), a cost
per k, and which ks may be recommended. The rule asks of every k only what it needs, "how far
below the best can this k be?", one-sided against the best (multiple comparisons with the best:
:func:`~rag_judge.core.best.compare_with_best`), with every bound holding at once with probability
``confidence``:

- k's **regret bound**: no k's mean exceeds k's by more;
- the **recommended k** is the cheapest eligible k whose regret bound is at most the margin; with
  probability at least ``confidence`` it is truly within the margin of the best;
- with no such k, the decision is **undecided between** the eligible ks that no k is shown to beat
  by more than the margin: those that could still be recommended (the ks a run until decided
  keeps);
- below :data:`~rag_judge.jobs.sweep.decision.defaults.MIN_QUESTIONS` questions nothing is
  recommended: too few rows for the bounds to keep their promise (measured, docs/concepts/
  statistics.md).

``comparison="all_pairs"`` is the former rule (every pair both ways, max-t over 45 pairs for ten
ks), kept to be measured beside it (``benchmarks/decision_quality.py``); it needs a complete table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rag_judge.core.best import BestComparison, compare_with_best
from rag_judge.core.errors import InputError
from rag_judge.core.simultaneous import pairwise_intervals
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    DEFAULT_RESAMPLES,
    MIN_QUESTIONS,
    check_margin,
)

Comparison = Literal["best", "all_pairs"]
"""How the ks are compared: each with the best (the rule), or every pair both ways (measured)."""
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class KStanding:
    """One k against the others, over the decision's questions."""

    k: int
    mean: float
    """Mean objective over the questions this k has a value for."""
    cost: float
    """What serving this k costs: mean generator prompt tokens (or k when unknown)."""
    n: int
    """Questions with a value at this k."""
    difference: float
    """Paired ``mean_k - mean_j`` for the best other k ``j`` (its highest rival): <= 0 unless this
    k leads."""
    difference_low: float
    """Lower bound of ``mu_k - max of the others`` (``-regret_bound``)."""
    difference_high: float
    """Upper bound of ``mu_k - max of the others`` (> 0 only when this k could be the best)."""
    regret_bound: float
    """With the stated confidence, no k's mean exceeds this k's by more (>= 0)."""
    shortfall_low: float
    """This k is shown to be at least this far below another k (>= 0)."""
    within_margin: bool
    """Eligible and ``regret_bound <= margin``: confirmed within the margin of the best."""
    could_be_best: bool
    """No other k is shown to be better."""
    candidate: bool
    """Eligible and not shown more than the margin below another k: could still be recommended."""
    eligible: bool
    """May be recommended."""
    why_not_eligible: str = ""
    """Why it may not ("" when it may)."""


@dataclass(frozen=True)
class Recommendation:
    """What the table says about k, with the numbers behind it."""

    standings: tuple[KStanding, ...]
    """One per k, ascending (none when no question could be compared)."""
    recommended_k: int | None
    """The cheapest eligible k within the margin of the best; None when undecided."""
    best_k_by_mean: int | None
    """The eligible k with the highest mean (ties: the cheaper)."""
    reference_k: int | None
    """The recommended k, else the best by mean: what the report reads fewer and more
    passages against."""
    undecided_between: tuple[int, ...]
    """When nothing is recommended: the ks that could still be recommended."""
    margin: float
    confidence: float
    """The level the bounds hold at (this look's, in a run of several looks)."""
    n_questions: int
    critical: float
    """The critical value (x standard error) every bound uses."""
    method: str
    too_few: bool = False
    """Fewer questions than the rule needs to keep its promise: nothing is recommended."""
    questions_needed: int | None = None
    """When undecided: the questions in all at which, by simulation, the rule would settle with
    :attr:`settle_probability` (None: not planned, or not within reach)."""
    settle_probability: float | None = None
    """The simulated chance of settling at :attr:`questions_needed`."""

    def standing(self, k: int) -> KStanding:
        """The standing of ``k``."""
        return next(s for s in self.standings if s.k == k)


@dataclass(frozen=True)
class _Bounds:
    means: NDArray[np.float64]
    counts: NDArray[np.int64]
    difference: NDArray[np.float64]
    regret: NDArray[np.float64]
    best_bound: NDArray[np.float64]
    could_be_best: NDArray[np.bool_]
    shortfall: NDArray[np.float64]
    critical: float
    method: str


def recommend(
    table: ArrayLike,
    ks: Sequence[int],
    *,
    costs: Sequence[float] | None = None,
    eligible: Sequence[bool] | None = None,
    why_not: Sequence[str] | None = None,
    margin: float = DEFAULT_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    comparison: Comparison = "best",
    min_questions: int = MIN_QUESTIONS,
    bounds: BestComparison | None = None,
) -> Recommendation:
    """Recommend a k from an ``(n_questions, len(ks))`` table (see the module docstring).

    Args:
        table: Objective values in [0, 1], one row per question, one column per k; NaN where a k
            has no value for the question.
        ks: The ks of the columns, ascending.
        costs: Per k, what serving it costs (default: k itself).
        eligible: Per k, whether it may be recommended (default: all).
        why_not: Per k, why it may not ("" where it may).
        margin: How much worse than the best a recommended k may be, on the objective's scale.
        confidence: Joint confidence of every bound.
        n_resamples: Bootstrap resamples of the questions.
        seed: Their seed.
        comparison: ``best`` (the rule) or ``all_pairs`` (the former rule, to measure).
        min_questions: Below this many questions nothing is recommended.
        bounds: The table's comparisons with the best at ``confidence``, when already made.

    Raises:
        InputError: a table that does not match ``ks``, a margin outside [0, 1), bad lengths.

    A hundred questions: k = 1 misses three in four, k = 2 and 3 answer all (the same answers):

    >>> rows = [[0, 1, 1], [0, 1, 1], [0, 1, 1], [1, 1, 1]] * 25
    >>> found = recommend(rows, [1, 2, 3], margin=0.05, n_resamples=500)
    >>> found.recommended_k, found.best_k_by_mean, found.undecided_between
    (2, 2, ())

    Two ks that never differ are not shown equal from nothing: on 40 questions with no
    disagreement they could still differ on about one question in ten (the score bound), so
    neither is confirmed within 0.05:

    >>> recommend(rows[:40], [1, 2, 3], margin=0.05, n_resamples=500).undecided_between
    (2, 3)
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
    reasons = list(why_not) if why_not is not None else [""] * len(chosen)
    if (
        cost.shape != (len(chosen),)
        or allowed.shape != (len(chosen),)
        or len(reasons) != len(chosen)
    ):
        raise InputError("costs, eligible and why_not need one value per k", field="ks")
    if y.shape[0] == 0:
        return _empty(margin, confidence)
    found = _bounds(y, confidence, n_resamples, seed, comparison, bounds)
    too_few = y.shape[0] < min_questions
    within = (found.regret <= margin + _TOLERANCE) & allowed & (not too_few)
    candidate = allowed & (found.shortfall <= margin + _TOLERANCE)
    by_cost = sorted(range(len(chosen)), key=lambda i: (cost[i], chosen[i]))
    recommended = next((i for i in by_cost if within[i]), None)
    best = _best_by_mean(found.means, cost, allowed, chosen)
    reference = recommended if recommended is not None else best
    undecided = () if recommended is not None else tuple(np.asarray(chosen)[candidate].tolist())
    standings = tuple(
        KStanding(
            k=chosen[i],
            mean=float(found.means[i]),
            cost=float(cost[i]),
            n=int(found.counts[i]),
            difference=float(found.difference[i]),
            difference_low=-float(found.regret[i]),
            difference_high=float(found.best_bound[i]),
            regret_bound=float(found.regret[i]),
            shortfall_low=float(found.shortfall[i]),
            within_margin=bool(found.regret[i] <= margin + _TOLERANCE and allowed[i]),
            could_be_best=bool(found.could_be_best[i]),
            candidate=bool(candidate[i]),
            eligible=bool(allowed[i]),
            why_not_eligible="" if allowed[i] else reasons[i] or "no value at any question",
        )
        for i in range(len(chosen))
    )
    return Recommendation(
        standings=standings,
        recommended_k=None if recommended is None else chosen[recommended],
        best_k_by_mean=None if best is None else chosen[best],
        reference_k=None if reference is None else chosen[reference],
        undecided_between=tuple(int(k) for k in undecided),
        margin=float(margin),
        confidence=float(confidence),
        n_questions=int(y.shape[0]),
        critical=found.critical,
        method=found.method,
        too_few=too_few,
    )


def _bounds(
    y: NDArray[np.float64],
    confidence: float,
    n_resamples: int,
    seed: int,
    comparison: Comparison,
    made: BestComparison | None,
) -> _Bounds:
    """Each k's bounds by the chosen comparison."""
    seen = ~np.isnan(y)
    counts = seen.sum(axis=0)
    if comparison == "best":
        found = made or compare_with_best(
            y, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
        return _Bounds(
            means=found.means,
            counts=counts,
            difference=_highest_rival(found.difference),
            regret=found.regret_bound,
            best_bound=found.best_bound,
            could_be_best=found.could_be_best,
            shortfall=found.shortfall_low,
            critical=found.critical,
            method=found.method,
        )
    if not seen.all():
        raise InputError("all pairs need a value of every k for every question", field="table")
    pairs = pairwise_intervals(y, confidence=confidence, n_resamples=n_resamples, seed=seed)
    off = ~np.eye(y.shape[1], dtype=bool)
    regret = np.clip(np.where(off, pairs.high, -np.inf).max(axis=0), 0, None)
    best_bound = np.clip(np.where(off, pairs.high, np.inf).min(axis=1), 0, None)
    shortfall = np.clip(np.where(off, pairs.low, -np.inf).max(axis=0), 0, None)
    if y.shape[1] == 1:
        regret, best_bound, shortfall = np.zeros(1), np.zeros(1), np.zeros(1)
    return _Bounds(
        means=pairs.means,
        counts=counts,
        difference=_highest_rival(pairs.difference),
        regret=regret,
        best_bound=best_bound,
        could_be_best=~np.any(pairs.low > _TOLERANCE, axis=0),
        shortfall=shortfall,
        critical=pairs.critical,
        method=pairs.method,
    )


def _highest_rival(difference: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per k, ``min over j != k of D[k, j]``: k minus its highest rival (0 with one k)."""
    m = difference.shape[0]
    if m == 1:
        return np.zeros(1)
    return np.asarray(
        np.where(~np.eye(m, dtype=bool), difference, np.inf).min(axis=1), dtype=np.float64
    )


def _best_by_mean(
    means: np.ndarray, cost: np.ndarray, allowed: np.ndarray, ks: list[int]
) -> int | None:
    candidates = [i for i in range(len(ks)) if allowed[i]]
    if not candidates:
        return None
    return min(candidates, key=lambda i: (-round(float(means[i]), 12), cost[i], ks[i]))


def _empty(margin: float, confidence: float) -> Recommendation:
    """No question could be compared: nothing to recommend."""
    return Recommendation(
        standings=(),
        recommended_k=None,
        best_k_by_mean=None,
        reference_k=None,
        undecided_between=(),
        margin=float(margin),
        confidence=float(confidence),
        n_questions=0,
        critical=0.0,
        method="no question has a value",
    )
