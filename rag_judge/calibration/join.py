"""Join human labels to judge scores by id (and claim), accounting for every row.

The result holds the rows that have both a label and a score, and lists everything else:
labelled rows the judge did not score (with the judge's status), labels with no judge row,
judge rows with no label, and labels the mapping excluded. Nothing is dropped silently.

Per-row labels pair with the row's ``value`` and ``probability`` (mean claim support
probability). Per-claim labels pair with the claim's verdict, scored 1.0 for ``supported`` and
0.0 for ``contradicted`` or ``not_mentioned``, and with the claim's ``support_probability``.
Keys in the lists are the row id, or ``id#claim`` for claims.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from rag_judge.calibration._inputs import FloatArray
from rag_judge.calibration.judge_scores import JudgeRow, JudgeScores
from rag_judge.calibration.labels import (
    ExcludedLabel,
    HumanLabel,
    HumanLabels,
    LabelKind,
    LabelLevel,
)
from rag_judge.core.errors import InputError

NOT_JUDGED = "not_judged"
"""Status of a labelled row whose judge output has no result for the metric."""

NO_VERDICT = "no_verdict"
"""Status of a labelled claim that the judge gave no verdict for."""

_SHOWN = 5
"""How many keys :meth:`JoinedLabels.describe` shows per list."""


@dataclass(frozen=True)
class CalibrationRow:
    """A human label and the judge's output for the same row (or claim)."""

    id: str
    claim: int | None
    """0-based claim position for claim-level labels; None for row-level labels."""
    human: float
    """The human label as a number."""
    score: float
    """Row level: the judge's value. Claim level: 1.0 if the verdict is supported, else 0.0."""
    probability: float | None
    """The judge's P(supported) for the row (mean over claims) or claim, when available."""


@dataclass(frozen=True)
class UnscoredRow:
    """A labelled row (or claim) the judge has no score for, and why."""

    id: str
    claim: int | None
    status: str
    """The judge's status (``parse_error``, ``no_claims``, ...), ``not_judged`` or
    ``no_verdict``."""
    error: str | None


@dataclass(frozen=True)
class JoinedLabels:
    """Human labels joined to one metric's judge output, with every leftover listed."""

    metric: str
    kind: LabelKind
    level: LabelLevel
    rows: tuple[CalibrationRow, ...]
    """Labelled and scored, in label order."""
    unscored: tuple[UnscoredRow, ...]
    """Labelled, but the judge has no score."""
    only_in_labels: tuple[str, ...]
    """Keys labelled by humans that the judge output does not contain."""
    only_in_judge: tuple[str, ...]
    """Keys in the judge output that have no human label."""
    excluded: tuple[ExcludedLabel, ...]
    """Labels the mapping sent to None."""

    def human(self) -> FloatArray:
        """Human labels of the joined rows."""
        self._require_rows()
        return np.array([r.human for r in self.rows], dtype=np.float64)

    def scores(self) -> FloatArray:
        """Judge scores of the joined rows (values, or 1/0 verdicts for claims)."""
        self._require_rows()
        return np.array([r.score for r in self.rows], dtype=np.float64)

    def probabilities(self) -> FloatArray:
        """Judge P(supported) of the joined rows.

        Raises:
            InputError: If any joined row has no probability (the backend gave none).
        """
        self._require_rows()
        missing = [_key(r.id, r.claim) for r in self.rows if r.probability is None]
        if missing:
            raise InputError(
                f"{len(missing)} of {len(self.rows)} joined rows have no support probability "
                f"(first: {missing[0]}); probabilities need a backend with log-probabilities"
            )
        return np.array([r.probability for r in self.rows], dtype=np.float64)

    def unscored_by_status(self) -> dict[str, int]:
        """How many labelled rows were unscored, by status."""
        return dict(sorted(Counter(u.status for u in self.unscored).items()))

    def describe(self) -> str:
        """One paragraph: how many rows joined and what was left out, and why."""
        unit = "claims" if self.level == "claim" else "rows"
        parts = [f"{self.metric} vs {self.kind} human labels: {len(self.rows)} {unit} joined"]
        if self.unscored:
            counts = ", ".join(f"{n} {s}" for s, n in self.unscored_by_status().items())
            parts.append(f"{len(self.unscored)} labelled but unscored ({counts})")
        if self.only_in_labels:
            parts.append(
                f"{len(self.only_in_labels)} labelled but not in the judge output "
                f"({_preview(self.only_in_labels)})"
            )
        if self.only_in_judge:
            parts.append(
                f"{len(self.only_in_judge)} judged but not labelled "
                f"({_preview(self.only_in_judge)})"
            )
        if self.excluded:
            labels = Counter(e.label for e in self.excluded)
            shown = ", ".join(f"{label} ×{n}" for label, n in sorted(labels.items()))
            parts.append(f"{len(self.excluded)} labels excluded by the mapping ({shown})")
        return "; ".join(parts) + "."

    def _require_rows(self) -> None:
        if not self.rows:
            raise InputError(f"no labelled row has a judge score: {self.describe()}")


def join_labels(judge: JudgeScores, labels: HumanLabels) -> JoinedLabels:
    """Pair every human label with the judge's output for the same id (and claim).

    Raises:
        InputError: If a claim label's ``claim_text`` differs from the judge's claim at that
            position (the labels were made for other claims), naming the label's file:line.
    """
    by_id = judge.by_id()
    not_judged = set(judge.not_judged)
    rows: list[CalibrationRow] = []
    unscored: list[UnscoredRow] = []
    only_in_labels: list[str] = []
    for label in labels.labels:
        row = by_id.get(label.id)
        if row is None:
            if label.id in not_judged:
                unscored.append(UnscoredRow(label.id, label.claim, NOT_JUDGED, None))
            else:
                only_in_labels.append(_key(label.id, label.claim))
            continue
        joined = _pair(row, label, labels.source)
        if isinstance(joined, CalibrationRow):
            rows.append(joined)
        elif isinstance(joined, UnscoredRow):
            unscored.append(joined)
        else:
            only_in_labels.append(joined)
    labelled = {(x.id, x.claim) for x in labels.labels}
    labelled.update((x.id, x.claim) for x in labels.excluded)
    judged: list[tuple[str, int | None]]
    if labels.level == "claim":
        judged = [(r.id, c.index) for r in judge.rows for c in r.claims]
    else:
        judged = [(r.id, None) for r in judge.rows]
    only_in_judge = tuple(_key(i, c) for i, c in judged if (i, c) not in labelled)
    return JoinedLabels(
        metric=judge.metric,
        kind=labels.kind,
        level=labels.level,
        rows=tuple(rows),
        unscored=tuple(unscored),
        only_in_labels=tuple(only_in_labels),
        only_in_judge=only_in_judge,
        excluded=labels.excluded,
    )


def _pair(row: JudgeRow, label: HumanLabel, source: str) -> CalibrationRow | UnscoredRow | str:
    """The joined row, the unscored entry, or the key when the judge has no such claim."""
    if label.claim is None:
        if row.value is None:
            return UnscoredRow(row.id, None, row.status, row.error)
        return CalibrationRow(row.id, None, label.value, row.value, row.probability)
    if not row.claims and row.status != "ok":
        return UnscoredRow(row.id, label.claim, row.status, row.error)
    if label.claim >= len(row.claims):
        return _key(row.id, label.claim)
    claim = row.claims[label.claim]
    if label.claim_text is not None and label.claim_text.strip() != claim.claim.strip():
        raise InputError(
            f"the label is for claim {label.claim_text!r}, but claim {label.claim} of row "
            f"'{row.id}' in the judge output is {claim.claim!r}",
            source=source,
            line=label.line,
            field="claim_text",
        )
    if claim.verdict is None:
        return UnscoredRow(row.id, label.claim, NO_VERDICT, None)
    score = 1.0 if claim.verdict == "supported" else 0.0
    return CalibrationRow(row.id, label.claim, label.value, score, claim.support_probability)


def _key(id_: str, claim: int | None) -> str:
    return id_ if claim is None else f"{id_}#{claim}"


def _preview(keys: tuple[str, ...]) -> str:
    shown = ", ".join(keys[:_SHOWN])
    return shown + (f", … {len(keys) - _SHOWN} more" if len(keys) > _SHOWN else "")
