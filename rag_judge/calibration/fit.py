"""Fit a judge to labels: a calibrated P(supported) and a threshold, proven by k-fold CV.

:func:`fit_judge` learns, from labelled rows, a monotone map of the judge's value (and, when
the rows carry claim support probabilities, a logistic map that also reads the lowest of them)
to a calibrated probability, then the threshold on that probability that maximises balanced
accuracy (or F-beta of the unsupported class). Which map: the candidate with the lowest Brier
score in an inner k-fold cross-validation on the rows it is fitted on. The threshold for
balanced accuracy is the share of supported rows (:data:`ThresholdRule`; measured against a
searched cut in ``benchmarks/calibration_fit.py``).

:func:`cross_validate_fit` says what that buys on rows the fit never saw: stratified k-fold,
the whole procedure (choice of map included) run on k − 1 folds and applied to the k-th, so
every labelled row gets an out-of-fold probability and verdict. "Before" is the judge as it
is: its value as the probability, supported iff value >= 0.5. Each figure before and after
carries a bootstrap CI over rows, and each change a paired bootstrap CI (same resampled rows
for both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rag_judge.calibration._inputs import FloatArray, IntArray, check_binary
from rag_judge.calibration.agreement import balanced_accuracy, cohen_kappa, predict_supported
from rag_judge.calibration.estimate import (
    BootstrapOptions,
    Estimate,
    StatisticValue,
    Undefined,
    bootstrap_estimate,
)
from rag_judge.calibration.probability import (
    _auc,
    brier_score,
    expected_calibration_error,
    roc_auc,
)
from rag_judge.calibration.probability_map import (
    Feature,
    MapKind,
    ProbabilityMap,
    fit_map,
)
from rag_judge.calibration.thresholds import Objective, best_threshold
from rag_judge.core.errors import InputError

MIN_LABELS = 10
"""Fewer labelled rows than this give no fit: a map and a threshold from 9 rows are noise."""

DEFAULT_FOLDS = 5
DEFAULT_THRESHOLD = 0.5
"""The judge's own cut before fitting: supported iff value >= 0.5."""

CANDIDATES: tuple[tuple[MapKind, tuple[Feature, ...]], ...] = (
    ("isotonic", ("value",)),
    ("logistic", ("value",)),
    ("logistic", ("value", "min_probability")),
)
"""The maps tried, in order (ties keep the earlier); the last only when rows carry claim
probabilities that are not just the value again."""

FIGURES = (
    "expected_calibration_error",
    "brier_score",
    "balanced_accuracy",
    "cohen_kappa",
    "roc_auc",
)
"""The figures reported before and after, in order."""

LOWER_IS_BETTER = frozenset({"expected_calibration_error", "brier_score"})


@dataclass(frozen=True)
class FitRows:
    """Labelled rows to fit on: ids, the judge's value, the lowest claim probability, labels."""

    ids: tuple[str, ...]
    values: FloatArray
    min_probabilities: FloatArray | None
    """None when some row lacks claim probabilities, or they never differ from the value."""
    labels: FloatArray

    def features(self, names: Sequence[Feature]) -> FloatArray:
        """One column per feature name."""
        columns = {"value": self.values, "min_probability": self.min_probabilities}
        chosen = [columns[name] for name in names]
        if any(column is None for column in chosen):
            raise InputError("these rows carry no claim probabilities", field="min_probability")
        return np.column_stack([c for c in chosen if c is not None])

    def candidates(self) -> tuple[tuple[MapKind, tuple[Feature, ...]], ...]:
        """The maps these rows can fit."""
        return tuple(c for c in CANDIDATES if "min_probability" not in c[1] or self.two_inputs)

    @property
    def two_inputs(self) -> bool:
        return self.min_probabilities is not None

    def subset(self, idx: IntArray) -> FitRows:
        mins = None if self.min_probabilities is None else self.min_probabilities[idx]
        return FitRows(tuple(self.ids[i] for i in idx), self.values[idx], mins, self.labels[idx])


@dataclass(frozen=True)
class FittedJudge:
    """A map to P(supported) and the threshold on it."""

    map: ProbabilityMap
    threshold: float
    """Supported iff the calibrated probability >= threshold."""
    objective: str
    """What the threshold is for, and how it was set."""

    def probabilities(self, rows: FitRows) -> FloatArray:
        return np.clip(self.map.apply(rows.features(self.map.features)), 0.0, 1.0)


@dataclass(frozen=True)
class FoldChoice:
    """What one outer fold chose."""

    fold: int
    map: str
    threshold: float
    n_fit: int
    n_held_out: int


@dataclass(frozen=True)
class CrossValidation:
    """Out-of-fold figures before and after fitting, with CIs, and the folds' choices."""

    folds: int
    seed: int
    n: int
    before: dict[str, Estimate]
    after: dict[str, Estimate]
    change: dict[str, Estimate]
    """after − before on the same resampled rows (paired bootstrap)."""
    choices: tuple[FoldChoice, ...]
    out_of_fold: FloatArray
    """Each row's calibrated probability from the fit on the other folds."""


def check_fit_labels(labels: FloatArray, folds: int) -> None:
    """Refuse labels a fit cannot learn from, saying why and what to do.

    Raises:
        InputError: fewer than :data:`MIN_LABELS` rows, one class only, or a class with fewer
            rows than ``folds``.
    """
    check_binary(labels, "labels")
    n = labels.size
    if n < MIN_LABELS:
        raise InputError(
            f"a fit needs at least {MIN_LABELS} labelled rows, got {n}: label more rows "
            "(rag-judge label) before fitting",
            field="labels",
        )
    counts = {c: int(np.count_nonzero(labels == c)) for c in (0.0, 1.0)}
    if 0 in counts.values():
        present = "1 (supported)" if counts[0.0] == 0 else "0 (not supported)"
        raise InputError(
            f"all {n} labels are {present}: a fit needs both classes (the threshold sits "
            "between them); label rows of the other class",
            field="labels",
        )
    small = min(counts, key=lambda c: counts[c])
    if counts[small] < folds:
        raise InputError(
            f"{folds}-fold cross-validation needs at least {folds} rows of each class; class "
            f"{int(small)} has {counts[small]}: label more rows or use fewer folds",
            field="labels",
        )


Candidate = tuple[MapKind, tuple[Feature, ...]]
"""A map to try: its kind and what it reads."""

ThresholdRule = Literal["prevalence", "search"]
"""How the threshold on the calibrated probability is set for balanced accuracy:
``prevalence``, the share of supported rows (on a calibrated probability p, predicting
supported iff p >= that share is the rule that maximises balanced accuracy, and it is one
number estimated from every row, so it barely overfits), or ``search``, the cut that
maximises balanced accuracy on the fitted rows (F-beta always searches)."""


def fit_judge(
    rows: FitRows,
    *,
    objective: Objective = "balanced_accuracy",
    beta: float = 1.0,
    inner_folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    candidates: Sequence[Candidate] | None = None,
    threshold_rule: ThresholdRule = "prevalence",
) -> FittedJudge:
    """Choose a map by inner cross-validated Brier score (among ``candidates``, default every
    map the rows can fit), fit it on all ``rows``, then the threshold on its probabilities that
    maximises ``objective``."""
    kind, features = _choose_map(rows, inner_folds, seed, candidates or rows.candidates())
    fitted = fit_map(kind, features, rows.features(features), rows.labels)
    if objective == "balanced_accuracy" and threshold_rule == "prevalence":
        share = float(np.mean(rows.labels))
        return FittedJudge(fitted, share, "balanced_accuracy: the share supported among the labels")
    probabilities = np.clip(fitted.apply(rows.features(features)), 0.0, 1.0)
    try:
        choice = best_threshold(rows.labels, probabilities, objective=objective, beta=beta)
        threshold, name = choice.threshold, choice.objective
    except InputError:  # the map is flat on these rows: no cut separates anything
        threshold, name = DEFAULT_THRESHOLD, f"{objective} (flat map: default kept)"
    return FittedJudge(fitted, threshold, name)


def cross_validate_fit(
    rows: FitRows,
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    objective: Objective = "balanced_accuracy",
    beta: float = 1.0,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    candidates: Sequence[Candidate] | None = None,
    threshold_rule: ThresholdRule = "prevalence",
) -> CrossValidation:
    """Stratified ``folds``-fold CV of :func:`fit_judge`; before/after figures with CIs."""
    from sklearn.model_selection import StratifiedKFold

    check_fit_labels(rows.labels, folds)
    n = rows.labels.size
    out_of_fold = np.zeros(n)
    verdicts = np.zeros(n)
    choices = []
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (train, test) in enumerate(splitter.split(rows.values, rows.labels)):
        fitted = fit_judge(
            rows.subset(train), objective=objective, beta=beta, inner_folds=folds, seed=seed,
            candidates=candidates, threshold_rule=threshold_rule,
        )  # fmt: skip
        probabilities = fitted.probabilities(rows.subset(test))
        out_of_fold[test] = probabilities
        verdicts[test] = predict_supported(probabilities, fitted.threshold)
        choices.append(
            FoldChoice(fold, fitted.map.label, fitted.threshold, int(train.size), int(test.size))
        )
    before_p = np.clip(rows.values, 0.0, 1.0)
    before_v = predict_supported(before_p, DEFAULT_THRESHOLD)
    options = BootstrapOptions(confidence=confidence, n_resamples=n_resamples, seed=seed)
    before = _figures(rows.labels, before_p, before_v, options)
    after = _figures(rows.labels, out_of_fold, verdicts, options)
    change = {
        name: paired_change(
            name, rows.labels, (before_p, before_v), (out_of_fold, verdicts), options
        )
        for name in FIGURES
    }
    return CrossValidation(folds, seed, n, before, after, change, tuple(choices), out_of_fold)


def _choose_map(rows: FitRows, folds: int, seed: int, candidates: Sequence[Candidate]) -> Candidate:
    """The candidate with the lowest inner-CV Brier score (the first on a tie)."""
    from sklearn.model_selection import StratifiedKFold

    if len(candidates) == 1:
        return candidates[0]
    smallest = int(min(np.count_nonzero(rows.labels == 0), np.count_nonzero(rows.labels == 1)))
    inner = min(folds, smallest)
    if inner < 2:
        return candidates[0]
    splitter = StratifiedKFold(n_splits=inner, shuffle=True, random_state=seed)
    splits = list(splitter.split(rows.values, rows.labels))
    best: tuple[float, int] | None = None
    for position, (kind, features) in enumerate(candidates):
        squared = 0.0
        for train, test in splits:
            x_train = rows.features(features)[train]
            fitted = fit_map(kind, features, x_train, rows.labels[train])
            p = np.clip(fitted.apply(rows.features(features)[test]), 0.0, 1.0)
            squared += float(np.sum((p - rows.labels[test]) ** 2))
        if best is None or squared < best[0] - 1e-12:
            best = (squared, position)
    assert best is not None
    return candidates[best[1]]


def _figures(
    labels: FloatArray, probabilities: FloatArray, verdicts: FloatArray, kw: BootstrapOptions
) -> dict[str, Estimate]:
    return {
        "expected_calibration_error": expected_calibration_error(labels, probabilities, **kw).ece,
        "brier_score": brier_score(labels, probabilities, **kw),
        "balanced_accuracy": balanced_accuracy(labels, verdicts, **kw),
        "cohen_kappa": cohen_kappa(labels, verdicts, categories=(0.0, 1.0), **kw),
        "roc_auc": roc_auc(labels, probabilities, **kw),
    }


def paired_change(
    name: str,
    labels: FloatArray,
    before: tuple[FloatArray, FloatArray],
    after: tuple[FloatArray, FloatArray],
    options: BootstrapOptions,
) -> Estimate:
    """after − before of one figure (a name of :data:`FIGURES`), each side given as
    (probabilities, verdicts), on the same bootstrap resamples of the rows."""
    one = _STATISTICS[name]

    def statistic(idx: IntArray) -> StatisticValue:
        a = one(labels[idx], after[0][idx], after[1][idx])
        b = one(labels[idx], before[0][idx], before[1][idx])
        if isinstance(a, Undefined):
            return a
        if isinstance(b, Undefined):
            return b
        return a - b

    return bootstrap_estimate(f"change in {name}", statistic, labels.size, **options)


def _ece(h: FloatArray, p: FloatArray, _v: FloatArray) -> StatisticValue:
    edges = np.linspace(0.0, 1.0, 11)
    bins = np.searchsorted(edges[1:-1], p, side="left")
    gap = np.bincount(bins, weights=p, minlength=10) - np.bincount(bins, weights=h, minlength=10)
    return float(np.sum(np.abs(gap))) / h.size


def _brier(h: FloatArray, p: FloatArray, _v: FloatArray) -> StatisticValue:
    return float(np.mean((p - h) ** 2))


def _balanced(h: FloatArray, _p: FloatArray, v: FloatArray) -> StatisticValue:
    negatives, positives = h == 0.0, h == 1.0
    if not negatives.any() or not positives.any():
        return Undefined("one class only")
    caught = float(np.mean(v[negatives] == 0.0))
    passed = float(np.mean(v[positives] == 1.0))
    return (caught + passed) / 2.0


def _kappa(h: FloatArray, _p: FloatArray, v: FloatArray) -> StatisticValue:
    observed = float(np.mean(h == v))
    p_h, p_v = float(np.mean(h)), float(np.mean(v))
    chance = p_h * p_v + (1.0 - p_h) * (1.0 - p_v)
    if chance >= 1.0:
        return Undefined("both raters used one category")
    return (observed - chance) / (1.0 - chance)


def _auc_of(h: FloatArray, p: FloatArray, _v: FloatArray) -> StatisticValue:
    return _auc(h, p)


_STATISTICS = {
    "expected_calibration_error": _ece,
    "brier_score": _brier,
    "balanced_accuracy": _balanced,
    "cohen_kappa": _kappa,
    "roc_auc": _auc_of,
}
"""Each figure as a plain function of (labels, probabilities, verdicts), for paired changes;
the same definitions as the module functions (tests check they agree)."""
