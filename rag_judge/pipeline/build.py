"""Build the RAG under test from names: the default chunking, and BM25, dense or their fusion.

What the k-sweep and the retriever comparison both build on: structure-aware chunks (paragraphs
and sentences, short pieces merged, never dropped), or the chunking a set's manifest names, and
retrievers whose indexes are cached on
disk, so a second run over the same chunks builds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.core.errors import InputError
from rag_judge.core.types import Document
from rag_judge.data.eval_sets import EvalSet
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.chunking import Chunk, chunk_corpus, chunker_from_spec, structure_aware

MIN_CHUNK: Final = 100
MAX_CHUNK: Final = 400
"""Default chunk bounds in characters: a CMRC paragraph or Cranfield abstract is 1-3 chunks."""
RETRIEVERS: Final = ("bm25", "dense", "hybrid")
"""The retrievers :func:`build_retriever` builds by name (hybrid: RRF of BM25 and dense)."""


def eval_set_chunks(eval_set: EvalSet) -> tuple[Chunk, ...]:
    """The set's corpus cut as its manifest's ``chunking`` says, else the default chunking.

    Raises:
        InputError: a ``chunking`` entry that names no chunker or gives bad sizes (the
            manifest and the field are named).
    """
    spec = eval_set.manifest.get("chunking")
    if spec is None:
        return default_chunks(eval_set.documents)
    try:
        chunker = chunker_from_spec(spec)
    except InputError as error:
        field = "chunking" + (f".{error.field}" if error.field else "")
        source = str(eval_set.path / "manifest.json")
        raise InputError(error.message, source=source, field=field) from None
    return tuple(chunk_corpus(chunker, eval_set.documents))


def default_chunks(
    documents: Iterable[Document], *, min_chunk: int = MIN_CHUNK, max_chunk: int = MAX_CHUNK
) -> tuple[Chunk, ...]:
    """The documents cut into structure-aware chunks of ``min_chunk``..``max_chunk`` characters."""
    return tuple(chunk_corpus(structure_aware(min_chunk, max_chunk), documents))


async def build_retriever(
    name: str, chunks: tuple[Chunk, ...], *, embedder: EmbeddingClient | None, cache_dir: Path
) -> Retriever:
    """The named retriever over ``chunks`` (``dense`` and ``hybrid`` need the embedder).

    Raises:
        InputError: an unknown name, or a dense retriever without an embedder.
    """
    from rag_judge.pipeline.bm25 import BM25Retriever
    from rag_judge.pipeline.dense import DenseRetriever
    from rag_judge.pipeline.fusion import HybridRetriever

    if name not in RETRIEVERS:
        raise InputError(
            f"unknown retriever {name!r}; choose one of {', '.join(RETRIEVERS)}",
            field="retriever",
        )
    if name == "bm25":
        return BM25Retriever.build(chunks, cache_dir=cache_dir)
    if embedder is None:
        raise InputError(f"the {name} retriever needs an embedder", field="retriever")
    sparse = BM25Retriever.build(chunks, cache_dir=cache_dir) if name == "hybrid" else None
    dense = await DenseRetriever.build(chunks, embedder, cache_dir=cache_dir)
    if sparse is None:
        return dense
    return HybridRetriever([sparse, dense])
