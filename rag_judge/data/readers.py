"""The one row reader: every kind of source as rows that know where they came from.

Every row comes with a :class:`Where`: the file and line (JSONL, CSV, TSV, a set folder's
files) or the 0-based position (JSON, Parquet, DataFrames, in-memory rows), so an error can
name it. Samples to judge, eval and calibration sets, human labels and score files all read
their files here.
"""

from __future__ import annotations

import csv
import io
import json
import os
import reprlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from rag_judge.core import json_text
from rag_judge.core.errors import InputError
from rag_judge.core.text_files import read_text

if TYPE_CHECKING:
    import pandas as pd

SUPPORTED_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet")
"""File types ``load_samples`` reads, by extension (case-insensitive)."""

SampleSource: TypeAlias = "str | os.PathLike[str] | pd.DataFrame | Iterable[Mapping[str, Any]]"
"""A path, a DataFrame, a ``datasets.Dataset`` (or anything with ``to_list``/``to_pandas``),
or rows as mappings."""


@dataclass(frozen=True)
class Where:
    """Where a row came from, for error messages; ``position`` also gives the default id."""

    source: str
    position: int
    """0-based position among the source's rows (blank lines skipped)."""
    line: int | None = None
    """1-based line in a text file; None for sources without lines."""

    def error(self, message: str, field: str | None = None) -> InputError:
        """An :class:`InputError` that names this row (its line, else its position) and field."""
        row = self.position if self.line is None else None
        return InputError(message, source=self.source, line=self.line, row=row, field=field)

    def __str__(self) -> str:
        return f"line {self.line}" if self.line is not None else f"row {self.position}"


Row = tuple[Where, dict[str, Any]]


def open_rows(source: SampleSource) -> tuple[str, Iterator[Row]]:
    """The name of ``source`` and its rows (pandas is imported only here, not with the module)."""
    import pandas as pd

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


def _open_file(path: Path) -> tuple[str, Iterator[Row]]:
    name, suffix = str(path), path.suffix.lower()
    if not path.exists():
        raise InputError("file not found", source=name)
    if suffix not in SUPPORTED_SUFFIXES:
        supported = ", ".join(SUPPORTED_SUFFIXES)
        raise InputError(f"unknown file type '{suffix}': use one of {supported}", source=name)
    if suffix == ".parquet":
        import pandas as pd

        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as error:
            raise InputError(f"cannot read as Parquet: {error}", source=name) from None
        return name, _frame_rows(frame, name)
    text = read_text(path)
    if suffix == ".jsonl":
        return name, _jsonl_rows(text, name)
    if suffix == ".json":
        return name, _json_rows(text, name)
    return name, _delimited_rows(text, name, "\t" if suffix == ".tsv" else ",")


def text_lines(path: str | os.PathLike[str]) -> Iterator[tuple[Where, str]]:
    """The non-blank lines of a UTF-8 text file, each with where it is."""
    source, position = str(path), 0
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if line.strip():
            yield Where(source, position, line=number), line
            position += 1


def jsonl_values(text: str, source: str) -> Iterator[tuple[Where, Any]]:
    """The JSON value on each non-blank line of JSON Lines text, with where it is."""
    position = 0
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is JSON
        if not line.strip():
            continue
        try:
            value = json_text.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(
                f"invalid JSON: {error.msg} (column {error.colno})", source=source, line=number
            ) from None
        yield Where(source, position, line=number), value
        position += 1


def read_jsonl(
    path: str | os.PathLike[str], *, allowed: Sequence[str] | None = None
) -> Iterator[tuple[Where, dict[str, Any]]]:
    """The JSON object on each non-blank line of a JSONL file; ``allowed`` rejects other keys.

    Raises:
        InputError: the file is missing, unreadable or not UTF-8, a line is not valid JSON or
            not an object, or an object has a key outside ``allowed``; naming file:line.
    """
    for where, value in jsonl_values(read_text(path), str(path)):
        if not isinstance(value, dict):
            raise where.error(f"expected a JSON object, got {type(value).__name__}")
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    raise where.error(f"unknown field (expected {', '.join(allowed)})", key)
        yield where, value


def numbered_records(
    records: Iterable[Mapping[str, Any]], source: str
) -> Iterator[tuple[Where, dict[str, Any]]]:
    """Records already in memory, each with its 0-based position (errors name the row)."""
    for position, record in enumerate(records):
        yield Where(source, position), dict(record)


def _jsonl_rows(text: str, source: str) -> Iterator[Row]:
    for where, value in jsonl_values(text, source):
        yield where, _as_row(value, where)


def _json_rows(text: str, source: str) -> Iterator[Row]:
    try:
        data = json_text.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}", source=source, line=error.lineno) from None
    if not isinstance(data, list):
        raise InputError(
            "expected a JSON array of objects, one per row (pandas: orient='records')",
            source=source,
        )
    yield from _mapping_rows(data, source)


CSV_FIELD_LIMIT = 2**31 - 1
"""The largest CSV cell read (the csv module's default, 128 KiB, refused a long answer or
passage that JSON Lines takes): as large as the module allows; the file is in memory anyway."""


def _delimited_rows(text: str, source: str, delimiter: str) -> Iterator[Row]:
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)
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
            yield Where(source, position, line=start), dict(zip(header, record, strict=True))
            position += 1
    except csv.Error as error:
        raise InputError(f"malformed CSV: {error}", source=source, line=reader.line_num) from None


def _unique(names: list[str], source: str, line: int | None = None) -> list[str]:
    if len(set(names)) != len(names):
        raise InputError(f"repeated column names: {', '.join(names)}", source=source, line=line)
    return names


def _frame_rows(frame: pd.DataFrame, source: str) -> Iterator[Row]:
    names = _unique([str(c) for c in frame.columns], source)
    for position, values in enumerate(frame.itertuples(index=False, name=None)):
        yield Where(source, position), dict(zip(names, values, strict=True))


def _mapping_rows(rows: Iterable[object], source: str) -> Iterator[Row]:
    for position, value in enumerate(rows):
        where = Where(source, position)
        yield where, _as_row(value, where)


def _as_row(value: object, where: Where) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise where.error(f"expected an object of columns, got {describe(value)}")
    return {str(key): item for key, item in value.items()}


def describe(value: object) -> str:
    """A value's type and a short repr, for error messages."""
    return "None" if value is None else f"{type(value).__name__} {reprlib.repr(value)}"
