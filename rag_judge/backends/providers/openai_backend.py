"""OpenAI and OpenAI-compatible servers (vLLM, llama.cpp, Ollama ...) as chat and embedding models.

A backend makes exactly one attempt per call (SDK retries off) and caches nothing: the shared
:class:`~rag_judge.backends.wrapper.client.ModelClient` does both. Every failure leaves as one
classified :class:`BackendError` whose text never holds the API key. What is sent and how a
reply is read (:mod:`~rag_judge.backends.providers.openai_shapes`, ``openai_methods``) is
shared with the LiteLLM and aiohttp backends; the error mapping here is shared with LiteLLM,
whose exceptions subclass OpenAI's.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rag_judge.backends.errors import (
    PLACEHOLDER_KEY,
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    classify_status,
    parse_retry_after,
    redact,
)
from rag_judge.backends.providers.openai_methods import ShapedChat, ShapedEmbedder

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from rag_judge.backends.batch.batch_api import BatchAPI

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Sent to local servers that ignore the key (the SDK refuses to run without one)."""
_MAX_ERROR_CHARS = 500


class _OpenAIBase:
    """Key and base URL resolution and one SDK client per event loop, for chat and embeddings."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
    ) -> None:
        try:
            import openai
        except ImportError as error:
            raise BackendUnavailable(
                "openai is not installed: pip install 'rag-judge[openai]'"
            ) from error
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None:
            if base_url is None:
                raise BackendUnavailable("no OpenAI API key: set OPENAI_API_KEY or pass api_key")
            key = PLACEHOLDER_KEY
        self.model = model
        self.name = f"openai/{model}"
        self.endpoint: str | None = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._openai = openai
        self._key = key
        self._timeout = timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: AsyncOpenAI | None = None

    def batch_api(self) -> BatchAPI:
        """The Batch API of the server this backend calls, with its endpoint and key."""
        from rag_judge.backends.batch.batch_api import BatchAPI

        return BatchAPI(str(self.endpoint), self._key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, endpoint={self.endpoint!r})"

    def _sdk(self) -> AsyncOpenAI:
        """The SDK client of the running loop (its connection pool cannot cross event loops)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._openai.AsyncOpenAI(
                api_key=self._key,
                base_url=self.endpoint,
                timeout=self._openai.not_given if self._timeout is None else self._timeout,
                max_retries=0,
                # Our own pool: the SDK's would schedule its close on whatever loop runs when
                # it is collected, which fails noisily once its own loop has closed.
                http_client=self._openai.DefaultAsyncHttpxClient(),
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the connection pool of the running loop's client (optional; frees sockets)."""
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = self._loop = None

    def _error(self, error: BaseException) -> BackendError:
        return to_backend_error(error, provider="openai", secrets=(self._key,))


class OpenAIChat(ShapedChat, _OpenAIBase):
    """A chat model behind the OpenAI chat-completions API (``name``: ``openai/<model>``)."""

    async def _send_chat(self, body: dict[str, Any]) -> Any:
        try:
            return await self._sdk().chat.completions.create(model=self.model, **body)
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key


class OpenAIEmbedder(ShapedEmbedder, _OpenAIBase):
    """An embedding model behind the OpenAI embeddings API (``name``: ``openai/<model>``)."""

    async def _send_embeddings(self, texts: list[str]) -> Any:
        try:
            return await self._sdk().embeddings.create(model=self.model, input=texts)
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key


def to_backend_error(
    error: BaseException, *, provider: str, secrets: Iterable[str | None] = ()
) -> BackendError:
    """Classify an SDK exception (OpenAI's, or LiteLLM's subclasses of them) as a BackendError.

    Timeouts (as BackendTimeout, so they end as status "timeout"), connection errors,
    undecodable bodies and TRANSIENT_STATUS are worth a retry; other HTTP statuses are not.
    Retry-After (and ``retry-after-ms``) is carried along.
    """
    import openai

    status = getattr(error, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(error, openai.APITimeoutError):
        message = redact(f"{provider} timed out: {error}", secrets)[:_MAX_ERROR_CHARS]
        return BackendTimeout(message, transient=True, status_code=status)
    if isinstance(error, openai.APIConnectionError):
        transient, what = True, "connection failed"
    elif isinstance(error, openai.APIResponseValidationError | json.JSONDecodeError):
        transient, what = True, "malformed response body"
    elif status is not None:
        transient, what = classify_status(status, str(error)), "HTTP error"
    else:
        transient, what = False, "unexpected error"
    detail = redact(f"{type(error).__name__}: {error}", secrets)[:_MAX_ERROR_CHARS]
    return BackendError(
        f"{provider} {what}: {detail}",
        transient=transient,
        status_code=status,
        retry_after=retry_after_of(error),
    )


def retry_after_of(error: BaseException) -> float | None:
    """Seconds to wait from the error's response headers: ``retry-after-ms``, then
    ``retry-after``."""
    for source in (getattr(error, "response", None), error):
        headers = getattr(source, "headers", None) or getattr(
            source, "litellm_response_headers", None
        )
        if headers is None:
            continue
        lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
        milliseconds = parse_retry_after(lowered.get("retry-after-ms"))
        if milliseconds is not None:
            return milliseconds / 1000.0
        seconds = parse_retry_after(lowered.get("retry-after"))
        if seconds is not None:
            return seconds
    return None
