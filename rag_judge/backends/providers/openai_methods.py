"""The chat, yes/no and embed methods every OpenAI-shaped backend shares, written once.

The OpenAI SDK, LiteLLM and the aiohttp backend differ only in how one body reaches the server
(and how its failures are classified); what they send and how they read the reply is
:mod:`~rag_judge.backends.providers.openai_shapes`. A backend subclasses :class:`ShapedChat` or
:class:`ShapedEmbedder` and says how it sends one body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from rag_judge.backends.errors import BackendError, format_rejected
from rag_judge.backends.providers.openai_shapes import (
    chat_body,
    chat_reply,
    embeddings_reply,
    response_format,
    yes_no_body,
    yes_no_reply,
)
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse
from rag_judge.core.types import Usage


class JsonModed(Protocol):
    """A backend that sends JSON schemas as ``response_format`` in one of ``JSON_MODES``."""

    json_mode: str


async def send_structured(
    backend: JsonModed,
    schema: Mapping[str, Any],
    send: Callable[[dict[str, Any] | None], Awaitable[ChatResponse]],
) -> ChatResponse:
    """Send with ``response_format`` in the backend's ``json_mode`` (``JSON_MODES``). In
    ``auto``, a server that refuses ``json_schema`` by name (:func:`format_rejected`, whatever
    the status) gets ``json_object`` with the schema, and so does every later call to this
    backend (one backend per endpoint, so the choice is remembered per endpoint)."""
    mode = backend.json_mode
    if mode == "none":
        return await send(None)
    try:
        return await send(response_format(schema, "json_schema" if mode == "auto" else mode))
    except BackendError as error:
        if mode != "auto" or not format_rejected(error):
            raise
    reply = await send(response_format(schema, "json_object"))
    backend.json_mode = "json_object"  # this server takes the other form: keep using it
    return reply


class ShapedChat:
    """``complete`` and ``yes_probability`` over :meth:`_send_chat`."""

    json_mode: str = "auto"
    """How a JSON schema is sent (``JSON_MODES``, :func:`send_structured`)."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion; a JSON schema on the request becomes ``response_format``."""
        body = chat_body(request)
        schema = request.json_schema
        if schema is None:
            return chat_reply(await self._send_chat(body))

        async def send(form: dict[str, Any] | None) -> ChatResponse:
            extra = {} if form is None else {"response_format": form}
            return chat_reply(await self._send_chat(body | extra))

        return await send_structured(self, schema, send)

    async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
        """P(yes) over P(yes) + P(no) from the top log-probabilities of the first reply token."""
        return yes_no_reply(await self._send_chat(yes_no_body(request)))

    async def _send_chat(self, body: dict[str, Any]) -> Any:
        """Send one chat-completions body (without the model); the reply as it came, or a
        classified :class:`BackendError`."""
        raise NotImplementedError


class ShapedEmbedder:
    """``embed`` and ``embed_with_usage`` over :meth:`_send_embeddings`."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order (the reply's ``index`` decides, not its order)."""
        return (await self.embed_with_usage(texts))[0]

    async def embed_with_usage(self, texts: Sequence[str]) -> tuple[list[list[float]], Usage]:
        """The vectors and the tokens the server says it read (what embeddings are billed by)."""
        if not texts:
            return [], Usage()
        return embeddings_reply(await self._send_embeddings(list(texts)), len(texts))

    async def _send_embeddings(self, texts: list[str]) -> Any:
        """Send one embeddings request for ``texts``; the reply as it came, or a classified
        :class:`BackendError`."""
        raise NotImplementedError
