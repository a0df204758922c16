"""Paired statistics for comparing per-query evaluation scores of two systems.

Every function takes per-query scores (one value per query, paired by position), checks them,
and returns a finite, frozen result. The module is pure (no I/O) and depends on numpy only, so
the package core stays light; exact binomial tails are computed here instead of with scipy.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rag_judge.core.errors import InputError

__all__ = [
    "ConfidenceInterval",
    "TestResult",
    "bootstrap_mean_ci",
    "mcnemar_exact",
    "paired_bootstrap_ci",
    "paired_randomization_test",
]

Scores: TypeAlias = ArrayLike
"""Per-query scores: a sequence of numbers, a 1-D numpy array, or anything with ``__array__``."""

FloatArray: TypeAlias = NDArray[np.float64]

_CHUNK_ELEMENTS = 1 << 20
"""Resample rows are drawn in blocks of about this many elements (8 MB of int64 indices)."""

_TIE_TOLERANCE = 1e-12
"""Randomization statistics within this of |observed| count as ties (relative to max |a - b|)."""

_EXACT_BINOMIAL_MAX_N = 20_000
"""Up to this many discordant pairs the McNemar tail is summed in exact integer arithmetic."""


@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate with a two-sided confidence interval around it."""

    estimate: float
    """The point estimate: the mean, or the mean difference mean(a - b)."""
    low: float
    """Lower bound of the interval; never above ``estimate``."""
    high: float
    """Upper bound of the interval; never below ``estimate``."""
    confidence: float
    """Nominal coverage of the interval, e.g. 0.95."""
    n: int
    """Number of observations (queries, or query pairs) the interval is based on."""
    method: str
    """How the interval was computed, e.g. "percentile bootstrap (2000 resamples, seed 0)"."""

    def __str__(self) -> str:
        """Format as ``estimate [low, high]`` with four decimals, e.g. "0.4123 [0.3801, 0.4466]"."""
        return f"{self.estimate:.4f} [{self.low:.4f}, {self.high:.4f}]"


@dataclass(frozen=True)
class TestResult:
    """The outcome of a two-sided paired significance test."""

    __test__ = False  # Not a pytest test class, despite the name (plain attribute, not a field).

    statistic: float
    """Test statistic: the observed mean difference, or min(b, c) for McNemar."""
    p_value: float
    """Two-sided p-value, in [0, 1]."""
    method: str
    """Which test was run and how (exact or sampled, number of resamples, seed)."""
    n: int
    """Number of query pairs."""
    b: int | None = None
    """McNemar only: number of pairs where a is correct and b is wrong."""
    c: int | None = None
    """McNemar only: number of pairs where a is wrong and b is correct."""


def bootstrap_mean_ci(
    values: Scores, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> ConfidenceInterval:
    """Percentile-bootstrap confidence interval for the mean score over queries.

    Queries are resampled with replacement ``n_resamples`` times; the interval is the
    ``(1 - confidence) / 2`` and ``1 - (1 - confidence) / 2`` quantiles of the resample means.

    Args:
        values: One score per query.
        confidence: Nominal coverage, strictly between 0 and 1.
        n_resamples: Number of bootstrap resamples, at least 1.
        seed: Seed for ``numpy.random.default_rng``; equal seeds give equal intervals.

    Returns:
        The mean with its interval. With a single query the interval is ``[x, x]``.

    Raises:
        InputError: If values are empty, not one-dimensional, or not finite, or if
            ``confidence`` or ``n_resamples`` is out of range.
    """
    x = as_finite_values(values, "values")
    check_confidence(confidence)
    check_n_resamples(n_resamples)
    scaled, exponent = _scale_to_unit(x)
    method = f"percentile bootstrap ({n_resamples} resamples, seed {seed})"
    return _percentile_ci(scaled, exponent, confidence, n_resamples, seed, method)


def paired_bootstrap_ci(
    a: Scores,
    b: Scores,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> ConfidenceInterval:
    """Percentile-bootstrap confidence interval for the mean paired difference mean(a - b).

    Queries are resampled as pairs, so the interval reflects the per-query correlation of the
    two systems; this is the bootstrap of the per-query differences ``d_i = a_i - b_i``.

    Args:
        a: One score per query for system A.
        b: One score per query for system B, in the same query order.
        confidence: Nominal coverage, strictly between 0 and 1.
        n_resamples: Number of bootstrap resamples, at least 1.
        seed: Seed for ``numpy.random.default_rng``; equal seeds give equal intervals.

    Returns:
        The mean difference mean(a - b) with its interval.

    Raises:
        InputError: If ``a`` or ``b`` is empty or not finite, their lengths differ, or
            ``confidence`` or ``n_resamples`` is out of range.
    """
    x, y = _as_paired_scores(a, b)
    check_confidence(confidence)
    check_n_resamples(n_resamples)
    diff, exponent = _scaled_difference(x, y)
    method = f"paired percentile bootstrap of mean(a - b) ({n_resamples} resamples, seed {seed})"
    return _percentile_ci(diff, exponent, confidence, n_resamples, seed, method)


def mcnemar_exact(a: Scores, b: Scores) -> TestResult:
    """Exact two-sided McNemar test for paired binary outcomes (e.g. answer correct or not).

    Only discordant pairs carry information: with b = #(a right, b wrong) and
    c = #(a wrong, b right), ``p = min(1, 2 * P[X <= min(b, c)])`` for
    ``X ~ Binomial(b + c, 1/2)``, and ``p = 1`` when ``b + c == 0``.

    Args:
        a: One 0/1 (or False/True) outcome per query for system A.
        b: One 0/1 outcome per query for system B, in the same query order.

    Returns:
        A result whose statistic is ``min(b, c)``, with the discordant counts in ``b`` and ``c``.

    Raises:
        InputError: If the inputs are empty, differ in length, or hold values other than 0 and 1.
    """
    x, y = _as_paired_scores(a, b)
    _check_binary(x, "a")
    _check_binary(y, "b")
    a_only = int(np.count_nonzero((x == 1.0) & (y == 0.0)))
    b_only = int(np.count_nonzero((x == 0.0) & (y == 1.0)))
    discordant = a_only + b_only
    smaller = min(a_only, b_only)
    return TestResult(
        statistic=float(smaller),
        p_value=_binomial_half_two_sided_p(smaller, discordant),
        method=f"exact McNemar (two-sided binomial test on {discordant} discordant pairs)",
        n=int(x.size),
        b=a_only,
        c=b_only,
    )


def paired_randomization_test(
    a: Scores, b: Scores, *, n_resamples: int = 10000, seed: int = 0
) -> TestResult:
    """Two-sided paired randomization (sign-flip) test of mean(a - b) = 0.

    Under the null hypothesis each difference ``d_i = a_i - b_i`` is as likely to have either
    sign. Sampled: ``p = (1 + #{|mean(s * d)| >= |mean(d)|}) / (1 + n_resamples)`` over random
    sign vectors ``s``. When ``2**n <= n_resamples`` all sign vectors are enumerated instead
    and ``p = #{|mean(s * d)| >= |mean(d)|} / 2**n`` exactly. Ties are counted with a tolerance
    of 1e-12 relative to max |d| so that rounding cannot drop the observed pattern itself.

    Args:
        a: One score per query for system A.
        b: One score per query for system B, in the same query order.
        n_resamples: Number of random sign vectors, at least 1.
        seed: Seed for ``numpy.random.default_rng``; equal seeds give equal p-values.

    Returns:
        A result whose statistic is the observed mean difference mean(a - b).

    Raises:
        InputError: If the inputs are empty, not finite, differ in length, or if
            ``n_resamples`` is below 1.
    """
    x, y = _as_paired_scores(a, b)
    check_n_resamples(n_resamples)
    diff, exponent = _scaled_difference(x, y)
    n = int(diff.size)
    observed = float(np.mean(diff))
    threshold = abs(observed) - _TIE_TOLERANCE
    if n < 63 and 2**n <= n_resamples:
        p_value = _count_exact_sign_flips(diff, threshold) / 2**n
        method = f"exact paired randomization test (all {2**n} sign flips)"
    else:
        hits = _count_random_sign_flips(diff, threshold, n_resamples, seed)
        p_value = (1 + hits) / (1 + n_resamples)
        method = f"paired randomization test ({n_resamples} random sign flips, seed {seed})"
    return TestResult(
        statistic=_unscale(observed, exponent, "the mean difference"),
        p_value=min(1.0, p_value),
        method=method,
        n=n,
    )


# --- input checks -----------------------------------------------------------------------------


def as_finite_values(values: ArrayLike, name: str) -> FloatArray:
    """Convert to a one-dimensional float64 array, rejecting empty and non-finite input
    (the error names the argument ``name``)."""
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"expected a sequence of numbers ({exc})", field=name) from exc
    if x.ndim != 1:
        raise InputError(f"expected a one-dimensional sequence, got shape {x.shape}", field=name)
    if x.size == 0:
        raise InputError("empty input: need at least one value", field=name)
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        first = int(bad[0])
        raise InputError(
            f"non-finite value {x[first]} at index {first} ({bad.size} in total); "
            "NaN and inf are not allowed",
            field=name,
        )
    return x


def _as_paired_scores(a: Scores, b: Scores) -> tuple[FloatArray, FloatArray]:
    """Convert both inputs and check that they pair up one to one."""
    x = as_finite_values(a, "a")
    y = as_finite_values(b, "b")
    if x.size != y.size:
        raise InputError(
            f"mismatched lengths: a has {x.size} values but b has {y.size}; "
            "paired inputs need one value per query in each",
            field="b",
        )
    return x, y


def _check_binary(x: FloatArray, name: str) -> None:
    """Reject any value other than 0 and 1 (McNemar needs correct/incorrect outcomes)."""
    bad = np.flatnonzero((x != 0.0) & (x != 1.0))
    if bad.size:
        first = int(bad[0])
        raise InputError(
            f"non-binary value {x[first]} at index {first} ({bad.size} in total); "
            "McNemar needs 0/1 outcomes",
            field=name,
        )


def check_confidence(confidence: float) -> None:
    """Require 0 < confidence < 1 (NaN fails the comparison and is rejected too)."""
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence}", field="confidence")


def check_n_resamples(n_resamples: int) -> None:
    """Require a whole number of resamples, at least 1."""
    try:
        count = operator.index(n_resamples)
    except TypeError as exc:
        raise InputError(
            f"n_resamples must be an integer, got {n_resamples!r}", field="n_resamples"
        ) from exc
    if isinstance(n_resamples, bool) or count < 1:
        raise InputError(f"n_resamples must be >= 1, got {n_resamples!r}", field="n_resamples")


# --- overflow-safe scaling ----------------------------------------------------------------------


def _scale_to_unit(x: FloatArray) -> tuple[FloatArray, int]:
    """Scale by an exact power of two so that max|x| lies in [0.5, 1), so sums cannot overflow.

    Returns ``(x * 2**-e, e)``. Power-of-two scaling is exact, so means and quantiles of the
    scaled values are exactly the unscaled ones times ``2**-e``.
    """
    peak = float(np.max(np.abs(x)))
    if peak == 0.0:
        return x, 0
    exponent = math.frexp(peak)[1]
    return np.ldexp(x, -exponent), exponent


def _scaled_difference(x: FloatArray, y: FloatArray) -> tuple[FloatArray, int]:
    """Return ``a - b`` scaled as by :func:`_scale_to_unit`, even when ``a - b`` overflows."""
    with np.errstate(over="ignore"):
        diff = x - y
    if np.all(np.isfinite(diff)):
        return _scale_to_unit(diff)
    scaled, exponent = _scale_to_unit(x * 0.5 - y * 0.5)
    return scaled, exponent + 1


def _unscale(value: float, exponent: int, what: str) -> float:
    """Undo :func:`_scale_to_unit`, refusing results too large for a float64."""
    try:
        return math.ldexp(value, exponent)
    except OverflowError as exc:
        raise InputError(f"{what} overflows float64; the scores are too large") from exc


# --- bootstrap ----------------------------------------------------------------------------------


def _percentile_ci(
    x: FloatArray, exponent: int, confidence: float, n_resamples: int, seed: int, method: str
) -> ConfidenceInterval:
    """Percentile interval of the mean of unit-scaled ``x``, widened to contain the estimate.

    The widening only matters when rounding or very few resamples would otherwise put the
    estimate outside the interval; it keeps ``low <= estimate <= high`` always true.
    """
    estimate = float(np.mean(x))
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(_bootstrap_means(x, n_resamples, seed), [tail, 1.0 - tail])
    return ConfidenceInterval(
        estimate=_unscale(estimate, exponent, "the mean"),
        low=_unscale(min(float(low), estimate), exponent, "the interval"),
        high=_unscale(max(float(high), estimate), exponent, "the interval"),
        confidence=float(confidence),
        n=int(x.size),
        method=method,
    )


def _bootstrap_means(x: FloatArray, n_resamples: int, seed: int) -> FloatArray:
    """Means of ``n_resamples`` resamples of ``x`` with replacement, drawn in memory-bounded blocks.

    Indices come from ``default_rng(seed).integers(0, n, size=(n_resamples, n))``; drawing them
    block by block yields the same stream, so the result does not depend on the block size.
    Peak memory is about 16 bytes times max(n, 2**20): one block of indices and gathered values.
    """
    rng = np.random.default_rng(seed)
    n = x.size
    rows = max(1, _CHUNK_ELEMENTS // n)
    means = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        indices = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = np.take(x, indices).mean(axis=1)
    return means


# --- randomization test -------------------------------------------------------------------------


def _count_flips_at_least(bits: NDArray[np.uint8], diff: FloatArray, threshold: float) -> int:
    """Count sign vectors (rows of 0/1 ``bits``, 1 meaning +) with ``|mean(s * d)| >= threshold``.

    Uses ``sum(s * d) = 2 * (bits @ d) - sum(d)``, one matrix-vector product per block.
    """
    stats = (2.0 * (bits.astype(np.float64) @ diff) - float(np.sum(diff))) / diff.size
    return int(np.count_nonzero(np.abs(stats) >= threshold))


def _count_exact_sign_flips(diff: FloatArray, threshold: float) -> int:
    """Count, over all ``2**n`` sign vectors, those at least as extreme as the observed one."""
    n = diff.size
    rows = max(1, _CHUNK_ELEMENTS // n)
    shifts = np.arange(n, dtype=np.int64)
    hits = 0
    for start in range(0, 2**n, rows):
        patterns = np.arange(start, min(start + rows, 2**n), dtype=np.int64)
        bits = ((patterns[:, None] >> shifts) & 1).astype(np.uint8)
        hits += _count_flips_at_least(bits, diff, threshold)
    return hits


def _count_random_sign_flips(
    diff: FloatArray, threshold: float, n_resamples: int, seed: int
) -> int:
    """Count random sign vectors at least as extreme as the observed one.

    Signs are the bits of ``default_rng(seed).bytes``, unpacked row by row; this is several
    times faster than drawing one integer per sign.
    """
    rng = np.random.default_rng(seed)
    n = diff.size
    row_bytes = (n + 7) // 8
    rows = max(1, _CHUNK_ELEMENTS // n)
    hits = 0
    for start in range(0, n_resamples, rows):
        count = min(rows, n_resamples - start)
        raw = np.frombuffer(rng.bytes(count * row_bytes), dtype=np.uint8).reshape(count, -1)
        hits += _count_flips_at_least(np.unpackbits(raw, axis=1, count=n), diff, threshold)
    return hits


# --- exact binomial tail ------------------------------------------------------------------------


def _binomial_half_two_sided_p(smaller: int, total: int) -> float:
    """Two-sided exact binomial p-value ``min(1, 2 * P[X <= smaller])``, X ~ Bin(total, 1/2).

    Exact integer arithmetic up to ``_EXACT_BINOMIAL_MAX_N`` trials; beyond that, a log-space
    sum of the terms that matter (relative error around 1e-10, far below what matters here).
    """
    if total == 0 or 2 * smaller >= total:
        return 1.0
    if total <= _EXACT_BINOMIAL_MAX_N:
        term = 1
        tail = 1
        for k in range(smaller):
            term = term * (total - k) // (k + 1)
            tail += term
        return min(1.0, tail / (1 << (total - 1)))
    return min(1.0, math.exp(_log_binomial_half_cdf(smaller, total) + math.log(2.0)))


def _log_binomial_half_cdf(smaller: int, total: int) -> float:
    """``log P[X <= smaller]`` for X ~ Bin(total, 1/2) with smaller < total / 2, in log space.

    Sums ``C(total, k) / 2**total`` from ``k = smaller`` downwards; the terms shrink
    monotonically, so the sum stops once they fall below ``e**-50`` of the largest one.
    """
    log_norm = math.lgamma(total + 1) - total * math.log(2.0)

    def log_term(k: int) -> float:
        return log_norm - math.lgamma(k + 1) - math.lgamma(total - k + 1)

    peak = log_term(smaller)
    relative_sum = 0.0
    for k in range(smaller, -1, -1):
        gap = log_term(k) - peak
        if gap < -50.0:
            break
        relative_sum += math.exp(gap)
    return peak + math.log(relative_sum)
