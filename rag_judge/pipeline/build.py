"""Build the RAG under test from names: the default chunking, and BM25, dense or their fusion.

What the k-sweep and the retriever comparison both build on: structure-aware chunks (paragraphs
and sentences, short pieces merged, never dropped), or the chunking a set's manifest names, and
retrievers whose indexes are cached on
disk, so a second run over the same chunks builds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.core.errors import InputError
from rag_judge.core.types import Document
from rag_judge.data.eval_sets import EvalSet
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.chunking import (
    Chunk,
    chunk_corpus,
    chunker_from_spec,
    sentence_windows,
    structure_aware,
)

MIN_CHUNK: Final = 100
MAX_CHUNK: Final = 400
"""Default chunk bounds in characters: a CMRC paragraph or Cranfield abstract is 1-3 chunks."""
SET_CHUNKING: Final = "set"
"""A chunk size's name for the set's own chunking (its manifest's, else the default)."""
MIN_CHUNK_CHARS: Final = 50
"""The smallest passage size a re-cut takes: below it a passage holds a phrase, not a fact."""
_CHUNK: Final = re.compile(r"^(\d+)(?:/(\d+))?$")
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


@dataclass(frozen=True)
class ChunkSize:
    """Passages re-cut from the set's documents: windows of whole sentences of at most
    ``max_chars`` characters (at least half that, a sentence more when needed), each starting
    ``overlap`` sentences before the previous one ended."""

    max_chars: int
    overlap: int = 1

    @property
    def min_chars(self) -> int:
        """The shortest window before another sentence is added: half the size."""
        return self.max_chars // 2

    def __str__(self) -> str:
        return f"{self.max_chars}/{self.overlap}"

    @classmethod
    def parse(cls, text: str) -> ChunkSize | None:
        """``set`` (None: the set's own chunking), ``400`` or ``400/1`` (size/overlap).

        >>> ChunkSize.parse("300/2"), ChunkSize.parse("set")
        (ChunkSize(max_chars=300, overlap=2), None)
        """
        if text == SET_CHUNKING:
            return None
        found = _CHUNK.match(text)
        if found is None:
            raise InputError(
                f"{text!r} is no passage size: give {SET_CHUNKING} (the set's own chunking), "
                "SIZE or SIZE/OVERLAP (characters, sentences), e.g. 400 or 400/1",
                field="chunk",
            )
        size, overlap = int(found[1]), int(found[2] or 1)
        if size < MIN_CHUNK_CHARS:
            raise InputError(
                f"a passage size of {size} characters is below the least, {MIN_CHUNK_CHARS}",
                field="chunk",
            )
        return cls(size, overlap)


def sized_chunks(eval_set: EvalSet, size: ChunkSize | None) -> tuple[Chunk, ...]:
    """The set's corpus re-cut to ``size`` (None: the set's own chunking,
    :func:`eval_set_chunks`); each passage keeps its document's id. Sentence windows drop no
    text: every sentence of every document is in some window, so no document is left without
    a passage."""
    if size is None:
        return eval_set_chunks(eval_set)
    chunker = sentence_windows(size.min_chars, size.max_chars, size.overlap)
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
