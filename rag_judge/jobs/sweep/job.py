"""The k-sweep's one entry: :func:`sweep_job` runs a sweep with a session and options, where the
executor says (``rag-judge sweep``, ``make demo``); :func:`arun_job` and :func:`run_job` are its
keyword form for Python and notebooks. In process the sweep is
:func:`~rag_judge.jobs.sweep.in_process.sweep_in_process`; batched, it runs in stages over the
response cache (:mod:`rag_judge.runtime.executors.batched`) with both the judge's and the
generator's clients; on Ray, as shares of the questions (:mod:`rag_judge.jobs.sweep.on_ray`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.data.eval_sets import EvalSet, load_eval_set
from rag_judge.jobs.sweep.in_process import sweep_in_process
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.rows import QuestionRun
from rag_judge.jobs.sweep.run import Progress
from rag_judge.judges import DEFAULT_METRICS, JudgeOptions
from rag_judge.judges.work import JudgeMode
from rag_judge.runtime.events import QUIET, Callbacks, Events
from rag_judge.runtime.executors import IN_PROCESS, Batch, Executor, OnRay
from rag_judge.runtime.executors.batched import Stage, run_batched
from rag_judge.runtime.session import CacheChoice, Session, open_session
from rag_judge.runtime.settings import Settings, load_settings


@dataclass(frozen=True)
class SweepRun:
    """The sweep's result, and the batch stages that led to it (none unless batched)."""

    result: SweepResult
    stages: tuple[Stage, ...] = ()


async def sweep_job(
    eval_set: str | Path | EvalSet,
    session: Session,
    options: SweepOptions,
    *,
    executor: Executor = IN_PROCESS,
    events: Events = QUIET,
) -> SweepRun:
    """Sweep k on an eval set (bundled name, folder or set) with the session's models, where
    ``executor`` says; ``events`` hears the number of questions, then each finished question
    (of the final run only, when batched)."""
    if isinstance(executor, OnRay):
        from rag_judge.jobs.sweep.on_ray import sweep_on_ray

        return SweepRun(sweep_on_ray(eval_set, session, options, executor.target, events))
    loaded = eval_set if isinstance(eval_set, EvalSet) else load_eval_set(eval_set)
    if options.limit is not None:
        loaded = loaded.limit(options.limit)
    if not isinstance(executor, Batch):
        return SweepRun(await sweep_in_process(loaded, session, options, events))
    judge, generator = session.client, session.generator

    async def job(clients: tuple[ModelClient, ...]) -> SweepResult:
        judging, answering = clients
        final = judging is judge and answering is generator
        shown = events if final else QUIET
        return await sweep_in_process(loaded, session.using(judging, answering), options, shown)

    run = await run_batched(
        job,
        [judge, generator],
        state_path=executor.state_path,
        on_poll=events.polled,
        poll_seconds=executor.poll_seconds,
    )
    return SweepRun(run.result, run.stages)


async def arun_job(
    eval_set: str | Path | EvalSet,
    *,
    retriever: str = "bm25",
    ks: Iterable[int] = range(1, 11),
    limit: int | None = None,
    metrics: Iterable[str] = DEFAULT_METRICS,
    objective: str | None = None,
    model: str | None = None,
    generator: str | None = None,
    judge: str | None = None,
    embeddings: str | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
    cache: CacheChoice = True,
    support_probability: bool = False,
    mode: JudgeMode | None = None,
    reasons: bool = True,
    rerank: str | None = None,
    rerank_depth: int = 20,
    rag: str | None = None,
    settings: Settings | None = None,
    client: ModelClient | None = None,
    generator_client: ModelClient | None = None,
    progress: Progress | None = None,
    on_question: Callable[[QuestionRun], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> SweepResult:
    """Sweep k on an eval set (bundled name or folder) with a named retriever and model.

    Args:
        eval_set: ``cmrc2018_zh``, ``cmrc2018_zh_chunked``, ``cranfield``, a folder in the
            eval-set format, or a set.
        retriever: ``bm25``, ``dense`` (the embedder) or ``hybrid`` (RRF of both).
        ks: The cutoffs (default 1..10).
        limit: Sweep only the first ``limit`` questions.
        metrics: Judges (default faithfulness, answer relevancy, completeness, context recall);
            those the set cannot support are skipped and reported.
        objective: What the best k maximises (default ``faithfulness*completeness``); checked
            before any model call.
        model: Generator and judge, ``provider/model`` (default: settings, then local).
        generator: The model that answers, when it is not ``model``.
        judge: The model that judges, when it is not ``model`` (a model judging its own
            answers favours them; the report warns when the two are one model).
        embeddings: Embedder for answer relevancy and dense retrieval (default: settings).
        base_url: OpenAI-compatible server for ``openai/`` and ``litellm/`` models.
        concurrency: Model calls in flight (the local model runs one at a time regardless).
        cache: True for the settings' response cache, a path for another, False for none.
            With a cache, an interrupted sweep resumes where it stopped.
        support_probability: Add P(supported) per claim (one extra call per claim; ``generate``
            mode).
        mode: How the judges use the model, ``score`` or ``generate`` (default: by backend:
            ``score`` for ``local/`` models).
        reasons: ``score`` mode: a one-line reason for each claim that ends unsupported.
        rerank: Rerank the retriever's top ``rerank_depth`` by the model's P(yes) (``llm``)
            or by a sentence-transformers cross-encoder at a local path.
        rerank_depth: Candidates the reranker re-scores per question.
        rag: Sweep the user's RAG instead of ours: ``module:function``, a ``.jsonl`` of
            retrievals (and answers), or an ``http(s)://`` endpoint; ``retriever`` and
            ``rerank`` do not apply.
        settings: Explicit settings instead of arguments, environment and config file.
        client: A ready model client (tests, custom backends); overrides ``model`` and
            ``judge``, and generates too unless ``generator_client`` is given.
        generator_client: A ready model client that answers (tests, custom backends).
        progress: Called with each finished question's id.
        on_question: Called with each finished question's whole run (answers, results).
        on_start: Called with the number of questions once the RAG is built.
    """
    options = SweepOptions(
        ks=tuple(ks),
        limit=limit,
        metrics=tuple(metrics),
        objective=objective,
        retriever=retriever,
        rerank=rerank,
        rerank_depth=rerank_depth,
        rag=rag,
        judge=JudgeOptions(support_probability=support_probability, mode=mode, reasons=reasons),
    )
    chosen = settings or load_settings(
        {
            "model": model,
            "generator": generator,
            "judge": judge,
            "base_url": base_url,
            "concurrency": concurrency,
        }
    )
    session = open_session(
        chosen, cache=cache, client=client, generator=generator_client, embeddings=embeddings
    )
    run = await sweep_job(
        eval_set,
        session,
        options,
        events=Callbacks(started=on_start, finished=_each_question(progress, on_question)),
    )
    return run.result


def _each_question(
    progress: Progress | None, on_question: Callable[[QuestionRun], None] | None
) -> Callable[[QuestionRun], None]:
    """The keyword form's two per-question callbacks as one: the id, then the whole run."""

    def finished(run: QuestionRun) -> None:
        if progress is not None:
            progress(run.query.id)
        if on_question is not None:
            on_question(run)

    return finished


def run_job(eval_set: str | Path | EvalSet, **options: Any) -> SweepResult:
    """:func:`arun_job` from synchronous code (same keyword arguments)."""
    return asyncio.run(arun_job(eval_set, **options))
