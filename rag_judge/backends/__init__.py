"""Model backends behind one wrapper: cache, retries, limits and accounting shared by all.

>>> import asyncio
>>> from rag_judge.backends import ModelClient, ChatRequest
>>> from rag_judge.backends.providers.scripted import ScriptedBackend
>>> client = ModelClient(ScriptedBackend(["Paris"]))
>>> asyncio.run(client.chat(ChatRequest.of(("user", "Capital of France?")))).text
'Paris'
"""

from __future__ import annotations

from rag_judge.backends.errors import BackendError, BackendUnavailable
from rag_judge.backends.registry import (
    DEFAULT_EMBEDDINGS,
    DEFAULT_MODEL,
    chat_backend,
    embedding_backend,
    parse_model_name,
)
from rag_judge.backends.types import ChatRequest, ChatResponse, Message
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import (
    CallPolicy,
    CallResult,
    ModelClient,
    StructuredResult,
    YesNoResult,
)
from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.core.types import Usage

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
    "parse_model_name",
]
