"""``sweep`` over a Ray cluster: the questions split into tasks, each a sweep of its own share.

Every task loads the eval set from its path (a bundled set, or a folder every node can read),
keeps its share of the questions (:meth:`~rag_judge.data.eval_sets.EvalSet.only`) and runs
:func:`~rag_judge.jobs.sweep.job.arun_job` with the same settings: its own session, the
retriever's index from the shared cache directory (built once, by whichever task comes first),
and the shared response cache, so an interrupted sweep resumes from it. The shares' results are
joined in question order into the result one process would have produced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rag_judge.data.eval_sets import available_eval_sets, load_eval_set
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.rows import QuestionRun
from rag_judge.runtime.executors.on_ray import (
    Emit,
    Event,
    RayTarget,
    RowCounts,
    for_workers,
    ledger_tallies,
    merged_ledger,
    run_parts,
    slice_size,
    task_events,
)
from rag_judge.runtime.settings import Settings


def _sweep_share(spec: str, ids: list[str], options: dict[str, Any]) -> Iterator[Event]:
    """One task: sweep the questions ``ids`` of the set ``spec`` names (a bundled name or an
    absolute folder path; events: see on_ray)."""

    def work(emit: Emit) -> tuple[SweepResult, dict[str, dict[str, Any]]]:
        from rag_judge.jobs.sweep.job import run_job

        def finished(run: QuestionRun) -> None:
            emit(run.query.id, run.failed)

        share = load_eval_set(spec).only(ids)
        result = run_job(share, on_question=finished, **options)
        assert result.ledger is not None  # a job's result always carries its session's ledger
        return dataclasses.replace(result, ledger=None), ledger_tallies(result.ledger)

    yield from task_events(len(ids), work)


def sweep_on_ray(
    eval_set: str | Path,
    *,
    target: RayTarget,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    on_counts: Callable[[RowCounts], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    **options: Any,
) -> SweepResult:
    """:func:`~rag_judge.jobs.sweep.job.run_job` over Ray (see the module docstring).

    ``options`` are ``run_job``'s (settings, ks, metrics, retriever, ...), minus ready clients:
    every worker builds its own from the settings. ``progress`` gets each finished question's
    id, ``on_counts`` the questions done, in flight and failed across workers.
    """
    loaded = load_eval_set(eval_set)
    if limit is not None:
        loaded = loaded.limit(limit)
    ids = [q.id for q in loaded.queries]
    if on_start is not None:
        on_start(len(ids))
    size = slice_size(len(ids), target.workers)
    spec = str(eval_set) if str(eval_set) in available_eval_sets() else str(loaded.path.resolve())
    if isinstance(options.get("settings"), Settings):
        options = {**options, "settings": for_workers(options["settings"])}
    if isinstance(rag := options.get("rag"), str) and Path(rag).is_file():
        options = {**options, "rag": str(Path(rag).resolve())}  # a worker's cwd may differ
    parts = [(spec, ids[i : i + size], options) for i in range(0, len(ids), size)]
    outcomes = run_parts(_sweep_share, parts, target=target, on_row=progress, on_counts=on_counts)
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
    )
