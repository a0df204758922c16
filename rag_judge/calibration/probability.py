"""How well judge scores and probabilities separate and predict the human labels.

Convention: human labels are 1 (supported) or 0 (unsupported); a score or probability is the
judge's belief that the row is *supported* (higher = more supported).

- ROC AUC is the Mann–Whitney statistic: the probability that a random supported row scores
  above a random unsupported one, ties counting one half:
  AUC = (R_1 − n_1(n_1 + 1)/2) / (n_1 · n_0), with R_1 the sum of the supported rows' average
  ranks. It is the same number as the AUC of ``1 − score`` for detecting unsupported rows.
- Brier score = mean((p − y)²), lower is better.
- Expected calibration error over B equal-width bins [0, 1/B], (1/B, 2/B], …, ((B−1)/B, 1]
  (right-closed, as in Guo et al. 2017 and scikit-learn's ``calibration_curve``):
  ECE = Σ_b (n_b / n) · |mean p in b − share of 1 labels in b|, empty bins counting 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Unpack

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.calibration._inputs import (
    FloatArray,
    IntArray,
    as_pair,
    check_binary,
    check_probabilities,
)
from rag_judge.calibration.correlation import average_ranks
from rag_judge.calibration.estimate import (
    BootstrapKeywords,
    Estimate,
    StatisticValue,
    Undefined,
    paired_estimate,
)
from rag_judge.core.errors import InputError

DEFAULT_BINS = 10
"""Number of equal-width bins of the expected calibration error and the reliability diagram."""


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram: predicted probability against observed frequency."""

    low: float
    """Lower edge (exclusive, except 0.0 for the first bin)."""
    high: float
    """Upper edge (inclusive)."""
    count: int
    """Rows whose probability falls in the bin."""
    mean_predicted: float | None
    """Mean predicted P(supported) in the bin; None when the bin is empty."""
    observed_frequency: float | None
    """Share of rows in the bin that humans labelled supported; None when the bin is empty."""


@dataclass(frozen=True)
class CalibrationError:
    """Expected calibration error with its interval, and the bins it is computed from."""

    ece: Estimate
    """Σ_b (n_b / n)·|mean predicted − observed frequency| over the bins, with its interval."""
    n_bins: int
    """Number of equal-width bins on [0, 1]."""
    bins: tuple[ReliabilityBin, ...]
    """All ``n_bins`` bins in order, empty ones included (count 0)."""


def roc_auc(
    human: ArrayLike, scores: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]
) -> Estimate:
    """ROC AUC of judge scores (or probabilities) for telling supported from unsupported rows.

    Undefined when the human labels are all one class; resamples with one class are left out
    of the interval and counted.

    Raises:
        InputError: If the inputs are empty, not finite or differ in length, or a human label
            is not 0/1.
    """
    h, s = as_pair(human, scores, ("human", "scores"))
    check_binary(h, "human")
    return paired_estimate("roc_auc", _auc, h, s, **bootstrap)


def brier_score(
    human: ArrayLike, probabilities: ArrayLike, **bootstrap: Unpack[BootstrapKeywords]
) -> Estimate:
    """Brier score mean((p − y)²) of P(supported) against 0/1 human labels; lower is better.

    Raises:
        InputError: If the inputs are empty, not finite or differ in length, a human label is
            not 0/1, or a probability is outside [0, 1].
    """
    h, p = _labels_and_probabilities(human, probabilities)
    return paired_estimate("brier_score", _brier, h, p, **bootstrap)


def expected_calibration_error(
    human: ArrayLike,
    probabilities: ArrayLike,
    *,
    n_bins: int = DEFAULT_BINS,
    **bootstrap: Unpack[BootstrapKeywords],
) -> CalibrationError:
    """Expected calibration error over ``n_bins`` equal-width bins, and the reliability bins.

    A probability p goes to bin ``searchsorted(edges[1:-1], p, side="left")`` with
    ``edges = linspace(0, 1, n_bins + 1)``: a value on an inner edge goes to the lower bin, 0.0
    to the first (the rule of scikit-learn's ``calibration_curve``).

    Raises:
        InputError: If the inputs are empty, not finite or differ in length, a human label is
            not 0/1, a probability is outside [0, 1], or ``n_bins`` is below 1.
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise InputError(f"n_bins must be an integer >= 1, got {n_bins!r}", field="n_bins")
    h, p = _labels_and_probabilities(human, probabilities)
    edges = np.linspace(0.0, 1.0, n_bins + 1)

    def statistic(labels: FloatArray, probs: FloatArray) -> StatisticValue:
        # (n_b / n)·|Σp/n_b − Σy/n_b| = |Σp − Σy| / n, and an empty bin adds 0.
        _, predicted, observed = _bin_sums(_bin_of(probs, edges), probs, labels, n_bins)
        return float(np.sum(np.abs(predicted - observed))) / labels.size

    name = f"expected_calibration_error({n_bins} bins)"
    ece = paired_estimate(name, statistic, h, p, **bootstrap)
    count, predicted, observed = _bin_sums(_bin_of(p, edges), p, h, n_bins)
    bins = tuple(
        ReliabilityBin(
            low=float(edges[b]),
            high=float(edges[b + 1]),
            count=int(count[b]),
            mean_predicted=float(predicted[b] / count[b]) if count[b] else None,
            observed_frequency=float(observed[b] / count[b]) if count[b] else None,
        )
        for b in range(n_bins)
    )
    return CalibrationError(ece=ece, n_bins=n_bins, bins=bins)


def _auc(h: FloatArray, s: FloatArray) -> StatisticValue:
    positives = int(np.count_nonzero(h))
    negatives = h.size - positives
    if positives == 0 or negatives == 0:
        present = 1 if negatives == 0 else 0
        return Undefined(f"all human labels are one class ({present}); AUC needs both")
    rank_sum = float(np.sum(average_ranks(s)[h == 1.0]))
    return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives)


def _brier(h: FloatArray, p: FloatArray) -> StatisticValue:
    """The mean squared gap between probability and label."""
    return float(np.mean((p - h) ** 2))


def _bin_of(p: FloatArray, edges: FloatArray) -> IntArray:
    """Each probability's bin: an inner edge goes to the lower bin, 0.0 to the first."""
    return np.searchsorted(edges[1:-1], p, side="left").astype(np.intp)


def _bin_sums(
    bin_of: IntArray, p: FloatArray, h: FloatArray, n_bins: int
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per bin: row count, sum of probabilities, sum of labels."""
    count = np.bincount(bin_of, minlength=n_bins).astype(np.float64)
    predicted = np.bincount(bin_of, weights=p, minlength=n_bins).astype(np.float64)
    observed = np.bincount(bin_of, weights=h, minlength=n_bins).astype(np.float64)
    return count, predicted, observed


def _labels_and_probabilities(
    human: ArrayLike, probabilities: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    h, p = as_pair(human, probabilities, ("human", "probabilities"))
    check_binary(h, "human")
    check_probabilities(p, "probabilities")
    return h, p
