"""How far one judge agrees with human labels: every figure of a calibration, in one report.

:func:`calibrate` joins judge scores to human labels and computes, with bootstrap intervals:

- **binary** labels (1 = supported): at a threshold t (the judge says supported iff its value
  >= t; 0.5 unless given, or chosen on a dev split): accuracy, balanced accuracy, precision,
  recall and F-beta of the unsupported class, Cohen's κ, Krippendorff's α (nominal) and the
  confusion matrix; without a threshold: ROC AUC of the value and of the support probability,
  Brier score and expected calibration error (on the probability when every row has one, else
  on the value, and the report says which), and Pearson, Spearman and Kendall τ-b of the value
  with the label. A chosen threshold is reported with the held-out figures only, so they are
  not flattered by the choice.
- **ordinal** labels on a scale low..high: the judge's value v in [0, 1] is mapped onto the
  scale by ``low + floor((high - low) * v + 0.5)`` (round half up: on 1–5, v < 0.125 → 1,
  v < 0.375 → 2, v < 0.625 → 3, v < 0.875 → 4, else 5); then exact agreement, Cohen's κ with
  linear and quadratic weights over the whole scale, and Krippendorff's α (ordinal); Spearman
  and Kendall τ-b use the unmapped value.
- **continuous** labels: Pearson, Spearman, Kendall τ-b, and Krippendorff's α (interval),
  which compares values directly and so needs labels on the judge's [0, 1] scale.
- **pairwise** preferences: concordance and three-way agreement of score differences.

Labelled rows the judge could not score are counted per status, never dropped silently; when
the judge also scored rows nobody labelled, a prediction-powered (PPI) estimate of the mean
human label is added. The worst disagreements (largest |judge − human| on the label scale) are
kept with the judge's claims, verdicts and reasons.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rag_judge.calibration._inputs import FloatArray
from rag_judge.calibration.agreement import (
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    negative_f_beta,
    negative_precision,
    negative_recall,
    predict_supported,
)
from rag_judge.calibration.alpha import krippendorff_alpha
from rag_judge.calibration.correlation import kendall_tau_b, pearson, spearman
from rag_judge.calibration.coverage import NOT_IN_JUDGE, excluded_note, judge_statuses
from rag_judge.calibration.disagreements import worst_disagreements
from rag_judge.calibration.estimate import BootstrapOptions, Estimate
from rag_judge.calibration.join import JoinedLabels, join_labels
from rag_judge.calibration.judge_scores import JudgeScores
from rag_judge.calibration.labels import HumanLabels, PairwisePreference
from rag_judge.calibration.ordinal_scale import MAPPING_RULE, ordinal_scale, to_scale
from rag_judge.calibration.pairwise_report import pairwise_report
from rag_judge.calibration.probability import (
    DEFAULT_BINS,
    brier_score,
    expected_calibration_error,
    roc_auc,
)
from rag_judge.calibration.report_types import (
    CalibrationKind,
    CalibrationReport,
    ClaimDetail,
    Confusion,
    Disagreement,
    RowDetail,
    ThresholdUse,
)
from rag_judge.calibration.thresholds import Objective, select_threshold
from rag_judge.calibration.unlabelled_ppi import ppi_from_unlabelled
from rag_judge.core.errors import InputError

# Public names, re-exporting those moved to report_types, ordinal_scale and coverage.
__all__ = [
    "DEFAULT_THRESHOLD",
    "MAPPING_RULE",
    "NOT_IN_JUDGE",
    "WORST",
    "CalibrationKind",
    "CalibrationReport",
    "ClaimDetail",
    "Confusion",
    "Disagreement",
    "RowDetail",
    "ThresholdUse",
    "calibrate",
    "to_scale",
]

DEFAULT_THRESHOLD = 0.5
"""The judge says supported iff value >= this, unless a threshold is given or selected."""
WORST = 10
"""Disagreements kept in a report."""


def calibrate(
    judge: JudgeScores,
    labels: HumanLabels | Sequence[PairwisePreference],
    *,
    metric: str | None = None,
    kind: CalibrationKind | None = None,
    threshold: float | None = None,
    select: Objective | None = None,
    beta: float = 1.0,
    scale: tuple[int, int] | None = None,
    unlabelled: JudgeScores | None = None,
    details: Mapping[str, RowDetail] | None = None,
    n_bins: int = DEFAULT_BINS,
    worst: int = WORST,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> CalibrationReport:
    """Measure how far ``judge`` agrees with ``labels`` (the figures in the module docstring).

    Args:
        judge: One metric's scores (:func:`~rag_judge.calibration.read_judge_scores`).
        labels: Human labels, or pairwise preferences for ``kind="pairwise"``.
        metric: The metric expected in ``judge`` (checked; default: whatever it holds).
        kind: The label kind (checked against ``labels``; default: theirs).
        threshold: Binary only: the judge says supported iff value >= this (default 0.5).
        select: Binary only: instead choose the threshold on a stratified dev half to maximise
            ``balanced_accuracy`` or ``f_beta``; the agreement figures are then held-out.
        beta: β of the unsupported class's F-beta (and of ``select="f_beta"``).
        scale: Ordinal only: the label scale (low, high); default: the labels' min and max.
        unlabelled: More judge scores of the same metric on rows without labels, for PPI.
        details: Row id → what the judge said
            (:func:`~rag_judge.jobs.calibrate.job.read_row_details`), shown with disagreements.
        n_bins: Bins of the expected calibration error and reliability diagram.
        worst: How many disagreements to keep.
        confidence: Nominal coverage of every interval.
        n_resamples: Bootstrap resamples of every interval.
        seed: Seed of the bootstrap and of the dev split.

    Raises:
        InputError: A metric or kind that does not match the inputs, both ``threshold`` and
            ``select``, no labelled row with a judge score (the message says what joined and
            what did not), labels off the ordinal scale, or a threshold that cannot be
            selected on these rows.
    """
    if metric is not None and metric != judge.metric:
        raise InputError(
            f"the scores hold metric '{judge.metric}', not '{metric}'", source=judge.source
        )
    given = labels.kind if isinstance(labels, HumanLabels) else "pairwise"
    if kind is not None and kind != given:
        raise InputError(
            f"kind '{kind}' does not match the labels, which are {given}", field="kind"
        )
    if threshold is not None and select is not None:
        raise InputError("give a threshold or ask to select one, not both", field="threshold")
    if given != "binary" and (threshold is not None or select is not None):
        raise InputError(f"a threshold applies to binary labels, not {given}", field="threshold")
    if given != "ordinal" and scale is not None:
        raise InputError(f"a scale applies to ordinal labels, not {given}", field="scale")
    options = BootstrapOptions(confidence=confidence, n_resamples=n_resamples, seed=seed)
    if not isinstance(labels, HumanLabels):
        return pairwise_report(judge, tuple(labels), options)
    joined = join_labels(judge, labels)
    if not joined.rows:
        hint = ""
        if joined.only_in_labels and not joined.unscored:
            hint = " (no id in common: do the labels belong to these scores?)"
        raise InputError(f"no labelled row has a judge score{hint}: {joined.describe()}")
    context = _Context(judge, details or {}, options, worst)
    return context.rows_report(joined, labels, threshold, select, beta, scale, unlabelled, n_bins)


# --- computation ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    judge: JudgeScores
    details: Mapping[str, RowDetail]
    options: BootstrapOptions
    worst: int

    def rows_report(
        self,
        joined: JoinedLabels,
        labels: HumanLabels,
        threshold: float | None,
        select: Objective | None,
        beta: float,
        scale: tuple[int, int] | None,
        unlabelled: JudgeScores | None,
        n_bins: int,
    ) -> CalibrationReport:
        h, s = joined.human(), joined.scores()
        notes: list[str] = []
        extra: dict[str, Any] = {}
        if labels.kind == "binary":
            estimates, extra, judge_on_scale = self._binary(
                joined, threshold, select, beta, n_bins, notes
            )
        elif labels.kind == "ordinal":
            low, high = ordinal_scale(h, scale, labels.source)
            judge_on_scale = to_scale(s, low, high)
            estimates = self._ordinal(h, s, judge_on_scale, low, high)
            extra["scale"] = (low, high)
            notes.append(
                f"The judge's value v is mapped onto the {low}–{high} scale by {MAPPING_RULE}: "
                f"{low} + floor({high - low}·v + 0.5)."
            )
        else:
            judge_on_scale = s
            estimates = self._continuous(h, s)
        if joined.excluded:
            notes.append(excluded_note(joined, self.judge))
        ppi, ppi_note = ppi_from_unlabelled(
            self.judge,
            joined,
            labels,
            judge_on_scale,
            unlabelled,
            extra,
            confidence=self.options["confidence"],
        )
        if ppi_note:
            notes.append(ppi_note)
        return CalibrationReport(
            metric=self.judge.metric,
            kind=labels.kind,
            level=labels.level,
            scores_source=self.judge.source,
            labels_source=labels.source,
            n=len(joined.rows),
            estimates=tuple(estimates),
            coverage=joined.describe(),
            unscored=joined.unscored_by_status(),
            judge_statuses=judge_statuses(self.judge),
            notes=tuple(notes),
            ppi=ppi,
            disagreements=worst_disagreements(joined, extra.get("scale"), self.details, self.worst),
            confidence=self.options["confidence"],
            n_resamples=self.options["n_resamples"],
            seed=self.options["seed"],
            **extra,
        )

    def _binary(
        self,
        joined: JoinedLabels,
        threshold: float | None,
        select: Objective | None,
        beta: float,
        n_bins: int,
        notes: list[str],
    ) -> tuple[list[Estimate], dict[str, Any], FloatArray]:
        h, s = joined.human(), joined.scores()
        if select is not None:
            try:
                selection = select_threshold(h, s, objective=select, beta=beta, **self.options)
            except InputError as error:
                raise InputError(
                    f"cannot select a threshold on these {h.size} rows: {error.message}; "
                    "give a threshold instead",
                    field="select",
                ) from None
            use = ThresholdUse(selection.choice.threshold, "selected", selection)
            rows = np.asarray(selection.test_indices, dtype=np.intp)
        else:
            if threshold is not None and not math.isfinite(threshold):
                raise InputError(f"threshold must be a finite number, got {threshold}")
            t = DEFAULT_THRESHOLD if threshold is None else float(threshold)
            use = ThresholdUse(t, "default" if threshold is None else "given")
            rows = np.arange(h.size, dtype=np.intp)
        truth, predicted = h[rows], predict_supported(s[rows], use.threshold)
        o = self.options
        at_threshold = [
            accuracy(truth, predicted, **o),
            balanced_accuracy(truth, predicted, **o),
            negative_precision(truth, predicted, **o),
            negative_recall(truth, predicted, **o),
            negative_f_beta(truth, predicted, beta=beta, **o),
            cohen_kappa(truth, predicted, categories=(0.0, 1.0), **o),
            krippendorff_alpha(truth, predicted, level="nominal", **o),
        ]
        if select is not None:
            at_threshold = [replace(e, name=f"{e.name}[held_out]") for e in at_threshold]
        cells = np.bincount((2 * truth + predicted).astype(np.intp), minlength=4).tolist()
        confusion = Confusion(use.threshold, *cells)
        probabilities, why_not = _probabilities(joined)
        estimates = [*at_threshold, replace(roc_auc(h, s, **o), name="roc_auc(value)")]
        if probabilities is not None:
            estimates.append(replace(roc_auc(h, probabilities, **o), name="roc_auc(probability)"))
        else:
            notes.append(f"No probability figures: {why_not}; Brier and ECE use the value.")
        on = "value" if probabilities is None else "probability"
        p = s if probabilities is None else probabilities
        ece = expected_calibration_error(h, p, n_bins=n_bins, **o)
        estimates += [
            replace(brier_score(h, p, **o), name=f"brier_score({on})"),
            replace(ece.ece, name=f"expected_calibration_error({n_bins} bins, {on})"),
            pearson(h, s, **o),
            spearman(h, s, **o),
            kendall_tau_b(h, s, **o),
        ]
        extra = {
            "threshold": use,
            "confusion": confusion,
            "reliability": ece,
            "reliability_on": on,
        }
        return estimates, extra, predict_supported(s, use.threshold)

    def _ordinal(
        self, h: FloatArray, s: FloatArray, mapped: FloatArray, low: int, high: int
    ) -> list[Estimate]:
        o = self.options
        categories = [float(c) for c in range(low, high + 1)]
        return [
            replace(accuracy(h, mapped, **o), name="exact_agreement(mapped)"),
            cohen_kappa(h, mapped, weights="linear", categories=categories, **o),
            cohen_kappa(h, mapped, weights="quadratic", categories=categories, **o),
            krippendorff_alpha(h, mapped, level="ordinal", **o),
            spearman(h, s, **o),
            kendall_tau_b(h, s, **o),
        ]

    def _continuous(self, h: FloatArray, s: FloatArray) -> list[Estimate]:
        o = self.options
        estimates = [pearson(h, s, **o), spearman(h, s, **o), kendall_tau_b(h, s, **o)]
        if np.all((h >= 0.0) & (h <= 1.0)):
            estimates.append(krippendorff_alpha(h, s, level="interval", **o))
        else:
            estimates.append(
                Estimate(
                    "krippendorff_alpha(interval)",
                    None,
                    None,
                    None,
                    o["confidence"],
                    int(h.size),
                    "not computed",
                    "human labels outside [0, 1]: interval α compares values directly, so the "
                    "labels must be on the judge's scale; rescale them first",
                )
            )
        return estimates


# --- helpers ----------------------------------------------------------------------------------


def _probabilities(joined: JoinedLabels) -> tuple[FloatArray | None, str]:
    """The rows' P(supported), or None and why (all-or-nothing, so n stays comparable)."""
    missing = sum(1 for r in joined.rows if r.probability is None)
    if missing == 0:
        return joined.probabilities(), ""
    if missing == len(joined.rows):
        return None, "the judge gave no support probabilities"
    return None, f"{missing} of {len(joined.rows)} rows have no support probability"
