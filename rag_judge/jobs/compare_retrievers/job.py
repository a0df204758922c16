"""A retriever comparison from names: build ``bm25``, ``dense``, ``rrf`` (and a reranked RRF).

:func:`compare_job` is what ``rag-judge compare-retrievers`` calls (:func:`arun_comparison` its
keyword form). The RAG is built the way the k-sweep builds it
(:mod:`rag_judge.pipeline.build`): structure-aware chunks, indexes cached under the settings'
cache directory, and the session's embedder for the set's language. ``rrf`` fuses BM25 and
dense by reciprocal rank; ``rrf+rerank`` reranks RRF's top 20 with
:mod:`rag_judge.pipeline.rerank` (an LLM's yes/no probability, or a cross-encoder at a path),
imported only when asked for.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient, EmbeddingResult
from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet, load_eval_set
from rag_judge.jobs.compare_retrievers.comparison import (
    ProgressFn,
    RetrieverComparison,
    acompare_retrievers,
)
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.build import eval_set_chunks
from rag_judge.pipeline.chunking import Chunk
from rag_judge.retrieval.text_relevance import DEFAULT_THRESHOLD
from rag_judge.runtime.events import QUIET, Callbacks, Events
from rag_judge.runtime.session import Session, open_session
from rag_judge.runtime.settings import Settings, load_settings

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
    session: Session,
    *,
    rerank: str | None = None,
    progress: ProgressFn | None = None,
) -> BuiltRetrievers:
    """Chunk the corpus and build the named retrievers once each, indexes cached on disk.

    Args:
        eval_set: The set whose documents are chunked and indexed.
        names: Some of ``bm25``, ``dense``, ``rrf``.
        session: The cache directory (indexes), the embedder for the set's language, and the
            chat client for ``--rerank llm``; every call is counted in its ledger.
        rerank: ``llm`` or a cross-encoder path: adds ``rrf+rerank``.
        progress: Hears ``(step, done, total)`` while indexing and embedding.
    """
    from rag_judge.pipeline.bm25 import BM25Retriever
    from rag_judge.pipeline.dense import DenseRetriever
    from rag_judge.pipeline.fusion import HybridRetriever

    names = parse_retrievers(names)
    report = progress or (lambda step, done, total: None)
    cache_dir = session.settings.cache_dir
    chunks = eval_set_chunks(eval_set)
    wanted = set(names) | ({"rrf"} if rerank is not None else set())
    built: dict[str, Retriever] = {}
    embedder = None
    if wanted & {"bm25", "rrf"}:
        report("indexing (bm25)", 0, None)
        built["bm25"] = BM25Retriever.build(chunks, cache_dir=cache_dir)
        report("indexing (bm25)", 1, 1)
    if wanted & {"dense", "rrf"}:
        embedder = session.embedder_for(eval_set.language)
        step = f"embedding {len(chunks)} chunks ({session.embedder_name(eval_set.language)})"
        done = [0]

        def advance(n: int) -> None:
            done[0] += n
            report(step, done[0], len(chunks))

        counted = await DenseRetriever.build(
            chunks, _ReportingEmbedder(embedder, advance), cache_dir=cache_dir
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
        chosen[RERANKED] = _reranked(built["rrf"], rerank, chunks, session)
    return BuiltRetrievers(chunks, chosen, embedder)


@dataclass(frozen=True)
class CompareOptions:
    """Which retrievers to compare on which questions, and how the figures are computed."""

    retrievers: tuple[str, ...] = RETRIEVER_NAMES
    """Some of ``bm25``, ``dense``, ``rrf``."""
    rerank: str | None = None
    """``llm`` or a cross-encoder path: adds ``rrf+rerank``."""
    limit: int | None = None
    """Compare on the first ``limit`` questions only."""
    baseline: str | None = None
    """The retriever the others are tested against (None: the first)."""
    text_threshold: float = DEFAULT_THRESHOLD
    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        from rag_judge.pipeline.rerank import check_rerank_spec

        object.__setattr__(self, "retrievers", parse_retrievers(self.retrievers))
        if self.rerank is not None:
            check_rerank_spec(self.rerank)  # before the index is built and embedded


async def compare_job(
    eval_set: str | Path | EvalSet,
    session: Session,
    options: CompareOptions,
    *,
    events: Events = QUIET,
) -> RetrieverComparison:
    """Load the set (bundled name or folder), build the retrievers with the session's cache
    and embedder, compare them; ``events`` hears of indexing, embedding and retrieving."""
    loaded = eval_set if isinstance(eval_set, EvalSet) else load_eval_set(eval_set)
    if options.limit is not None:
        loaded = loaded.limit(options.limit)
    built = await build_retrievers(
        loaded, options.retrievers, session, rerank=options.rerank, progress=events.advanced
    )
    compared = await acompare_retrievers(
        loaded,
        built.retrievers,
        built.chunks,
        progress=events.advanced,
        baseline=options.baseline,
        text_threshold=options.text_threshold,
        confidence=options.confidence,
        n_resamples=options.n_resamples,
        seed=options.seed,
    )
    return dataclasses.replace(compared, ledger=session.ledger)


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
    """:func:`compare_job` by keywords, for Python and notebooks.

    ``options`` are the figures' (baseline, text_threshold, confidence, n_resamples, seed).
    """
    chosen_options = CompareOptions(parse_retrievers(retrievers), rerank, limit, **options)
    chosen = settings or load_settings({"model": model, "embeddings": None, "base_url": base_url})
    session = open_session(chosen, cache=cache, client=client, embeddings=embeddings)
    return await compare_job(eval_set, session, chosen_options, events=Callbacks(advanced=progress))


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


def _reranked(rrf: Retriever, spec: str, chunks: Sequence[Chunk], session: Session) -> Retriever:
    """RRF reranked by ``spec`` (``llm``: the session's chat model; else a cross-encoder path),
    depth RERANK_DEPTH."""
    from rag_judge.pipeline.rerank import RerankedRetriever, reranker_from_spec

    client = session.client if spec == "llm" else None
    texts = {chunk.id: chunk.text for chunk in chunks}
    reranker = reranker_from_spec(spec, client=client, chunk_texts=texts)
    return RerankedRetriever(rrf, reranker, depth=RERANK_DEPTH)
