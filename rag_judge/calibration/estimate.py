"""A calibration statistic with its bootstrap interval, or None and the reason it is undefined.

Every agreement, correlation and probability statistic goes through :func:`bootstrap_estimate`
(by way of :func:`paired_estimate` when it reads two paired columns): the point estimate on all
rows, then a percentile interval over ``n_resamples`` resamples of the rows drawn with
replacement (``numpy.random.default_rng(seed)``, the same stream as
:func:`rag_judge.core.stats.bootstrap_mean_ci`, so a mean-like statistic gets the same interval).

Some statistics are undefined on some data (AUC with one class, a correlation with a constant
input, κ when both raters use a single category). Then the estimate is None with a reason,
never NaN. A resample on which the statistic is undefined is left out of the interval and
counted in ``undefined_resamples``, so a reader can see how much the interval rests on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypedDict, TypeVar, Unpack

import numpy as np

from rag_judge.calibration._inputs import FloatArray, IntArray
from rag_judge.core.stats import check_confidence, check_n_resamples

_CHUNK_ELEMENTS = 1 << 20
"""Resample indices are drawn in blocks of about this many elements (as in rag_judge.core.stats)."""


@dataclass(frozen=True)
class Undefined:
    """What a statistic returns when the data do not define it."""

    reason: str
    """Why, e.g. "all human labels are one class (1); AUC needs both"."""


StatisticValue = float | Undefined
"""A statistic's value on some rows: a finite float, or :class:`Undefined`."""

Statistic = Callable[[IntArray], StatisticValue]
"""A statistic evaluated on the rows at the given (possibly repeated) indices."""


class BootstrapOptions(TypedDict):
    """The bootstrap keyword arguments every statistic takes, to pass them on together."""

    confidence: float
    n_resamples: int
    seed: int


class BootstrapKeywords(TypedDict, total=False):
    """The same keywords as a statistic's parameters, each optional: one left out takes
    :func:`bootstrap_estimate`'s default (confidence 0.95, 2000 resamples, seed 0)."""

    confidence: float
    n_resamples: int
    seed: int


Column = TypeVar("Column", FloatArray, IntArray)
"""One value per row: labels, scores, or category positions."""


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a two-sided bootstrap confidence interval, or None and why."""

    name: str
    """Which statistic, e.g. ``cohen_kappa(weights=quadratic)``."""
    estimate: float | None
    """The statistic on all rows; None when it is undefined there (see ``reason``)."""
    low: float | None
    """Lower end of the interval (never above ``estimate``); None when there is none."""
    high: float | None
    """Upper end of the interval (never below ``estimate``); None when there is none."""
    confidence: float
    """Nominal coverage of the interval, e.g. 0.95."""
    n: int
    """Number of rows (or pairs) the statistic is computed on."""
    method: str
    """How the interval was computed (resamples, seed)."""
    reason: str | None = None
    """Why ``estimate`` or the interval is None; None when both are there."""
    undefined_resamples: int = 0
    """Bootstrap resamples on which the statistic was undefined and that were left out."""

    @property
    def defined(self) -> bool:
        """Whether there is a point estimate."""
        return self.estimate is not None

    def __str__(self) -> str:
        """``estimate [low, high]`` with four decimals, or ``undefined (reason)``."""
        if self.estimate is None:
            return f"undefined ({self.reason})"
        if self.low is None or self.high is None:
            return f"{self.estimate:.4f} [no interval: {self.reason}]"
        return f"{self.estimate:.4f} [{self.low:.4f}, {self.high:.4f}]"


def bootstrap_estimate(
    name: str,
    statistic: Statistic,
    n: int,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Evaluate ``statistic`` on all ``n`` rows and give it a percentile-bootstrap interval.

    The interval is the ``(1 - confidence) / 2`` and ``1 - (1 - confidence) / 2`` quantiles
    (numpy's default linear interpolation) of the statistic over the resamples on which it is
    defined, widened if needed so that ``low <= estimate <= high``.

    Args:
        name: Name of the statistic, carried into the result.
        statistic: Maps an index array over the rows to the statistic's value on those rows.
        n: Number of rows, at least 1.
        confidence: Nominal coverage, strictly between 0 and 1.
        n_resamples: Number of bootstrap resamples, at least 1.
        seed: Seed for ``numpy.random.default_rng``; equal seeds give equal intervals.

    Returns:
        The estimate with its interval, or an undefined estimate with the reason.

    Raises:
        InputError: If ``confidence`` or ``n_resamples`` is out of range.
    """
    check_confidence(confidence)
    check_n_resamples(n_resamples)
    method = f"percentile bootstrap over rows ({n_resamples} resamples, seed {seed})"
    full = statistic(np.arange(n, dtype=np.intp))
    if isinstance(full, Undefined):
        return Estimate(name, None, None, None, float(confidence), n, method, reason=full.reason)
    values: list[float] = []
    first_reason: str | None = None
    for indices in _resamples(n, n_resamples, seed):
        value = statistic(indices)
        if isinstance(value, Undefined):
            first_reason = first_reason or value.reason
        else:
            values.append(value)
    undefined = n_resamples - len(values)
    if not values:
        reason = f"undefined in every bootstrap resample ({first_reason})"
        return Estimate(name, full, None, None, float(confidence), n, method, reason, undefined)
    if undefined:
        method += f"; {undefined} resamples where it is undefined left out"
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(np.asarray(values), [tail, 1.0 - tail])
    return Estimate(
        name=name,
        estimate=full,
        low=min(float(low), full),
        high=max(float(high), full),
        confidence=float(confidence),
        n=n,
        method=method,
        undefined_resamples=undefined,
    )


def paired_estimate(
    name: str,
    value: Callable[[Column, Column], StatisticValue],
    x: Column,
    y: Column,
    **bootstrap: Unpack[BootstrapKeywords],
) -> Estimate:
    """``value(x, y)`` with its bootstrap interval (:func:`bootstrap_estimate`): each resample
    takes the same rows of ``x`` and ``y``, so a human label stays with its judge output."""
    return bootstrap_estimate(name, lambda idx: value(x[idx], y[idx]), x.size, **bootstrap)


def _resamples(n: int, n_resamples: int, seed: int) -> Iterator[IntArray]:
    """Yield ``n_resamples`` index arrays, rows of ``default_rng(seed).integers(0, n, ...)``."""
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, n_resamples, rows):
        block = rng.integers(0, n, size=(min(rows, n_resamples - start), n))
        yield from block.astype(np.intp, copy=False)
