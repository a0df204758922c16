"""Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009) and the hybrid retriever.

RRF combines rankings by rank alone, so BM25 scores and cosines need no common scale::

    score(c) = Σ_{r ∈ rankings, c ∈ r} 1 / (k + rank_r(c))

where ``rank_r(c)`` is c's 1-based position in ranking r (list order is rank) and k = 60 damps
the weight of the very top ranks. A chunk absent from a ranking gets nothing from it.
"""

from __future__ import annotations

import asyncio
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Final

import numpy as np

from rag_judge.core.errors import InputError
from rag_judge.pipeline.base import Hit, Retriever, check_k, check_queries, top_k_hits

DEFAULT_RRF_K: Final = 60
"""The k of RRF's 1 / (k + rank), as in the paper."""
DEFAULT_DEPTH: Final = 100
"""Hits each retriever contributes to the fusion (at least the k asked for)."""


def rrf_fuse(
    rankings: Sequence[Sequence[Hit]], k: int = DEFAULT_RRF_K, depth: int | None = None
) -> list[Hit]:
    """Fuse rankings by reciprocal rank: the union of their chunks, ranked by RRF score.

    score(c) = Σ 1 / (k + rank), summed over the rankings whose top ``depth`` (None: all)
    hold c, rank being the 1-based list position. Sums use ``math.fsum``, which is exact
    for the rounded terms and so independent of the order of the rankings; equal scores are
    ordered by chunk id descending (trec_eval's rule), so the result is deterministic.

    Raises:
        InputError: k below 0, depth below 1, or a chunk appearing twice in one ranking.

    >>> a = [Hit("x", 9.0, 1), Hit("y", 8.0, 2)]
    >>> b = [Hit("y", 0.9, 1), Hit("z", 0.8, 2)]
    >>> [(h.chunk_id, round(h.score * 61 * 62, 3)) for h in rrf_fuse([a, b])]
    [('y', 123.0), ('x', 62.0), ('z', 61.0)]
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InputError(f"k must be an integer >= 0, got {k!r}", field="k")
    limit = None if depth is None else check_k(depth, "depth")
    terms: defaultdict[str, list[float]] = defaultdict(list)
    for number, ranking in enumerate(rankings):
        seen: set[str] = set()
        for rank, hit in enumerate(ranking[:limit], start=1):
            if hit.chunk_id in seen:
                raise InputError(
                    f"chunk '{hit.chunk_id}' appears twice in ranking #{number}", field="rankings"
                )
            seen.add(hit.chunk_id)
            terms[hit.chunk_id].append(1.0 / (k + rank))
    ids = list(terms)
    scores = np.array([math.fsum(values) for values in terms.values()], dtype=np.float64)
    return top_k_hits(ids, scores, max(len(ids), 1))


class HybridRetriever:
    """Several retrievers (e.g. BM25 and dense) fused by RRF.

    Each retriever is asked for ``max(k, depth)`` hits per query, all run concurrently; their
    rankings are fused with :func:`rrf_fuse` and the top ``k`` kept.
    """

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        *,
        rrf_k: int = DEFAULT_RRF_K,
        depth: int = DEFAULT_DEPTH,
    ) -> None:
        if not retrievers:
            raise InputError("a hybrid retriever needs at least one retriever", field="retrievers")
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, int) or rrf_k < 0:
            raise InputError(f"rrf_k must be an integer >= 0, got {rrf_k!r}", field="rrf_k")
        self.retrievers: tuple[Retriever, ...] = tuple(retrievers)
        """The retrievers whose rankings are fused."""
        self.rrf_k = rrf_k
        """RRF's k."""
        self.depth = check_k(depth, "depth")
        """Hits each retriever contributes (at least the k asked for)."""

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """The top ``k`` chunks per query by RRF over every retriever's ranking."""
        k = check_k(k)
        batch = check_queries(queries)
        per_retriever = await asyncio.gather(
            *(retriever.search(batch, max(k, self.depth)) for retriever in self.retrievers)
        )
        return [
            rrf_fuse([rankings[q] for rankings in per_retriever], self.rrf_k)[:k]
            for q in range(len(batch))
        ]
