"""Judge scores for calibration, read from the JSON Lines that ``rag-judge score`` writes.

The format and its checks are :mod:`rag_judge.data.score_file`'s. For one metric this keeps,
per row:

- ``value`` (None unless ``status == "ok"``) and ``status``;
- ``probability``: the mean ``support_probability`` of the row's claims, i.e. the expected
  share of supported claims under the judge's own probabilities; None unless the row has at
  least one claim and every claim carries a probability (e.g. a backend without
  log-probabilities gives none);
- the claims themselves, for claim-level labels.

Rows without this metric are listed in ``not_judged``; nothing is dropped silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rag_judge.data.readers import Row
from rag_judge.data.score_file import (
    ClaimScore,
    JudgeRow,
    parse_metric,
    read_score_rows,
    score_rows_from_records,
)

__all__ = [
    "ClaimScore",
    "JudgeRow",
    "JudgeScores",
    "judge_scores_from_records",
    "judge_scores_from_rows",
    "read_judge_scores",
]


@dataclass(frozen=True)
class JudgeScores:
    """One metric's results on every row of a score file, in file order."""

    source: str
    metric: str
    rows: tuple[JudgeRow, ...]
    not_judged: tuple[str, ...]
    """Ids of rows whose results do not include this metric."""

    def by_id(self) -> dict[str, JudgeRow]:
        """The rows keyed by id."""
        return {row.id: row for row in self.rows}

    def values(self) -> dict[str, float | None]:
        """Id → value (None when unscored), e.g. for :func:`pairwise_agreement`."""
        return {row.id: row.value for row in self.rows}


def read_judge_scores(path: str | os.PathLike[str], metric: str) -> JudgeScores:
    """Read one metric's results from a ``rag-judge score`` JSON Lines file.

    Raises:
        InputError: Naming file:line and field, for a missing or repeated id, a malformed
            result, value, status or claim, or when no row has the metric at all.
    """
    return judge_scores_from_rows(read_score_rows(path), str(path), metric)


def judge_scores_from_records(
    records: Iterable[Mapping[str, Any]], metric: str, *, source: str = "records"
) -> JudgeScores:
    """Like :func:`read_judge_scores`, for records in memory (``EvaluationResult.to_records()``).

    Raises:
        InputError: As :func:`read_judge_scores`, naming the 0-based row instead of a line.
    """
    return judge_scores_from_rows(score_rows_from_records(records, source), source, metric)


def judge_scores_from_rows(numbered: Iterable[Row], source: str, metric: str) -> JudgeScores:
    """Like :func:`read_judge_scores`, for rows already read (each with where it came from)."""
    found = parse_metric(numbered, source, metric)
    return JudgeScores(source, metric, found.rows, found.not_judged)
