"""The sweep's per-question view and cost per k as table rows, for the markdown summary and the
HTML page alike (the figures come from :mod:`rag_judge.jobs.sweep.by_question`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from rag_judge.jobs.sweep.by_question import (
    AnswerChange,
    answer_changes,
    cost_by_k,
    found_but_wrong,
    match_column,
)
from rag_judge.jobs.sweep.decision.objective import Objective
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.report.tables import MISSING

SHOWN_CHANGES = 10
"""Questions listed whose answer changes with k; the rest are counted (all are in the CSV)."""
ANSWER_CHARS = 24
"""An answer longer than this is cut with an ellipsis in the tables."""


@dataclass(frozen=True)
class QuestionView:
    """Everything the per-question and cost sections show, as text cells."""

    cost_head: tuple[str, ...]
    cost_rows: tuple[tuple[str, ...], ...]
    changes_sentence: str
    change_rows: tuple[tuple[str, str, str, str], ...]
    """(question id, question, answers by k, first k whose top k holds the answer's text)."""
    more_changes: int
    wrong_rows: tuple[tuple[str, ...], ...]
    """(k, questions whose answer text is in the top k, of them answered wrong, share)."""


def question_view(result: SweepResult, objective: Objective | None) -> QuestionView:
    """The cost-per-k table, the questions whose answer changes with k, and per k the
    questions whose passage was found but whose answer matches no reference."""
    frame = result.per_question
    cost = cost_by_k(frame, objective)
    label = str(objective or "objective")
    cost_head = ("k", "generator prompt tokens", label, f"{label} per 1,000 prompt tokens")
    cost_rows = tuple(
        (str(r["k"]), _number(r["prompt_tokens"], 0), _number(r["objective"], 3),
         _number(r["per_1k_tokens"], 3))
        for r in cost.to_dict("records")
    )  # fmt: skip
    changes = answer_changes(frame)
    n = int(frame["question_id"].nunique())
    directions = Counter(change.direction for change in changes)
    match = match_column(frame)
    sentence = f"{len(changes)} of {n} questions get a different answer at some k"
    if changes and match is not None:
        sentence += (
            f"; by {match} at the largest k against the smallest, {directions['better']} "
            f"better, {directions['worse']} worse, {directions['changed']} no different"
        )
    rows = tuple(
        (c.question_id, result.questions.get(c.question_id, ""), _runs(c),
         MISSING if c.found_at is None else str(c.found_at))
        for c in changes[:SHOWN_CHANGES]
    )  # fmt: skip
    wrong = found_but_wrong(frame)
    wrong_rows = tuple(
        (str(r["k"]), str(r["found"]), str(r["wrong"]), _number(r["share"], 2))
        for r in wrong.to_dict("records")
    )
    return QuestionView(
        cost_head, cost_rows, sentence + ".", rows, max(len(changes) - SHOWN_CHANGES, 0), wrong_rows
    )


def _runs(change: AnswerChange) -> str:
    """``1-2: 不知道。 (0.00) → 3-10: 光荣和ω-force (1.00)``."""
    parts = []
    for run in change.runs:
        answer = MISSING if run.answer is None else _cut(run.answer)
        match = "" if run.match is None else f" ({run.match:.2f})"
        parts.append(f"{run.ks}: {answer}{match}")
    return " → ".join(parts)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ANSWER_CHARS else text[: ANSWER_CHARS - 1] + "…"


def _number(value: object, places: int) -> str:
    if value is None or pd.isna(value):  # type: ignore[call-overload]
        return MISSING
    return f"{float(value):,.{places}f}"  # type: ignore[arg-type]
