"""Correlation of judge scores with human labels: Pearson, Spearman and Kendall τ-b.

- Pearson r = Σ (x − x̄)(y − ȳ) / √(Σ (x − x̄)² · Σ (y − ȳ)²).
- Spearman ρ = Pearson r of the average ranks (tied values share the mean of their ranks).
- Kendall τ-b = (n_c − n_d) / √((n_0 − n_1)(n_0 − n_2)), with n_c, n_d the concordant and
  discordant pairs, n_0 = n(n − 1)/2, and n_1, n_2 the pairs tied in x and in y. Computed with
  ``scipy.stats.kendalltau`` (an O(n log n) count that numpy alone cannot do fast).

All three are undefined when either input is constant (including a single row).
"""

from __future__ import annotations

from typing import Unpack

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.calibration._inputs import FloatArray, as_pair
from rag_judge.calibration.estimate import (
    BootstrapKeywords,
    Estimate,
    StatisticValue,
    Undefined,
    paired_estimate,
)


def pearson(human: ArrayLike, judge: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]) -> Estimate:
    """Pearson's linear correlation r of judge scores with human labels.

    Raises:
        InputError: If the inputs are empty, not finite or differ in length.
    """
    h, j = as_pair(human, judge)
    return paired_estimate("pearson", _pearson, h, j, **bootstrap)


def spearman(
    human: ArrayLike, judge: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]
) -> Estimate:
    """Spearman's rank correlation ρ (Pearson r of average ranks, so ties are handled).

    Each bootstrap resample is ranked afresh.

    Raises:
        InputError: If the inputs are empty, not finite or differ in length.
    """
    h, j = as_pair(human, judge)

    def statistic(x: FloatArray, y: FloatArray) -> StatisticValue:
        return _pearson(average_ranks(x), average_ranks(y))

    return paired_estimate("spearman", statistic, h, j, **bootstrap)


def kendall_tau_b(
    human: ArrayLike, judge: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]
) -> Estimate:
    """Kendall's τ-b rank correlation (tie-corrected), via ``scipy.stats.kendalltau``.

    Raises:
        InputError: If the inputs are empty, not finite or differ in length.
    """
    from scipy.stats import kendalltau  # scipy is imported only when τ-b is asked for

    h, j = as_pair(human, judge)

    def statistic(x: FloatArray, y: FloatArray) -> StatisticValue:
        if undefined := _constant(x, y):
            return undefined
        return float(kendalltau(x, y, variant="b").statistic)

    return paired_estimate("kendall_tau_b", statistic, h, j, **bootstrap)


def average_ranks(x: FloatArray) -> FloatArray:
    """1-based ranks of ``x``; tied values get the mean of the ranks they span."""
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_x[1:] != sorted_x[:-1]]))
    ends = np.concatenate([starts[1:], [x.size]])  # exclusive
    group_rank = (starts + 1 + ends) / 2.0  # mean of ranks starts+1 .. ends
    ranks = np.empty(x.size, dtype=np.float64)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def _pearson(x: FloatArray, y: FloatArray) -> StatisticValue:
    if undefined := _constant(x, y):
        return undefined
    dx, dy = x - np.mean(x), y - np.mean(y)
    # Scale before multiplying so that huge values cannot overflow the sums of squares.
    dx, dy = dx / np.max(np.abs(dx)), dy / np.max(np.abs(dy))
    r = float(np.sum(dx * dy) / np.sqrt(np.sum(dx * dx) * np.sum(dy * dy)))
    return min(1.0, max(-1.0, r))


def _constant(x: FloatArray, y: FloatArray) -> Undefined | None:
    """An Undefined when either input is constant (no variance to correlate), else None."""
    for values, name in ((x, "human labels"), (y, "judge scores")):
        if np.all(values == values[0]):
            return Undefined(f"the {name} are constant; a correlation needs variation in both")
    return None
