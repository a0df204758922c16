"""The configuration sweep: every configuration of a grid swept at every k on the same questions,
then one decision over every arm, (configuration, k), by the k-sweep's own rule.

Each configuration is a k-sweep of its own options (:func:`configured`): its RAG is built once
(indexes cached on disk, so configurations that share a retriever and chunking share the index),
and every model call goes through the session's response cache, so two arms that put the same
passages before the model share the answer and its judgements (counted: :func:`shared_answers`),
and an interrupted grid resumes without redoing finished work. Where the executor says: here,
over Ray, or through a Batch API, one configuration after another. ``until_decided`` sweeps the
grid in batches of questions and stops paying for arms that are out
(:mod:`rag_judge.jobs.grid.until_decided`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.grid.result import GridResult
from rag_judge.jobs.sweep.decision.looks import SweepLooks
from rag_judge.jobs.sweep.decision.sequential import SequentialRecord
from rag_judge.jobs.sweep.grid_axes import NO_RERANK, RAG_AXIS, Configuration
from rag_judge.jobs.sweep.job import calibrated, decided, start_job, sweep_scaled_out
from rag_judge.jobs.sweep.looks_store import (
    new_test,
    save_looks,
)
from rag_judge.jobs.sweep.options import DEFAULT_RERANK_DEPTH, SweepOptions
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.pipeline.build import ChunkSize
from rag_judge.runtime.events import QUIET, Events
from rag_judge.runtime.executors import IN_PROCESS, Batch, Executor
from rag_judge.runtime.executors.batched import Stage
from rag_judge.runtime.session import Session


@dataclass(frozen=True)
class GridRun:
    """The configuration sweep's result, and the batch stages that led to it (none unless
    batched)."""

    result: GridResult
    stages: tuple[Stage, ...] = ()


def configured(options: SweepOptions, configuration: Configuration) -> SweepOptions:
    """The k-sweep of one configuration: its values in place of the options of their name.

    >>> from rag_judge.jobs.sweep.grid_axes import Grid
    >>> options = SweepOptions.build(grid=["retriever=dense", "chunk=300/2"])
    >>> one = configured(options, options.grid.configurations()[0])
    >>> one.retriever, str(one.chunk), one.grid
    ('dense', '300/2', None)
    """
    values: dict[str, object] = {"grid": None}
    for axis, value in configuration.values:
        if axis == "retriever":
            values["retriever"] = value
        elif axis == "rerank":
            values["rerank"] = None if value == NO_RERANK else value
        elif axis == "chunk":
            values["chunk"] = ChunkSize.parse(value)
        elif axis == RAG_AXIS:
            values["rag"] = configuration.rag if configuration.rag is not None else value
    if values.get("rerank", options.rerank) is None:
        values["rerank_depth"] = DEFAULT_RERANK_DEPTH  # the depth is a reranker's alone
    return dataclasses.replace(options, **values)  # type: ignore[arg-type]


async def grid_job(
    eval_set: str | Path | EvalSet,
    session: Session,
    options: SweepOptions,
    *,
    executor: Executor = IN_PROCESS,
    events: Events = QUIET,
) -> GridRun:
    """Sweep every configuration of ``options.grid`` at every k, then calibrate and decide over
    every arm (see the module docstring). ``events`` hears the questions × configurations to
    sweep, then each finished question of each configuration.

    Raises:
        InputError: no grid, a sweep until decided off this process, a calibration profile that
            does not fit the judge, or what the eval set, a RAG or an index refuse (before any
            model call).
    """
    if options.grid is None:
        raise InputError("a configuration sweep needs a grid (--grid AXIS=V1,V2)", field="grid")
    start = start_job(eval_set, session, options, executor)
    loaded, profile, looks = start.loaded, start.profile, start.looks
    configurations = options.grid.configurations()
    # In process, reasons are not written: the grid's report shows arms, not rows.
    unreasoned = dataclasses.replace(
        options, judge=dataclasses.replace(options.judge, reasons=False)
    )
    each = {c.name: configured(unreasoned, c) for c in configurations}
    stages: list[Stage] = []
    record: SequentialRecord | None = None
    if not start.in_process:
        results: dict[str, SweepResult] = {}
        for i, configuration in enumerate(configurations):
            run = await sweep_scaled_out(
                eval_set, session, each[configuration.name], _own(executor, i), events
            )
            results[configuration.name] = run.result
            stages.extend(run.stages)
    else:
        from rag_judge.jobs.sweep.in_process import prepare_sweep

        prepared = {name: await prepare_sweep(loaded, session, o) for name, o in each.items()}
        if options.until_decided:
            from rag_judge.jobs.grid.until_decided import grid_until_decided

            within = looks or new_test(start.horizon, options)
            results, record, within = await grid_until_decided(
                loaded, options, configurations, each, prepared, within, session, events
            )
        else:
            events.started(len(loaded.queries) * len(configurations))
            results = {
                name: await prepared[name].sweep(loaded, each[name], events) for name in each
            }
    grid = GridResult(
        options.grid,
        configurations,
        {name: calibrated(result, profile) for name, result in results.items()},
        options.ks,
        extra={"shared_answers": shared_answers(results, options.ks)},
    )
    chosen = decide_grid(
        grid,
        options,
        within if record is not None else looks,
        record,
        kept=looks is not None,
        horizon=None if record is not None else len(start.whole.queries),
    )
    save_looks(start.where, chosen.decision.looks if chosen.decision and looks else None)
    return GridRun(chosen, tuple(stages))


def decide_grid(
    grid: GridResult,
    options: SweepOptions,
    looks: SweepLooks | None,
    record: SequentialRecord | None = None,
    *,
    kept: bool = True,
    horizon: int | None = None,
) -> GridResult:
    """``grid`` with its decision over every arm (over the arms still in at the last look of a
    run until decided), by the k-sweep's rule (:func:`~rag_judge.jobs.sweep.job.decided`)."""
    arms = grid.as_arms()
    result = decided(
        arms,
        options,
        looks,
        record,
        kept=kept,
        horizon=horizon,
        names=grid.names,
    )
    return dataclasses.replace(grid, decision=result.decision)


def shared_answers(results: Mapping[str, SweepResult], ks: tuple[int, ...]) -> dict[str, int]:
    """How many (question, arm) answers put before the model the same passages, in the same
    order, as an arm swept before them: their answer and judgements came from the response
    cache, not from a model call. ``answers``: every answer of the grid."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    shared = answers = 0
    for result in results.values():
        present = {
            (str(q), int(k))
            for q, k in zip(
                result.per_question["question_id"], result.per_question["k"], strict=True
            )
        }
        for qid, passages in result.passages.items():
            for k in ks:
                if (qid, k) not in present:
                    continue
                answers += 1
                key = (qid, tuple(passages[:k]))
                shared += key in seen
                seen.add(key)
    return {"shared": shared, "answers": answers}


async def asweep_grid(
    eval_set: str | Path | EvalSet, options: SweepOptions | None = None, **arguments: Any
) -> GridResult:
    """Sweep a grid of configurations at every k and decide the configuration and k, as
    ``rag-judge sweep --grid`` does: the same arguments as :func:`~rag_judge.jobs.sweep.job.
    asweep` (the models, the cache, the callbacks), and ``grid=`` among the options' keywords:
    texts such as ``["retriever=bm25,dense"]``, or a mapping whose ``rag`` axis names your own
    RAG objects (``{"rag": {"small": chain_a, "large": chain_b}}``). :func:`sweep_grid` is the
    synchronous twin.

    Raises:
        InputError: a bad grid or option, before any index or call.
    """
    from rag_judge.jobs.sweep.job import session_and_options

    session_keywords = set(inspect.signature(session_and_options).parameters) - {
        "options",
        "values",
    }
    given = {k: v for k, v in arguments.items() if k in session_keywords}
    values = {k: v for k, v in arguments.items() if k not in session_keywords}
    chosen, session, events = session_and_options(options, values, **given)
    if chosen.grid is None:
        raise InputError("give a grid, e.g. grid=['retriever=bm25,dense']", field="grid")
    return (await grid_job(eval_set, session, chosen, events=events)).result


def sweep_grid(
    eval_set: str | Path | EvalSet, options: SweepOptions | None = None, **arguments: Any
) -> GridResult:
    """:func:`asweep_grid` from synchronous code.

    Two chunkings of the bundled CMRC 2018 set's documents, k = 1..2, answered by a scripted
    model (a real run names one, or none for the embedded default):

    >>> from rag_judge.backends.providers.scripted import ScriptedBackend, register
    >>> model = register(ScriptedBackend(respond=lambda r: "光荣和ω-force", name="scripted/g"))
    >>> grid = sweep_grid("cmrc2018_zh", grid=["chunk=set,200/1"], limit=12, ks=[1, 2],
    ...                   metrics=["exact_match"], model=model, cache=False)
    >>> [c.name for c in grid.configurations], len(grid.arms)
    (['chunk=set', 'chunk=200/1'], 4)
    >>> grid.decision.headline.startswith("Undecided between 4 arms")
    True
    """
    return asyncio.run(asweep_grid(eval_set, options, **arguments))


def _own(executor: Executor, index: int) -> Executor:
    """One configuration's executor: a Batch API run keeps each configuration's batch ids in a
    file of its own (``batches-2.json``), so an interrupted grid resumes each."""
    if isinstance(executor, Batch):
        path = executor.state_path
        return dataclasses.replace(
            executor, state_path=path.with_name(f"{path.stem}-{index + 1}{path.suffix}")
        )
    return executor
