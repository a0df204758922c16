"""``score`` over a Ray cluster: rows split into tasks, each worker opening its own session.

Every task judges a slice of the rows with :func:`~rag_judge.jobs.score.run.aevaluate` from the
same settings, so a worker reaches models as the driver would: the embedded model loaded once
per worker process, or an OpenAI-compatible endpoint (a vLLM per node, or a shared one).
Workers share the settings' response cache (SQLite, safe under concurrent writers), so an
interrupted run resumes by answering finished rows from it, and a task whose worker died is run
again by Ray without redoing the calls it had finished (:mod:`rag_judge.runtime.executors.on_ray`). Results
come back in input order; each finished row goes to ``progress`` as it arrives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rag_judge.core.types import RagSample
from rag_judge.jobs.score.result import EvaluationResult, SampleResult
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


def _judge_slice(
    settings: Settings, rows: list[dict[str, Any]], metrics: list[str], options: dict[str, Any]
) -> Iterator[Event]:
    """One task: judge ``rows`` with a session of this worker's own (events: see on_ray)."""

    def work(emit: Emit) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
        import asyncio

        from rag_judge.jobs.score.run import aevaluate

        def finished(row: SampleResult) -> None:
            emit(row.model_dump(mode="json"), row.failed)

        samples = [RagSample.model_validate(r) for r in rows]
        result = asyncio.run(
            aevaluate(samples, metrics, settings=settings, progress=finished, **options)
        )
        return [s.model_dump(mode="json") for s in result.samples], ledger_tallies(result.ledger)

    yield from task_events(len(rows), work)


def evaluate_on_ray(
    samples: Sequence[RagSample],
    metrics: Sequence[str],
    *,
    settings: Settings,
    target: RayTarget,
    progress: Callable[[SampleResult], None] | None = None,
    on_counts: Callable[[RowCounts], None] | None = None,
    **options: Any,
) -> EvaluationResult:
    """Judge ``samples`` over Ray (see the module docstring); the same result as in process.

    ``on_counts`` gets the rows done, in flight and failed across workers as they change.
    """
    size = slice_size(len(samples), target.workers)
    rows = [s.model_dump(mode="json") for s in samples]
    shipped = for_workers(settings)
    parts = [
        (shipped, rows[i : i + size], list(metrics), options) for i in range(0, len(rows), size)
    ]

    def on_row(record: dict[str, Any]) -> None:
        if progress is not None:
            progress(SampleResult.model_validate(record))

    outcomes = run_parts(_judge_slice, parts, target=target, on_row=on_row, on_counts=on_counts)
    ordered = [SampleResult.model_validate(r) for records, _ in outcomes for r in records]
    ledger = merged_ledger(tallies for _, tallies in outcomes)
    return EvaluationResult(
        ordered, metrics=list(metrics), model=settings.judge_model, ledger=ledger
    )
