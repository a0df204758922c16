"""The score job's one entry: judge rows with a session, as the executor says.

``rag-judge score`` and ``calibrate --run`` call :func:`score_job`. In process it is
:func:`~rag_judge.jobs.score.run.judge_rows`; with :class:`~rag_judge.runtime.executors.Batch`
the job runs in stages over the response cache (:mod:`rag_judge.runtime.executors.batched`);
with :class:`~rag_judge.runtime.executors.OnRay` the rows go to Ray tasks
(:mod:`rag_judge.jobs.score.on_ray`). All three give the same results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_judge.core.types import RagSample
from rag_judge.jobs.score.options import ScoreOptions
from rag_judge.jobs.score.result import EvaluationResult
from rag_judge.jobs.score.run import judge_rows
from rag_judge.runtime.events import QUIET, Events
from rag_judge.runtime.executors import IN_PROCESS, Batch, Executor, OnRay
from rag_judge.runtime.executors.batched import Stage
from rag_judge.runtime.executors.on_batch import run_on_batch
from rag_judge.runtime.session import Session


@dataclass(frozen=True)
class ScoreRun:
    """The judged rows, and the batch stages that led to them (none unless batched)."""

    result: EvaluationResult
    stages: tuple[Stage, ...] = ()


async def score_job(
    samples: Sequence[RagSample],
    session: Session,
    options: ScoreOptions,
    *,
    executor: Executor = IN_PROCESS,
    events: Events = QUIET,
) -> ScoreRun:
    """Judge ``samples`` with the session's judge as ``options`` say, where ``executor`` says.

    Batch: ``events`` hears of the final, all-cached run's rows only (the stages' rows are
    incomplete by design) and of every poll. Ray: of every row and the counts across workers.
    """
    if isinstance(executor, Batch):

        async def work(view: Session, shown: Events) -> EvaluationResult:
            return await judge_rows(samples, view, options, shown)

        run = await run_on_batch(work, session, executor, events=events)
        return ScoreRun(run.result, run.stages)
    if isinstance(executor, OnRay):
        from rag_judge.jobs.score.on_ray import score_on_ray

        return ScoreRun(score_on_ray(samples, session, options, executor.target, events))
    return ScoreRun(await judge_rows(samples, session, options, events))
