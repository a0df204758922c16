"""``sweep`` over a Ray cluster: the questions split into tasks, each a sweep of its own share.

Every task loads the eval set from its path (a bundled set, or a folder every node can read),
keeps its share of the questions (:meth:`~rag_judge.data.eval_sets.EvalSet.only`) and runs
:func:`~rag_judge.jobs.sweep.in_process.sweep_in_process` with the same settings and options:
its own session, the retriever's index from the shared cache directory (built once, by whichever
task comes first), and the shared response cache, so an interrupted sweep resumes from it. The
shares' results are joined in question order into the result one process would have produced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet, available_eval_sets, load_eval_set
from rag_judge.jobs.sweep.in_process import sweep_in_process
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.runtime.events import Emitting, Events
from rag_judge.runtime.executors.on_ray import (
    Emit,
    Event,
    RayTarget,
    for_workers,
    ledger_tallies,
    merged_ledger,
    run_parts,
    slice_size,
    task_events,
)
from rag_judge.runtime.session import Session
from rag_judge.runtime.settings import Settings


def _sweep_share(
    spec: str, ids: list[str], settings: Settings, options: SweepOptions, opened: dict[str, Any]
) -> Iterator[Event]:
    """One task: sweep the questions ``ids`` of the set ``spec`` names (a bundled name or an
    absolute folder path; events: see on_ray)."""

    def work(emit: Emit) -> tuple[SweepResult, dict[str, dict[str, Any]]]:
        import asyncio

        from rag_judge.runtime.session import open_session

        share = load_eval_set(spec).only(ids)
        session = open_session(settings, **opened)
        result = asyncio.run(sweep_in_process(share, session, options, Emitting(emit)))
        assert result.ledger is not None  # a job's result always carries its session's ledger
        return dataclasses.replace(result, ledger=None), ledger_tallies(result.ledger)

    yield from task_events(len(ids), work)


def sweep_on_ray(
    eval_set: str | Path | EvalSet,
    session: Session,
    options: SweepOptions,
    target: RayTarget,
    events: Events,
) -> SweepResult:
    """The sweep over Ray (see the module docstring): every worker opens its own session from
    ``session``'s settings (its cache on or off, its embedder). ``events`` gets the number of
    questions, each finished question's run as it arrives and the counts across workers."""
    if isinstance(eval_set, EvalSet):
        raise InputError("a sweep on Ray loads its eval set by name or folder, not a set object")
    loaded = load_eval_set(eval_set)
    if options.limit is not None:
        loaded = loaded.limit(options.limit)
    ids = [q.id for q in loaded.queries]
    events.started(len(ids))
    size = slice_size(len(ids), target.workers)
    spec = str(eval_set) if str(eval_set) in available_eval_sets() else str(loaded.path.resolve())
    if options.rag is not None and not isinstance(options.rag, str):
        raise InputError(
            "a sweep on Ray names its RAG by a spec (module:attr, a .jsonl, a URL) that every "
            "worker loads, not an object",
            field="rag",
        )
    if options.rag is not None and Path(options.rag).is_file():
        options = dataclasses.replace(options, rag=str(Path(options.rag).resolve()))
    shipped = for_workers(session.settings)
    opened = {"cache": session.cache is not None, "embeddings": session.embeddings}
    parts = [(spec, ids[i : i + size], shipped, options, opened) for i in range(0, len(ids), size)]
    outcomes = run_parts(
        _sweep_share, parts, target=target, on_row=events.finished, on_counts=events.counts
    )
    return joined([result for result, _ in outcomes], [tallies for _, tallies in outcomes])


def joined(shares: Sequence[SweepResult], tallies: Sequence[dict[str, Any]]) -> SweepResult:
    """The shares' results as one sweep's, in share order, with their ledgers added up."""
    first = shares[0]

    def union(field: str) -> dict[Any, Any]:
        return {key: value for share in shares for key, value in getattr(share, field).items()}

    return dataclasses.replace(
        first,
        per_question=pd.concat([s.per_question for s in shares], ignore_index=True),
        skipped=union("skipped"),
        uncovered=union("uncovered"),
        ledger=merged_ledger(tallies),
        judgements=union("judgements"),
        questions=union("questions"),
        retrieved=union("retrieved"),
        passages=union("passages"),
    )
