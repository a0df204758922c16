"""Simultaneous confidence intervals for every paired difference between the columns of a table.

A k-sweep looks at ten ks at once: ten means, 45 pairwise differences. Testing each pair at 5%
finds a "significant" difference by chance far more often than 5%, and the largest of ten noisy
means is biased upwards. :func:`pairwise_intervals` gives every difference ``mean_j - mean_k``
an interval such that, with probability ``confidence``, all of them cover their true value at
once (family-wise), whichever pair is read afterwards (the best by mean, a recommended k).

Method: the single-step max-t bootstrap (Westfall and Young 1993; Romano and Wolf 2005). The
rows (questions) are resampled with replacement, every column from the same rows, so the
correlation between columns is kept; the critical value ``c`` is the ``confidence`` quantile of
``max over pairs |(resampled difference - observed difference) / se|``, and each interval is
``difference +- c * se``, with ``c`` never below one pair's own normal quantile (1.96 at 95%: a
family is never surer than one of its members; the bootstrap can say less on a few rows whose
differences barely vary). With independent, equal-variance columns it reproduces Tukey's honest
significant difference (the studentized range divided by sqrt 2); with the strongly correlated
columns of a sweep it is narrower than Tukey's, as it should be. A pair whose difference never
varies in the sample (two ks that gave the same answer to every question) is not given a zero
width: its standard error is floored at that of one row differing by the table's ``scale`` (a
pseudo-count of one), so no finite sample claims two columns are exactly equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rag_judge.core.errors import InputError
from rag_judge.core.stats import check_confidence, check_n_resamples

__all__ = ["PairwiseIntervals", "pairwise_intervals"]

FloatMatrix = NDArray[np.float64]

_GATHER_ELEMENTS = 1 << 22
"""Resampled rows are gathered in blocks of about this many values (32 MB of float64)."""


@dataclass(frozen=True, eq=False)
class PairwiseIntervals:
    """Every paired difference between columns, with simultaneous intervals.

    Index ``[j, k]`` of the matrices is column ``j`` minus column ``k``; the diagonal is 0.
    """

    means: FloatMatrix = field(repr=False)
    """Column means, shape ``(m,)``."""
    difference: FloatMatrix = field(repr=False)
    """``means[j] - means[k]``, shape ``(m, m)``."""
    sd: FloatMatrix = field(repr=False)
    """Standard deviation of each pair's row differences (as measured, not floored)."""
    se: FloatMatrix = field(repr=False)
    """Standard error of each paired difference (sd / sqrt n, floored at ``scale / n``)."""
    low: FloatMatrix = field(repr=False)
    """Lower bounds: ``difference - critical * se``."""
    high: FloatMatrix = field(repr=False)
    """Upper bounds: ``difference + critical * se``."""
    critical: float
    """The max-t critical value shared by every pair (0 with one column)."""
    confidence: float
    """Family-wise coverage: all intervals hold at once with this probability."""
    n: int
    """Rows (questions) the intervals rest on."""
    method: str
    """How the intervals were computed (resamples, seed, floor)."""

    @property
    def n_columns(self) -> int:
        """The number of columns compared."""
        return int(self.means.size)


def pairwise_intervals(
    table: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    scale: float = 1.0,
) -> PairwiseIntervals:
    """Simultaneous ``confidence`` intervals for all ``mean_j - mean_k`` of a complete table.

    Args:
        table: Shape ``(n, m)``: one row per question, one column per system (k); finite.
        confidence: Family-wise coverage, strictly between 0 and 1.
        n_resamples: Bootstrap resamples of the rows.
        seed: Seed of ``numpy.random.default_rng``: equal seeds give equal intervals.
        scale: The range a value can span (1 for measures in [0, 1]); the standard-error floor
            is ``scale / n``, the error of one row in n differing by the whole range.

    Raises:
        InputError: an empty or non-finite table, not two-dimensional, or a bad parameter.

    >>> rows = [[0.0, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 1.0]]
    >>> found = pairwise_intervals(rows, n_resamples=500)
    >>> round(float(found.difference[1, 0]), 3), bool(found.low[1, 0] <= 0.5 <= found.high[1, 0])
    (0.5, True)
    """
    y = _as_table(table)
    check_confidence(confidence)
    check_n_resamples(n_resamples)
    if not (math.isfinite(scale) and scale >= 0):
        raise InputError(f"must be a finite number >= 0, got {scale!r}", field="scale")
    n, m = y.shape
    means = y.mean(axis=0)
    difference = means[:, None] - means[None, :]
    sd = _spreads(y)
    se = np.maximum(sd / math.sqrt(n), scale / n)
    np.fill_diagonal(se, 0.0)
    upper = np.triu_indices(m, k=1)
    method = (
        f"max-t bootstrap over all {len(upper[0])} pairs ({n_resamples} resamples of the "
        f"{n} rows, seed {seed}; standard errors floored at {scale:g}/n)"
    )
    critical = 0.0
    if len(upper[0]) and np.any(se[upper] > 0):
        largest = _largest_t(_bootstrap_column_means(y, n_resamples, seed), difference, se)
        single = NormalDist().inv_cdf((1 + confidence) / 2)  # one pair's own critical value
        critical = max(float(np.quantile(largest, confidence, method="higher")), single)
    return PairwiseIntervals(
        means=means,
        difference=difference,
        sd=sd,
        se=se,
        low=difference - critical * se,
        high=difference + critical * se,
        critical=critical,
        confidence=float(confidence),
        n=n,
        method=method,
    )


def _as_table(table: ArrayLike) -> FloatMatrix:
    try:
        y = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("must be a table of numbers", field="table") from None
    if y.ndim != 2 or y.shape[0] == 0 or y.shape[1] == 0:
        raise InputError(
            f"must be a non-empty 2-D table (rows x columns), got shape {y.shape}", field="table"
        )
    if not np.all(np.isfinite(y)):
        raise InputError("must be finite (no NaN or infinity)", field="table")
    return y


def _spreads(y: FloatMatrix) -> FloatMatrix:
    """The standard deviation (n - 1) of each pair of columns' row differences."""
    n = y.shape[0]
    centred = y - y.mean(axis=0)
    covariance = centred.T @ centred / max(n - 1, 1)
    variance = np.diag(covariance)
    pair_variance = variance[:, None] + variance[None, :] - 2 * covariance
    return np.asarray(np.sqrt(np.clip(pair_variance, 0.0, None)), dtype=np.float64)


def _largest_t(resampled: FloatMatrix, difference: FloatMatrix, se: FloatMatrix) -> FloatMatrix:
    """Per resample, the largest ``|resampled difference - observed| / se`` over the pairs
    with a positive standard error (one column at a time: memory grows with m, not m**2)."""
    largest = np.zeros(resampled.shape[0], dtype=np.float64)
    for j in range(resampled.shape[1] - 1):
        others = np.flatnonzero(se[j, j + 1 :] > 0) + j + 1
        if not others.size:
            continue
        deviation = resampled[:, [j]] - resampled[:, others] - difference[j, others]
        np.maximum(largest, (np.abs(deviation) / se[j, others]).max(axis=1), out=largest)
    return largest


def _bootstrap_column_means(y: FloatMatrix, n_resamples: int, seed: int) -> FloatMatrix:
    """Column means of ``n_resamples`` row resamples (the same rows for every column), shape
    ``(n_resamples, m)``; drawn in memory-bounded blocks from one stream, so the result does not
    depend on the block size."""
    rng = np.random.default_rng(seed)
    n, m = y.shape
    rows = max(1, _GATHER_ELEMENTS // (n * m))
    out = np.empty((n_resamples, m), dtype=np.float64)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        indices = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = y[indices].mean(axis=1)
    return out
