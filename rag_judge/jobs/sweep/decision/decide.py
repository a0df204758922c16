"""Deciding k from a sweep's per-question table.

:func:`decide_table` reads the table: every (question, k) gets an objective value
(:mod:`~rag_judge.jobs.sweep.decision.outcomes`: refusals are outcomes, failed calls leave the
question out of every k), the ks are compared on the same questions with simultaneous bounds, and
the recommendation is the cheapest k within the margin of the best, or "undecided between ..."
(:mod:`~rag_judge.jobs.sweep.decision.recommend`). :func:`decide` does the same for a finished
sweep, choosing first the objective it can compute.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from rag_judge.jobs.sweep.decision.arms import ArmNames
from rag_judge.jobs.sweep.decision.columns import (
    ANSWER_TOKENS,
    ANSWERABLE,
    REFUSED,
    RERANK_TOKENS,
)
from rag_judge.jobs.sweep.decision.defaults import (
    ALL_REFUSED,
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    DEFAULT_RESAMPLES,
    MAX_FAILURE_SHARE,
    MIN_ANSWER_SHARE,
)
from rag_judge.jobs.sweep.decision.looks import SweepLooks, correlations_of
from rag_judge.jobs.sweep.decision.objective import (
    Objective,
    ObjectiveChoice,
    Swept,
    choose_objective,
)
from rag_judge.jobs.sweep.decision.outcomes import ObjectiveTable, objective_table, with_refusals
from rag_judge.jobs.sweep.decision.planning import plan_questions
from rag_judge.jobs.sweep.decision.recommend import Recommendation, recommend
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
    and the k it recommends, or why it names none; a decision outside the sweep's record of
    looks, whose confidence holds for itself alone.

    Raises:
        InputError: an objective naming something that is no measure or judge (a typo).

    A finished sweep decided again by another objective (anything with the per-question table,
    the ks, what was skipped and the objective will do):

    >>> from types import SimpleNamespace
    >>> rows = [{"question_id": f"q{i}", "k": k, "answer": "A", "generation_status": "ok",
    ...          "exact_match": float(k == 2 or i % 3 > 0)} for i in range(30) for k in (1, 2)]
    >>> frame = pd.DataFrame(rows).astype({"exact_match": "Float64"})
    >>> swept = SimpleNamespace(per_question=frame, ks=(1, 2), skipped={},
    ...                         objective=Objective.parse("exact_match"))
    >>> decide(swept, "exact_match", n_resamples=500).headline
    'Use k = 2'
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
    plan: bool = True,
    looks: SweepLooks | None = None,
    limit: int | None = None,
    names: ArmNames | None = None,
) -> Decision:
    """Decide k from a sweep's per-question table by ``objective.used`` (see the module
    docstring); with no objective, a decision that names no k.

    With ``looks`` (the sweep's earlier looks), this decision is its next look: at the level
    the looks leave it (``confidence`` is then theirs), recorded in the decision's own
    ``looks``. Undecided, it plans the questions that would settle it (``plan``), at the level a
    further look would have, within the ``limit`` of questions there are (the looks' horizon).
    ``names``: the columns of a configuration sweep, whose ``k`` column holds arm numbers
    (default: ks).

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
    names = names or ArmNames()
    frame = with_refusals(frame)  # a table written before the column: read from the answers
    n_swept = int(frame["question_id"].nunique()) if len(frame) else 0
    refusals = refusal_shares(frame)
    if objective.used is None:
        return Decision(objective, refusals=refusals, n_swept=n_swept, names=names)
    arms = compared_arms(frame, objective.used, ks, names)
    table, compared, values = arms.table, arms.ks, arms.values
    failures = {k: table.failure_share(k) for k in arms.chosen}
    if not compared:
        return Decision(
            objective, None, table.excluded, refusals, n_swept, failures=failures, names=names
        )
    correlations = correlations_of(values)
    level, looks, note = _this_look(looks, n_swept, correlations, 1 - confidence)
    found = recommend(
        values, compared, costs=arms.costs, eligible=arms.eligible, why_not=arms.why_not,
        margin=margin, confidence=1 - level, n_resamples=n_resamples, seed=seed,
    )  # fmt: skip
    if note:
        found = dataclasses.replace(found, recommended_k=None, undecided_between=_candidates(found))
    elif plan and found.recommended_k is None and not found.too_few and found.undecided_between:
        record = looks

        def level_at(size: int) -> float:
            if record is None:
                return 1 - confidence
            return record.level(size, correlations) or 1e-9

        horizon = limit if looks is None else looks.horizon
        found = _planned(found, values, level_at, horizon, seed)
    unit = arms.cost_unit
    dropped = {k: table.missing.get(k, {}) for k in arms.chosen if k not in compared}
    return Decision(
        objective, found, table.excluded, refusals, n_swept, unit, failures=failures,
        not_compared={k: f"no value at any question ({_first(why)})" for k, why in dropped.items()},
        looks=looks, looks_note=note, names=names,
    )  # fmt: skip


@dataclass(frozen=True)
class ComparedKs:
    """What the rule compares: the objective's table and, per k with a value, its cost and
    whether it may be recommended."""

    table: ObjectiveTable
    chosen: tuple[int, ...]
    """The ks asked for that the table has."""
    ks: tuple[int, ...]
    """Those with a value at some question: the columns of :attr:`values`."""
    values: NDArray[np.float64]
    costs: tuple[float, ...]
    cost_unit: str
    eligible: tuple[bool, ...]
    why_not: tuple[str, ...]


def compared_arms(
    frame: pd.DataFrame, objective: Objective, ks: Sequence[int], names: ArmNames | None = None
) -> ComparedKs:
    """The table the rule reads, with each k's cost and eligibility (also a look's input);
    ``names`` name the columns in the reasons (default: ks)."""
    frame = with_refusals(frame)
    table = objective_table(frame, objective)
    chosen = tuple(k for k in ks if k in table.ks) or table.ks
    compared = tuple(k for k in chosen if table.n_questions and table.values[k].notna().any())
    if not compared:
        return ComparedKs(table, chosen, (), np.empty((0, 0)), (), K_COST, (), ())
    costs, unit = _costs(frame, table, compared)
    eligible, why_not = _eligibility(frame, table, compared, names or ArmNames())
    values = table.values[list(compared)].to_numpy(dtype=float)
    return ComparedKs(
        table, chosen, compared, values, tuple(costs), unit, tuple(eligible), tuple(why_not)
    )


def _candidates(found: Recommendation) -> tuple[int, ...]:
    return tuple(s.k for s in found.standings if s.candidate)


def _this_look(
    looks: SweepLooks | None,
    n: int,
    correlations: Sequence[NDArray[np.float64]],
    alpha: float,
) -> tuple[float, SweepLooks | None, str]:
    """This look's level, the looks with it, and why it names no k ("" when it may): without
    looks, ``alpha``; a look at no more questions than an earlier one adds nothing."""
    if looks is None:
        return alpha, None, ""
    level = looks.level(n, correlations)
    if level > 0:
        return level, looks.with_look(n, level), ""
    last = max(looks.taken, key=lambda look: look.n_questions)
    if n > last.n_questions:
        why = (
            f"This sweep's test spent its error over {looks.horizon} questions (its horizon, set "
            f"by its first run) and has none left for a look at {n}, so it names no k (its bounds "
            "are shown at the last look's level); a new test, with the error spent again, needs "
            "the sweep's record of looks deleted."
        )
    else:
        why = (
            f"This sweep's test already looked at {last.n_questions} questions; a look at {n} adds "
            "nothing to it, so it names no k (its bounds are shown at that look's level)."
        )
    return last.alpha, looks, why


def _planned(
    found: Recommendation,
    values: NDArray[np.float64],
    level_at: Callable[[int], float],
    limit: int | None,
    seed: int,
) -> Recommendation:
    """``found`` with the questions that would settle it, by simulating the rule."""
    plan = plan_questions(
        values,
        costs=[s.cost for s in found.standings],
        eligible=[s.eligible for s in found.standings],
        margin=found.margin,
        level_at=level_at,
        seed=seed,
        limit=limit,
    )
    return dataclasses.replace(
        found, questions_needed=plan.questions, settle_probability=plan.probability
    )


def _first(reasons: Mapping[str, str]) -> str:
    return next(iter(reasons.values()), "no row")


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
    """Per k, the mean generator prompt tokens over the decision's questions (the answer's, and an
    LLM reranker's for the question), and the unit; k
    itself when the tokens are unknown (the user's RAG answered)."""
    kept = frame[frame["question_id"].isin(table.values.index)]
    if RERANK_TOKENS in kept.columns and ANSWER_TOKENS in kept.columns:
        kept = kept.assign(**{ANSWER_TOKENS: kept[ANSWER_TOKENS] + kept[RERANK_TOKENS].fillna(0)})
    tokens = kept.groupby("k")[ANSWER_TOKENS].mean() if ANSWER_TOKENS in kept.columns else None
    if tokens is None or any(pd.isna(tokens.get(k)) for k in ks):
        return [float(k) for k in ks], K_COST
    return [float(tokens[k]) for k in ks], TOKENS_COST


def _eligibility(
    frame: pd.DataFrame, table: ObjectiveTable, ks: Sequence[int], names: ArmNames
) -> tuple[list[bool], list[str]]:
    """Per k, whether it may be recommended and why not: not when its calls failed on more than
    :data:`MAX_FAILURE_SHARE` of the questions, nor when it answers (does not refuse) fewer than
    :data:`MIN_ANSWER_SHARE` of the answerable questions that the k answering most answers."""
    why = {
        k: f"its calls failed or went unscored on {share:.0%} of the questions "
        f"(more than {MAX_FAILURE_SHARE:.0%})"
        for k in ks
        if (share := table.failure_share(k)) > MAX_FAILURE_SHARE
    }
    answered = _answered(frame, table, ks) if table.objective.judges_answer else {}
    most = max(answered.values(), default=0)
    leader = next((k for k in ks if answered.get(k) == most), None)
    for k, count in answered.items():
        if most == 0:
            why.setdefault(k, ALL_REFUSED)
        elif count < MIN_ANSWER_SHARE * most:
            why.setdefault(
                k,
                f"it answered {count} answerable questions, fewer than {MIN_ANSWER_SHARE:.0%} "
                f"of {names.one(leader) if leader is not None else 'the most'}'s {most}",
            )
    return [k not in why for k in ks], [why.get(k, "") for k in ks]


def _answered(frame: pd.DataFrame, table: ObjectiveTable, ks: Sequence[int]) -> dict[int, int]:
    """Per k, the answerable questions of the decision it answered rather than refused."""
    if REFUSED not in frame.columns:
        return {}
    kept = frame[frame["question_id"].isin(table.values.index)]
    if ANSWERABLE in kept.columns:
        kept = kept[kept[ANSWERABLE].fillna(True).astype(bool)]
    if kept.empty:
        return {}
    answers = kept[kept[REFUSED].eq(False).fillna(False)]
    counts = answers.groupby("k")["question_id"].nunique()
    return {k: int(counts.get(k, 0)) for k in ks}
