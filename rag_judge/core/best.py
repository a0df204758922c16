"""Multiple comparisons with the best: how far below the best each column of a table can be.

A k-sweep asks one question of every k: "is this k within a margin of the best?". That is a
one-sided comparison of each k with the best (m - 1 of them), not every pair both ways (Hsu
1996, ch. 4: constrained MCB). With the true best column ``b`` unknown, the event

    E = { for every j != b: mu_b - mu_j < D_bj + d * se_bj }

(``D`` the observed paired difference, ``se`` its standard error) has probability at least
``confidence`` when ``d`` is the one-sided critical value of the largest of b's m - 1
comparisons; as ``b`` is unknown, ``d`` is the largest such value over every column taken as
``b``. On ``E``, at once for every k:

- the **regret bound** ``max(0, max over j in G of D_jk + d * se_jk)`` bounds ``mu_best - mu_k``
  from above, where ``G`` (the columns that **could be best**) holds every ``i`` with
  ``D_ij + d * se_ij > 0`` for all ``j != i``; ``b`` is always in ``G``;
- ``max over j of D_jk - d * se_jk`` is never above the margin for ``k = b``, so a column ruled
  out by it (some j better by more than the margin) is never the best.

The critical value is the larger of two: the paired bootstrap's (rows resampled, every column
from the same rows, the correlation between columns kept; Westfall and Young 1993) and the
multivariate t's with n - 1 degrees of freedom and the measured correlation (simulated). The
bootstrap alone is too narrow on a few rows (at n = 3 a "95%" interval covers about 75%); the
t keeps small samples honest. Missing values are allowed: each pair is compared on the rows
where both columns have a value. A pair whose difference never varies is given the standard
error of one row in n differing by the table's ``scale`` (a pseudo-count of one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rag_judge.core.errors import InputError
from rag_judge.core.stats import check_confidence, check_n_resamples

__all__ = [
    "BestComparison",
    "compare_with_best",
    "comparison_correlations",
    "paired_binary_upper",
    "t_critical",
]

FloatMatrix = NDArray[np.float64]

SCORE_ITERATIONS = 40
"""Bisection steps of the score bound of two 0/1 columns (2^-40 of the range)."""
PSEUDO = 1.0
"""Each pair's squared standard error gets ``(PSEUDO * scale / n)**2`` added: one question in n
differing by the whole range, so a pair that never differs is not shown equal from nothing, and
a few discordant questions (0/1 values) do not make the error look smaller than it is."""
T_DRAWS = 20_000
"""Draws of the multivariate t behind the small-sample critical value (seeded)."""
_GATHER_ELEMENTS = 1 << 22
"""Resampled rows are gathered in blocks of about this many values (32 MB of float64)."""


@dataclass(frozen=True, eq=False)
class BestComparison:
    """Each column against the best, with bounds that hold together (see the module docstring).

    Index ``[j, k]`` of the matrices is column ``j`` minus column ``k``; the diagonal is 0.
    """

    means: FloatMatrix = field(repr=False)
    """Each column's mean over its own rows with a value, shape ``(m,)``."""
    difference: FloatMatrix = field(repr=False)
    """Paired mean of ``y_j - y_k`` over the rows where both have a value, shape ``(m, m)``."""
    se: FloatMatrix = field(repr=False)
    """Standard error of each paired difference (sd / sqrt n, floored at ``scale / n``)."""
    n_pairs: NDArray[np.int64] = field(repr=False)
    """Rows where both columns have a value, shape ``(m, m)`` (the diagonal: the column's)."""
    upper: FloatMatrix = field(repr=False)
    """``upper[j, k]``: the upper bound of ``mu_j - mu_k`` on the event the bounds hold for
    ``j`` the best (``D + d * se``; score-type for two 0/1 columns); ``-upper[k, j]`` is the
    lower bound."""
    regret_bound: FloatMatrix = field(repr=False)
    """Upper bound of ``mu_best - mu_k`` (>= 0), shape ``(m,)``; together with probability
    ``confidence``."""
    best_bound: FloatMatrix = field(repr=False)
    """Upper bound of ``mu_k - max of the others`` (>= 0), shape ``(m,)``: Hsu's D+."""
    could_be_best: NDArray[np.bool_] = field(repr=False)
    """Columns that no other is shown to beat (``G``)."""
    shortfall_low: FloatMatrix = field(repr=False)
    """``max(0, max over j of D_jk - d * se_jk)``: how far k is shown below another column; above
    the margin, k is out (never the best, on the same event as the bounds)."""
    critical: float
    """The one-sided critical value ``d`` every bound uses (0 with one column)."""
    confidence: float
    n: int
    """Rows of the table."""
    method: str

    @property
    def n_columns(self) -> int:
        """The number of columns compared."""
        return int(self.means.size)


def compare_with_best(
    table: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    scale: float = 1.0,
) -> BestComparison:
    """Bound how far below the best each column's mean is, for all columns at once.

    Args:
        table: Shape ``(n, m)``: one row per question, one column per system (k); NaN marks a
            missing value (that pair is compared where both have one).
        confidence: Joint coverage of every bound, strictly between 0 and 1.
        n_resamples: Bootstrap resamples of the rows.
        seed: Seed of the bootstrap and of the t draws: equal seeds give equal bounds.
        scale: The range a value can span (1 for measures in [0, 1]); the standard-error floor
            is ``scale / n``.

    Raises:
        InputError: an empty table, infinite values, a column with no value, a bad parameter.

    Column 2 is better than column 1 on 30 of 40 rows and never worse; column 3 equals 2. Two
    0/1 columns that never differ in 40 questions are not shown equal: they could still differ
    on about one question in ten (the score bound, as the rule of three would say):

    >>> rows = [[0.0, 1.0, 1.0]] * 30 + [[1.0, 1.0, 1.0]] * 10
    >>> found = compare_with_best(rows, n_resamples=500)
    >>> [round(float(b), 3) for b in found.regret_bound], found.could_be_best.tolist()
    ([0.898, 0.112, 0.112], [False, True, True])
    """
    y = _as_table(table)
    check_confidence(confidence)
    check_n_resamples(n_resamples)
    if not (math.isfinite(scale) and scale >= 0):
        raise InputError(f"must be a finite number >= 0, got {scale!r}", field="scale")
    n, m = y.shape
    seen = ~np.isnan(y)
    filled = np.where(seen, y, 0.0)
    both = seen.T.astype(np.int64) @ seen.astype(np.int64)
    difference, sd = _paired(filled, seen, both)
    count = np.maximum(both, 1)
    se = np.sqrt(sd**2 / count + (PSEUDO * scale / count) ** 2)
    np.fill_diagonal(se, 0.0)
    means = filled.sum(axis=0) / np.maximum(seen.sum(axis=0), 1)
    critical = 0.0
    method = "one column: nothing to compare"
    if m > 1:
        boot = _bootstrap_critical(filled, seen, difference, se, confidence, n_resamples, seed)
        t_value = t_critical(comparison_correlations(filled, seen), n - 1, confidence, seed)
        critical = max(boot, t_value)
        method = (
            f"comparisons with the best (Hsu's constrained MCB), {m - 1} one-sided per column; "
            f"critical value {critical:.3f} = max(paired bootstrap {boot:.3f} over {n_resamples} "
            f"resamples of the {n} rows (seed {seed}), multivariate t {t_value:.3f} with {n - 1} "
            f"degrees of freedom); standard errors floored at {scale:g}/n"
        )
    binary = _binary_columns(filled, seen)
    upper = _upper_bounds(difference, sd, count, critical, scale, binary, filled, seen)
    return _bounds(
        means, difference, se, upper, both, critical, float(confidence), n, method, scale
    )


def _binary_columns(filled: FloatMatrix, seen: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Per column: every value it has is 0 or 1."""
    return np.asarray(np.all((filled == 0) | (filled == 1) | ~seen, axis=0), dtype=bool)


def _upper_bounds(
    difference: FloatMatrix,
    sd: FloatMatrix,
    count: NDArray[np.int64],
    critical: float,
    scale: float,
    binary: NDArray[np.bool_],
    filled: FloatMatrix,
    seen: NDArray[np.bool_],
) -> FloatMatrix:
    """``upper[j, k]``: the bound of ``mu_j - mu_k``, ``D + d * se``; for two 0/1 columns the
    score bound instead (:func:`paired_binary_upper`), which keeps its coverage when few
    questions are discordant, where the plain one (a Wald bound) falls short."""
    pseudo = (PSEUDO * scale / count) ** 2
    upper = difference + critical * np.sqrt(sd**2 / count + pseudo)
    pairs = binary[:, None] & binary[None, :]
    if not np.any(pairs):
        return np.asarray(upper, dtype=np.float64)
    mask = seen.astype(np.float64)
    ahead = filled.T @ (mask - filled)  # [j, k]: questions where j is 1 and k is 0
    score = paired_binary_upper(ahead, ahead.T, count, critical, pseudo)
    return np.asarray(np.where(pairs, np.maximum(upper, score), upper), dtype=np.float64)


def paired_binary_upper(
    ahead: NDArray[np.float64],
    behind: NDArray[np.float64],
    n: NDArray[np.float64] | NDArray[np.int64],
    critical: float,
    pseudo: NDArray[np.float64] | float = 0.0,
) -> NDArray[np.float64]:
    """The score bound of ``p_jk - p_kj`` for paired 0/1 values (Tango 1998): the largest
    difference u that a score test at ``critical`` does not reject, its variance taken at u,
    with the discordant cells re-estimated under it (their restricted maximum likelihood).
    ``ahead``: questions where j is 1 and k is 0; ``behind``: the other way; ``pseudo``: a
    variance added (the pseudo-count). Elementwise over arrays of any shape.

    Eight questions one way and six the other in 200: the difference is 0.01, and at most

    >>> round(float(paired_binary_upper(np.array(8.0), np.array(6.0), np.array(200), 1.645)), 4)
    0.0437
    """
    b, c, total = (np.asarray(x, dtype=np.float64) for x in (ahead, behind, n))
    total = np.maximum(total, 1.0)
    observed = (b - c) / total
    low, high = observed, np.ones_like(observed)
    for _ in range(SCORE_ITERATIONS):  # bisection: the score bound is where the test turns
        middle = (low + high) / 2
        spread = np.sqrt(_restricted_variance(b, c, total, middle) / total + pseudo)
        rejected = middle - observed > critical * spread
        high = np.where(rejected, middle, high)
        low = np.where(rejected, low, middle)
    return np.asarray(high, dtype=np.float64)


def _restricted_variance(
    b: NDArray[np.float64], c: NDArray[np.float64], n: NDArray[np.float64], u: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The variance of one question's paired 0/1 difference when its mean is ``u``, the
    discordant cells at their maximum likelihood under that constraint (a quadratic's root)."""
    flip = u < 0  # by symmetry: the smaller cell is the other one
    more, less, gap = np.where(flip, c, b), np.where(flip, b, c), np.abs(u)
    rest = n - more - less
    quad_b = 2 * rest * gap - (more + less) * (1 - gap) + 2 * less * gap
    quad_c = -less * gap * (1 - gap)
    root = (-quad_b + np.sqrt(np.maximum(quad_b**2 - 8 * n * quad_c, 0.0))) / (4 * n)
    return np.asarray(np.maximum(2 * root + gap - gap**2, 0.0), dtype=np.float64)


def _bounds(
    means: FloatMatrix,
    difference: FloatMatrix,
    se: FloatMatrix,
    upper: FloatMatrix,
    both: NDArray[np.int64],
    critical: float,
    confidence: float,
    n: int,
    method: str,
    scale: float,
) -> BestComparison:
    """The MCB bounds from the differences, their errors and the critical value (no bound
    wider than the values can span, ``scale``)."""
    m = means.size
    off = ~np.eye(m, dtype=bool)
    # upper[j, k]: mu_j - mu_k < upper on E for j = best; lower[j, k] = -upper[k, j]
    lower = -upper.T
    # D+_i = min over j != i of (D_ij + d se_ij), clipped at 0: could i be the best?
    best_bound = (
        np.clip(np.where(off, upper, np.inf).min(axis=1), 0.0, None) if m > 1 else (np.zeros(m))
    )
    could_be_best = best_bound > 0 if m > 1 else np.ones(m, dtype=bool)
    rivals = off & could_be_best[:, None]  # [j, k]: j could be best and j != k
    regret = np.clip(np.where(rivals, upper, -np.inf).max(axis=0), 0.0, None)
    regret = np.where(np.isfinite(regret), regret, 0.0)
    shortfall = (
        np.clip(np.where(off, lower, -np.inf).max(axis=0), 0.0, None) if m > 1 else (np.zeros(m))
    )
    return BestComparison(
        means=means,
        difference=difference,
        se=se,
        n_pairs=both,
        upper=upper,
        regret_bound=np.minimum(regret, scale) if scale > 0 else regret,
        best_bound=np.minimum(best_bound, scale) if scale > 0 else best_bound,
        could_be_best=np.asarray(could_be_best, dtype=bool),
        shortfall_low=shortfall,
        critical=float(critical),
        confidence=confidence,
        n=n,
        method=method,
    )


def t_critical(correlations: list[FloatMatrix], df: int, confidence: float, seed: int) -> float:
    """The largest, over the columns taken as the best, of the ``confidence`` quantile of the
    largest of that column's comparisons as multivariate t variables (``df`` degrees of freedom,
    the given correlation matrix per column; simulated, seeded). Infinite below 1 degree of
    freedom: one row says nothing about spread.

    >>> one = t_critical([np.eye(1)], 10_000, 0.95, 0)  # one comparison: the normal's 1.645
    >>> abs(one - 1.645) < 0.05, t_critical([np.eye(1)], 4, 0.95, 0) > 2.1  # t(4): 2.132
    (True, True)
    """
    if df < 1:
        return math.inf
    rng = np.random.default_rng(seed)
    largest = 0.0
    chi = np.sqrt(rng.chisquare(df, size=T_DRAWS) / df)
    normal = rng.standard_normal((T_DRAWS, max((c.shape[0] for c in correlations), default=0)))
    for corr in correlations:
        size = corr.shape[0]
        if size == 0:
            continue
        factor = _root(corr)
        draws = (normal[:, :size] @ factor.T).max(axis=1) / chi
        largest = max(largest, float(np.quantile(draws, confidence, method="higher")))
    return largest


def _root(corr: FloatMatrix) -> FloatMatrix:
    """A square root of a correlation matrix (eigen, clipped: a measured one may be singular)."""
    values, vectors = np.linalg.eigh((corr + corr.T) / 2)
    return np.asarray(vectors * np.sqrt(np.clip(values, 0.0, None)), dtype=np.float64)


def _as_table(table: ArrayLike) -> FloatMatrix:
    try:
        y = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("must be a table of numbers", field="table") from None
    if y.ndim != 2 or y.shape[0] == 0 or y.shape[1] == 0:
        raise InputError(
            f"must be a non-empty 2-D table (rows x columns), got shape {y.shape}", field="table"
        )
    if np.any(np.isinf(y)):
        raise InputError("must be finite (NaN marks a missing value)", field="table")
    if np.any(np.isnan(y).all(axis=0)):
        raise InputError("every column needs at least one value", field="table")
    return y


def _paired(
    filled: FloatMatrix, seen: NDArray[np.bool_], both: NDArray[np.int64]
) -> tuple[FloatMatrix, FloatMatrix]:
    """Each pair's mean difference and its sd (n - 1) over the rows where both have a value."""
    mask = seen.astype(np.float64)
    sums = filled.T @ mask  # [j, k]: sum of y_j over rows where k is seen (and j, as filled is 0)
    squares = (filled**2).T @ mask
    cross = filled.T @ filled
    count = np.maximum(both, 1).astype(np.float64)
    difference = (sums - sums.T) / count
    # sum over both-seen rows of (y_j - y_k)^2 = S2_j|k + S2_k|j - 2 cross
    square_sum = squares + squares.T - 2 * cross
    variance = (square_sum - count * difference**2) / np.maximum(count - 1, 1)
    return difference, np.sqrt(np.clip(variance, 0.0, None))


def comparison_correlations(filled: FloatMatrix, seen: NDArray[np.bool_]) -> list[FloatMatrix]:
    """Per column i, the correlation between its comparisons ``y_i - y_j`` (j != i), over the
    rows where i is seen (a missing partner counts as its column's mean: no information)."""
    n, m = filled.shape
    means = filled.sum(axis=0) / np.maximum(seen.sum(axis=0), 1)
    centred = np.where(seen, filled - means, 0.0)
    covariance = centred.T @ centred / max(n - 1, 1)
    out = []
    for i in range(m):
        others = [j for j in range(m) if j != i]
        # cov(y_i - y_j, y_i - y_l) = var_i - cov_il - cov_ij + cov_jl
        c = covariance
        block = c[i, i] - c[i, others][None, :] - c[i, others][:, None] + c[np.ix_(others, others)]
        scale = np.sqrt(np.clip(np.diag(block), 1e-12, None))
        corr = block / scale[:, None] / scale[None, :]
        zero = np.diag(block) <= 1e-12  # a comparison that never varies: independent
        corr[zero, :] = 0.0
        corr[:, zero] = 0.0
        corr[np.diag_indices_from(corr)] = 1.0
        out.append(np.asarray(corr, dtype=np.float64))
    return out


def _bootstrap_critical(
    filled: FloatMatrix,
    seen: NDArray[np.bool_],
    difference: FloatMatrix,
    se: FloatMatrix,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> float:
    """The largest, over the columns taken as the best ``i``, of the ``confidence`` quantile of
    ``max over j != i of (D_ij - D*_ij) / se_ij`` over paired bootstrap resamples."""
    n, m = filled.shape
    rng = np.random.default_rng(seed)
    complete = bool(seen.all())
    largest = np.full((n_resamples, m), -np.inf)
    rows = max(1, _GATHER_ELEMENTS // (n * m))
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        weights = np.zeros((stop - start, n))
        picks = rng.integers(0, n, size=(stop - start, n))
        np.add.at(weights, (np.arange(stop - start)[:, None], picks), 1.0)
        resampled = _resampled_differences(weights, filled, seen, difference, complete)
        for i in range(m):
            others = [j for j in range(m) if j != i and se[i, j] > 0]
            if not others:
                continue
            t = (difference[i, others] - resampled[:, i, others]) / se[i, others]
            largest[start:stop, i] = t.max(axis=1)
    quantiles = [
        float(np.quantile(largest[:, i], confidence, method="higher"))
        for i in range(m)
        if np.isfinite(largest[:, i]).all()
    ]
    return max(quantiles, default=0.0)


def _resampled_differences(
    weights: FloatMatrix,
    filled: FloatMatrix,
    seen: NDArray[np.bool_],
    difference: FloatMatrix,
    complete: bool,
) -> NDArray[np.float64]:
    """``D*[b, j, k]`` for each resample's row weights: column means when every value is there,
    else each pair over the rows both have (a pair with no row in a resample keeps ``D``)."""
    if complete:
        means = weights @ filled / weights.sum(axis=1, keepdims=True)
        return np.asarray(means[:, :, None] - means[:, None, :], dtype=np.float64)
    mask = seen.astype(np.float64)
    m = filled.shape[1]
    out = np.empty((weights.shape[0], m, m))
    for j in range(m):
        both = mask[:, [j]] * mask  # (n, m): rows where j and k are seen
        count = weights @ both
        total = weights @ (both * (filled[:, [j]] - filled))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, j, :] = np.where(count > 0, total / np.maximum(count, 1e-12), difference[j])
    return out
