"""The two things a backend can be: a chat model or an embedder. Both are async."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse
from rag_judge.core.types import Usage


@runtime_checkable
class ChatBackend(Protocol):
    """A chat model. Raises :class:`BackendError` on failure; the wrapper does the rest."""

    name: str
    """``provider/model``, e.g. ``openai/gpt-4o-mini``."""
    endpoint: str | None
    """Base URL or weights path: part of the cache key, never a secret."""
    # A backend may also set ``max_concurrency: int`` (e.g. 1 for in-process llama.cpp);
    # ModelClient then never runs more of its calls at once.

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Generate one reply."""
        ...


@runtime_checkable
class YesNoBackend(ChatBackend, Protocol):
    """A chat model that can also report P(yes) for its next token (log-probabilities)."""

    async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
        """Probability of "yes" over "no" as the first token of the reply."""
        ...


@runtime_checkable
class EmbeddingBackend(Protocol):
    """A text embedder."""

    name: str
    """``provider/model``."""
    endpoint: str | None
    """Base URL or weights path (cache key)."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


@runtime_checkable
class CountingEmbeddingBackend(EmbeddingBackend, Protocol):
    """An embedder whose API says how many tokens it read (what hosted embeddings bill by)."""

    async def embed_with_usage(self, texts: Sequence[str]) -> tuple[list[list[float]], Usage]:
        """The vectors, in order, and the reported usage (``reported=False`` if none came)."""
        ...
