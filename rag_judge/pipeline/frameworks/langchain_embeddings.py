"""An :class:`EmbeddingClient` as LangChain ``Embeddings`` (see
:func:`rag_judge.pipeline.frameworks.embeddings.as_langchain_embeddings`); imports
langchain_core."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.pipeline.frameworks.calls import embed, run_sync


class RagJudgeEmbeddings(Embeddings):
    """rag_judge's embedder behind LangChain's interface, sync and async."""

    def __init__(self, client: EmbeddingClient) -> None:
        self.client = client
        """The wrapped client (cache, retries, ledger)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return run_sync(embed(self.client, texts))

    def embed_query(self, text: str) -> list[float]:
        """The query's vector (the same embedder: our embedders have no query prefix)."""
        return run_sync(embed(self.client, [text]))[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, on the running loop."""
        return await embed(self.client, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """The query's vector, on the running loop."""
        return (await embed(self.client, [text]))[0]
