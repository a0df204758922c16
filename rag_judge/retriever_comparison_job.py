"""A retriever comparison from names: build ``bm25``, ``dense``, ``rrf`` (and a reranked RRF).

What ``rag-judge compare-retrievers`` calls. The RAG is built the way the k-sweep builds it
(:func:`rag_judge.sweep.job.build_rag`): structure-aware chunks, indexes cached under the
settings' cache directory, and the multilingual embedder for a set whose manifest says it is
not English, unless an embedder is named. ``rrf`` fuses BM25 and dense by reciprocal rank;
``rrf+rerank`` reranks RRF's top 20 with :mod:`rag_judge.pipeline.rerank` (an LLM's yes/no
probability, or a cross-encoder at a path), imported only when asked for.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rag_judge.backends import ModelClient, ResponseCache
from rag_judge.backends.client import CallPolicy
from rag_judge.backends.embedding_client import EmbeddingClient, EmbeddingResult
from rag_judge.backends.ledger import Ledger
from rag_judge.backends.registry import (
    DEFAULT_EMBEDDINGS,
    MULTILINGUAL_EMBEDDINGS,
    chat_backend,
    embedding_backend,
)
from rag_judge.errors import InputError
from rag_judge.eval_sets import EvalSet, load_eval_set
from rag_judge.pipeline import Retriever
from rag_judge.pipeline.chunking import Chunk
from rag_judge.retriever_comparison import ProgressFn, RetrieverComparison, acompare_retrievers
from rag_judge.settings import Settings, load_settings
from rag_judge.sweep.job import MAX_CHUNK, MIN_CHUNK

RETRIEVER_NAMES: Final = ("bm25", "dense", "rrf")
RERANKED: Final = "rrf+rerank"
RERANK_DEPTH: Final = 20
"""RRF candidates the reranker re-scores per question."""


@dataclass(frozen=True)
class BuiltRetrievers:
    """The chunks of an eval set's corpus and the named retrievers over them."""

    chunks: tuple[Chunk, ...]
    retrievers: dict[str, Retriever]
    """Name -> retriever, in the order asked for (``rrf+rerank`` last)."""
    embedder: EmbeddingClient | None
    """The dense retriever's embedder (None when no retriever needs one)."""


def parse_retrievers(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"bm25,dense"`` or ``["bm25", "dense"]`` as checked, de-duplicated names."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    names = tuple(dict.fromkeys(p.strip().lower() for p in parts if p.strip()))
    unknown = [n for n in names if n not in RETRIEVER_NAMES]
    if unknown or not names:
        raise InputError(
            f"unknown retriever {', '.join(map(repr, unknown)) or '(none given)'}; choose from "
            f"{', '.join(RETRIEVER_NAMES)} (--rerank adds {RERANKED})",
            field="retrievers",
        )
    return names


async def build_retrievers(
    eval_set: EvalSet,
    names: Sequence[str],
    *,
    settings: Settings,
    cache: ResponseCache | None,
    ledger: Ledger,
    embeddings: str | None = None,
    rerank: str | None = None,
    client: ModelClient | None = None,
    progress: ProgressFn | None = None,
) -> BuiltRetrievers:
    """Chunk the corpus and build the named retrievers once each, indexes cached on disk.

    Args:
        eval_set: The set whose documents are chunked and indexed.
        names: Some of ``bm25``, ``dense``, ``rrf``.
        settings: Cache directory, default embedder and model, base URL, call limits.
        cache: Response cache for embeddings and reranking calls (None: no cache).
        ledger: Where model and embedding calls are counted.
        embeddings: Embedder for dense retrieval (default: settings, multilingual if not en).
        rerank: ``llm`` or a cross-encoder path: adds ``rrf+rerank``.
        client: Chat client for ``--rerank llm`` (default: one for the settings' model).
        progress: Hears ``(step, done, total)`` while indexing and embedding.
    """
    from rag_judge.pipeline import (
        BM25Retriever,
        DenseRetriever,
        HybridRetriever,
        chunk_corpus,
        structure_aware,
    )

    names = parse_retrievers(names)
    report = progress or (lambda step, done, total: None)
    chunks = tuple(chunk_corpus(structure_aware(MIN_CHUNK, MAX_CHUNK), eval_set.documents))
    wanted = set(names) | ({"rrf"} if rerank is not None else set())
    built: dict[str, Retriever] = {}
    embedder = None
    if wanted & {"bm25", "rrf"}:
        report("indexing (bm25)", 0, None)
        built["bm25"] = BM25Retriever.build(chunks, cache_dir=settings.cache_dir)
        report("indexing (bm25)", 1, 1)
    if wanted & {"dense", "rrf"}:
        name = _embedder_name(eval_set, embeddings, settings)
        backend = embedding_backend(name, base_url=settings.base_url)
        embedder = EmbeddingClient(backend, cache=cache, ledger=ledger)
        step = f"embedding {len(chunks)} chunks ({name})"
        done = [0]

        def advance(n: int) -> None:
            done[0] += n
            report(step, done[0], len(chunks))

        counted = await DenseRetriever.build(
            chunks, _ReportingEmbedder(embedder, advance), cache_dir=settings.cache_dir
        )
        report(step, len(chunks), len(chunks))
        built["dense"] = DenseRetriever(
            embedder,
            counted.chunk_ids,
            counted.matrix,
            from_cache=counted.from_cache,
            directory=counted.directory,
        )
    if "rrf" in wanted:
        built["rrf"] = HybridRetriever([built["bm25"], built["dense"]])
    chosen = {n: built[n] for n in names}
    if rerank is not None:
        chosen[RERANKED] = _reranked(built["rrf"], rerank, chunks, settings, cache, ledger, client)
    return BuiltRetrievers(chunks, chosen, embedder)


async def arun_comparison(
    eval_set: str | Path | EvalSet,
    *,
    retrievers: str | Sequence[str] = RETRIEVER_NAMES,
    rerank: str | None = None,
    limit: int | None = None,
    model: str | None = None,
    embeddings: str | None = None,
    base_url: str | None = None,
    settings: Settings | None = None,
    cache: bool = True,
    client: ModelClient | None = None,
    progress: ProgressFn | None = None,
    **options: Any,
) -> RetrieverComparison:
    """Load the set (bundled name or folder), build the retrievers, compare them.

    ``options`` are those of :func:`rag_judge.retriever_comparison.compare_rankings`
    (baseline, text_threshold, confidence, n_resamples, seed).
    """
    names = parse_retrievers(retrievers)
    chosen = settings or load_settings({"model": model, "embeddings": None, "base_url": base_url})
    loaded = eval_set if isinstance(eval_set, EvalSet) else load_eval_set(eval_set)
    if limit is not None:
        loaded = loaded.limit(limit)
    store = ResponseCache(chosen.cache_path) if cache else None
    ledger = client.ledger if client is not None else Ledger()
    built = await build_retrievers(
        loaded,
        names,
        settings=chosen,
        cache=store,
        ledger=ledger,
        embeddings=embeddings,
        rerank=rerank,
        client=client,
        progress=progress,
    )
    compared = await acompare_retrievers(
        loaded, built.retrievers, built.chunks, progress=progress, **options
    )
    return dataclasses.replace(compared, ledger=ledger)


def run_comparison(eval_set: str | Path | EvalSet, **options: Any) -> RetrieverComparison:
    """:func:`arun_comparison` from synchronous code (same keyword arguments)."""
    return asyncio.run(arun_comparison(eval_set, **options))


class _ReportingEmbedder(EmbeddingClient):
    """The same embedder (same cache key), reporting how many texts each call embedded."""

    def __init__(self, inner: EmbeddingClient, advance: Callable[[int], None]) -> None:
        super().__init__(inner.backend, cache=inner.cache, policy=inner.policy, ledger=inner.ledger)
        self._advance = advance

    async def embed(self, texts: list[str]) -> EmbeddingResult:
        result = await super().embed(texts)
        self._advance(len(texts))
        return result


def _embedder_name(eval_set: EvalSet, embeddings: str | None, settings: Settings) -> str:
    """As :func:`rag_judge.sweep.job.build_rag` chooses: named, else settings, else multilingual."""
    name = embeddings or settings.embeddings
    language = eval_set.manifest.get("language", "en")
    language = language if isinstance(language, str) else "en"
    if embeddings is None and name == DEFAULT_EMBEDDINGS and language != "en":
        return MULTILINGUAL_EMBEDDINGS
    return name


def _reranked(
    rrf: Retriever,
    spec: str,
    chunks: Sequence[Chunk],
    settings: Settings,
    cache: ResponseCache | None,
    ledger: Ledger,
    client: ModelClient | None,
) -> Retriever:
    """RRF reranked by ``spec`` (``llm`` or a cross-encoder path), depth RERANK_DEPTH."""
    from rag_judge.pipeline.rerank import RerankedRetriever, reranker_from_spec

    if spec == "llm" and client is None:
        policy = CallPolicy(
            concurrency=settings.concurrency,
            timeout=settings.timeout,
            max_attempts=settings.max_attempts,
        )
        backend = chat_backend(settings.model, base_url=settings.base_url)
        client = ModelClient(backend, cache=cache, policy=policy, ledger=ledger)
    texts = {chunk.id: chunk.text for chunk in chunks}
    reranker = reranker_from_spec(spec, client=client, chunk_texts=texts)
    return RerankedRetriever(rrf, reranker, depth=RERANK_DEPTH)
