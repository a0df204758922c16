"""OpenAI-compatible servers over plain aiohttp: the OpenAI wire protocol without the SDK.

``openai-compatible/<model>`` speaks the same chat-completions and embeddings protocol as
``openai/<model>`` and shares its bodies, reply readers and methods, but posts JSON
over one pooled, keep-alive ``aiohttp.ClientSession`` per event loop. The SDK spends ~5 ms of
CPU per call (request transforms, httpx, response models), which caps one event loop at ~200
calls/s; this backend spends a fraction of a millisecond (benchmarks/backend_overhead.py).

Like every backend it makes exactly one attempt per call and caches nothing: the shared
:class:`~rag_judge.backends.wrapper.client.ModelClient` does both. Every failure leaves as one
classified :class:`BackendError` whose text never holds the API key, which is only ever sent
as the ``Authorization`` header.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import urllib.request
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from rag_judge.backends.errors import (
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    classify_status,
    redact,
    server_said,
)
from rag_judge.backends.providers.openai_backend import DEFAULT_BASE_URL, retry_after_of
from rag_judge.backends.providers.openai_methods import ShapedChat, ShapedEmbedder
from rag_judge.core.redact import redact_url

if TYPE_CHECKING:
    from aiohttp import ClientResponse, ClientSession

    from rag_judge.backends.batch.batch_api import BatchAPI

PROVIDER = "openai-compatible"
DEFAULT_TIMEOUT = 600.0
"""Seconds one request may take when no timeout is given (the openai SDK's default)."""
DEFAULT_CONNECTIONS = 256
"""Connection pool size per event loop; keep it at or above ModelClient's concurrency."""
_MAX_ERROR_CHARS = 500


def _stdlib_dumps(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# orjson, when installed, encodes a chat request ~18x and decodes a reply ~4x faster than the
# stdlib (measured: benchmarks/results/backend_overhead.json, "json_codecs").
_dumps: Callable[[Any], bytes]
_loads: Callable[[bytes], Any]
try:
    import orjson

    _dumps, _loads = orjson.dumps, orjson.loads
except ImportError:  # pragma: no cover - depends on the environment
    _dumps, _loads = _stdlib_dumps, json.loads


async def _session_lifetime(
    headers: dict[str, str], connections: int, timeout: float
) -> AsyncGenerator[ClientSession, None]:
    """Yields one session and closes it when finalised: ``asyncio.run`` finalises every live
    async generator before it closes its loop, so no session outlives its loop unclosed."""
    import aiohttp

    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=connections),
        headers=headers,
        timeout=aiohttp.ClientTimeout(total=timeout),
    )
    try:
        yield session
    finally:
        await session.close()


class _HTTPBase:
    """Base URL and key resolution, one session per event loop, and the one POST."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        connections: int = DEFAULT_CONNECTIONS,
    ) -> None:
        """Resolve where to send calls and with what key; opens nothing yet.

        Args:
            model: The server's model name, sent as ``model``.
            base_url: API root such as ``http://localhost:8000/v1``; else ``OPENAI_BASE_URL``,
                else ``https://api.openai.com/v1``.
            api_key: Sent only as ``Authorization: Bearer``; else ``OPENAI_API_KEY``. A local
                server (a base URL given) may need none.
            timeout: Seconds one request may take (default 600; ModelClient has its own).
            connections: Pool size per event loop, at least ModelClient's concurrency.

        Raises:
            BackendUnavailable: aiohttp is not installed, or neither key nor base URL is set.
        """
        try:
            import aiohttp  # noqa: F401
        except ImportError as error:
            raise BackendUnavailable(
                "aiohttp is not installed: pip install 'rag-judge[openai]'"
            ) from error
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None and base_url is None:
            raise BackendUnavailable("no OpenAI API key: set OPENAI_API_KEY or pass api_key")
        self.model = model
        self.name = f"{PROVIDER}/{model}"
        endpoint, basic = _split_credentials((base_url or DEFAULT_BASE_URL).rstrip("/"))
        if basic is not None and key is not None:
            raise BackendUnavailable(
                f"the base URL {redact_url(endpoint)} carries a user name and password, and an "
                "API key is set: a server takes one Authorization header; remove 'user:password@' "
                "from the URL, or unset OPENAI_API_KEY"
            )
        self.endpoint: str | None = endpoint
        """The API root, without the user name and password it may have been given with."""
        self._basic = basic
        self._key = key
        self._timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self._connections = connections
        self._proxy = _env_proxy(self.endpoint)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lifetime: AsyncGenerator[ClientSession, None] | None = None
        self._session: ClientSession | None = None

    def batch_api(self) -> BatchAPI:
        """The Batch API of the server this backend calls, with its endpoint and key."""
        from rag_judge.backends.batch.batch_api import BatchAPI

        return BatchAPI(str(self.endpoint), self._key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, endpoint={self.endpoint!r})"

    async def _pool(self) -> ClientSession:
        """The running loop's session (a pool cannot cross event loops), opened on first use."""
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop:
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            if self._key is not None:
                headers["Authorization"] = f"Bearer {self._key}"
            elif self._basic is not None:
                headers["Authorization"] = self._basic  # from user:password@ in the base URL
            lifetime = _session_lifetime(headers, self._connections, self._timeout)
            self._session = await anext(lifetime)  # no await inside: no other task interleaves
            self._loop, self._lifetime = loop, lifetime
        return self._session

    async def aclose(self) -> None:
        """Close the running loop's session now (optional: ``asyncio.run`` closes it too)."""
        lifetime, loop = self._lifetime, self._loop
        self._loop = self._lifetime = self._session = None
        if lifetime is not None and loop is asyncio.get_running_loop():
            await lifetime.aclose()

    async def _post(self, path: str, payload: dict[str, Any]) -> Any:
        """POST JSON to ``endpoint + path``; the decoded reply, or a classified BackendError."""
        import aiohttp

        session = await self._pool()
        try:
            async with session.post(
                f"{self.endpoint}{path}", data=_dumps(payload), proxy=self._proxy
            ) as response:
                raw = await response.read()
                if not 200 <= response.status < 300:
                    raise self._status_error(response, raw)
        except TimeoutError:
            raise BackendTimeout(
                f"{PROVIDER} timed out after {self._timeout:g} s", transient=True
            ) from None
        except aiohttp.ClientError as error:  # refused, reset, truncated body, bad HTTP
            raise self._error(f"connection failed: {type(error).__name__}: {error}") from None
        try:
            return _loads(raw)
        except ValueError as error:  # orjson's and the stdlib's decode errors both are
            raise self._error(f"malformed response body: {error}") from None

    def _error(self, message: str, **fields: Any) -> BackendError:
        fields.setdefault("transient", True)
        text = redact(f"{PROVIDER} {message}", (self._key,))[:_MAX_ERROR_CHARS]
        return BackendError(text, **fields)

    def _status_error(self, response: ClientResponse, raw: bytes) -> BackendError:
        """An HTTP error status: the server's message, retryable or not, Retry-After kept."""
        import aiohttp

        status = response.status
        headers_only = aiohttp.ClientResponseError(
            response.request_info, response.history, status=status, headers=response.headers
        )
        message = server_said(raw, limit=_MAX_ERROR_CHARS)
        return self._error(
            f"HTTP error: {status} {message}",
            transient=classify_status(status, message),
            status_code=status,
            retry_after=retry_after_of(headers_only),
        )


def _env_proxy(url: str) -> str | None:
    """The proxy for ``url`` from HTTP(S)_PROXY / NO_PROXY, as the openai SDK honours them.

    Looked up once: aiohttp's ``trust_env`` would do it (and a netrc lookup) on a worker
    thread for every request, which costs more CPU than the rest of the call.
    """
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0]
    if urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(scheme.lower())


class HTTPChat(ShapedChat, _HTTPBase):
    """A chat model behind an OpenAI-compatible chat-completions API, without the SDK
    (``name``: ``openai-compatible/<model>``)."""

    async def _send_chat(self, body: dict[str, Any]) -> Any:
        return await self._post("/chat/completions", {"model": self.model, **body})


class HTTPEmbedder(ShapedEmbedder, _HTTPBase):
    """An embedding model behind an OpenAI-compatible embeddings API, without the SDK
    (``name``: ``openai-compatible/<model>``)."""

    async def _send_embeddings(self, texts: list[str]) -> Any:
        return await self._post("/embeddings", {"model": self.model, "input": texts})


def _split_credentials(url: str) -> tuple[str, str | None]:
    """The URL without ``user:password@``, and those as an HTTP Basic ``Authorization`` value
    (None when the URL has none): aiohttp refuses a URL with credentials beside a header."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.netloc.rsplit("@", 1)[1]
    token = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    basic = "Basic " + base64.b64encode(token.encode()).decode("ascii")
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), basic
