"""The labelling log ``rag-judge label -o`` writes: an append-only JSON Lines event log.

Each line is one event, written and synced to disk when the labeller gives it, so a closed tab
or a killed server loses nothing:

- a label: ``{"id": "dev001", "label": 1, "metric": ..., "annotator": "alice", "note": "",
  "claims": [{"claim": 0, "label": 1, "claim_text": ...}], "sampling": {...}, "at": ...}``,
  where ``label`` is 1 (supported), 0 (not supported) or null with ``"skipped": true``, and
  ``claims`` (optional) holds per-claim labels by 0-based claim position;
- an undo: ``{"id": "dev001", "undo": true, "annotator": ..., "sampling": {...}, "at": ...}``.

``sampling`` (``strategy``, ``seed``, ``sample``, ``population``, ``scores``) says which rows
were offered, and is the same on every event of one log. Folding keeps the last event per id;
an undo returns the id to unlabelled. :func:`rag_judge.calibration.labels.read_human_labels`
folds such a file first, so ``calibrate --labels`` reads it as it reads a plain labels file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from rag_judge.data.readers import Row, Where, numbered_records, read_jsonl

ID = "id"
LABEL = "label"
METRIC = "metric"
ANNOTATOR = "annotator"
NOTE = "note"
CLAIMS = "claims"
CLAIM = "claim"
CLAIM_TEXT = "claim_text"
SAMPLING = "sampling"
SKIPPED = "skipped"
UNDO = "undo"
AT = "at"


@dataclass(frozen=True)
class Sampling:
    """Which rows of which score file a labelling session offers, in which order."""

    strategy: str
    """``random``, ``stratified`` or ``uncertain`` (:mod:`rag_judge.calibration.sampling`), or
    ``all``: every scored row, in file order."""
    seed: int | None
    """The sampling seed; None with ``all``."""
    sample: int | None
    """The sample size asked for; None with ``all``."""
    population: int
    """How many scored rows the sample was drawn from."""
    scores: str
    """The score file, as its path was given."""

    def to_json(self) -> dict[str, Any]:
        """The ``sampling`` object of an event."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def differences(self, other: Sampling) -> list[str]:
        """``name: this vs other`` for each field that differs (``scores`` compared as text)."""
        return [
            f"{f.name}: {getattr(self, f.name)!r} vs {getattr(other, f.name)!r}"
            for f in fields(self)
            if getattr(self, f.name) != getattr(other, f.name)
        ]


@dataclass(frozen=True)
class ClaimLabel:
    """A person's label of one claim of the judge's output."""

    claim: int
    """0-based position of the claim in the judge's output for the row."""
    label: int
    """1 supported, 0 not supported."""
    claim_text: str | None = None
    """The claim as the labeller saw it."""


@dataclass(frozen=True)
class RowLabel:
    """The standing label of one row: the last event for its id, when that is no undo."""

    id: str
    label: int | None
    """1 supported, 0 not supported, None skipped."""
    note: str
    claims: tuple[ClaimLabel, ...]
    annotator: str | None
    metric: str | None
    at: str | None
    where: Where
    """The event's line."""

    @property
    def skipped(self) -> bool:
        """The labeller skipped the row: it is no label."""
        return self.label is None


@dataclass(frozen=True)
class LabelLog:
    """A folded labelling log."""

    rows: tuple[RowLabel, ...]
    """Labelled and skipped rows, in the order each was first labelled."""
    order: tuple[str, ...]
    """The same ids in the order of their standing events, latest last: what undo takes back."""
    sampling: Sampling | None
    """None for an empty log."""
    annotator: str | None
    """Who gave the last event."""
    events: int

    @property
    def labels(self) -> dict[str, int]:
        """Id → label of every labelled (not skipped) row."""
        return {row.id: row.label for row in self.rows if row.label is not None}

    @property
    def skipped(self) -> tuple[str, ...]:
        """Ids of skipped rows."""
        return tuple(row.id for row in self.rows if row.skipped)

    @property
    def notes(self) -> dict[str, str]:
        """Id → note, for the rows with one."""
        return {row.id: row.note for row in self.rows if row.note}

    @property
    def claim_labels(self) -> dict[tuple[str, int], ClaimLabel]:
        """(id, claim) → the claim's label, for labelled rows."""
        return {(row.id, c.claim): c for row in self.rows if not row.skipped for c in row.claims}

    @property
    def done(self) -> frozenset[str]:
        """Ids labelled or skipped."""
        return frozenset(row.id for row in self.rows)


def now() -> str:
    """An event's time: UTC, to the second, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def label_event(
    id_: str,
    label: int | None,
    *,
    metric: str,
    annotator: str,
    sampling: Sampling,
    note: str = "",
    claims: Iterable[ClaimLabel] = (),
    at: str | None = None,
) -> dict[str, Any]:
    """A label event; ``label`` None is a skip."""
    event: dict[str, Any] = {ID: id_, LABEL: label}
    if label is None:
        event[SKIPPED] = True
    event |= {METRIC: metric, ANNOTATOR: annotator, NOTE: note}
    given = [
        {CLAIM: c.claim, LABEL: c.label, **({CLAIM_TEXT: c.claim_text} if c.claim_text else {})}
        for c in claims
    ]
    if given and label is not None:
        event[CLAIMS] = given
    return event | {SAMPLING: sampling.to_json(), AT: at or now()}


def undo_event(
    id_: str, *, annotator: str, sampling: Sampling, at: str | None = None
) -> dict[str, Any]:
    """An undo event: ``id_`` is unlabelled again."""
    return {
        ID: id_,
        UNDO: True,
        ANNOTATOR: annotator,
        SAMPLING: sampling.to_json(),
        AT: at or now(),
    }


def is_label_log(records: Iterable[Mapping[str, Any]]) -> bool:
    """Whether these records are a labelling log (they carry ``sampling``), not plain labels."""
    return any(isinstance(record, Mapping) and SAMPLING in record for record in records)


def read_label_log(path: str | os.PathLike[str]) -> LabelLog:
    """Read and fold a labelling log.

    Raises:
        InputError: Naming file:line and field, for a malformed event or a ``sampling`` that
            differs from the first event's.
    """
    return fold_label_rows(read_jsonl(path))


def fold_label_log(records: Iterable[Mapping[str, Any]], *, source: str = "records") -> LabelLog:
    """Fold events already in memory (errors name the 0-based row)."""
    return fold_label_rows(numbered_records(records, source))


def fold_label_rows(rows: Iterable[Row]) -> LabelLog:
    """Fold events, each with where it came from: the last event per id wins.

    Raises:
        InputError: As :func:`read_label_log`.
    """
    standing: dict[str, RowLabel | None] = {}  # insertion order: first labelled
    order: dict[str, None] = {}
    sampling: Sampling | None = None
    first: Where | None = None
    annotator: str | None = None
    events = 0
    for where, record in rows:
        events += 1
        found = _sampling(record.get(SAMPLING), where)
        if sampling is None:
            sampling, first = found, where
        elif found != sampling:
            differ = "; ".join(found.differences(sampling))
            raise where.error(f"the sampling differs from {first}'s ({differ})", SAMPLING)
        id_ = _id(record, where)
        annotator = _optional_text(record, ANNOTATOR, where)
        order.pop(id_, None)
        if record.get(UNDO) is True:
            if id_ in standing:
                standing[id_] = None
            continue
        standing[id_] = _row_label(record, id_, annotator, where)
        order[id_] = None
    rows_ = tuple(row for row in standing.values() if row is not None)
    return LabelLog(rows_, tuple(order), sampling, annotator, events)


def _row_label(
    record: Mapping[str, Any], id_: str, annotator: str | None, where: Where
) -> RowLabel:
    if LABEL not in record:
        raise where.error("an event is a label (with 'label') or an undo ('undo': true)", LABEL)
    label = record[LABEL]
    if label is not None and (isinstance(label, bool) or label not in (0, 1)):
        raise where.error(f"expected 1, 0 or null (skipped), got {label!r}", LABEL)
    if label is not None and record.get(SKIPPED):
        raise where.error("a skipped row has label null", SKIPPED)
    claims = record.get(CLAIMS) or []
    if not isinstance(claims, list):
        raise where.error("expected a list of claim labels", CLAIMS)
    return RowLabel(
        id=id_,
        label=None if label is None else int(label),
        note=_optional_text(record, NOTE, where) or "",
        claims=tuple(_claim(c, i, where) for i, c in enumerate(claims)),
        annotator=annotator,
        metric=_optional_text(record, METRIC, where),
        at=_optional_text(record, AT, where),
        where=where,
    )


def _claim(value: Any, i: int, where: Where) -> ClaimLabel:
    field = f"{CLAIMS}[{i}]"
    if not isinstance(value, dict):
        raise where.error("expected {'claim': position, 'label': 1 or 0}", field)
    claim, label, text = value.get(CLAIM), value.get(LABEL), value.get(CLAIM_TEXT)
    if not isinstance(claim, int) or isinstance(claim, bool) or claim < 0:
        raise where.error(f"expected a 0-based claim position, got {claim!r}", f"{field}.{CLAIM}")
    if isinstance(label, bool) or label not in (0, 1):
        raise where.error(f"expected 1 or 0, got {label!r}", f"{field}.{LABEL}")
    if text is not None and not isinstance(text, str):
        raise where.error("expected a string", f"{field}.{CLAIM_TEXT}")
    return ClaimLabel(claim, int(label), text)


def _sampling(value: Any, where: Where) -> Sampling:
    if not isinstance(value, dict):
        raise where.error("every event of a labelling log carries its sampling", SAMPLING)
    strategy, seed, sample = value.get("strategy"), value.get("seed"), value.get("sample")
    population, scores = value.get("population"), value.get("scores")
    if not isinstance(strategy, str) or not isinstance(scores, str):
        raise where.error("expected 'strategy' and 'scores' strings", SAMPLING)
    checked = (("seed", seed, True), ("sample", sample, True), ("population", population, False))
    for name, number, optional in checked:
        if not (type(number) is int or (number is None and optional)):
            raise where.error(f"expected an integer, got {number!r}", f"{SAMPLING}.{name}")
    return Sampling(
        strategy, seed, sample, population if isinstance(population, int) else 0, scores
    )


def _id(record: Mapping[str, Any], where: Where) -> str:
    value = record.get(ID)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value:
        return value
    raise where.error(f"expected a non-empty string id, got {value!r}", ID)


def _optional_text(record: Mapping[str, Any], field: str, where: Where) -> str | None:
    value = record.get(field)
    if value is not None and not isinstance(value, str):
        raise where.error(f"expected a string, got {value!r}", field)
    return value
