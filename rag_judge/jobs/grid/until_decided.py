"""A configuration sweep ``--until-decided``: the grid in batches of questions, the arms that are
out dropped, until the decision settles.

As the k-sweep's run until decided (:mod:`rag_judge.jobs.sweep.until_decided`), over arms: each
batch of questions is swept by every configuration at its ks still in (a configuration whose
ks are all out is not swept at all: no retrieval, no call), then one look compares the arms still
in on every question judged at all of them, at the level the sweep's test leaves it. The run
stops when a look settles, the budget is spent, or the questions allowed are used; what it did
not generate against the full grid is in its record.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence

from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.grid.result import GridResult, arms_of
from rag_judge.jobs.sweep.decision.looks import SweepLooks
from rag_judge.jobs.sweep.decision.sequential import Look, SequentialRecord, StopReason
from rag_judge.jobs.sweep.grid_axes import Configuration
from rag_judge.jobs.sweep.in_process import PreparedSweep
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.until_decided import (
    merge_results,
    next_look,
    over_budget,
    questions_allowed,
    tokens_spent,
)
from rag_judge.runtime.events import QUIET, Events
from rag_judge.runtime.session import Session


async def grid_until_decided(
    loaded: EvalSet,
    options: SweepOptions,
    configurations: Sequence[Configuration],
    each: Mapping[str, SweepOptions],
    prepared: Mapping[str, PreparedSweep],
    looks: SweepLooks,
    session: Session,
    events: Events = QUIET,
) -> tuple[dict[str, SweepResult], SequentialRecord, SweepLooks]:
    """Sweep the grid in batches until the rule settles (see the module docstring): each
    configuration's sweep over the questions it was asked, the record, and the looks."""
    total = questions_allowed(loaded, options)
    queries = loaded.queries[:total]
    arms = arms_of(tuple(configurations), options.ks)
    grid = options.grid
    assert grid is not None  # the job checked
    events.started(total * len(configurations))
    active = list(arms)
    parts: dict[str, list[SweepResult]] = {c.name: [] for c in configurations}
    taken: list[Look] = []
    answers = used = 0
    started, tokens_before = time.monotonic(), tokens_spent(session)
    seconds = tokens = 0.0
    stop: StopReason = "max_questions"
    while used < total:
        batch = queries[used : used + options.step]
        share = loaded.only(q.id for q in batch)
        for configuration in configurations:
            name = configuration.name
            ks = tuple(arms[a].k for a in active if arms[a].configuration == name)
            if ks:
                at = dataclasses.replace(each[name], ks=ks)
                parts[name].append(await prepared[name].sweep(share, at, events))
        batch_answers = len(batch) * len(active)
        answers += batch_answers
        used += len(batch)
        swept = GridResult(
            grid,
            tuple(configurations),
            {name: merge_results(p, options.ks) for name, p in parts.items() if p},
            options.ks,
        )
        look, looks = next_look(swept.as_arms(), active, options, looks, used)
        if look is not None:
            taken.append(look)
            if look.recommended_k is not None:
                stop = "settled"
                break
            active = [a for a in active if a not in look.eliminated]
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
        answers_fixed=total * len(arms),
        spending=looks.spending,
        confidence=options.confidence,
        budget="" if options.budget is None else str(options.budget),
        seconds=time.monotonic() - started,
        tokens=tokens_spent(session) - tokens_before,
    )
    results = {name: merge_results(p, options.ks) for name, p in parts.items() if p}
    return results, record, looks
