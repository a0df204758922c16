"""Errors that rag_judge raises for bad input, each naming where the problem is."""

from __future__ import annotations


class RagJudgeError(Exception):
    """Base class for every error rag_judge raises on purpose."""


class InputError(RagJudgeError, ValueError):
    """Bad input: names the source (file or object), the line (files) or row (tables), the field.

    The CLI prints ``str(error)`` and exits with status 2, so the message must be enough for
    the user to find and fix the problem without a traceback.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
        row: object | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.field = field
        self.row = row
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.source is not None:
            where = self.source
            if self.line is not None:
                where += f":{self.line}"
        elif self.line is not None:
            where = f"line {self.line}"
        row = f"row {self.row}" if self.row is not None else ""
        parts = [p for p in (where, row, f"field '{self.field}'" if self.field else "") if p]
        prefix = ", ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


class NothingToEvaluateError(InputError):
    """Every query was excluded or lacks a ranking or judgements; the message lists why."""


class UnknownMeasureError(InputError):
    """A measure name that does not parse; the message lists the known measures."""
