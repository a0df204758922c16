"""Krippendorff's α between the judge and the human labels (two coders, every unit coded twice).

α = 1 − D_o / D_e: observed disagreement over disagreement expected by chance, both from the
coincidence matrix of the pooled values (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability"). With two coders and no missing values each unit u contributes the pairs
(h_u, j_u) and (j_u, h_u), so over N units with n = 2N pooled values

    α = 1 − (n − 1) · Σ_u 2·δ²(h_u, j_u) / Σ_c Σ_k n_c · n_k · δ²(c, k),

where n_c counts value c among the pooled values and δ² is the level's distance:

- nominal: δ²(c, k) = 0 if c = k else 1;
- ordinal: δ²(c, k) = (Σ_{g from c to k} n_g − (n_c + n_k) / 2)², over the sorted values;
- interval: δ²(c, k) = (c − k)².

α is undefined when every pooled value is the same (D_e = 0).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.calibration._inputs import FloatArray, IntArray, as_pair
from rag_judge.calibration.estimate import (
    Estimate,
    Statistic,
    StatisticValue,
    Undefined,
    bootstrap_estimate,
)
from rag_judge.core.errors import InputError

AlphaLevel = Literal["nominal", "ordinal", "interval"]
"""The level of measurement, which picks the distance δ²."""

_CONSTANT = "every label and judge value is the same; α is 0/0 (no expected disagreement)"


def krippendorff_alpha(
    human: ArrayLike,
    judge: ArrayLike,
    *,
    level: AlphaLevel = "nominal",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Krippendorff's α of judge and human values at the given level of measurement.

    The bootstrap resamples units (rows), each with both of its values.

    Raises:
        InputError: If the inputs are empty, not finite or differ in length, or the level is
            unknown.
    """
    h, j = as_pair(human, judge)
    if level == "interval":
        statistic = _interval(h, j)
    elif level in ("nominal", "ordinal"):
        statistic = _categorical(h, j, ordinal=level == "ordinal")
    else:
        raise InputError(
            f"unknown level {level!r}: use 'nominal', 'ordinal' or 'interval'", field="level"
        )
    return bootstrap_estimate(
        f"krippendorff_alpha({level})",
        statistic,
        h.size,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def _interval(h: FloatArray, j: FloatArray) -> Statistic:
    """Interval α in closed form: Σ_c Σ_k n_c n_k (c − k)² = 2n · Σ_v (v − mean)²."""
    # Centre first so that large offsets cannot cost precision in the sums of squares.
    centre = float(np.mean(np.concatenate([h, j])))
    hc, jc = h - centre, j - centre

    def alpha(idx: IntArray) -> StatisticValue:
        a, b = hc[idx], jc[idx]
        n = 2 * idx.size
        pooled = np.concatenate([a, b])
        spread = float(np.sum((pooled - np.mean(pooled)) ** 2))
        if spread == 0.0:
            return Undefined(_CONSTANT)
        observed = 2.0 * float(np.sum((a - b) ** 2))
        return 1.0 - (n - 1) * observed / (2.0 * n * spread)

    return alpha


def _categorical(h: FloatArray, j: FloatArray, *, ordinal: bool) -> Statistic:
    """Nominal or ordinal α from the counts n_c of each distinct value."""
    values, codes = np.unique(np.concatenate([h, j]), return_inverse=True)
    k = values.size
    h_code, j_code = codes[: h.size].astype(np.intp), codes[h.size :].astype(np.intp)

    def alpha(idx: IntArray) -> StatisticValue:
        a, b = h_code[idx], j_code[idx]
        counts = np.bincount(np.concatenate([a, b]), minlength=k).astype(np.float64)
        n = 2 * idx.size
        delta2 = _ordinal_delta2(counts) if ordinal else 1.0 - np.eye(k)
        expected = float(counts @ delta2 @ counts)
        if expected == 0.0:
            return Undefined(_CONSTANT)
        observed = 2.0 * float(np.sum(delta2[a, b]))
        return 1.0 - (n - 1) * observed / expected

    return alpha


def _ordinal_delta2(counts: FloatArray) -> FloatArray:
    """δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)² for all pairs of category positions."""
    cumulative = np.concatenate([[0.0], np.cumsum(counts)])  # cumulative[i] = Σ_{g<i} n_g
    low = np.minimum.outer(np.arange(counts.size), np.arange(counts.size))
    high = np.maximum.outer(np.arange(counts.size), np.arange(counts.size))
    between = cumulative[high + 1] - cumulative[low]
    result: FloatArray = (between - (counts[:, None] + counts[None, :]) / 2.0) ** 2
    return result
