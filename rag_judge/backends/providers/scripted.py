"""A scripted backend for tests: queued replies, exceptions, or a callable; it records requests.

Registered like a real backend (``scripted/<label>``), so code under test cannot tell it apart:
:func:`register` a scripted backend under its name, and settings naming that model build it
through the provider table like any other.

>>> from rag_judge.backends.registry import chat_backend
>>> name = register(ScriptedBackend(["Paris"], name="scripted/doc"))
>>> chat_backend(name).name
'scripted/doc'
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rag_judge.backends.errors import BackendError, BackendUnavailable
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse
from rag_judge.core.types import Usage

Reply = str | ChatResponse | BaseException | float
Responder = Callable[[ChatRequest], Reply]


class ScriptedBackend:
    """Answers from a queue or a callable; ``requests`` lists everything it was sent."""

    logprobs_in_process = True
    """P(yes) is scripted like any reply: no probe needed (``judges.mode``)."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        respond: Responder | None = None,
        name: str = "scripted/test",
        delay: float = 0.0,
    ) -> None:
        self.name = name
        self.endpoint: str | None = None
        self._queue: deque[Reply] = deque(replies)
        self._respond = respond
        self._delay = delay
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Next scripted reply as a ChatResponse (raises scripted exceptions)."""
        reply = await self._next(request)
        if isinstance(reply, ChatResponse):
            return reply
        if isinstance(reply, float):
            raise TypeError("a float reply is for yes_probability, not complete")
        return ChatResponse(text=reply, usage=_usage(request, reply), finish_reason="stop")

    async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
        """Next scripted reply as P(yes): a float, or "yes"/"no" text meaning 1.0/0.0."""
        reply = await self._next(request)
        if isinstance(reply, float):
            return YesNoResponse(p_yes=reply, usage=_usage(request, "yes"))
        text = reply.text if isinstance(reply, ChatResponse) else reply
        return YesNoResponse(
            p_yes=1.0 if text.strip().lower().startswith("yes") else 0.0,
            usage=_usage(request, text),
        )

    async def _next(self, request: ChatRequest) -> str | ChatResponse | float:
        self.requests.append(request)
        if self._delay:
            await asyncio.sleep(self._delay)
        if self._queue:
            reply: Reply = self._queue.popleft()
        elif self._respond is not None:
            reply = self._respond(request)
        else:
            raise BackendError("scripted backend has no reply left", transient=False)
        if isinstance(reply, BaseException):
            raise reply
        return reply


class ScriptedEmbedder:
    """Deterministic embeddings for tests: a callable, or hashed bag-of-words vectors."""

    def __init__(
        self,
        embed: Callable[[str], Sequence[float]] | None = None,
        *,
        name: str = "scripted/embedder",
        dim: int = 64,
    ) -> None:
        self.name = name
        self.endpoint: str | None = None
        self._embed = embed or (lambda text: _bag_of_words(text, dim))
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text."""
        self.calls.append(list(texts))
        return [list(map(float, self._embed(t))) for t in texts]


_REGISTERED: dict[tuple[str, str], ScriptedBackend | ScriptedEmbedder] = {}
"""Scripted backends by (name, kind), as :func:`register` left them."""


def register(backend: ScriptedBackend | ScriptedEmbedder) -> str:
    """Make ``backend`` what settings naming it (``scripted/<label>``) build; returns the name.
    A later registration under the same name replaces it."""
    kind = "embeddings" if isinstance(backend, ScriptedEmbedder) else "chat"
    _REGISTERED[(backend.name, kind)] = backend
    return backend.name


def registered(name: str, kind: str) -> ScriptedBackend | ScriptedEmbedder:
    """The scripted backend registered as ``name`` for ``kind``.

    Raises:
        BackendUnavailable: none is (scripted backends are registered in code, by tests).
    """
    found = _REGISTERED.get((name, kind))
    if found is None:
        raise BackendUnavailable(
            f"'{name}': no scripted {kind} backend registered under this name "
            "(rag_judge.backends.providers.scripted.register)"
        )
    return found


def _usage(request: ChatRequest, reply: Any) -> Usage:
    words = sum(len(m.content.split()) for m in request.messages)
    return Usage(prompt_tokens=words, completion_tokens=len(str(reply).split()))


def _bag_of_words(text: str, dim: int) -> list[float]:
    import hashlib

    vector = [0.0] * dim
    for token in text.lower().split():
        digest = hashlib.blake2b(token.encode(), digest_size=4).digest()
        vector[int.from_bytes(digest, "little") % dim] += 1.0
    return vector
