"""The RAG under test: chunking, retrievers (BM25, dense, hybrid by RRF), and their shared terms.

Every retriever answers ``await retriever.search(queries, k)`` with one ranking per query: a
list of :class:`Hit` in rank order, score descending, ties broken by chunk id descending
(trec_eval's rule, decided in :func:`rag_judge.retrieval.ranking.rank_order`). ``search`` is
async for all of them, because dense retrieval awaits an embedding backend and the k-sweep
runs inside an event loop; BM25 does its millisecond work inline.

Reranking plugs in through :class:`Reranker` (an LLM yes/no probability or a cross-encoder
re-scores a retriever's candidates); implementations live in :mod:`rag_judge.pipeline.rerank`.

This module defines the shared terms; the retrievers and chunkers are imported on first use,
so ``import rag_judge.pipeline`` loads neither bm25s nor jieba.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from rag_judge.errors import InputError
from rag_judge.retrieval.ranking import rank_order

if TYPE_CHECKING:
    from rag_judge.pipeline.bm25 import BM25Retriever, tokenize
    from rag_judge.pipeline.chunking import (
        Chunk,
        Chunker,
        Document,
        FixedSize,
        StructureAware,
        chunk_corpus,
        fixed_size,
        structure_aware,
    )
    from rag_judge.pipeline.dense import DenseRetriever
    from rag_judge.pipeline.fusion import HybridRetriever, rrf_fuse
    from rag_judge.pipeline.rerank import (
        CrossEncoderReranker,
        LLMReranker,
        RerankedRetriever,
        reranker_from_spec,
    )


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk in one ranking."""

    chunk_id: str
    """The chunk's id (``<doc_id>#<n>``)."""
    score: float
    """The retriever's score; higher is better, comparable only within one ranking."""
    rank: int
    """Position in the ranking, from 1."""


class Retriever(Protocol):
    """Anything that ranks chunks for queries."""

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """The top ``k`` hits for each query, in query order; a ranking may hold fewer."""
        ...


class Reranker(Protocol):
    """Re-scores a retriever's candidates, e.g. by an LLM's yes/no support probability."""

    async def rerank(
        self, queries: Sequence[str], candidates: Sequence[Sequence[Hit]], k: int
    ) -> list[list[Hit]]:
        """The top ``k`` of each query's candidates under the reranker's own scores."""
        ...


def check_k(k: object, name: str = "k") -> int:
    """``k`` as an int, or an InputError unless it is an integer >= 1."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"{name} must be an integer >= 1, got {k!r}", field=name)
    return int(k)


def check_queries(queries: object) -> list[str]:
    """The queries as a list of str; a bare string or a non-string item is an InputError."""
    if isinstance(queries, str) or not isinstance(queries, Sequence):
        raise InputError(
            f"queries must be a sequence of strings, got {type(queries).__name__}",
            field="queries",
        )
    for i, query in enumerate(queries):
        if not isinstance(query, str):
            raise InputError(f"query #{i} is {type(query).__name__}, not str", field="queries")
    return list(queries)


def top_k_hits(
    chunk_ids: Sequence[str], scores: npt.NDArray[np.floating[Any]], k: int
) -> list[Hit]:
    """The ``k`` best chunks by score, ties by chunk id descending, as ranked hits.

    Only chunks scoring at least the k-th best score are sorted, so a large corpus costs a
    partial selection, not a full sort; ties at the cut are still resolved by the tie rule.
    """
    values = np.asarray(scores, dtype=np.float64)
    candidates = np.arange(len(values))
    if len(values) > k:
        kth = np.partition(values, len(values) - k)[len(values) - k]
        candidates = np.flatnonzero(values >= kth)
    ids = [chunk_ids[i] for i in candidates.tolist()]
    order = rank_order(ids, values[candidates])[:k].tolist()
    return [
        Hit(chunk_id=ids[i], score=float(values[candidates[i]]), rank=rank)
        for rank, i in enumerate(order, start=1)
    ]


_EXPORTS = {
    "BM25Retriever": "rag_judge.pipeline.bm25",
    "tokenize": "rag_judge.pipeline.bm25",
    "Chunk": "rag_judge.pipeline.chunking",
    "Chunker": "rag_judge.pipeline.chunking",
    "Document": "rag_judge.pipeline.chunking",
    "FixedSize": "rag_judge.pipeline.chunking",
    "StructureAware": "rag_judge.pipeline.chunking",
    "chunk_corpus": "rag_judge.pipeline.chunking",
    "fixed_size": "rag_judge.pipeline.chunking",
    "structure_aware": "rag_judge.pipeline.chunking",
    "DenseRetriever": "rag_judge.pipeline.dense",
    "HybridRetriever": "rag_judge.pipeline.fusion",
    "rrf_fuse": "rag_judge.pipeline.fusion",
    "CrossEncoderReranker": "rag_judge.pipeline.rerank",
    "LLMReranker": "rag_judge.pipeline.rerank",
    "RerankedRetriever": "rag_judge.pipeline.rerank",
    "reranker_from_spec": "rag_judge.pipeline.rerank",
}

__all__ = [
    "BM25Retriever",
    "Chunk",
    "Chunker",
    "CrossEncoderReranker",
    "DenseRetriever",
    "Document",
    "FixedSize",
    "Hit",
    "HybridRetriever",
    "LLMReranker",
    "RerankedRetriever",
    "Reranker",
    "Retriever",
    "StructureAware",
    "check_k",
    "check_queries",
    "chunk_corpus",
    "fixed_size",
    "reranker_from_spec",
    "rrf_fuse",
    "structure_aware",
    "tokenize",
    "top_k_hits",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rag_judge.pipeline' has no attribute '{name}'")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
