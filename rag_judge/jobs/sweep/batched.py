"""``sweep --batch``: the k-sweep through the model servers' Batch APIs, in stages.

The sweep runs as a batched job (:mod:`rag_judge.runtime.executors.batched`) over both of its clients, the
judge's and the generator's: the first stage collects every k's answer, the next the claims and
reverse questions of those answers, the next their verdicts, each stage one batch per model.
A generator that takes no batches (the embedded model) answers live in the first stage, from
the cache after it. The last run reads every reply from the cache: the same sweep as a live one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.score.scaled import OnPoll
from rag_judge.jobs.sweep.job import arun_job
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.runtime.executors.batched import BatchRun, run_batched
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import Settings

STATE_FILE = "batches.json"
"""The batch ids of a batched sweep, inside its output folder."""


async def arun_job_batched(
    eval_set: str | Path | EvalSet,
    *,
    settings: Settings,
    state_path: Path,
    on_poll: OnPoll | None = None,
    poll_seconds: float = 10.0,
    progress: Callable[[str], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    **options: Any,
) -> BatchRun[SweepResult]:
    """:func:`~rag_judge.jobs.sweep.job.arun_job` in batch stages (see the module docstring);
    ``progress`` and ``on_start`` are called by the final, all-cached run only."""
    session = open_session(settings)
    judge, generator = session.client, session.generator

    async def job(clients: tuple[ModelClient, ...]) -> SweepResult:
        judging, answering = clients
        final = judging is judge and answering is generator
        return await arun_job(
            eval_set,
            settings=settings,
            client=judging,
            generator_client=answering,
            progress=progress if final else None,
            on_start=on_start if final else None,
            **options,
        )

    return await run_batched(
        job,
        [judge, generator],
        state_path=state_path,
        on_poll=on_poll,
        poll_seconds=poll_seconds,
    )
