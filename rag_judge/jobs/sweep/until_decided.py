"""``sweep --until-decided``: questions in batches, the ks that are out dropped, until decided.

The RAG is built once; each batch of questions is swept at the ks still in
(:meth:`~rag_judge.jobs.sweep.in_process.PreparedSweep.sweep`), then one look
(:func:`~rag_judge.jobs.sweep.decision.sequential.take_look`) compares those ks on every question
judged at all of them, spending its share of the error. The run stops when a look settles, the
budget is spent, or the questions allowed are used. Every call goes through the response cache,
so an interrupted run, or a re-run with a larger budget, replays the finished batches without a
call and goes on from there; the looks, being a function of the answers, come out the same.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence

import pandas as pd

from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.sweep.budget import Budget
from rag_judge.jobs.sweep.decision.decide import compared_arms
from rag_judge.jobs.sweep.decision.defaults import DEFAULT_RESAMPLES
from rag_judge.jobs.sweep.decision.looks import SweepLooks, correlations_of
from rag_judge.jobs.sweep.decision.objective import choose_objective
from rag_judge.jobs.sweep.decision.sequential import Look, SequentialRecord, StopReason, take_look
from rag_judge.jobs.sweep.in_process import prepare_sweep
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.runtime.events import QUIET, Events
from rag_judge.runtime.session import Session

LOOK_RESAMPLES = DEFAULT_RESAMPLES
"""Bootstrap resamples per look: as many as the final decision's, so the last look and the
decision agree."""


def questions_allowed(loaded: EvalSet, options: SweepOptions) -> int:
    """The most questions a run until decided may use: ``max_questions``, at most the set's.
    Its test (when the run opens one) spends its error over these."""
    return min(options.max_questions or len(loaded.queries), len(loaded.queries))


async def sweep_until_decided(
    loaded: EvalSet,
    session: Session,
    options: SweepOptions,
    looks: SweepLooks,
    events: Events = QUIET,
) -> tuple[SweepResult, SequentialRecord, SweepLooks]:
    """Sweep in batches until the decision's rule settles (see the module docstring); each look
    is one more of the sweep's ``looks``, returned with them."""
    prepared = await prepare_sweep(loaded, session, options)
    events.started(questions_allowed(loaded, options))
    parts: list[SweepResult] = []

    async def sweep_batch(share: EvalSet, active: Sequence[int]) -> SweepResult:
        at_active = dataclasses.replace(options, ks=tuple(active))
        parts.append(await prepared.sweep(share, at_active, events))
        return merge_results(parts, options.ks)

    record, looks = await in_batches(loaded, session, options, options.ks, looks, sweep_batch)
    return merge_results(parts, options.ks), record, looks


BatchSweep = Callable[[EvalSet, Sequence[int]], Awaitable[SweepResult]]
"""Sweeps one batch of questions at the columns still in, and returns everything swept so far as
one sweep whose ``k`` column holds the compared columns (ks, or a grid's arms)."""


async def in_batches(
    loaded: EvalSet,
    session: Session,
    options: SweepOptions,
    columns: Sequence[int],
    looks: SweepLooks,
    sweep_batch: BatchSweep,
) -> tuple[SequentialRecord, SweepLooks]:
    """The run until decided over ``columns`` (a k-sweep's ks, a grid's arms): a batch of
    ``options.step`` questions at the columns still in, then a look, until it settles, the
    budget is spent or the questions allowed are used; its record and the looks."""
    total = questions_allowed(loaded, options)
    queries = loaded.queries[:total]
    active = list(columns)
    taken: list[Look] = []
    answers = used = 0
    started, tokens_before = time.monotonic(), tokens_spent(session)
    seconds = tokens = 0.0
    stop: StopReason = "max_questions"
    while used < total:
        batch = queries[used : used + options.step]
        swept = await sweep_batch(loaded.only(q.id for q in batch), active)
        batch_answers = len(batch) * len(active)
        answers += batch_answers
        used += len(batch)
        look, looks = next_look(swept, active, options, looks, used)
        if look is not None:
            taken.append(look)
            if look.recommended_k is not None:
                stop = "settled"
                break
            active = [k for k in active if k not in look.eliminated]
        before = seconds, tokens
        seconds, tokens = time.monotonic() - started, tokens_spent(session) - tokens_before
        if options.budget is not None and over_budget(
            options.budget,
            (seconds, tokens),
            before,
            batch_answers,
            min(options.step, total - used) * len(active),
        ):
            stop = "budget"
            break
    record = SequentialRecord(
        looks=tuple(taken),
        stop=stop,
        questions_used=used,
        max_questions=total,
        answers_used=answers,
        answers_fixed=total * len(columns),
        spending=looks.spending,
        confidence=options.confidence,
        budget="" if options.budget is None else str(options.budget),
        seconds=time.monotonic() - started,
        tokens=tokens_spent(session) - tokens_before,
    )
    return record, looks


def over_budget(
    budget: Budget,
    now: tuple[float, float],
    before: tuple[float, float],
    last_answers: int,
    next_answers: int,
) -> bool:
    """Spent, or the next batch at the last one's pace per answer would overrun it."""
    pace = [(a - b) / max(last_answers, 1) for a, b in zip(now, before, strict=True)]
    return budget.spent(now[0], round(now[1])) or budget.would_overrun(
        now[0], round(now[1]), pace[0] * next_answers, pace[1] * next_answers
    )


def next_look(
    result: SweepResult, active: Sequence[int], options: SweepOptions, looks: SweepLooks, n: int
) -> tuple[Look | None, SweepLooks]:
    """One look over the ks still in, as the sweep's next look (None when it adds nothing to an
    earlier one), and the looks with it."""
    choice = choose_objective(result, options.objective)
    if choice.used is None:
        return None, looks
    frame = result.per_question[result.per_question["k"].isin(active)]
    arms = compared_arms(frame, choice.used, active)
    if len(arms.ks) == 0:
        return None, looks
    level = looks.level(n, correlations_of(arms.values))
    if level <= 0:
        return None, looks
    look, _ = take_look(
        arms.values,
        arms.ks,
        alpha=level,
        margin=options.margin,
        costs=arms.costs,
        eligible=arms.eligible,
        why_not=arms.why_not,
        n_resamples=LOOK_RESAMPLES,
    )
    return look, looks.with_look(n, level)


def merge_results(parts: Sequence[SweepResult], ks: Sequence[int]) -> SweepResult:
    """The batches' results as one (rows in question order; the ks of the whole run)."""
    first = parts[0]
    frame = pd.concat([p.per_question for p in parts], ignore_index=True)
    return dataclasses.replace(
        first,
        per_question=frame,
        ks=tuple(ks),
        skipped={k: v for p in parts for k, v in p.skipped.items()},
        uncovered={k: v for p in parts for k, v in p.uncovered.items()},
        judgements={k: v for p in parts for k, v in p.judgements.items()},
        questions={k: v for p in parts for k, v in p.questions.items()},
        retrieved={k: v for p in parts for k, v in p.retrieved.items()},
        passages={k: v for p in parts for k, v in p.passages.items()},
    )


def tokens_spent(session: Session) -> int:
    """Prompt and completion tokens the session's models have spent so far."""
    summary = session.ledger.summary()
    return sum(
        int(m.get("prompt_tokens", 0)) + int(m.get("completion_tokens", 0))
        for m in summary.values()
    )
