"""The RAG under test: chunking, retrievers (BM25, dense, hybrid by RRF), and their shared terms.

Every retriever answers ``await retriever.search(queries, k)`` with one ranking per query: a
list of :class:`Hit` in rank order, score descending, ties broken by chunk id descending
(trec_eval's rule, decided in :func:`rag_judge.retrieval.ranking.rank_order`). ``search`` is
async for all of them, because dense retrieval awaits an embedding backend and the k-sweep
runs inside an event loop; BM25 does its millisecond work inline.

Reranking plugs in through :class:`Reranker` (an LLM yes/no probability or a cross-encoder
re-scores a retriever's candidates); implementations live in :mod:`rag_judge.pipeline.rerank`.

The shared terms live in :mod:`rag_judge.pipeline.base`; every name here is imported on first
use, so ``import rag_judge.pipeline`` loads neither bm25s nor jieba.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_judge.core.types import Document
    from rag_judge.pipeline.base import (
        Hit,
        Reranker,
        Retriever,
        check_k,
        check_queries,
        top_k_hits,
    )
    from rag_judge.pipeline.bm25 import BM25Retriever, tokenize
    from rag_judge.pipeline.chunking import (
        Chunk,
        Chunker,
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


_EXPORTS = {
    "Hit": "rag_judge.pipeline.base",
    "Reranker": "rag_judge.pipeline.base",
    "Retriever": "rag_judge.pipeline.base",
    "check_k": "rag_judge.pipeline.base",
    "check_queries": "rag_judge.pipeline.base",
    "top_k_hits": "rag_judge.pipeline.base",
    "BM25Retriever": "rag_judge.pipeline.bm25",
    "tokenize": "rag_judge.pipeline.bm25",
    "Chunk": "rag_judge.pipeline.chunking",
    "Chunker": "rag_judge.pipeline.chunking",
    "Document": "rag_judge.core.types",
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
