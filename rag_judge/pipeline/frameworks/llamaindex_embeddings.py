"""An :class:`EmbeddingClient` as a LlamaIndex ``BaseEmbedding`` (see
:func:`rag_judge.pipeline.frameworks.embeddings.as_llamaindex_embedding`); imports
llama_index.core."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from pydantic import PrivateAttr

from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.pipeline.frameworks.calls import embed, run_sync


class RagJudgeEmbedding(BaseEmbedding):
    """rag_judge's embedder behind LlamaIndex's interface, sync and async."""

    _client: EmbeddingClient = PrivateAttr()

    @classmethod
    def around(cls, client: EmbeddingClient, **fields: Any) -> RagJudgeEmbedding:
        """The adapter for ``client``, named by it (``model_name``)."""
        made = cls(model_name=client.name, **fields)
        made._client = client
        return made

    @classmethod
    def class_name(cls) -> str:
        """LlamaIndex's serialisation name."""
        return "RagJudgeEmbedding"

    def _get_query_embedding(self, query: str) -> Embedding:
        return run_sync(embed(self._client, [query]))[0]

    def _get_text_embedding(self, text: str) -> Embedding:
        return run_sync(embed(self._client, [text]))[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return run_sync(embed(self._client, texts))

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return (await embed(self._client, [query]))[0]

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return (await embed(self._client, [text]))[0]

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await embed(self._client, texts)
