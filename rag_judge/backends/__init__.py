"""Model backends behind one wrapper: cache, retries, limits and accounting shared by all.

>>> import asyncio
>>> from rag_judge.backends import ModelClient, ChatRequest
>>> from rag_judge.backends.scripted import ScriptedBackend
>>> client = ModelClient(ScriptedBackend(["Paris"]))
>>> asyncio.run(client.chat(ChatRequest.of(("user", "Capital of France?")))).text
'Paris'
"""

from __future__ import annotations

from rag_judge.backends.cache import ResponseCache
from rag_judge.backends.client import (
    CallPolicy,
    CallResult,
    ModelClient,
    StructuredResult,
    YesNoResult,
)
from rag_judge.backends.errors import BackendError, BackendUnavailable
from rag_judge.backends.ledger import Ledger
from rag_judge.backends.registry import (
    DEFAULT_EMBEDDINGS,
    DEFAULT_MODEL,
    chat_backend,
    embedding_backend,
    parse_model_name,
)
from rag_judge.backends.types import ChatRequest, ChatResponse, Message, Usage

__all__ = [
    "DEFAULT_EMBEDDINGS",
    "DEFAULT_MODEL",
    "BackendError",
    "BackendUnavailable",
    "CallPolicy",
    "CallResult",
    "ChatRequest",
    "ChatResponse",
    "Ledger",
    "Message",
    "ModelClient",
    "ResponseCache",
    "StructuredResult",
    "Usage",
    "YesNoResult",
    "chat_backend",
    "embedding_backend",
    "open_client",
    "parse_model_name",
]


def open_client(settings: object | None = None, *, ledger: Ledger | None = None) -> ModelClient:
    """A :class:`ModelClient` for the configured chat model, with the persistent cache."""
    from rag_judge.settings import Settings, load_settings

    chosen = settings if isinstance(settings, Settings) else load_settings()
    backend = chat_backend(chosen.model, base_url=chosen.base_url)
    policy = CallPolicy(
        concurrency=chosen.concurrency, timeout=chosen.timeout, max_attempts=chosen.max_attempts
    )
    return ModelClient(
        backend, cache=ResponseCache(chosen.cache_path), policy=policy, ledger=ledger
    )
