"""Score files (``rag-judge score`` output) read once, with the metrics they hold."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_judge.calibration.judge_scores import JudgeScores, judge_scores_from_rows
from rag_judge.data.readers import Where, numbered_records, read_jsonl


@dataclass(frozen=True)
class ScoreFile:
    """The rows of one score file, each with where it came from (for errors that name it)."""

    source: str
    rows: tuple[tuple[Where, dict[str, Any]], ...]
    _scores: dict[str, JudgeScores] = field(default_factory=dict, repr=False, compare=False)

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric some row has results for, in first-seen order."""
        seen: dict[str, None] = {}
        for _, record in self.rows:
            results = record.get("results")
            if isinstance(results, dict):
                seen.update(dict.fromkeys(results))
        return tuple(seen)

    def scores(self, metric: str) -> JudgeScores:
        """One metric's results per row (validated; errors name file, line and field)."""
        if metric not in self._scores:
            self._scores[metric] = judge_scores_from_rows(self.rows, self.source, metric)
        return self._scores[metric]

    def repeat_groups(self, metric: str) -> dict[str, list[float]] | None:
        """Row id → the scored values of its repeats (``score --repeats``); None when the file
        was judged once.

        Raises:
            InputError: a malformed ``repeats`` entry (naming the line and field).
        """
        groups: dict[str, list[float]] = {}
        for where, record in self.rows:
            repeats = record.get("repeats")
            if repeats is None:
                return None
            found = repeats.get(metric) if isinstance(repeats, dict) else None
            if not isinstance(found, list):
                raise where.error("expected a list of repeats", f"repeats.{metric}")
            values = []
            for i, entry in enumerate(found):
                value = entry.get("value") if isinstance(entry, dict) else "?"
                if value is not None and not (
                    isinstance(value, int | float) and not isinstance(value, bool)
                ):
                    raise where.error(
                        f"expected a number or null, got {value!r}", f"repeats.{metric}[{i}].value"
                    )
                if value is not None:
                    values.append(float(value))
            groups[str(record.get("id"))] = values
        return groups

    def questions(self) -> dict[str, str]:
        """Row id → question (or "" when the row has none), for reports."""
        return self.texts("question")

    def texts(self, field: str) -> dict[str, str]:
        """Row id → the row's ``field`` text (or "" when it has none), for reports."""
        out = {}
        for _, record in self.rows:
            text = record.get(field)
            out[str(record.get("id"))] = text if isinstance(text, str) else ""
        return out


def read_score_file(path: str | os.PathLike[str]) -> ScoreFile:
    """Read a ``rag-judge score`` JSON Lines file.

    Raises:
        InputError: the file is missing, unreadable or not JSON Lines (naming file:line).
    """
    return ScoreFile(str(path), tuple(read_jsonl(Path(path))))


def score_records(records: Iterable[Mapping[str, Any]], source: str) -> ScoreFile:
    """Records in memory (``EvaluationResult.to_records()``) as a score file."""
    return ScoreFile(source, tuple(numbered_records(records, source)))
