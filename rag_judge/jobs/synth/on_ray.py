"""One synth round's candidates over a Ray cluster: split into tasks, each worker with its own
session over the same settings and response cache.

A worker rebuilds the round's context (the chunks by id and their BM25 index, cheap beside the
model calls) and runs :func:`~rag_judge.jobs.synth.checks.decide` on its slice; the verdicts come
back in candidate order, so the near-duplicate filter and the next round run in the driver as
they would in process, and the same seed gives the same set.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Any

from rag_judge.jobs.synth.options import SynthOptions
from rag_judge.pipeline.chunking import Chunk
from rag_judge.runtime.executors.on_ray import (
    Emit,
    Event,
    RayTarget,
    for_workers,
    run_parts,
    slice_size,
    task_events,
)
from rag_judge.runtime.session import Session
from rag_judge.runtime.settings import Settings
from rag_judge.synth.candidates import Candidate, Verdict


def _decide_slice(
    settings: Settings,
    candidates: list[dict[str, Any]],
    chunks: list[dict[str, Any]],
    options: SynthOptions,
    opened: dict[str, Any],
) -> Iterator[Event]:
    """One task: decide ``candidates`` with a session of this worker's own."""

    def work(emit: Emit) -> list[dict[str, Any]]:
        import asyncio

        from rag_judge.jobs.synth.checks import Context, decide
        from rag_judge.pipeline.bm25 import BM25Retriever
        from rag_judge.runtime.session import open_session

        cut = [Chunk(**c) for c in chunks]
        session = open_session(settings, **opened)
        context = Context(session, {c.id: c for c in cut}, BM25Retriever.build(cut), options)

        async def each(candidate: Candidate) -> dict[str, Any]:
            verdict = await decide(candidate, context)
            emit(_record(verdict), verdict.failed)
            return _record(verdict)

        async def all_of() -> list[dict[str, Any]]:
            return list(await asyncio.gather(*(each(Candidate(**c)) for c in candidates)))

        return asyncio.run(all_of())

    yield from task_events(len(candidates), work)


def decide_on_ray(
    batch: Sequence[Candidate],
    chunks: Sequence[Chunk],
    session: Session,
    options: SynthOptions,
    target: RayTarget,
) -> list[Verdict]:
    """The verdicts of ``batch``, decided by Ray tasks, in ``batch`` order."""
    size = slice_size(len(batch), target.workers)
    rows = [asdict(c) for c in batch]
    shipped = for_workers(session.settings)
    opened = {"cache": session.cache is not None}
    cut = [asdict(c) for c in chunks]
    parts = [(shipped, rows[i : i + size], cut, options, opened) for i in range(0, len(rows), size)]
    outcomes = run_parts(_decide_slice, parts, target=target)
    return [_verdict(record) for records in outcomes for record in records]


def _record(verdict: Verdict) -> dict[str, Any]:
    return {
        "candidate": asdict(verdict.candidate),
        "rejected_by": verdict.rejected_by,
        "detail": verdict.detail,
        "figures": verdict.figures,
    }


def _verdict(record: dict[str, Any]) -> Verdict:
    candidate = record["candidate"]
    candidate["chunk_ids"] = tuple(candidate["chunk_ids"])
    return Verdict(
        Candidate(**candidate), record["rejected_by"], record["detail"], record["figures"]
    )
