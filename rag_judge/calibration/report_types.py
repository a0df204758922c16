"""What a calibration report holds: plain frozen dataclasses, kept apart from the statistics
that fill them (:mod:`rag_judge.calibration.report`) so report writers need only these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rag_judge.calibration.estimate import Estimate
from rag_judge.calibration.labels import LabelLevel
from rag_judge.calibration.pairwise import PairwiseAgreement
from rag_judge.calibration.ppi import PpiResult
from rag_judge.calibration.probability import CalibrationError
from rag_judge.calibration.thresholds import ThresholdSelection

CalibrationKind = Literal["binary", "ordinal", "continuous", "pairwise"]
"""What the human labels are: 0/1, an integer scale, any number, or pairwise preferences."""


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
