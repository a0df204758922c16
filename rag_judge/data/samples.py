"""Load the rows to judge from a file, a DataFrame, a Hugging Face dataset or a list of dicts.

Columns are matched by name, case-sensitively, in ragas' spelling or ours (see
``COLUMN_ALIASES``); ``columns=`` maps any other name. Every other column is carried into
``metadata`` as JSON-safe values, and a ``metadata`` column of mappings is merged into it, so
``load_samples(samples_to_records(samples)) == samples``.

No value is ever NaN: a missing, NaN or blank question, answer or reference is None.
``contexts`` is a list of strings; a string holding a JSON array (or a Python list literal, as
``DataFrame.to_csv`` writes lists) is parsed, for CSV's sake. Errors name the file and line
(JSONL, CSV, TSV) or the 0-based row (JSON, Parquet, in-memory rows) and the column.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import math
from collections.abc import Iterable, Mapping
from itertools import islice
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.core.types import RagSample
from rag_judge.data.readers import (
    SUPPORTED_SUFFIXES,
    Row,
    SampleSource,
    Where,
    describe,
    open_rows,
)

__all__ = [
    "COLUMN_ALIASES",
    "SAMPLE_FIELDS",
    "SUPPORTED_SUFFIXES",
    "SampleSource",
    "load_samples",
    "samples_to_records",
]

SAMPLE_FIELDS = ("id", "question", "contexts", "answer", "reference", "references", "language")
"""The fields of ``RagSample`` filled from columns, in output order (``metadata`` follows)."""

COLUMN_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "id": ("id", "sample_id", "qid"),
        "question": ("question", "user_input", "query"),
        "contexts": ("contexts", "retrieved_contexts"),
        "answer": ("answer", "response"),
        "reference": ("reference", "ground_truth", "reference_answer", "ground_truths"),
        "references": ("references", "reference_answers"),
        "language": ("language", "lang"),
    }
)
"""Accepted column names per field. ragas v1 ``ground_truths`` (a list) is joined by newlines:
it lists facts a reference states. ``references`` lists alternative answers, any one of which
is right (exact match and F1 take the best); without a ``reference`` its first is the reference."""


_CONTENT_FIELDS = ("question", "contexts", "answer", "reference")
_LIST_HINT = "expected a list of strings (a JSON array in CSV)"


def load_samples(
    source: SampleSource,
    *,
    columns: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> list[RagSample]:
    """Read rows to judge from ``source`` (see ``SampleSource``) as ``RagSample``s.

    Args:
        source: A ``.jsonl``/``.json``/``.csv``/``.tsv``/``.parquet`` path, a DataFrame, a
            Hugging Face ``Dataset`` or an iterable of mappings.
        columns: ``{field: column}`` for columns not named as in ``COLUMN_ALIASES``; a field
            named here reads only that column.
        limit: Keep only the first ``limit`` rows (later rows are not read).

    Raises:
        InputError: The source cannot be read, has no question/contexts/answer/reference
            column, or a row is bad (the message names the file and line, or the row).
    """
    if limit is not None and limit < 0:
        raise InputError(f"limit must be 0 or more, got {limit}")
    name, rows_iter = open_rows(source)
    rows = list(islice(rows_iter, limit))
    if not rows:
        if limit == 0:
            return []
        raise InputError("no rows found", source=name)
    aliases = _resolve_aliases(columns or {}, rows, name)
    samples = [_to_sample(where, row, aliases) for where, row in rows]
    _check_unique_ids(samples, [where for where, _ in rows])
    return samples


def samples_to_records(samples: Iterable[RagSample]) -> list[dict[str, Any]]:
    """JSON-safe dicts with our field names and a ``metadata`` dict, ready to write as JSON."""
    fields = (*SAMPLE_FIELDS, "metadata")
    return [{f: _json_safe(getattr(s, f)) for f in fields} for s in samples]


def _resolve_aliases(
    columns: Mapping[str, str], rows: list[Row], source: str
) -> dict[str, tuple[str, ...]]:
    """Column names to read per field: ``columns`` where given, else the unclaimed aliases."""
    present = {name for _, row in rows for name in row}
    found = ", ".join(sorted(present)) or "none"
    for field, column in columns.items():
        if field not in SAMPLE_FIELDS or not isinstance(column, str):
            raise InputError(
                f"columns= maps fields ({', '.join(SAMPLE_FIELDS)}) to column names, "
                f"got {field!r}: {column!r}"
            )
        if column not in present:
            raise InputError(f"no column '{column}' (for {field}); found {found}", source=source)
    claimed = set(columns.values())
    aliases = {
        f: (columns[f],)
        if f in columns
        else tuple(a for a in COLUMN_ALIASES[f] if a not in claimed)
        for f in SAMPLE_FIELDS
    }
    if not any(name in present for f in _CONTENT_FIELDS for name in aliases[f]):
        accepted = "; ".join(f"{f}: {'|'.join(COLUMN_ALIASES[f])}" for f in _CONTENT_FIELDS)
        raise InputError(
            f"no question, contexts, answer or reference column (accepted: {accepted}; "
            f"found {found}); map yours with columns=",
            source=source,
        )
    return aliases


def _to_sample(where: Where, row: dict[str, Any], aliases: dict[str, tuple[str, ...]]) -> RagSample:
    values = {field: _pick(field, aliases[field], row, where) for field in SAMPLE_FIELDS}
    values["id"] = values["id"] or str(where.position)
    values["references"] = values["references"] or ()
    if values["reference"] is None and values["references"]:
        values["reference"] = values["references"][0]
    return RagSample(**values, metadata=_metadata(row, aliases, where))


MAX_DEPTH = 64
"""How deeply a carried-through column may nest lists and objects: deeper is no metadata anyone
means, and it would exhaust the stack wherever it is copied or written."""


def _metadata(
    row: dict[str, Any], aliases: dict[str, tuple[str, ...]], where: Where
) -> dict[str, Any]:
    """The unclaimed columns; a ``metadata`` column holding a mapping is merged in."""
    claimed = {name for names in aliases.values() for name in names}
    extra = {key: value for key, value in row.items() if key not in claimed}
    for key, value in extra.items():
        if _depth(value) > MAX_DEPTH:
            raise where.error(f"nested deeper than {MAX_DEPTH} levels", key)
    nested = extra.get("metadata")
    if isinstance(nested, Mapping):
        del extra["metadata"]
        extra = {**nested, **extra}
    safe: dict[str, Any] = _json_safe(extra)
    return safe


def _pick(field: str, names: tuple[str, ...], row: dict[str, Any], where: Where) -> Any:
    """The field's value from the first alias that has one; aliases that disagree are an error."""
    found = [(name, _normalise(field, row[name], name, where)) for name in names if name in row]
    given = [(name, value) for name, value in found if value not in (None, ())]
    for name, value in given[1:]:
        if value != given[0][1]:
            raise where.error(
                f"columns '{given[0][0]}' and '{name}' give different values; keep one "
                "or choose with columns=",
                field=field,
            )
    if given:
        return given[0][1]
    return next((value for _, value in found if value is not None), None)


def _normalise(field: str, value: Any, column: str, where: Where) -> Any:
    value = _native(value)
    if field == "contexts":
        return _contexts(value, column, where)
    if field == "references":
        return _references(value, column, where)
    if field == "reference":
        return _joined(value, column, where)
    if field == "id" and isinstance(value, float) and value.is_integer():
        value = int(value)  # pandas turns an integer column with gaps into floats
    return _text(value, column, where)


def _text(value: Any, column: str, where: Where) -> str | None:
    if value is None or isinstance(value, str):
        return value if value and value.strip() else None
    if isinstance(value, float) and not math.isfinite(value):  # JSON's Infinity: no text
        raise where.error(f"expected a string, got the number {value}", field=column)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise where.error(f"expected a string, got {describe(value)}", field=column)


def _contexts(value: Any, column: str, where: Where) -> tuple[str, ...] | None:
    if isinstance(value, str) and value.strip():
        value = _parse_list(value)
        if value is None:
            raise where.error(f"{_LIST_HINT}, got a string that is not one", column)
    if value is None or isinstance(value, str):
        return None
    if not _is_list(value):
        raise where.error(f"{_LIST_HINT}, got {describe(value)}", column)
    return tuple(_strings(value, column, where))


def _references(value: Any, column: str, where: Where) -> tuple[str, ...] | None:
    """Alternative reference answers: a list of strings (a JSON array in CSV) or one string;
    blank ones are left out."""
    items = _parse_list(value) if isinstance(value, str) else value
    if isinstance(items, str) or items is None:
        text = _text(items, column, where)
        return (text,) if text else None
    if not _is_list(items):
        raise where.error(f"{_LIST_HINT}, got {describe(value)}", column)
    kept = tuple(s for s in _strings(items, column, where) if s.strip())
    return kept or None


def _joined(value: Any, column: str, where: Where) -> str | None:
    """A reference given as a list (ragas v1 ``ground_truths``), joined by newlines."""
    items = _parse_list(value) if isinstance(value, str) else value
    if not _is_list(items):
        return _text(value, column, where)
    return _text("\n".join(_strings(items, column, where)), column, where)


def _strings(values: Any, column: str, where: Where) -> list[str]:
    out = []
    for index, item in enumerate(values):
        if not isinstance(item, str):
            raise where.error(f"element {index} is {describe(item)}, expected a string", column)
        out.append(str(item))
    return out


def _parse_list(text: str) -> list[Any] | None:
    """A JSON array (or Python list literal) in ``text``, else None."""
    stripped = text.strip()
    if not stripped.startswith("["):
        return None
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        try:
            parsed = ast.literal_eval(stripped)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    return parsed if isinstance(parsed, list) else None


def _depth(value: Any) -> int:
    """How deeply ``value`` nests lists, tuples and mappings (counted without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[Any] = item.values()
        elif _is_list(item):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def _check_unique_ids(samples: list[RagSample], wheres: list[Where]) -> None:
    seen: dict[str, Where] = {}
    for sample, where in zip(samples, wheres, strict=True):
        first = seen.setdefault(sample.id, where)
        if first is not where:
            at = f"line {first.line}" if first.line is not None else f"row {first.position}"
            raise where.error(f"duplicate id '{sample.id}', first at {at}", "id")


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray)


def _native(value: Any) -> Any:
    """Python scalars for numpy ones, None for None/NaN/NA/NaT."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _json_safe(value: Any) -> Any:
    value = _native(value)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if _is_list(value):
        return [_json_safe(v) for v in value]
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)
