"""A k-sweep from names: build the RAG under test for an eval set, then run the sweep.

What ``rag-judge sweep``, ``make demo`` and the notebook call. The eval set's documents are
chunked structure-aware (:mod:`rag_judge.pipeline.build`), the retriever is built over the
chunks with its index cached under the settings' cache directory, and one session's cached,
rate-limited model client generates and judges. Answer relevancy and dense retrieval share the
session's embedder for the set's language (:meth:`~rag_judge.runtime.session.Session.embedder_for`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.data.eval_sets import EvalSet, load_eval_set
from rag_judge.jobs.sweep.objective import parse_objective
from rag_judge.jobs.sweep.plan import check_ks_fit
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.rows import QuestionRun
from rag_judge.jobs.sweep.run import Progress, run_sweep
from rag_judge.judges import DEFAULT_METRICS, JUDGES, JudgeOptions, get_judges
from rag_judge.judges.work import JudgeMode
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.build import build_retriever, eval_set_chunks
from rag_judge.pipeline.chunking import Chunk
from rag_judge.runtime.session import CacheChoice, Session, open_session
from rag_judge.runtime.settings import Settings, load_settings


@dataclass(frozen=True)
class RagUnderTest:
    """The chunks of an eval set's corpus and the retriever over them."""

    chunks: tuple[Chunk, ...]
    retriever: Retriever
    embedder: EmbeddingClient | None
    """The embedder of dense retrieval and answer relevancy (None when neither needs one)."""


async def build_rag(
    eval_set: EvalSet,
    session: Session,
    *,
    retriever: str = "bm25",
    needs_embedder: bool,
) -> RagUnderTest:
    """Chunk the corpus (as the set's manifest says, else the default) and build the named
    retriever, with indexes cached on disk."""
    chunks = eval_set_chunks(eval_set)
    embedder = None
    if needs_embedder or retriever != "bm25":
        embedder = session.embedder_for(eval_set.language)
    chosen = await build_retriever(
        retriever, chunks, embedder=embedder, cache_dir=session.settings.cache_dir
    )
    return RagUnderTest(chunks, chosen, embedder)


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
    objective = parse_objective(objective)
    ks = tuple(ks)
    names = tuple(metrics)
    get_judges(names)  # an unknown name fails now, before an index is built
    chosen = settings or load_settings(
        {
            "model": model,
            "generator": generator,
            "judge": judge,
            "base_url": base_url,
            "concurrency": concurrency,
        }
    )
    loaded = eval_set if isinstance(eval_set, EvalSet) else load_eval_set(eval_set)
    if limit is not None:
        loaded = loaded.limit(limit)
    session = open_session(
        chosen, cache=cache, client=client, generator=generator_client, embeddings=embeddings
    )
    needs_embedder = any(JUDGES[n].needs_embedder for n in names if n not in loaded.not_applicable)
    options = JudgeOptions(support_probability=support_probability, mode=mode, reasons=reasons)
    common: dict[str, Any] = {
        "ks": ks,
        "metrics": names,
        "objective": objective,
        "options": options,
        "progress": progress,
        "on_question": on_question,
    }
    if rag is not None:
        from rag_judge.pipeline.external.load import load_external_rag

        embedder = session.embedder_for(loaded.language) if needs_embedder else None
        if on_start is not None:
            on_start(len(loaded.queries))
        return await run_sweep(
            loaded,
            rag=load_external_rag(rag, timeout=chosen.timeout),
            client=session.client,
            generator=session.generator,
            embedder=embedder,
            **common,
        )
    built = await build_rag(loaded, session, retriever=retriever, needs_embedder=needs_embedder)
    check_ks_fit(ks, len(built.chunks))
    under_test = built.retriever
    if rerank is not None:
        from rag_judge.pipeline.rerank import RerankedRetriever, reranker_from_spec

        texts = {c.id: c.text for c in built.chunks}
        reranker = reranker_from_spec(rerank, client=session.generator, chunk_texts=texts)
        under_test = RerankedRetriever(under_test, reranker, depth=rerank_depth)
    if on_start is not None:
        on_start(len(loaded.queries))
    return await run_sweep(
        loaded,
        retriever=under_test,
        chunks=built.chunks,
        client=session.client,
        generator=session.generator,
        embedder=built.embedder,
        **common,
    )


def run_job(eval_set: str | Path | EvalSet, **options: Any) -> SweepResult:
    """:func:`arun_job` from synchronous code (same keyword arguments)."""
    return asyncio.run(arun_job(eval_set, **options))
