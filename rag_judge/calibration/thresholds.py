"""Choose the score threshold that turns judge scores into labels, and test it on held-out rows.

A threshold t labels a row supported iff ``score >= t`` (:func:`predict_supported`). It is
chosen on a *dev* split to maximise balanced accuracy or the F-beta of the negative
(unsupported) class, and then every agreement statistic is reported on the *held-out* rows
only, so that the figures are not flattered by the choice.

Candidates are the midpoints between consecutive distinct dev scores, so every cut that
separates the dev scores differently is tried once and the threshold sits halfway between the
scores it separates. Cuts that give every dev row the same label are not candidates. When
several cuts reach the best value (within 1e-12), the lowest threshold wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.calibration._inputs import IntArray, as_pair, as_values, check_binary
from rag_judge.calibration.agreement import (
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    negative_f_beta,
    negative_precision,
    negative_recall,
    predict_supported,
)
from rag_judge.calibration.estimate import BootstrapOptions, Estimate
from rag_judge.core.errors import InputError

Objective = Literal["balanced_accuracy", "f_beta"]
"""What the threshold maximises: balanced accuracy, or F-beta of the negative class."""

_TIE = 1e-12
"""Objective values within this of the best count as equally good."""


@dataclass(frozen=True)
class ThresholdChoice:
    """The threshold that maximises an objective on some rows."""

    threshold: float
    """Label a row supported iff its score is >= this."""
    objective: str
    """What was maximised, e.g. ``balanced_accuracy`` or ``negative_f_beta(beta=2)``."""
    value: float
    """The objective's value at the threshold on the rows it was chosen on."""
    n: int
    """Rows it was chosen on."""


@dataclass(frozen=True)
class ThresholdSelection:
    """A threshold chosen on a dev split and its agreement statistics on the held-out split."""

    choice: ThresholdChoice
    """The threshold and its objective value on the dev rows."""
    dev_indices: tuple[int, ...]
    """Positions of the dev rows in the input, ascending."""
    test_indices: tuple[int, ...]
    """Positions of the held-out rows in the input, ascending."""
    seed: int
    """Seed of the split and of the bootstrap."""
    held_out: dict[str, Estimate]
    """On the held-out rows, with intervals: accuracy, balanced_accuracy, negative_precision,
    negative_recall, negative_f_beta, cohen_kappa."""


def stratified_split(
    human: ArrayLike, *, dev_fraction: float = 0.5, seed: int = 0
) -> tuple[IntArray, IntArray]:
    """Split rows into dev and held-out, keeping the share of each class in both.

    For class 0 and then class 1, the rows of the class are shuffled with one
    ``numpy.random.default_rng(seed)`` and the first ``round(dev_fraction · n_class)`` (at
    least 1, at most n_class − 1; halves round up) go to dev.

    Returns:
        Sorted positions of the dev rows and of the held-out rows.

    Raises:
        InputError: If labels are not 0/1, a class has fewer than 2 rows, or ``dev_fraction``
            is not strictly between 0 and 1.
    """
    if not 0.0 < dev_fraction < 1.0:
        raise InputError(
            f"dev_fraction must be in (0, 1), got {dev_fraction}", field="dev_fraction"
        )
    h = as_values(human, "human")
    check_binary(h, "human")
    rng = np.random.default_rng(seed)
    dev: list[IntArray] = []
    test: list[IntArray] = []
    for label in (0.0, 1.0):
        rows = np.flatnonzero(h == label)
        if rows.size < 2:
            raise InputError(
                f"class {int(label)} has {rows.size} row(s); a stratified split needs at least "
                "2 of each class (one for dev, one held out)",
                field="human",
            )
        shuffled = rng.permutation(rows)
        k = min(rows.size - 1, max(1, math.floor(dev_fraction * rows.size + 0.5)))
        dev.append(shuffled[:k])
        test.append(shuffled[k:])
    return np.sort(np.concatenate(dev)), np.sort(np.concatenate(test))


def best_threshold(
    human: ArrayLike,
    scores: ArrayLike,
    *,
    objective: Objective = "balanced_accuracy",
    beta: float = 1.0,
) -> ThresholdChoice:
    """The threshold that maximises ``objective`` on these rows (see the module docstring).

    Raises:
        InputError: If the inputs are empty, differ in length or hold non-finite values, a
            label is not 0/1, a class is absent, or the scores are constant.
    """
    h, s = as_pair(human, scores, ("human", "scores"))
    check_binary(h, "human")
    name = _objective_name(objective, beta)
    negatives, positives = np.sort(s[h == 0.0]), np.sort(s[h == 1.0])
    if negatives.size == 0 or positives.size == 0:
        raise InputError("all human labels are one class; need both to choose a threshold")
    distinct = np.unique(s)
    if distinct.size < 2:
        raise InputError("the scores are constant; no threshold separates any rows", field="scores")
    below = distinct[:-1]  # cut k labels unsupported every score <= distinct[k]
    caught = np.searchsorted(negatives, below, side="right").astype(np.float64)
    false_alarm = np.searchsorted(positives, below, side="right").astype(np.float64)
    missed = negatives.size - caught
    passed = positives.size - false_alarm
    if objective == "balanced_accuracy":
        values = (caught / negatives.size + passed / positives.size) / 2.0
    else:
        b2 = beta * beta
        values = (1.0 + b2) * caught / ((1.0 + b2) * caught + b2 * missed + false_alarm)
    best = int(np.flatnonzero(values >= np.max(values) - _TIE)[0])
    threshold = float(below[best] + (distinct[best + 1] - below[best]) / 2.0)
    if threshold <= below[best]:  # adjacent floats: the midpoint rounds down onto the lower one
        threshold = float(distinct[best + 1])
    return ThresholdChoice(threshold, name, float(values[best]), int(h.size))


def select_threshold(
    human: ArrayLike,
    scores: ArrayLike,
    *,
    objective: Objective = "balanced_accuracy",
    beta: float = 1.0,
    dev_fraction: float = 0.5,
    seed: int = 0,
    confidence: float = 0.95,
    n_resamples: int = 2000,
) -> ThresholdSelection:
    """Choose a threshold on a stratified dev split; report agreement on the held-out rows.

    Raises:
        InputError: As :func:`stratified_split` and :func:`best_threshold`, on the dev split.
    """
    h, s = as_pair(human, scores, ("human", "scores"))
    dev, test = stratified_split(h, dev_fraction=dev_fraction, seed=seed)
    choice = best_threshold(h[dev], s[dev], objective=objective, beta=beta)
    truth, predicted = h[test], predict_supported(s[test], choice.threshold)
    options = BootstrapOptions(confidence=confidence, n_resamples=n_resamples, seed=seed)
    held_out = {
        "accuracy": accuracy(truth, predicted, **options),
        "balanced_accuracy": balanced_accuracy(truth, predicted, **options),
        "negative_precision": negative_precision(truth, predicted, **options),
        "negative_recall": negative_recall(truth, predicted, **options),
        "negative_f_beta": negative_f_beta(truth, predicted, beta=beta, **options),
        "cohen_kappa": cohen_kappa(truth, predicted, categories=(0.0, 1.0), **options),
    }
    return ThresholdSelection(
        choice=choice,
        dev_indices=tuple(int(i) for i in dev),
        test_indices=tuple(int(i) for i in test),
        seed=seed,
        held_out=held_out,
    )


def _objective_name(objective: str, beta: float) -> str:
    if objective == "balanced_accuracy":
        return objective
    if objective != "f_beta":
        raise InputError(
            f"unknown objective {objective!r}: use 'balanced_accuracy' or 'f_beta'",
            field="objective",
        )
    if not (math.isfinite(beta) and beta > 0):
        raise InputError(f"beta must be a positive number, got {beta}", field="beta")
    return f"negative_f_beta(beta={beta:g})"
