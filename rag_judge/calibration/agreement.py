"""Agreement of judge labels with human labels: accuracy, the negative class, Cohen's κ.

Convention (binary labels): **1 = supported** (faithful, attributable, acceptable) and
**0 = unsupported** (hallucinated, not attributable). The class a judge exists to catch is the
*negative* class 0, so precision, recall and F-beta here are those of class 0 (scikit-learn's
``pos_label=0``). With the four counts

- caught = human 0, judge 0 (an unsupported row the judge flagged),
- missed = human 0, judge 1,
- false_alarm = human 1, judge 0,
- passed = human 1, judge 1,

precision = caught / (caught + false_alarm), recall = caught / (caught + missed) and
F_β = (1 + β²)·caught / ((1 + β²)·caught + β²·missed + false_alarm). A judge score becomes a
label with :func:`predict_supported`: supported iff ``score >= threshold``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal, Unpack

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.calibration._inputs import FloatArray, IntArray, as_pair, as_values, check_binary
from rag_judge.calibration.estimate import (
    BootstrapKeywords,
    Estimate,
    StatisticValue,
    Undefined,
    paired_estimate,
)
from rag_judge.core.errors import InputError

_FromCounts = Callable[[int, int, int, int], StatisticValue]
"""A statistic of the counts (caught, missed, false_alarm, passed)."""

KappaWeights = Literal["linear", "quadratic"]
"""Disagreement weights for ordinal κ: |i - j| or (i - j)² over category positions."""


def predict_supported(scores: ArrayLike, threshold: float) -> FloatArray:
    """Judge labels from judge scores: 1.0 (supported) where ``score >= threshold``, else 0.0."""
    if math.isnan(threshold):
        raise InputError("threshold must be a number, got NaN", field="threshold")
    x = as_values(scores, "scores")
    return (x >= threshold).astype(np.float64)


def accuracy(
    human: ArrayLike, judge: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]
) -> Estimate:
    """Fraction of rows where the judge label equals the human label (any label values).

    Raises:
        InputError: If the inputs are empty, not finite or differ in length.
    """
    h, j = as_pair(human, judge)
    return paired_estimate("accuracy", _same_share, h, j, **bootstrap)


def balanced_accuracy(
    human: ArrayLike, judge: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]
) -> Estimate:
    """Mean recall of the two classes: (caught/(caught+missed) + passed/(passed+false_alarm))/2.

    Undefined when the human labels hold only one class.

    Raises:
        InputError: If the inputs are empty, differ in length or are not 0/1.
    """
    return _binary_statistic("balanced_accuracy", human, judge, _balanced, bootstrap)


def negative_precision(
    human: ArrayLike, judge: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]
) -> Estimate:
    """Precision of class 0: of the rows the judge flagged unsupported, the share humans agree.

    Undefined when the judge flags no row (0/0).

    Raises:
        InputError: If the inputs are empty, differ in length or are not 0/1.
    """
    return _binary_statistic("negative_precision", human, judge, _precision, bootstrap)


def negative_recall(
    human: ArrayLike, judge: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]
) -> Estimate:
    """Recall of class 0: of the rows humans call unsupported, the share the judge flags.

    Undefined when no human label is 0.

    Raises:
        InputError: If the inputs are empty, differ in length or are not 0/1.
    """
    return _binary_statistic("negative_recall", human, judge, _recall, bootstrap)


def negative_f_beta(
    human: ArrayLike,
    judge: ArrayLike,
    *,
    beta: float = 1.0,
    **bootstrap: Unpack[BootstrapKeywords],
) -> Estimate:
    """F-beta of class 0 (F1 by default): (1+β²)·caught / ((1+β²)·caught + β²·missed + false_alarm).

    β > 1 weighs recall (catching hallucinations) above precision. Undefined only when neither
    side has a 0 label (the denominator is 0).

    Raises:
        InputError: If the inputs are empty, differ in length or are not 0/1, or β <= 0.
    """
    if not (np.isfinite(beta) and beta > 0):
        raise InputError(f"beta must be a positive number, got {beta}", field="beta")

    def f_beta(caught: int, missed: int, false_alarm: int, passed: int) -> StatisticValue:
        return _f_beta(caught, missed, false_alarm, beta)

    name = "negative_f1" if beta == 1.0 else f"negative_f_beta(beta={beta:g})"
    return _binary_statistic(name, human, judge, f_beta, bootstrap)


def cohen_kappa(
    human: ArrayLike,
    judge: ArrayLike,
    *,
    weights: KappaWeights | None = None,
    categories: Sequence[float] | None = None,
    **bootstrap: Unpack[BootstrapKeywords],
) -> Estimate:
    """Cohen's κ, unweighted or weighted: κ = 1 − Σ w_ij·O_ij / Σ w_ij·E_ij.

    O is the table of observed proportions (human category i, judge category j) and
    E_ij = O_i· × O_·j the table expected by chance. Unweighted: w_ij = 1 for i ≠ j, else 0
    (κ = (p_o − p_e)/(1 − p_e)). Linear: w_ij = |i − j|; quadratic: w_ij = (i − j)², where i and
    j are *positions* in ``categories``. Pass the full ordinal scale (e.g. 1..5) as
    ``categories`` so that an unused category still counts in the distances; by default the
    categories are the sorted values seen in either input. Undefined when Σ w·E = 0, i.e.
    both raters used one and the same category for every row.

    Raises:
        InputError: If the inputs are empty, not finite or differ in length, or a value is not
            one of ``categories``.
    """
    h, j = as_pair(human, judge)
    cats = _categories(h, j, categories)
    h_pos = np.searchsorted(cats, h).astype(np.intp)
    j_pos = np.searchsorted(cats, j).astype(np.intp)
    k = cats.size
    positions = np.arange(k, dtype=np.float64)
    gap = positions[:, None] - positions[None, :]
    if weights is None:
        w = (gap != 0).astype(np.float64)
    elif weights == "linear":
        w = np.abs(gap)
    elif weights == "quadratic":
        w = gap**2
    else:
        raise InputError(f"unknown weights {weights!r}: use None, 'linear' or 'quadratic'")

    def kappa(human_at: IntArray, judge_at: IntArray) -> StatisticValue:
        cell = human_at * k + judge_at
        observed = np.bincount(cell, minlength=k * k).reshape(k, k) / cell.size
        expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
        chance = float(np.sum(w * expected))
        if chance == 0.0:
            return Undefined("both raters used a single category for every row; κ is 0/0")
        return 1.0 - float(np.sum(w * observed)) / chance

    name = "cohen_kappa" if weights is None else f"cohen_kappa(weights={weights})"
    return paired_estimate(name, kappa, h_pos, j_pos, **bootstrap)


# --- helpers ----------------------------------------------------------------------------------


def _binary_pair(human: ArrayLike, judge: ArrayLike) -> tuple[FloatArray, FloatArray]:
    h, j = as_pair(human, judge)
    check_binary(h, "human")
    check_binary(j, "judge")
    return h, j


def _binary_statistic(
    name: str,
    human: ArrayLike,
    judge: ArrayLike,
    from_counts: _FromCounts,
    bootstrap: BootstrapKeywords,
) -> Estimate:
    """Bootstrap a statistic of the four counts (caught, missed, false_alarm, passed)."""
    h, j = _binary_pair(human, judge)

    def statistic(x: FloatArray, y: FloatArray) -> StatisticValue:
        cell = (2 * x + y).astype(np.intp)  # 0 caught, 1 missed, 2 false alarm, 3 passed
        caught, missed, false_alarm, passed = np.bincount(cell, minlength=4).tolist()
        return from_counts(caught, missed, false_alarm, passed)

    return paired_estimate(name, statistic, h, j, **bootstrap)


def _same_share(x: FloatArray, y: FloatArray) -> StatisticValue:
    """The share of rows where the two labels are equal."""
    return float(np.mean((x == y).astype(np.float64)))


def _balanced(caught: int, missed: int, false_alarm: int, passed: int) -> StatisticValue:
    if caught + missed == 0 or passed + false_alarm == 0:
        present = 1 if caught + missed == 0 else 0
        return Undefined(f"all human labels are one class ({present}); need both classes")
    return (caught / (caught + missed) + passed / (passed + false_alarm)) / 2.0


def _precision(caught: int, missed: int, false_alarm: int, passed: int) -> StatisticValue:
    if caught + false_alarm == 0:
        return Undefined("the judge labelled no row unsupported (0); precision is 0/0")
    return caught / (caught + false_alarm)


def _recall(caught: int, missed: int, false_alarm: int, passed: int) -> StatisticValue:
    if caught + missed == 0:
        return Undefined("no human label is unsupported (0); recall is 0/0")
    return caught / (caught + missed)


def _f_beta(caught: int, missed: int, false_alarm: int, beta: float) -> StatisticValue:
    b2 = beta * beta
    denominator = (1.0 + b2) * caught + b2 * missed + false_alarm
    if denominator == 0.0:
        return Undefined("neither humans nor the judge labelled any row unsupported (0)")
    return (1.0 + b2) * caught / denominator


def _categories(h: FloatArray, j: FloatArray, categories: Sequence[float] | None) -> FloatArray:
    """Sorted categories; every value in ``h`` and ``j`` must be one of them."""
    if categories is None:
        return np.unique(np.concatenate([h, j]))
    cats = np.unique(as_values(list(categories), "categories"))
    if cats.size != len(categories):
        raise InputError("categories must not repeat a value", field="categories")
    for values, field in ((h, "human"), (j, "judge")):
        unknown = np.flatnonzero(~np.isin(values, cats))
        if unknown.size:
            first = int(unknown[0])
            raise InputError(
                f"value {values[first]} at index {first} is not one of the categories "
                f"{cats.tolist()}",
                field=field,
            )
    return cats
