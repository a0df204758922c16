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
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

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
from rag_judge.calibration.estimate import BootstrapOptions, Estimate
from rag_judge.calibration.join import JoinedLabels, join_labels
from rag_judge.calibration.judge_scores import JudgeScores
from rag_judge.calibration.labels import HumanLabels, LabelLevel, PairwisePreference
from rag_judge.calibration.pairwise import PairwiseAgreement, pairwise_agreement
from rag_judge.calibration.ppi import PpiResult, ppi_mean
from rag_judge.calibration.probability import (
    DEFAULT_BINS,
    CalibrationError,
    brier_score,
    expected_calibration_error,
    roc_auc,
)
from rag_judge.calibration.thresholds import Objective, ThresholdSelection, select_threshold
from rag_judge.errors import InputError

CalibrationKind = Literal["binary", "ordinal", "continuous", "pairwise"]
"""What the human labels are: 0/1, an integer scale, any number, or pairwise preferences."""

DEFAULT_THRESHOLD = 0.5
"""The judge says supported iff value >= this, unless a threshold is given or selected."""
WORST = 10
"""Disagreements kept in a report."""
NOT_IN_JUDGE = "not_in_judge_output"
"""Status counted for a compared row (or pair side) that the score file does not contain."""
MAPPING_RULE = "low + floor((high - low) * value + 0.5), i.e. round half up"


@dataclass(frozen=True)
class ThresholdUse:
    """The threshold the agreement figures use, and where it came from."""

    threshold: float
    source: Literal["default", "given", "selected"]
    selection: ThresholdSelection | None = None
    """The dev/held-out split and choice, when the threshold was selected."""

    def describe(self) -> str:
        """One sentence: the threshold, why this one, and which rows the figures use."""
        t = f"{self.threshold:.4g}"
        if self.selection is None:
            why = "the default" if self.source == "default" else "given"
            return f"Supported iff value >= {t} ({why}, not selected); figures on all rows."
        choice, s = self.selection.choice, self.selection
        return (
            f"Supported iff value >= {t}, chosen on {len(s.dev_indices)} dev rows (stratified "
            f"split, seed {s.seed}) maximising {choice.objective} (= {choice.value:.4f} there); "
            f"agreement figures and the confusion matrix on the {len(s.test_indices)} "
            "held-out rows only."
        )


@dataclass(frozen=True)
class Confusion:
    """Human label × judge label at the threshold (1 = supported, 0 = unsupported)."""

    threshold: float
    caught: int
    """Human 0, judge 0: an unsupported row the judge flagged."""
    missed: int
    """Human 0, judge 1."""
    false_alarm: int
    """Human 1, judge 0."""
    passed: int
    """Human 1, judge 1."""

    @property
    def n(self) -> int:
        """Rows in the matrix."""
        return self.caught + self.missed + self.false_alarm + self.passed


@dataclass(frozen=True)
class ClaimDetail:
    """One claim of a judged row, as the score file has it."""

    claim: str
    verdict: str | None
    reason: str
    probability: float | None


@dataclass(frozen=True)
class RowDetail:
    """What the judge saw and said for one row (from the score file), to show disagreements."""

    id: str
    question: str
    answer: str
    status: str
    error: str
    claims: tuple[ClaimDetail, ...]


@dataclass(frozen=True)
class Disagreement:
    """A row (or claim) where judge and human differ most."""

    id: str
    claim: int | None
    human: float
    """The human label."""
    judge: float
    """The judge on the label scale: its value (binary, continuous) or mapped category."""
    gap: float
    """|judge − human|, with the unrounded mapped value for ordinal labels (the sort key)."""
    value: float
    """The judge's raw score (value, or 1/0 verdict for a claim)."""
    probability: float | None
    detail: RowDetail | None
    """The judge's claims, verdicts and reasons, when the score file was given."""

    def to_record(self) -> dict[str, Any]:
        """A JSON-safe dict (for ``disagreements.jsonl``)."""
        record: dict[str, Any] = {
            "id": self.id,
            "claim": self.claim,
            "human": self.human,
            "judge": self.judge,
            "gap": self.gap,
            "value": self.value,
            "probability": self.probability,
        }
        if self.detail is not None:
            d = self.detail
            record |= {
                "question": d.question,
                "answer": d.answer,
                "status": d.status,
                "error": d.error,
                "claims": [vars(c) for c in d.claims],
            }
        return record


@dataclass(frozen=True)
class CalibrationReport:
    """Every figure of one judge metric against one set of human labels."""

    metric: str
    kind: CalibrationKind
    level: LabelLevel
    scores_source: str
    labels_source: str
    n: int
    """Rows (claims, pairs) compared."""
    estimates: tuple[Estimate, ...]
    """Every statistic, in reading order; names are unique."""
    coverage: str
    """What joined and what was left out, and why (one paragraph)."""
    unscored: dict[str, int]
    """Labelled rows (or pairs) without a judge score, by the judge's status."""
    judge_statuses: dict[str, int]
    """Every row of the judge output by status (``not_judged``: the metric is absent)."""
    notes: tuple[str, ...]
    threshold: ThresholdUse | None = None
    confusion: Confusion | None = None
    reliability: CalibrationError | None = None
    reliability_on: str | None = None
    """``probability`` or ``value``: what the Brier score, ECE and reliability bins use."""
    scale: tuple[int, int] | None = None
    """Ordinal scale (low, high) the judge's value is mapped onto."""
    pairwise: PairwiseAgreement | None = None
    ppi: PpiResult | None = None
    disagreements: tuple[Disagreement, ...] = ()
    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0

    def estimate(self, name: str) -> Estimate:
        """The estimate called ``name``.

        Raises:
            KeyError: No estimate has that name (the message lists them).
        """
        for item in self.estimates:
            if item.name == name:
                return item
        raise KeyError(f"no estimate {name!r}; have {', '.join(e.name for e in self.estimates)}")

    def figures(self) -> list[dict[str, Any]]:
        """One dict per figure (name, estimate, low, high, n, method, reason): the estimates,
        then the threshold and the PPI and classical means when there are any."""
        rows = [
            _figure(e.name, e.estimate, e.low, e.high, e.n, e.method, e.reason)
            for e in self.estimates
        ]
        if (use := self.threshold) is not None:
            n = 0 if use.selection is None else len(use.selection.dev_indices)
            rows.append(_figure("threshold", use.threshold, None, None, n, use.describe(), None))
        if self.ppi is not None:
            for name, ci in (("ppi_mean", self.ppi.ppi), ("classical_mean", self.ppi.classical)):
                rows.append(_figure(name, ci.estimate, ci.low, ci.high, ci.n, ci.method, None))
        return rows


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
            (:func:`~rag_judge.calibration.run.read_row_details`), shown with disagreements.
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
    context = _Context(judge, details or {}, options, worst)
    if not isinstance(labels, HumanLabels):
        return context.pairwise_report(tuple(labels))
    joined = join_labels(judge, labels)
    if not joined.rows:
        hint = ""
        if joined.only_in_labels and not joined.unscored:
            hint = " (no id in common: do the labels belong to these scores?)"
        raise InputError(f"no labelled row has a judge score{hint}: {joined.describe()}")
    return context.rows_report(joined, labels, threshold, select, beta, scale, unlabelled, n_bins)


def to_scale(values: Iterable[float], low: int, high: int) -> FloatArray:
    """Map judge values in [0, 1] onto the ordinal scale low..high (see the module docstring)."""
    v = np.clip(np.asarray(list(values), dtype=np.float64), 0.0, 1.0)
    mapped: FloatArray = low + np.floor((high - low) * v + 0.5)
    return mapped


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
            low, high = _scale(h, scale, labels.source)
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
            notes.append(_excluded_note(joined, self.judge))
        ppi, ppi_note = self._ppi(joined, labels, judge_on_scale, unlabelled, extra)
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
            judge_statuses=_statuses(self.judge),
            notes=tuple(notes),
            ppi=ppi,
            disagreements=self._disagreements(joined, extra.get("scale")),
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

    def _ppi(
        self,
        joined: JoinedLabels,
        labels: HumanLabels,
        judge_on_scale: FloatArray,
        unlabelled: JudgeScores | None,
        extra: Mapping[str, Any],
    ) -> tuple[PpiResult | None, str]:
        """PPI of the mean human label from the judge's scores on rows nobody labelled."""
        pool = _scores_by_key(self.judge, labels.level)
        keys = [k for k in joined.only_in_judge if pool.get(k) is not None]
        skipped = sum(1 for k in joined.only_in_judge if pool.get(k) is None)
        if unlabelled is not None:
            labelled = {_key(x.id, x.claim) for x in labels.labels}
            labelled |= {_key(x.id, x.claim) for x in labels.excluded}
            known = set(pool)
            more = _scores_by_key(unlabelled, labels.level)
            new = {k: v for k, v in more.items() if k not in labelled and k not in known}
            skipped += sum(1 for v in new.values() if v is None)
            pool = {**pool, **new}
            keys += [k for k, v in new.items() if v is not None]
        if not keys:
            return None, ""
        values = np.array([pool[k] for k in keys], dtype=np.float64)
        if labels.kind == "binary":
            use: ThresholdUse = extra["threshold"]
            f_unlabelled = predict_supported(values, use.threshold)
            judged = "the judge's label at the threshold"
        elif labels.kind == "ordinal":
            low, high = extra["scale"]
            f_unlabelled, judged = to_scale(values, low, high), "the judge's mapped category"
        else:
            f_unlabelled, judged = values, "the judge's value"
        left = f" ({skipped} unlabelled rows without a score left out)" if skipped else ""
        if len(keys) < 2 or len(joined.rows) < 2:
            return None, (
                f"PPI not computed: it needs at least 2 labelled and 2 unlabelled scored rows, "
                f"have {len(joined.rows)} and {len(keys)}{left}."
            )
        result = ppi_mean(
            joined.human(), judge_on_scale, f_unlabelled, confidence=self.options["confidence"]
        )
        return result, (
            f"PPI of the mean human label uses {judged} on {len(keys)} unlabelled rows, "
            f"rectified by {len(joined.rows)} labelled rows{left}."
        )

    def pairwise_report(self, pairs: tuple[PairwisePreference, ...]) -> CalibrationReport:
        if not pairs:
            raise InputError("no pairwise preferences given", field="labels")
        result = pairwise_agreement(pairs, self.judge.values(), **self.options)
        statuses, values = {row.id: row.status for row in self.judge.rows}, self.judge.values()
        unscored = Counter(
            statuses.get(
                s.pair.id_a if values.get(s.pair.id_a) is None else s.pair.id_b, NOT_IN_JUDGE
            )
            for s in result.skipped
        )
        coverage = (
            f"{self.judge.metric} vs pairwise preferences: {result.n_compared} of "
            f"{result.n_pairs} pairs compared ({result.n_human_ties} human ties, "
            f"{result.n_judge_ties} judge ties)"
        )
        if result.skipped:
            coverage += f"; {len(result.skipped)} skipped, e.g. {result.skipped[0].reason}"
        notes = ("Worst disagreements are listed for per-row labels only.",)
        return CalibrationReport(
            metric=self.judge.metric,
            kind="pairwise",
            level="sample",
            scores_source=self.judge.source,
            labels_source="pairwise preferences",
            n=result.n_compared,
            estimates=(result.concordance, result.three_way_agreement),
            coverage=coverage + ".",
            unscored=dict(sorted(unscored.items())),
            judge_statuses=_statuses(self.judge),
            notes=notes,
            pairwise=result,
            confidence=self.options["confidence"],
            n_resamples=self.options["n_resamples"],
            seed=self.options["seed"],
        )

    def _disagreements(
        self, joined: JoinedLabels, scale: tuple[int, int] | None
    ) -> tuple[Disagreement, ...]:
        found = []
        for row in joined.rows:
            if scale is None:
                judge, unrounded = row.score, row.score
            else:
                low, high = scale
                judge = float(to_scale([row.score], low, high)[0])
                unrounded = low + (high - low) * min(1.0, max(0.0, row.score))
            gap = abs(unrounded - row.human)
            if gap == 0.0:
                continue
            found.append(
                Disagreement(
                    id=row.id,
                    claim=row.claim,
                    human=row.human,
                    judge=judge,
                    gap=gap,
                    value=row.score,
                    probability=row.probability,
                    detail=self.details.get(row.id),
                )
            )
        found.sort(key=lambda d: (-d.gap, d.id, -1 if d.claim is None else d.claim))
        return tuple(found[: self.worst])


# --- helpers ----------------------------------------------------------------------------------


def _figure(
    name: str,
    estimate: float | None,
    low: float | None,
    high: float | None,
    n: int,
    method: str,
    reason: str | None,
) -> dict[str, Any]:
    return {
        "name": name,
        "estimate": estimate,
        "low": low,
        "high": high,
        "n": n,
        "method": method,
        "reason": reason,
    }


def _scale(h: FloatArray, scale: tuple[int, int] | None, source: str) -> tuple[int, int]:
    """The ordinal scale: given (every label must lie on it) or the labels' min and max."""
    if scale is None:
        low, high = int(np.min(h)), int(np.max(h))
        if low == high:
            raise InputError(
                f"every label is {low}: give the scale (e.g. 1-5) to map the judge onto",
                source=source,
                field="scale",
            )
        return low, high
    low, high = scale
    if not (isinstance(low, int) and isinstance(high, int) and low < high):
        raise InputError(f"expected integers low < high, got {scale!r}", field="scale")
    off = h[(h < low) | (h > high)]
    if off.size:
        raise InputError(
            f"label {off[0]:g} is off the scale {low}–{high} ({off.size} in total)",
            source=source,
            field="scale",
        )
    return low, high


def _probabilities(joined: JoinedLabels) -> tuple[FloatArray | None, str]:
    """The rows' P(supported), or None and why (all-or-nothing, so n stays comparable)."""
    missing = sum(1 for r in joined.rows if r.probability is None)
    if missing == 0:
        return joined.probabilities(), ""
    if missing == len(joined.rows):
        return None, "the judge gave no support probabilities"
    return None, f"{missing} of {len(joined.rows)} rows have no support probability"


def _scores_by_key(judge: JudgeScores, level: LabelLevel) -> dict[str, float | None]:
    """Key (``id``, or ``id#claim``) → the judge's score as :func:`join_labels` pairs it."""
    if level == "sample":
        return {row.id: row.value for row in judge.rows}
    return {
        _key(row.id, c.index): None if c.verdict is None else float(c.verdict == "supported")
        for row in judge.rows
        for c in row.claims
    }


def _key(id_: str, claim: int | None) -> str:
    return id_ if claim is None else f"{id_}#{claim}"


def _statuses(judge: JudgeScores) -> dict[str, int]:
    counts = Counter(row.status for row in judge.rows)
    if judge.not_judged:
        counts["not_judged"] = len(judge.not_judged)
    return dict(sorted(counts.items()))


def _excluded_note(joined: JoinedLabels, judge: JudgeScores) -> str:
    """What the judge said on rows whose label the mapping excluded (e.g. BEGIN's Generic)."""
    by_id = judge.by_id()
    counts = Counter(by_id[e.id].status if e.id in by_id else NOT_IN_JUDGE for e in joined.excluded)
    said = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
    return (
        f"{len(joined.excluded)} labelled rows have no place on the scale and are left out; "
        f"the judge's statuses on them: {said}."
    )
