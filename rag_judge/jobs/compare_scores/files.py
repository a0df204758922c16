"""Score files (``rag-judge score`` output) read once, with the metrics they hold."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_judge.calibration.judge_scores import JudgeScores, judge_scores_from_rows
from rag_judge.data import score_file
from rag_judge.data.readers import Row


@dataclass(frozen=True)
class ScoreFile:
    """The rows of one score file, each with where it came from (for errors that name it)."""

    source: str
    rows: tuple[Row, ...]
    _scores: dict[str, JudgeScores] = field(default_factory=dict, repr=False, compare=False)

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric some row has results for, in first-seen order."""
        return score_file.metrics_in(self.rows)

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
        return score_file.repeat_groups(self.rows, metric)

    def questions(self) -> dict[str, str]:
        """Row id → question (or "" when the row has none), for reports."""
        return self.texts(score_file.QUESTION)

    def texts(self, field: str) -> dict[str, str]:
        """Row id → the row's ``field`` text (or "" when it has none), for reports."""
        return score_file.field_texts(self.rows, field)


def read_score_file(path: str | os.PathLike[str]) -> ScoreFile:
    """Read a ``rag-judge score`` JSON Lines file.

    Raises:
        InputError: the file is missing, unreadable or not JSON Lines (naming file:line).
    """
    return ScoreFile(str(path), tuple(score_file.read_score_rows(Path(path))))


def score_records(records: Iterable[Mapping[str, Any]], source: str) -> ScoreFile:
    """Records in memory (``EvaluationResult.to_records()``) as a score file."""
    return ScoreFile(source, tuple(score_file.score_rows_from_records(records, source)))
