"""Read a JSON Lines file as (line number, object) pairs, with errors that name file:line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_judge.errors import InputError


@dataclass(frozen=True)
class Location:
    """Where a record came from: a file and its 1-based line, or a source and 0-based row."""

    source: str
    line: int | None
    row: int | None

    def error(self, message: str, field: str | None = None) -> InputError:
        """An :class:`InputError` that names this location and the field."""
        return InputError(message, source=self.source, line=self.line, row=self.row, field=field)

    def __str__(self) -> str:
        return f"line {self.line}" if self.line is not None else f"row {self.row}"


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, object)`` for every non-blank line (1-based line numbers).

    Raises:
        InputError: If the file is missing or unreadable, not UTF-8, a line is not valid JSON,
            or a line holds something other than a JSON object.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("file not found", source=source) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason})", source=source) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", source=source) from None
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is JSON
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(
                f"invalid JSON: {error.msg} (column {error.colno})", source=source, line=number
            ) from None
        if not isinstance(value, dict):
            raise InputError(
                f"expected a JSON object, got {type(value).__name__}", source=source, line=number
            )
        yield number, value
