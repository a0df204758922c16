"""What each answer of a sweep is worth to the decision: a refusal is an outcome, a failed call
is a status.

The objective (a metric or a product such as ``faithfulness*completeness``) gets a value for
every (question, k) with an answer:

- a question the set marks unanswerable scores 1 for a refusal (the right answer) and 0 for an
  answer that asserts something (the wrong one), whatever the judges say;
- a refusal to an answerable question scores 0: it answers nothing, and no objective (reference
  free ones included) may let a system that always refuses win; a provider's own refusal (its
  ``refused`` status) is a refusal too;
- any other answer scores the product of its judges' values.

A (question, k) whose answer or judge call failed, or whose judge could not score it (no
reference claims, say), has no value: the table keeps the question for the other ks (each pair of
ks is compared on the questions both have) and counts what each k lacks, with the reason, so a k
that fails where others succeed is seen and not silently judged on easier questions. A question
with no value at any k leaves the comparison, counted with its reason. An objective of retrieval
measures only (``doc_ndcg``) has no refusals to value.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.core.types import FAILED_STATUSES
from rag_judge.jobs.sweep.decision.columns import ANSWERABLE, REFUSED
from rag_judge.jobs.sweep.decision.objective import Objective
from rag_judge.judges.refusal import answer_refuses

PROVIDER_REFUSAL = "refused"
"""The call status of an answer the provider itself refused (a content filter): a refusal."""
Outcome = Literal["answer", "refusal", "failed", "unscored"]
"""How a row's objective value came about (``failed``/``unscored`` rows have none)."""


@dataclass(frozen=True)
class ObjectiveTable:
    """The objective per question and k, over the questions some k has a value for."""

    objective: Objective
    values: pd.DataFrame
    """Index ``question_id`` (the sweep's order), one float column per k; NaN where that k has
    no value for the question."""
    excluded: Mapping[str, str] = field(default_factory=dict)
    """Questions with no value at any k, with why (the first k's reason)."""
    missing: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    """Per k, the kept questions it has no value for, with why."""

    @property
    def n_questions(self) -> int:
        """The questions the decision rests on."""
        return len(self.values)

    @property
    def ks(self) -> tuple[int, ...]:
        """The ks, ascending."""
        return tuple(int(k) for k in self.values.columns)

    def failure_share(self, k: int) -> float:
        """The share of the kept questions that ``k`` has no value for (0 when none are kept)."""
        return len(self.missing.get(k, {})) / self.n_questions if self.n_questions else 0.0


def row_outcomes(frame: pd.DataFrame, objective: Objective) -> pd.DataFrame:
    """Per row of the per-question table: ``value`` (Float64), ``outcome`` and ``why``.

    Raises:
        InputError: a part of the objective that is not a numeric column of the table.
    """
    names = list(objective.parts)
    unknown = [n for n in names if n not in frame.columns or frame[n].dtype != "Float64"]
    if unknown:
        raise InputError(f"unknown metric {unknown[0]!r} in {objective}", field="objective")
    product = frame[names[0]].copy()
    for name in names[1:]:
        product = product * frame[name]
    if not objective.judges_answer:
        missing = product.isna()
        return pd.DataFrame(
            {
                "value": product,
                "outcome": ["unscored" if m else "answer" for m in missing],
                "why": [f"{objective} not measured" if m else "" for m in missing],
            },
            index=frame.index,
        )
    frame = with_refusals(frame)
    rows = [
        _answer_outcome(row, names, value)
        for row, value in zip(frame.to_dict("records"), product.tolist(), strict=True)
    ]
    return pd.DataFrame(
        {
            "value": pd.array([value for _, value, _ in rows], dtype="Float64"),
            "outcome": [outcome for outcome, _, _ in rows],
            "why": [why for _, _, why in rows],
        },
        index=frame.index,
    )


def with_refusals(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with its ``refused`` column, read from the answers' text when a table written
    before the column existed lacks it (no judge's ``no_claims`` is consulted then)."""
    if REFUSED in frame.columns:
        return frame
    answers = frame["answer"] if "answer" in frame.columns else pd.Series(None, index=frame.index)
    refused = [
        None if not isinstance(answer, str) else answer_refuses(answer) for answer in answers
    ]
    return frame.assign(**{REFUSED: pd.array(refused, dtype="boolean")})


def _answer_outcome(
    row: Mapping[Hashable, object], names: list[str], product: object
) -> tuple[Outcome, float | None, str]:
    """``(outcome, value, why)`` of one row for an objective that judges the answer."""
    generation = str(row.get("generation_status", "ok"))
    refused = True if generation == PROVIDER_REFUSAL else row.get(REFUSED)
    if generation not in ("ok", PROVIDER_REFUSAL) or refused is None or refused is pd.NA:
        return "failed", None, f"the answer: {generation}"
    if row.get(ANSWERABLE) is False:  # refusing is right, asserting anything is wrong
        return ("refusal", 1.0, "") if refused else ("answer", 0.0, "")
    if refused:
        return "refusal", 0.0, ""
    for name in names:
        status = str(row.get(f"{name}_status", "ok"))
        if status in FAILED_STATUSES:
            return "failed", None, f"{name}: {status}"
    for name in names:
        if row[name] is None or row[name] is pd.NA:
            found = row.get(f"{name}_status")
            return "unscored", None, f"{name}: {found if isinstance(found, str) else 'no value'}"
    return "answer", float(product), ""  # type: ignore[arg-type]


def objective_table(frame: pd.DataFrame, objective: Objective) -> ObjectiveTable:
    """The objective as a question x k table (see the module docstring).

    Raises:
        InputError: an unknown part of the objective.
    """
    outcomes = row_outcomes(frame, objective)
    joined = frame[["question_id", "k"]].assign(value=outcomes["value"], why=outcomes["why"])
    order = list(dict.fromkeys(joined["question_id"]))
    ks = sorted({int(k) for k in joined["k"]})
    wide = joined.pivot(index="question_id", columns="k", values="value").reindex(order)
    wide = wide.reindex(columns=ks).astype("Float64").astype(float)
    wide.columns = [int(k) for k in wide.columns]
    reasons = joined.set_index(["question_id", "k"])["why"]
    excluded: dict[str, str] = {}
    missing: dict[int, dict[str, str]] = {}
    for qid, row in wide.iterrows():
        absent = [k for k in ks if pd.isna(row[k])]
        if len(absent) == len(ks):
            excluded[str(qid)] = f"k={absent[0]}: {_why(reasons, qid, absent[0])}"
            continue
        for k in absent:
            missing.setdefault(k, {})[str(qid)] = _why(reasons, qid, k)
    kept = wide.drop(index=list(excluded))
    return ObjectiveTable(objective, kept, excluded, missing)


def _why(reasons: pd.Series, question: object, k: int) -> str:
    """Why ``question`` has no value at ``k`` (its row's reason, or that the row is missing)."""
    found = reasons.get((question, k))
    return str(found) if isinstance(found, str) and found else "no row for this k"
