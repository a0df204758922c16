"""The shared terms of the RAG under test: a hit, a retriever, a reranker, and their checks.

Every retriever answers ``await retriever.search(queries, k)`` with one ranking per query: a
list of :class:`Hit` in rank order, score descending, ties broken by chunk id descending
(trec_eval's rule, decided in :func:`rag_judge.retrieval.ranking.rank_order`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from rag_judge.core.errors import InputError
from rag_judge.retrieval.ranking import rank_order


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
