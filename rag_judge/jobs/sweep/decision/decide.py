"""Deciding k from a sweep's per-question table.

:func:`decide_table` reads the table: every (question, k) gets an objective value
(:mod:`~rag_judge.jobs.sweep.decision.outcomes`: refusals are outcomes, failed calls leave the
question out of every k), the ks are compared on the same questions with simultaneous bounds, and
the recommendation is the cheapest k within the margin of the best, or "undecided between ..."
(:mod:`~rag_judge.jobs.sweep.decision.recommend`). :func:`decide` does the same for a finished
sweep, choosing first the objective it can compute.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_judge.jobs.sweep.decision.columns import ANSWER_TOKENS, ANSWERABLE, REFUSED
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    DEFAULT_RESAMPLES,
)
from rag_judge.jobs.sweep.decision.objective import (
    Objective,
    ObjectiveChoice,
    Swept,
    choose_objective,
)
from rag_judge.jobs.sweep.decision.outcomes import ObjectiveTable, objective_table, with_refusals
from rag_judge.jobs.sweep.decision.recommend import recommend
from rag_judge.jobs.sweep.decision.record import K_COST, TOKENS_COST, Decision
from rag_judge.jobs.sweep.decision.refusals import REFUSAL_MEASURES, refusal_indicators


def decide(
    swept: Swept,
    objective: str | Objective | None = None,
    *,
    margin: float = DEFAULT_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Decision:
    """The objective a finished sweep can compute (see
    :func:`~rag_judge.jobs.sweep.decision.objective.choose_objective`; default: the sweep's own)
    and the k it recommends, or why it names none.

    Raises:
        InputError: an objective naming something that is no measure or judge (a typo).
    """
    return decide_table(
        swept.per_question,
        choose_objective(swept, objective),
        swept.ks,
        margin=margin,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def decide_table(
    frame: pd.DataFrame,
    objective: ObjectiveChoice,
    ks: Sequence[int],
    *,
    margin: float = DEFAULT_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Decision:
    """Decide k from a sweep's per-question table by ``objective.used`` (see the module
    docstring); with no objective, a decision that names no k.

    Thirty questions where k = 1 misses one in three and k = 2 answers all:

    >>> rows = [
    ...     {"question_id": f"q{i}", "k": k, "answer": "A", "generation_status": "ok",
    ...      "answer_f1": 1.0 if k == 2 or i % 3 else 0.0}
    ...     for i in range(30) for k in (1, 2)
    ... ]
    >>> frame = pd.DataFrame(rows).astype({"answer_f1": "Float64"})
    >>> f1 = Objective.parse("answer_f1")
    >>> decision = decide_table(frame, ObjectiveChoice(f1, f1), [1, 2], n_resamples=500)
    >>> decision.recommended_k, decision.n_questions
    (2, 30)
    """
    frame = with_refusals(frame)  # a table written before the column: read from the answers
    n_swept = int(frame["question_id"].nunique()) if len(frame) else 0
    refusals = refusal_shares(frame)
    if objective.used is None:
        return Decision(objective, refusals=refusals, n_swept=n_swept)
    table = objective_table(frame, objective.used)
    chosen = [k for k in ks if k in table.ks] or list(table.ks)
    costs, unit = _costs(frame, table, chosen)
    found = recommend(
        table.values[chosen].to_numpy(dtype=float),
        chosen,
        costs=costs,
        eligible=_eligible(frame, table, chosen),
        margin=margin,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    return Decision(objective, found, table.excluded, refusals, n_swept, unit)


def refusal_shares(frame: pd.DataFrame) -> dict[int, dict[str, float | None]]:
    """Per k, the mean of each refusal indicator (None where no row counts)."""
    if not len(frame) or REFUSED not in frame.columns:
        return {}
    indicators = refusal_indicators(frame).assign(k=frame["k"].to_numpy())
    out: dict[int, dict[str, float | None]] = {}
    for k, rows in indicators.groupby("k", sort=True):
        out[int(str(k))] = {
            m: (None if rows[m].notna().sum() == 0 else float(rows[m].mean()))
            for m in REFUSAL_MEASURES
        }
    return out


def _costs(
    frame: pd.DataFrame, table: ObjectiveTable, ks: Sequence[int]
) -> tuple[list[float], str]:
    """Per k, the mean generator prompt tokens over the decision's questions, and the unit; k
    itself when the tokens are unknown (the user's RAG answered)."""
    kept = frame[frame["question_id"].isin(table.values.index)]
    tokens = kept.groupby("k")[ANSWER_TOKENS].mean() if ANSWER_TOKENS in kept.columns else None
    if tokens is None or any(pd.isna(tokens.get(k)) for k in ks):
        return [float(k) for k in ks], K_COST
    return [float(tokens[k]) for k in ks], TOKENS_COST


def _eligible(frame: pd.DataFrame, table: ObjectiveTable, ks: Sequence[int]) -> list[bool]:
    """A k that refused every answerable question of the decision is never recommended."""
    if not table.objective.judges_answer or REFUSED not in frame.columns:
        return [True] * len(ks)
    kept = frame[frame["question_id"].isin(table.values.index)]
    if ANSWERABLE in kept.columns:
        kept = kept[kept[ANSWERABLE].fillna(True).astype(bool)]
    if kept.empty:
        return [True] * len(ks)
    refused_all = kept.groupby("k")[REFUSED].apply(lambda s: bool(s.fillna(False).all()))
    return [not bool(refused_all.get(k, False)) for k in ks]
