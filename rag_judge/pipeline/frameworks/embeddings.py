"""Our embedders as LangChain ``Embeddings`` and LlamaIndex ``BaseEmbedding``.

A vector store built with one of these embeds with exactly what rag_judge's own ``dense``
retriever uses (``local/usem3``, ``local/all-minilm-l6-v2``, an API model), through the same
:class:`~rag_judge.backends.wrapper.embedding_client.EmbeddingClient`: its cache (a re-run
embeds nothing), timeout, retries and ledger. The frameworks call embedders synchronously
too: :mod:`~rag_judge.pipeline.frameworks.calls` runs the client's coroutine to completion
from any thread, inside a running event loop included, so a notebook can call them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.pipeline.frameworks.detect import LANGCHAIN, LLAMAINDEX, require

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from llama_index.core.base.embeddings.base import BaseEmbedding


def as_langchain_embeddings(embedder: EmbeddingClient | str) -> Embeddings:
    """``embedder`` (a client, or a name such as ``local/usem3``) as LangChain ``Embeddings``.

    Raises:
        InputError: langchain-core is not installed (names the extra), or a bad name.
    """
    require(LANGCHAIN, "as_langchain_embeddings")
    from rag_judge.pipeline.frameworks.langchain_embeddings import RagJudgeEmbeddings

    return RagJudgeEmbeddings(_client(embedder))


def as_llamaindex_embedding(embedder: EmbeddingClient | str) -> BaseEmbedding:
    """``embedder`` (a client, or a name such as ``local/usem3``) as a LlamaIndex
    ``BaseEmbedding``.

    Raises:
        InputError: llama-index-core is not installed (names the extra), or a bad name.
    """
    require(LLAMAINDEX, "as_llamaindex_embedding")
    from rag_judge.pipeline.frameworks.llamaindex_embeddings import RagJudgeEmbedding

    return RagJudgeEmbedding.around(_client(embedder))


def _client(embedder: EmbeddingClient | str) -> EmbeddingClient:
    if isinstance(embedder, EmbeddingClient):
        return embedder
    from rag_judge.runtime.session import open_session

    return open_session(embeddings=embedder).embedder_for("en")
