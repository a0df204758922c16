"""What a person deciding k reads question by question, and what each k costs.

All three read only the per-question table (one row per question x k), so a notebook or a CI
gate gets them without rendering anything:

- :func:`answer_changes`: the questions whose answer changes with k, as runs of ks that gave
  the same answer, each with its reference match (F1, else exact match);
- :func:`found_but_wrong`: per k, the questions whose top k holds the answer's text
  (``text_hit_rate`` = 1) but whose answer does not match a reference (``exact_match`` = 0):
  the generator's failures, not the retriever's;
- :func:`cost_by_k`: per k, the generator's prompt tokens (what serving that k costs), next to
  the objective's mean and the objective per 1,000 prompt tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pandas as pd

from rag_judge.jobs.sweep.decision.columns import ANSWER_TOKENS
from rag_judge.jobs.sweep.decision.objective import Objective
from rag_judge.jobs.sweep.decision.outcomes import objective_table
from rag_judge.judges.reference_match import ANSWER_F1, EXACT_MATCH

MATCH_COLUMNS = (ANSWER_F1.name, EXACT_MATCH.name)
"""The reference match shown beside an answer, first present first."""

Direction = Literal["better", "worse", "changed"]


@dataclass(frozen=True)
class AnswerRun:
    """Consecutive ks of one question that gave the same answer."""

    first_k: int
    last_k: int
    answer: str | None
    match: float | None
    """Its reference match (F1 or exact match; None when the set has no reference)."""

    @property
    def ks(self) -> str:
        """``3`` or ``3-5``."""
        return str(self.first_k) if self.first_k == self.last_k else f"{self.first_k}-{self.last_k}"


@dataclass(frozen=True)
class AnswerChange:
    """One question whose answer is not the same at every k."""

    question_id: str
    runs: tuple[AnswerRun, ...]
    found_at: int | None
    """The first k whose top k holds the answer's text (None: no k does, or not measured)."""

    @property
    def direction(self) -> Direction:
        """``better``/``worse`` when the reference match at the largest k is higher/lower than
        at the smallest, else ``changed``."""
        first, last = self.runs[0].match, self.runs[-1].match
        if first is None or last is None or first == last:
            return "changed"
        return "better" if last > first else "worse"


def match_column(frame: pd.DataFrame) -> str | None:
    """The reference-match column with values (F1 first), or None."""
    return next((c for c in MATCH_COLUMNS if c in frame and frame[c].notna().any()), None)


def answer_changes(frame: pd.DataFrame) -> list[AnswerChange]:
    """The questions whose answer changes with k, in the table's question order."""
    match = match_column(frame)
    changes = []
    for question_id, rows in frame.sort_values("k", kind="stable").groupby(
        "question_id", sort=False
    ):
        runs: list[AnswerRun] = []
        for row in rows.to_dict("records"):
            answer = None if pd.isna(row["answer"]) else str(row["answer"])
            value = None if match is None or pd.isna(row[match]) else float(row[match])
            k = int(row["k"])
            if runs and runs[-1].answer == answer:
                runs[-1] = AnswerRun(runs[-1].first_k, k, answer, runs[-1].match)
            else:
                runs.append(AnswerRun(k, k, answer, value))
        if len(runs) > 1:
            changes.append(AnswerChange(str(question_id), tuple(runs), _found_at(rows)))
    return changes


def _found_at(rows: pd.DataFrame) -> int | None:
    if "text_hit_rate" not in rows:
        return None
    hits = rows[rows["text_hit_rate"] == 1]
    return None if hits.empty else int(hits["k"].min())


def found_but_wrong(frame: pd.DataFrame) -> pd.DataFrame:
    """Per k: questions whose top k holds the answer's text, and how many of them got an
    answer matching no reference (``found``, ``wrong``, ``share`` = wrong / found, and the
    ``question_ids``). Empty when the table has no answer-text hits or no exact match."""
    columns = ["k", "found", "wrong", "share", "question_ids"]
    exact = EXACT_MATCH.name
    if not {"text_hit_rate", exact} <= set(frame.columns) or frame[exact].isna().all():
        return pd.DataFrame(columns=columns)
    rows = []
    for _, group in frame.groupby("k", sort=True):
        found = group[(group["text_hit_rate"] == 1) & group[exact].notna()]
        wrong = found[found[exact] == 0]
        rows.append(
            {
                "k": int(group["k"].iloc[0]),
                "found": len(found),
                "wrong": len(wrong),
                "share": len(wrong) / len(found) if len(found) else None,
                "question_ids": tuple(str(q) for q in wrong["question_id"]),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def cost_by_k(frame: pd.DataFrame, objective: str | Objective | None) -> pd.DataFrame:
    """Per k: mean generator prompt tokens per question, the objective's mean as the decision
    counts it, and the objective per 1,000 prompt tokens (empty cells when either is unknown),
    over the decision's questions (every k over the same ones; all questions without an
    objective). Empty when no answer was generated (the user's RAG answered: its prompts are
    not known here)."""
    columns = ["k", "prompt_tokens", "objective", "per_1k_tokens"]
    if ANSWER_TOKENS not in frame or frame[ANSWER_TOKENS].isna().all():
        return pd.DataFrame(columns=columns)
    table = objective_table(frame, Objective.parse(objective)) if objective is not None else None
    if table is not None:
        frame = frame[frame["question_id"].isin(table.values.index)]
    rows = []
    for k, group in frame.groupby("k", sort=True):
        tokens = group[ANSWER_TOKENS].dropna()
        mean_tokens = float(tokens.mean()) if len(tokens) else None
        mean = None
        chosen = int(str(k))
        if table is not None and table.n_questions and chosen in table.ks:
            mean = float(table.values[chosen].mean())
        per_1k = mean / mean_tokens * 1000 if mean is not None and mean_tokens else None
        rows.append(
            {
                "k": int(group["k"].iloc[0]),
                "prompt_tokens": mean_tokens,
                "objective": mean,
                "per_1k_tokens": per_1k,
            }
        )
    return pd.DataFrame(rows, columns=columns)
