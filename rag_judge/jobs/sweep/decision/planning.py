"""How many questions would settle an undecided sweep: by simulating the rule itself.

The observed table is resampled at larger sizes (rows drawn with replacement, every k from the
same rows, so the pairing is kept) and the rule is applied to each resample; the plan names the
smallest size in a grid at which it settles with probability at least
:data:`~rag_judge.jobs.sweep.decision.defaults.PLAN_PROBABILITY`. Two corrections keep the plan
honest:

- **the winner's curse**: the ks' observed differences from their average are shrunk towards it
  before resampling (James-Stein: by the share of their spread that the sampling error does not
  explain), since the leader of a few noisy means leads by more than it will;
- **the next look's level**: a re-run with more questions is a second look at the same test, so
  the rule is simulated at the level that look will have (``level_at``), not at the first's.

Each resample uses the rule's bounds with the critical value of the multivariate t at its size
(the bootstrap's is close to it at the sizes planned for, and a thousand bootstraps per plan
would take minutes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rag_judge.core.best import (
    PSEUDO,
    comparison_correlations,
    paired_binary_upper,
    t_critical,
)
from rag_judge.jobs.sweep.decision.defaults import PLAN_PROBABILITY

GRID = (1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
"""The sizes tried, as multiples of the questions at hand ..."""
SIZES = (100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 10_000, 20_000)
"""... and these (those above the questions at hand)."""
MAX_PLANNED = 20_000
"""No plan names more questions than this."""
SIMULATIONS = 300
"""Resamples per size."""


@dataclass(frozen=True)
class Plan:
    """The questions that would settle the decision, and how likely that is."""

    questions: int | None
    """The smallest size tried that settles with the target probability (None: none does)."""
    probability: float | None
    """The simulated chance of settling at :attr:`questions`."""
    largest_tried: int
    """The largest size simulated."""
    shrinkage: float
    """The factor the ks' observed differences from their average were multiplied by (0..1)."""


def plan_questions(
    table: ArrayLike,
    *,
    costs: Sequence[float],
    eligible: Sequence[bool],
    margin: float,
    level_at: Callable[[int], float],
    target: float = PLAN_PROBABILITY,
    simulations: int = SIMULATIONS,
    seed: int = 0,
    limit: int | None = None,
) -> Plan:
    """Simulate the rule at larger sizes (see the module docstring).

    Args:
        table: The decision's question x k table (NaN where a k has no value).
        costs: Per k, its cost (the rule recommends the cheapest within the margin).
        eligible: Per k, whether it may be recommended.
        margin: The rule's margin.
        level_at: The error level a look at ``n`` questions would have.
        target: The chance of settling the plan asks for.
        simulations: Resamples per size.
        seed: Their seed.
        limit: The most questions there are (the eval set's size): no plan beyond it.

    Forty questions where k = 1 trails and k = 2 and 3 are close: the rule settles at about 80
    questions more than four times in five, in simulation:

    >>> rng = np.random.default_rng(3)
    >>> ease = rng.uniform(size=(40, 1))
    >>> rows = (0.5 * rng.uniform(size=(40, 3)) + 0.5 * ease < [0.45, 0.55, 0.57]).astype(float)
    >>> plan = plan_questions(rows, costs=[1, 2, 3], eligible=[True] * 3, margin=0.05,
    ...                       level_at=lambda n: 0.05, simulations=100)
    >>> plan.questions, plan.probability
    (80, 0.93)
    """
    y, factor = shrunk_table(np.asarray(table, dtype=np.float64))
    n = y.shape[0]
    sizes = sorted({math.ceil(n * f) for f in GRID} | {s for s in SIZES if s > n})
    cap = min(MAX_PLANNED, limit) if limit is not None else MAX_PLANNED
    sizes = [s for s in sizes if s <= cap] or [cap]
    rng = np.random.default_rng(seed)
    correlations = comparison_correlations(np.nan_to_num(y), ~np.isnan(y))
    cost = np.asarray(costs, dtype=float)
    allowed = np.asarray(eligible, dtype=bool)
    for size in sizes:
        alpha = level_at(size)
        critical = t_critical(correlations, size - 1, 1 - alpha, seed)
        settled = _settles(y, size, simulations, rng, critical, margin, allowed, cost)
        if settled >= target:
            return Plan(size, settled, sizes[-1], factor)
    return Plan(None, None, sizes[-1], factor)


def shrunk_table(y: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """``y`` with each k's mean difference from the ks' average shrunk (James-Stein), and the
    factor the differences were multiplied by."""
    seen = ~np.isnan(y)
    row_mean = np.nanmean(y, axis=1, keepdims=True)
    centred = np.where(seen, y - row_mean, np.nan)  # each k against the question's average
    effects = np.nanmean(centred, axis=0)
    noise = np.nanvar(centred, axis=0, ddof=1) / np.maximum(seen.sum(axis=0), 1)
    spread = float(np.var(effects, ddof=1)) if effects.size > 1 else 0.0
    signal = max(spread - float(np.mean(noise)), 0.0)
    factor = signal / (signal + float(np.mean(noise))) if signal > 0 else 0.0
    return np.asarray(y - (1 - factor) * (effects - effects.mean()), dtype=np.float64), factor


def _settles(
    y: NDArray[np.float64],
    size: int,
    simulations: int,
    rng: np.random.Generator,
    critical: float,
    margin: float,
    allowed: NDArray[np.bool_],
    cost: NDArray[np.float64],
) -> float:
    """The share of ``simulations`` resamples of ``size`` rows on which the rule recommends."""
    n, m = y.shape
    seen = (~np.isnan(y)).astype(np.float64)
    filled = np.nan_to_num(y)
    weights = np.zeros((simulations, n))
    picks = rng.integers(0, n, size=(simulations, size))
    np.add.at(weights, (np.arange(simulations)[:, None], picks), 1.0)
    both = np.einsum("sr,rj,rk->sjk", weights, seen, seen)
    sums = np.einsum("sr,rj,rk->sjk", weights, filled, seen)  # sum y_j where j and k seen
    squares = np.einsum("sr,rj,rk->sjk", weights, filled**2, seen)
    cross = np.einsum("sr,rj,rk->sjk", weights, filled, filled)
    count = np.maximum(both, 1.0)
    difference = (sums - np.swapaxes(sums, 1, 2)) / count
    square_sum = squares + np.swapaxes(squares, 1, 2) - 2 * cross
    variance = np.clip((square_sum - count * difference**2) / np.maximum(count - 1, 1), 0, None)
    off = ~np.eye(m, dtype=bool)
    ahead = np.einsum("sr,rj,rk->sjk", weights, filled, seen - filled)
    upper = _upper(difference, variance, count, critical, _binary(y), ahead)
    best_bound = np.where(off, upper, np.inf).min(axis=2)  # [s, i]: min over j != i
    could_be_best = best_bound > 0
    rivals = off[None] & could_be_best[:, :, None]  # [s, j, k]: j could be best
    regret = np.clip(np.where(rivals, upper, -np.inf).max(axis=1), 0, None)
    within = (regret <= margin + 1e-12) & allowed[None, :]
    return float(within.any(axis=1).mean())


def _binary(y: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per k: every value it has is 0 or 1."""
    return np.asarray(np.all(np.isnan(y) | (y == 0) | (y == 1), axis=0), dtype=bool)


def _upper(
    difference: NDArray[np.float64],
    variance: NDArray[np.float64],
    count: NDArray[np.float64],
    critical: float,
    binary: NDArray[np.bool_],
    ahead: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The rule's upper bounds for each resample (``[s, j, k]``), as
    :func:`~rag_judge.core.best.compare_with_best` makes them: a pseudo-count of one question
    differing, and the score bound for two 0/1 ks (``ahead[s, j, k]``: questions where j is 1
    and k is 0)."""
    pseudo = (PSEUDO / count) ** 2
    upper = difference + critical * np.sqrt(variance / count + pseudo)
    pairs = (binary[:, None] & binary[None, :])[None]
    if not np.any(pairs):
        return np.asarray(upper, dtype=np.float64)
    score = paired_binary_upper(ahead, np.swapaxes(ahead, 1, 2), count, critical, pseudo)
    return np.asarray(np.where(pairs, np.maximum(upper, score), upper), dtype=np.float64)
