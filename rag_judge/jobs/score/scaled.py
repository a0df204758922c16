"""Judging rows past this process: through a provider's Batch API, or over a Ray cluster.

:func:`aevaluate_scaled` is what ``rag-judge score`` and ``calibrate --run`` call: with neither
way out chosen it is :func:`~rag_judge.jobs.score.run.aevaluate`; with ``batch`` the job runs in
stages over the response cache (:mod:`rag_judge.runtime.executors.batched`); with a Ray target the rows go
to Ray tasks (:mod:`rag_judge.jobs.score.on_ray`). All three give the same results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_judge.backends.batch.batch_api import BatchState
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.errors import InputError
from rag_judge.jobs.score.result import EvaluationResult
from rag_judge.jobs.score.run import Progress, aevaluate
from rag_judge.runtime.executors.batched import BatchRun, Stage, run_batched, state_path_for
from rag_judge.runtime.executors.on_ray import RayTarget, RowCounts
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import Settings

OnPoll = Callable[[Stage | None, BatchState], None]
"""Called with each poll of a batch (its status and line counts)."""


@dataclass(frozen=True)
class ScaleOut:
    """Where a job's model calls go past this process (neither field: in process)."""

    ray: RayTarget | None = None
    """Judge the rows as Ray tasks on this cluster."""
    batch: bool = False
    """Send the calls through the model server's Batch API, in stages."""
    on_counts: Callable[[RowCounts], None] | None = None
    """Ray: called with the rows done, in flight and failed across workers."""
    on_poll: OnPoll | None = None
    """Batch: called with each poll."""
    poll_seconds: float = 10.0
    """Batch: seconds between two polls."""

    def __post_init__(self) -> None:
        if self.ray is not None and self.batch:
            raise InputError(
                "--batch and --executor ray are two ways to scale out: pick one", field="executor"
            )


async def aevaluate_scaled(
    samples: Sequence[Any],
    metrics: Sequence[str],
    *,
    settings: Settings,
    output: Path,
    scale: ScaleOut,
    cache: bool = True,
    progress: Progress | None = None,
    **options: Any,
) -> tuple[EvaluationResult, tuple[Stage, ...]]:
    """Judge ``samples`` as ``scale`` says; the result and the batch stages it took (none
    unless ``batch``). ``output`` is the score file: the batch ids are kept beside it."""
    if scale.batch:
        if not cache:
            raise InputError(
                "--batch hands replies over through the response cache: drop --no-cache"
            )
        run = await aevaluate_batched(
            samples,
            metrics,
            settings=settings,
            state_path=state_path_for(output),
            progress=progress,
            on_poll=scale.on_poll,
            poll_seconds=scale.poll_seconds,
            **options,
        )
        return run.result, run.stages
    if scale.ray is not None:
        from rag_judge.jobs.score.on_ray import evaluate_on_ray

        result = evaluate_on_ray(
            samples,
            metrics,
            settings=settings,
            target=scale.ray,
            progress=progress,
            on_counts=scale.on_counts,
            cache=cache,
            **options,
        )
        return result, ()
    result = await aevaluate(
        samples, metrics, settings=settings, cache=cache, progress=progress, **options
    )
    return result, ()


async def aevaluate_batched(
    dataset: Any,
    metrics: Sequence[str] | None = None,
    *,
    settings: Settings,
    state_path: Path,
    progress: Progress | None = None,
    on_poll: OnPoll | None = None,
    poll_seconds: float = 10.0,
    **options: Any,
) -> BatchRun[EvaluationResult]:
    """:func:`aevaluate` through the judge server's Batch API, in stages over the response cache
    (:mod:`rag_judge.runtime.executors.batched`); the result equals a live run's. ``progress`` is called for
    the final run's rows only (the stages' rows are incomplete by design)."""
    real = open_session(settings).client

    async def job(clients: tuple[ModelClient, ...]) -> EvaluationResult:
        (client,) = clients
        return await aevaluate(
            dataset,
            metrics,
            settings=settings,
            client=client,
            progress=progress if client is real else None,
            **options,
        )

    return await run_batched(
        job, [real], state_path=state_path, on_poll=on_poll, poll_seconds=poll_seconds
    )
