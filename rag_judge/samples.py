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
import csv
import datetime as dt
import io
import json
import math
import os
import reprlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from rag_judge.errors import InputError
from rag_judge.types import RagSample

SAMPLE_FIELDS = ("id", "question", "contexts", "answer", "reference", "language")
"""The fields of ``RagSample`` filled from columns, in output order (``metadata`` follows)."""

COLUMN_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "id": ("id", "sample_id", "qid"),
        "question": ("question", "user_input", "query"),
        "contexts": ("contexts", "retrieved_contexts"),
        "answer": ("answer", "response"),
        "reference": ("reference", "ground_truth", "reference_answer", "ground_truths"),
        "language": ("language", "lang"),
    }
)
"""Accepted column names per field. ragas v1 ``ground_truths`` (a list) is joined by newlines."""

SUPPORTED_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet")
"""File types ``load_samples`` reads, by extension (case-insensitive)."""

SampleSource = str | os.PathLike[str] | pd.DataFrame | Iterable[Mapping[str, Any]]
"""A path, a DataFrame, a ``datasets.Dataset`` (or anything with ``to_list``/``to_pandas``),
or rows as mappings."""

_CONTENT_FIELDS = ("question", "contexts", "answer", "reference")
_LIST_HINT = "expected a list of strings (a JSON array in CSV)"


@dataclass(frozen=True)
class _Where:
    """Where a row came from, for error messages; ``position`` also gives the default id."""

    source: str
    position: int
    line: int | None = None

    def error(self, message: str, field: str | None = None) -> InputError:
        row = self.position if self.line is None else None
        return InputError(message, source=self.source, line=self.line, row=row, field=field)


_Row = tuple[_Where, dict[str, Any]]


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
    name, rows_iter = _open(source)
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


def _open(source: SampleSource) -> tuple[str, Iterator[_Row]]:
    if isinstance(source, str | os.PathLike):
        return _open_file(Path(source))
    name = type(source).__name__
    if isinstance(source, pd.DataFrame):
        return name, _frame_rows(source, name)
    to_list = getattr(source, "to_list", None)  # datasets.Dataset, without importing datasets
    if callable(to_list):
        return name, _mapping_rows(to_list(), name)
    to_pandas = getattr(source, "to_pandas", None)
    if callable(to_pandas):
        return name, _frame_rows(to_pandas(), name)
    if isinstance(source, Mapping):
        raise InputError(
            "expected rows, got a mapping (for a DatasetDict pick a split: ds['test'])",
            source=name,
        )
    if isinstance(source, Iterable):
        return name, _mapping_rows(source, name)
    raise InputError("cannot read rows from this; pass a path, a DataFrame, a Dataset or dicts")


def _open_file(path: Path) -> tuple[str, Iterator[_Row]]:
    name, suffix = str(path), path.suffix.lower()
    if not path.exists():
        raise InputError("file not found", source=name)
    if suffix not in SUPPORTED_SUFFIXES:
        supported = ", ".join(SUPPORTED_SUFFIXES)
        raise InputError(f"unknown file type '{suffix}': use one of {supported}", source=name)
    if suffix == ".parquet":
        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as error:
            raise InputError(f"cannot read as Parquet: {error}", source=name) from None
        return name, _frame_rows(frame, name)
    text = _read_text(path)
    if suffix == ".jsonl":
        return name, _jsonl_rows(text, name)
    if suffix == ".json":
        return name, _json_rows(text, name)
    return name, _delimited_rows(text, name, "\t" if suffix == ".tsv" else ",")


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # -sig: spreadsheets write a BOM
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason})", source=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", source=str(path)) from None


def _jsonl_rows(text: str, source: str) -> Iterator[_Row]:
    position = 0
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is JSON
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(
                f"invalid JSON: {error.msg} (column {error.colno})", source=source, line=number
            ) from None
        where = _Where(source, position, line=number)
        yield where, _as_row(value, where)
        position += 1


def _json_rows(text: str, source: str) -> Iterator[_Row]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}", source=source, line=error.lineno) from None
    if not isinstance(data, list):
        raise InputError(
            "expected a JSON array of objects, one per row (pandas: orient='records')",
            source=source,
        )
    yield from _mapping_rows(data, source)


def _delimited_rows(text: str, source: str, delimiter: str) -> Iterator[_Row]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    position = end = 0
    try:
        for record in reader:
            start, end = end + 1, reader.line_num  # a quoted cell can span lines
            if not record:
                continue
            if header is None:
                header = _unique(record, source, start)
                continue
            if len(record) != len(header):
                raise InputError(
                    f"expected {len(header)} fields like the header, got {len(record)}",
                    source=source,
                    line=start,
                )
            yield _Where(source, position, line=start), dict(zip(header, record, strict=True))
            position += 1
    except csv.Error as error:
        raise InputError(f"malformed CSV: {error}", source=source, line=reader.line_num) from None


def _unique(names: list[str], source: str, line: int | None = None) -> list[str]:
    if len(set(names)) != len(names):
        raise InputError(f"repeated column names: {', '.join(names)}", source=source, line=line)
    return names


def _frame_rows(frame: pd.DataFrame, source: str) -> Iterator[_Row]:
    names = _unique([str(c) for c in frame.columns], source)
    for position, values in enumerate(frame.itertuples(index=False, name=None)):
        yield _Where(source, position), dict(zip(names, values, strict=True))


def _mapping_rows(rows: Iterable[object], source: str) -> Iterator[_Row]:
    for position, value in enumerate(rows):
        where = _Where(source, position)
        yield where, _as_row(value, where)


def _as_row(value: object, where: _Where) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise where.error(f"expected an object of columns, got {_kind(value)}")
    return {str(key): item for key, item in value.items()}


def _resolve_aliases(
    columns: Mapping[str, str], rows: list[_Row], source: str
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


def _to_sample(
    where: _Where, row: dict[str, Any], aliases: dict[str, tuple[str, ...]]
) -> RagSample:
    values = {field: _pick(field, aliases[field], row, where) for field in SAMPLE_FIELDS}
    values["id"] = values["id"] or str(where.position)
    return RagSample(**values, metadata=_metadata(row, aliases))


def _metadata(row: dict[str, Any], aliases: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """The unclaimed columns; a ``metadata`` column holding a mapping is merged in."""
    claimed = {name for names in aliases.values() for name in names}
    extra = {key: value for key, value in row.items() if key not in claimed}
    nested = extra.get("metadata")
    if isinstance(nested, Mapping):
        del extra["metadata"]
        extra = {**nested, **extra}
    safe: dict[str, Any] = _json_safe(extra)
    return safe


def _pick(field: str, names: tuple[str, ...], row: dict[str, Any], where: _Where) -> Any:
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


def _normalise(field: str, value: Any, column: str, where: _Where) -> Any:
    value = _native(value)
    if field == "contexts":
        return _contexts(value, column, where)
    if field == "reference":
        return _joined(value, column, where)
    if field == "id" and isinstance(value, float) and value.is_integer():
        value = int(value)  # pandas turns an integer column with gaps into floats
    return _text(value, column, where)


def _text(value: Any, column: str, where: _Where) -> str | None:
    if value is None or isinstance(value, str):
        return value if value and value.strip() else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise where.error(f"expected a string, got {_kind(value)}", field=column)


def _contexts(value: Any, column: str, where: _Where) -> tuple[str, ...] | None:
    if isinstance(value, str) and value.strip():
        value = _parse_list(value)
        if value is None:
            raise where.error(f"{_LIST_HINT}, got a string that is not one", column)
    if value is None or isinstance(value, str):
        return None
    if not _is_list(value):
        raise where.error(f"{_LIST_HINT}, got {_kind(value)}", column)
    return tuple(_strings(value, column, where))


def _joined(value: Any, column: str, where: _Where) -> str | None:
    """A reference given as a list (ragas v1 ``ground_truths``), joined by newlines."""
    items = _parse_list(value) if isinstance(value, str) else value
    if not _is_list(items):
        return _text(value, column, where)
    return _text("\n".join(_strings(items, column, where)), column, where)


def _strings(values: Any, column: str, where: _Where) -> list[str]:
    out = []
    for index, item in enumerate(values):
        if not isinstance(item, str):
            raise where.error(f"element {index} is {_kind(item)}, expected a string", column)
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


def _check_unique_ids(samples: list[RagSample], wheres: list[_Where]) -> None:
    seen: dict[str, _Where] = {}
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


def _kind(value: object) -> str:
    return "None" if value is None else f"{type(value).__name__} {reprlib.repr(value)}"
