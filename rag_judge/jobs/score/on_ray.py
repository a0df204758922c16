"""``score`` over a Ray cluster: rows split into tasks, each worker opening its own session.

Every task judges a slice of the rows with :func:`~rag_judge.jobs.score.run.judge_rows` from
the same settings and options, so a worker reaches models as the driver would: the embedded
model loaded once per worker process, or an OpenAI-compatible endpoint (a vLLM per node, or a
shared one). Workers share the settings' response cache (SQLite, safe under concurrent
writers), so an interrupted run resumes by answering finished rows from it, and a task whose
worker died is run again by Ray without redoing the calls it had finished
(:mod:`rag_judge.runtime.executors.on_ray`). Results come back in input order; each finished
row goes to the events sink as it arrives.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from rag_judge.core.types import RagSample
from rag_judge.jobs.score.options import ScoreOptions
from rag_judge.jobs.score.result import EvaluationResult, SampleResult
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


def _row_record(row: SampleResult) -> dict[str, Any]:
    """A finished row as the driver receives it: JSON-ready, rebuilt there by pydantic."""
    return row.model_dump(mode="json")


def _judge_slice(
    settings: Settings,
    rows: list[dict[str, Any]],
    options: ScoreOptions,
    opened: dict[str, Any],
) -> Iterator[Event]:
    """One task: judge ``rows`` with a session of this worker's own (events: see on_ray)."""

    def work(emit: Emit) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
        import asyncio

        from rag_judge.jobs.score.run import judge_rows
        from rag_judge.runtime.session import open_session

        samples = [RagSample.model_validate(r) for r in rows]
        session = open_session(settings, **opened)
        result = asyncio.run(judge_rows(samples, session, options, Emitting(emit, _row_record)))
        return [s.model_dump(mode="json") for s in result.samples], ledger_tallies(result.ledger)

    yield from task_events(len(rows), work)


def score_on_ray(
    samples: Sequence[RagSample],
    session: Session,
    options: ScoreOptions,
    target: RayTarget,
    events: Events,
) -> EvaluationResult:
    """Judge ``samples`` over Ray (see the module docstring); the same result as in process.

    Workers open sessions from ``session``'s settings (with its cache on or off and its
    embedder); ``events`` gets each row and the counts across workers as they change.
    """
    size = slice_size(len(samples), target.workers)
    rows = [s.model_dump(mode="json") for s in samples]
    shipped = for_workers(session.settings)
    opened = {"cache": session.cache is not None, "embeddings": session.embeddings}
    parts = [(shipped, rows[i : i + size], options, opened) for i in range(0, len(rows), size)]

    def on_row(record: dict[str, Any]) -> None:
        events.finished(SampleResult.model_validate(record))

    outcomes = run_parts(_judge_slice, parts, target=target, on_row=on_row, on_counts=events.counts)
    ordered = [SampleResult.model_validate(r) for records, _ in outcomes for r in records]
    ledger = merged_ledger(tallies for _, tallies in outcomes)
    return EvaluationResult(
        ordered, metrics=list(options.metrics), model=session.settings.judge_model, ledger=ledger
    )
