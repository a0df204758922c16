"""Human labels for calibration: one label per row (or per claim), or pairwise preferences.

A label file is JSON Lines, one object per line:

- per row: ``{"id": "q1", "label": 1}``;
- per claim (``level="claim"``): ``{"id": "q1", "claim": 0, "label": 1}``, where ``claim`` is
  the 0-based position of the claim in the judge's output for that row, and an optional
  ``"claim_text"`` is checked against the judge's claim text when joining;
- pairwise: ``{"id_a": "q1", "id_b": "q2", "preferred": "a"}`` (``"a"``, ``"b"`` or ``"tie"``).

Label kinds: ``binary`` (1 = supported, 0 = unsupported; JSON true/false, 0/1, or the strings
"true"/"false"), ``ordinal`` (integers, e.g. 1–5) and ``continuous`` (any finite number).
Named classes go through a ``mapping`` (e.g. ``{"attributable": 1, "not_attributable": 0,
"generic": None}``); a class mapped to None is excluded and listed in ``excluded``, never
dropped silently. Ids may be strings or integers (read as their decimal string).

A labelling log (what ``rag-judge label`` writes, :mod:`rag_judge.calibration.label_log`: its
lines carry ``sampling``) is folded first: the last event per id counts, undone and skipped
rows are no labels, and its per-claim labels are read with ``level="claim"``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rag_judge.calibration.label_log import LabelLog, fold_label_rows, is_label_log
from rag_judge.core.errors import InputError
from rag_judge.data.readers import Row, Where, numbered_records, read_jsonl

LabelKind = Literal["binary", "ordinal", "continuous"]
"""How to read and check a label value."""

LabelLevel = Literal["sample", "claim"]
"""Whether a label is about a whole row or about one claim of the judge's output for a row."""

Preference = Literal["a", "b", "tie"]
"""Which of two rows a human preferred."""

LabelMapping = Mapping[Any, float | None]
"""Raw label value (e.g. a class name) → number, or None to exclude rows with that label."""


@dataclass(frozen=True)
class HumanLabel:
    """One human label, as a number."""

    id: str
    """Row id, as in the judge's output."""
    claim: int | None
    """0-based claim position for claim-level labels; None for row-level labels."""
    value: float
    """The label: 0/1 (binary), an integer (ordinal) or a number (continuous)."""
    line: int | None
    """Line in the label file (1-based), or None for labels given in memory."""
    claim_text: str | None = None
    """The claim as the labeller saw it; checked against the judge's claim when joining."""


@dataclass(frozen=True)
class ExcludedLabel:
    """A labelled row left out on purpose because its label is mapped to None."""

    id: str
    claim: int | None
    label: str
    """The raw label, as written (``repr`` of the JSON value)."""
    line: int | None


@dataclass(frozen=True)
class HumanLabels:
    """Human labels read from one source, in source order."""

    source: str
    kind: LabelKind
    level: LabelLevel
    labels: tuple[HumanLabel, ...]
    excluded: tuple[ExcludedLabel, ...]
    """Rows whose label the mapping sends to None, e.g. "generic" in BEGIN."""


@dataclass(frozen=True)
class PairwisePreference:
    """One human judgement of which of two rows' answers is better."""

    id_a: str
    id_b: str
    preferred: Preference
    line: int | None = None
    """Line in the label file (1-based), or None for preferences given in memory."""


def read_human_labels(
    path: str | os.PathLike[str],
    kind: LabelKind,
    *,
    mapping: LabelMapping | None = None,
    level: LabelLevel = "sample",
    label_field: str = "label",
) -> HumanLabels:
    """Read per-row or per-claim human labels from a JSON Lines file (see the module docstring).

    Raises:
        InputError: Naming file:line and field, for a missing or malformed id, claim or label,
            a label outside the kind or the mapping, or an id (and claim) labelled twice.
    """
    rows = list(read_jsonl(path))
    if is_label_log(record for _, record in rows):
        rows = _folded(fold_label_rows(rows), level, label_field)
    return _parse_labels(iter(rows), str(path), kind, mapping, level, label_field)


def human_labels_from_records(
    records: Iterable[Mapping[str, Any]],
    kind: LabelKind,
    *,
    mapping: LabelMapping | None = None,
    level: LabelLevel = "sample",
    label_field: str = "label",
    source: str = "records",
) -> HumanLabels:
    """Like :func:`read_human_labels`, for label records already in memory (errors name the row).

    Raises:
        InputError: As :func:`read_human_labels`, naming the 0-based row instead of a line.
    """
    numbered = numbered_records(records, source)
    return _parse_labels(numbered, source, kind, mapping, level, label_field)


def read_pairwise_labels(path: str | os.PathLike[str]) -> tuple[PairwisePreference, ...]:
    """Read pairwise preferences ``{"id_a", "id_b", "preferred": "a"|"b"|"tie"}`` from JSONL.

    Raises:
        InputError: Naming file:line and field, for a missing or malformed id, the same id on
            both sides, or a ``preferred`` other than "a", "b" or "tie".
    """
    out = []
    for where, record in read_jsonl(path):
        id_a = _read_id(record, "id_a", where)
        id_b = _read_id(record, "id_b", where)
        if id_a == id_b:
            raise where.error(f"a pair compares row '{id_a}' with itself", "id_b")
        preferred = record.get("preferred")
        if preferred not in ("a", "b", "tie"):
            raise where.error(f"expected 'a', 'b' or 'tie', got {preferred!r}", "preferred")
        out.append(PairwisePreference(id_a, id_b, preferred, where.line))
    return tuple(out)


# --- parsing ----------------------------------------------------------------------------------


def _parse_labels(
    numbered: Iterator[tuple[Where, dict[str, Any]]],
    source: str,
    kind: LabelKind,
    mapping: LabelMapping | None,
    level: LabelLevel,
    label_field: str,
) -> HumanLabels:
    if kind not in ("binary", "ordinal", "continuous"):
        raise InputError(f"unknown label kind {kind!r}: use binary, ordinal or continuous")
    if level not in ("sample", "claim"):
        raise InputError(f"unknown label level {level!r}: use 'sample' or 'claim'")
    if mapping is not None:
        _check_mapping(mapping, kind)
    labels: list[HumanLabel] = []
    excluded: list[ExcludedLabel] = []
    seen: dict[tuple[str, int | None], Where] = {}
    for where, record in numbered:
        line = where.line
        id_ = _read_id(record, "id", where)
        claim = _read_claim(record, where) if level == "claim" else None
        key = (id_, claim)
        if key in seen:
            what = f"row '{id_}'" + ("" if claim is None else f" claim {claim}")
            raise where.error(f"{what} is labelled twice (first at {seen[key]})", "id")
        seen[key] = where
        if label_field not in record:
            raise where.error("missing label", label_field)
        raw = record[label_field]
        value = _read_value(raw, kind, mapping, where, label_field)
        if value is None:
            excluded.append(ExcludedLabel(id_, claim, repr(raw), line))
            continue
        text = record.get("claim_text")
        if text is not None and not isinstance(text, str):
            raise where.error("claim_text must be a string", "claim_text")
        labels.append(HumanLabel(id_, claim, value, line, text))
    return HumanLabels(source, kind, level, tuple(labels), tuple(excluded))


def _folded(log: LabelLog, level: LabelLevel, label_field: str) -> list[Row]:
    """A folded labelling log as plain label rows, each at its standing event's line."""
    if level == "sample":
        return [
            (row.where, {"id": row.id, label_field: row.label})
            for row in log.rows
            if row.label is not None
        ]
    return [
        (
            row.where,
            {"id": row.id, "claim": c.claim, label_field: c.label, "claim_text": c.claim_text},
        )
        for row in log.rows
        if row.label is not None
        for c in row.claims
    ]


def _read_id(record: Mapping[str, Any], field: str, where: Where) -> str:
    value = record.get(field)
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    problem = "missing id" if value is None else f"expected a non-empty string id, got {value!r}"
    raise where.error(problem, field)


def _read_claim(record: Mapping[str, Any], where: Where) -> int:
    value = record.get("claim")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise where.error(
        f"claim-level labels need 'claim', the 0-based claim position; got {value!r}", "claim"
    )


def _read_value(
    raw: Any,
    kind: LabelKind,
    mapping: LabelMapping | None,
    where: Where,
    field: str,
) -> float | None:
    """The label as a number; None when the mapping excludes it."""
    if mapping is not None:
        try:
            mapped = mapping[raw]
        except (KeyError, TypeError):
            known = ", ".join(repr(k) for k in mapping)
            raise where.error(
                f"label {raw!r} is not in the mapping (known: {known})", field
            ) from None
        return None if mapped is None else float(mapped)
    value = _as_number(raw, kind)
    if value is None:
        expected = {
            "binary": "0/1, true/false, or a class name with a mapping",
            "ordinal": "an integer, or a class name with a mapping",
            "continuous": "a finite number",
        }[kind]
        raise where.error(f"expected {expected}, got {raw!r}", field)
    return value


def _as_number(raw: Any, kind: LabelKind) -> float | None:
    """``raw`` as a valid number of this kind, or None when it is not one."""
    if kind == "binary":
        if isinstance(raw, bool):
            return float(raw)
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return 1.0 if raw.strip().lower() == "true" else 0.0
        return float(raw) if _is_number(raw) and raw in (0, 1) else None
    if not _is_number(raw):
        return None
    if kind == "ordinal" and not float(raw).is_integer():
        return None
    return float(raw)


def _is_number(raw: Any) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw)


def _check_mapping(mapping: LabelMapping, kind: LabelKind) -> None:
    for key, value in mapping.items():
        if value is None:
            continue
        if kind == "binary" and (not _is_number(value) or value not in (0, 1)):
            problem = "must map to 0, 1 or None"
        elif kind == "ordinal" and (not _is_number(value) or not float(value).is_integer()):
            problem = "must map to an integer or None"
        elif not _is_number(value):
            problem = "must map to a finite number or None"
        else:
            continue
        raise InputError(f"label {key!r} {problem}, got {value!r}", field="mapping")
