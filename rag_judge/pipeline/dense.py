"""Dense retrieval: rank chunks by cosine similarity of embeddings, the chunk matrix cached on disk.

Chunks and queries are embedded through an :class:`~rag_judge.backends.wrapper.embedding_client.
EmbeddingClient` (its cache, timeout and retries apply), in batches so that no single call
outlives the client's timeout. Vectors are L2-normalised here whatever the embedder returns,
so a dot product is the cosine. The chunk matrix (float32) is stored as
``<cache_dir>/indexes/dense-<key>/vectors.npy``, the key hashing chunk ids and texts with the
embedder's name and endpoint, so a re-run embeds no chunk at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from rag_judge.backends.errors import BackendError
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.pipeline.base import Hit, check_k, check_queries, top_k_hits
from rag_judge.pipeline.chunking import Chunk
from rag_judge.pipeline.index_cache import check_chunks, index_dir, index_key, read_manifest, store

Matrix = npt.NDArray[np.float32]

VECTORS: Final = "vectors.npy"
"""The chunk matrix's file name inside its index directory."""
DEFAULT_BATCH: Final = 64
"""Texts per embedding call."""


class DenseRetriever:
    """Cosine-similarity retrieval over a fixed list of chunks; build with :meth:`build`."""

    def __init__(
        self,
        client: EmbeddingClient,
        chunk_ids: Sequence[str],
        matrix: Matrix,
        *,
        batch_size: int = DEFAULT_BATCH,
        from_cache: bool = False,
        directory: Path | None = None,
    ) -> None:
        self.client = client
        """Embeds the queries (the same embedder that embedded the chunks)."""
        self.chunk_ids: tuple[str, ...] = tuple(chunk_ids)
        """Chunk ids, one per matrix row."""
        self.matrix = matrix
        """[chunks, dim] unit-length chunk vectors."""
        self.batch_size = check_k(batch_size, "batch_size")
        self.from_cache = from_cache
        """True when the chunk matrix was loaded from disk rather than embedded."""
        self.directory = directory
        """The matrix's cache directory (None when not cached)."""

    @classmethod
    async def build(
        cls,
        chunks: Sequence[Chunk],
        client: EmbeddingClient,
        *,
        cache_dir: Path | None = None,
        batch_size: int = DEFAULT_BATCH,
    ) -> DenseRetriever:
        """Embed the chunks' texts, or load their matrix from ``cache_dir`` if embedded before.

        Raises:
            InputError: no chunks, a repeated chunk id, or batch_size below 1.
            BackendError: the embedder failed, or returned ragged, zero or non-finite vectors.
        """
        batch = check_chunks(chunks)
        batch_size = check_k(batch_size, "batch_size")
        settings = {"embedder": client.name, "endpoint": client.backend.endpoint}
        key = index_key("dense", settings, batch)
        ids = [chunk.id for chunk in batch]
        directory = None if cache_dir is None else index_dir(cache_dir, "dense", key)
        if directory is not None and (matrix := _load(directory, key, len(batch))) is not None:
            return cls(
                client, ids, matrix, batch_size=batch_size, from_cache=True, directory=directory
            )
        texts = [chunk.text for chunk in batch]
        matrix = await _embed(client, texts, batch_size, "chunks")
        if directory is not None:
            info = {**settings, "n_chunks": len(batch), "dim": int(matrix.shape[1])}
            store(directory, key, info, lambda tmp: np.save(tmp / VECTORS, matrix))
        return cls(client, ids, matrix, batch_size=batch_size, directory=directory)

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """The top ``k`` chunks per query by cosine similarity (k of them when there are k).

        Raises:
            BackendError: the embedder failed on the queries (an empty query may embed to a
                zero vector, which has no direction).
        """
        k = check_k(k)
        batch = check_queries(queries)
        if not batch:
            return []
        vectors = await _embed(self.client, batch, self.batch_size, "queries")
        if vectors.shape[1] != self.matrix.shape[1]:
            raise BackendError(
                f"{self.client.name}: query vectors have {vectors.shape[1]} dimensions, "
                f"the chunk matrix {self.matrix.shape[1]}",
                transient=False,
            )
        # One product per query: a batched product may round differently, and then a query's
        # ranking of near-ties would depend on which other queries came with it.
        return [top_k_hits(self.chunk_ids, self.matrix @ vector, k) for vector in vectors]


async def _embed(client: EmbeddingClient, texts: list[str], batch_size: int, what: str) -> Matrix:
    """Unit-length float32 rows, one per text, embedded ``batch_size`` texts per call."""
    rows: list[tuple[float, ...]] = []
    for start in range(0, len(texts), batch_size):
        result = await client.embed(texts[start : start + batch_size])
        if result.status != "ok":
            raise BackendError(
                f"{client.name}: could not embed {what} ({result.status}): {result.error}",
                transient=False,
            )
        rows.extend(result.vectors)
    return _unit_rows(rows, client.name)


def _unit_rows(rows: list[tuple[float, ...]], name: str) -> Matrix:
    """The rows L2-normalised as float32; ragged, zero or non-finite rows are a BackendError."""
    try:
        array = np.asarray(rows, dtype=np.float64)
    except ValueError as error:
        raise BackendError(f"{name}: vectors differ in length", transient=False) from error
    if array.ndim != 2 or array.shape[1] == 0:
        raise BackendError(
            f"{name}: expected one vector per text, got {array.shape}", transient=False
        )
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    bad = np.flatnonzero(~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0))
    if bad.size:
        raise BackendError(
            f"{name}: zero or non-finite vector for text #{int(bad[0])}", transient=False
        )
    unit: Matrix = (array / norms).astype(np.float32)
    return unit


def _load(directory: Path, key: str, n_chunks: int) -> Matrix | None:
    """The stored chunk matrix for this key, or None when absent or unusable (re-embedded)."""
    manifest = read_manifest(directory, key)
    if manifest is None or manifest.get("n_chunks") != n_chunks:
        return None
    try:
        matrix = np.load(directory / VECTORS, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] != n_chunks:
        return None
    return matrix if bool(np.isfinite(matrix).all()) else None
