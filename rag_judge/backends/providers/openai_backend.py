"""OpenAI and OpenAI-compatible servers (vLLM, llama.cpp, Ollama ...) as chat and embedding models.

A backend makes exactly one attempt per call (SDK retries off) and caches nothing: the shared
:class:`~rag_judge.backends.wrapper.client.ModelClient` does both. Every failure leaves as one
classified :class:`BackendError` whose text never holds the API key. The helpers here that do
not touch the SDK (messages, response format, reply and log-probability parsing, error
mapping) are shared with the LiteLLM backend, whose exceptions subclass OpenAI's.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from rag_judge.backends.errors import (
    PLACEHOLDER_KEY,
    BackendError,
    BackendRefusal,
    BackendTimeout,
    BackendUnavailable,
    classify_status,
    format_rejected,
    parse_retry_after,
    redact,
)
from rag_judge.backends.providers.thinking import split_thinking, thinking_field, with_thinking
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse
from rag_judge.core.types import Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

    from rag_judge.backends.batch.batch_api import BatchAPI

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Sent to local servers that ignore the key (the SDK refuses to run without one)."""
TOP_LOGPROBS = 20
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


class OpenAIChat(_OpenAIBase):
    """A chat model behind the OpenAI chat-completions API (``name``: ``openai/<model>``)."""

    json_mode: str = "auto"
    """How a JSON schema is sent (``JSON_MODES``, :func:`send_structured`)."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion; a JSON schema on the request becomes ``response_format``."""
        schema = request.json_schema
        if schema is None:
            return await self._create(request, None)
        return await send_structured(self, schema, lambda form: self._create(request, form))

    async def _create(
        self, request: ChatRequest, output_format: dict[str, Any] | None
    ) -> ChatResponse:
        omit = self._openai.omit
        try:
            completion = await self._sdk().chat.completions.create(
                model=self.model,
                messages=cast("list[ChatCompletionMessageParam]", chat_messages(request)),
                temperature=request.temperature,
                max_tokens=omit if request.max_tokens is None else request.max_tokens,
                seed=omit if request.seed is None else request.seed,
                response_format=omit
                if output_format is None
                else cast("ResponseFormat", output_format),
            )
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key
        return chat_response(completion)

    async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
        """P(yes) over P(yes) + P(no) from the top log-probabilities of the first reply token."""
        omit = self._openai.omit
        try:
            completion = await self._sdk().chat.completions.create(
                model=self.model,
                messages=cast("list[ChatCompletionMessageParam]", chat_messages(request)),
                temperature=request.temperature,
                seed=omit if request.seed is None else request.seed,
                max_tokens=1,
                logprobs=True,
                top_logprobs=TOP_LOGPROBS,
            )
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key
        return yes_no_response(completion)


class OpenAIEmbedder(_OpenAIBase):
    """An embedding model behind the OpenAI embeddings API (``name``: ``openai/<model>``)."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order (the API's ``index`` decides, not list order)."""
        return (await self.embed_with_usage(texts))[0]

    async def embed_with_usage(self, texts: Sequence[str]) -> tuple[list[list[float]], Usage]:
        """The vectors and the tokens the API says it read (what embeddings are billed by)."""
        if not texts:
            return [], Usage()
        try:
            response = await self._sdk().embeddings.create(model=self.model, input=list(texts))
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key
        usage = usage_of(getattr(response, "usage", None))
        return ordered_vectors(response.data, len(texts)), usage


# Helpers shared with the LiteLLM backend (they never import the SDK themselves).


def chat_messages(request: ChatRequest) -> list[dict[str, str]]:
    """The request's messages as OpenAI message dicts."""
    return [{"role": m.role, "content": m.content} for m in request.messages]


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


def response_format(schema: Mapping[str, Any], mode: str = "json_schema") -> dict[str, Any]:
    """``response_format`` for a JSON schema; named after its title, not strict (pydantic
    schemas rarely meet strict mode's rules). ``mode="json_object"`` gives the form that
    llama.cpp's server and vLLM's older releases accept: ``{"type": "json_object", "schema"}``.
    """
    if mode == "json_object":
        return {"type": "json_object", "schema": dict(schema)}
    title = str(schema.get("title") or "output")
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", title)[:64] or "output"
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": dict(schema), "strict": False},
    }


def usage_of(raw: Any) -> Usage:
    """Usage from an SDK usage object (None: unreported, not zero)."""
    if raw is None:
        return Usage(reported=False)
    details = getattr(raw, "completion_tokens_details", None)
    return Usage(
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        reasoning_tokens=_count(getattr(details, "reasoning_tokens", None)),
    )


def _count(value: Any) -> int:
    """A token count as the server gave it (absent or odd: 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def chat_response(completion: Any) -> ChatResponse:
    """A ChatResponse from an OpenAI-shaped completion; empty, refused or odd replies raise."""
    try:
        choice = completion.choices[0]
        message = choice.message
        content, refusal = message.content, getattr(message, "refusal", None)
        finish_reason, usage = choice.finish_reason, usage_of(getattr(completion, "usage", None))
    except (AttributeError, IndexError, KeyError, TypeError) as error:
        raise malformed_reply(error) from error
    return checked_reply(content, refusal, finish_reason, usage, thinking=thinking_field(message))


def malformed_reply(error: BaseException) -> BackendError:
    """The error for a reply without ``choices[0].message``."""
    return BackendError(
        f"malformed reply: no choices[0].message ({type(error).__name__})", transient=True
    )


def checked_reply(
    content: Any,
    refusal: Any,
    finish_reason: Any,
    usage: Usage,
    *,
    thinking: str = "",
) -> ChatResponse:
    """The reply's answer, without a reasoning model's thinking (in its own field or between
    ``<think>`` tags; its tokens go into ``usage``: as the server reported them in
    ``usage.reasoning_tokens``, else estimated), unless the model refused or said nothing
    (both raise)."""
    if refusal:
        raise BackendRefusal(f"the model refused: {str(refusal)[:200]}")
    answer, tagged = split_thinking(str(content or ""))
    thinking = thinking or tagged
    if thinking:  # LiteLLM moves <think> to reasoning_content and leaves the blank lines
        answer = answer.strip()
    usage = with_thinking(usage, usage.reasoning_tokens or None, thinking, answer)
    if not answer:
        after = " after thinking" if thinking else ""
        raise BackendError(f"empty reply{after} (finish_reason={finish_reason})", transient=True)
    return ChatResponse(text=answer, usage=usage, finish_reason=finish_reason)


def yes_no_response(completion: Any) -> YesNoResponse:
    """P(yes) from the first token's ``top_logprobs`` of an OpenAI-shaped completion."""
    try:
        first = completion.choices[0].logprobs.content[0]
        pairs = [(str(t.token), float(t.logprob)) for t in first.top_logprobs]
    except (AttributeError, IndexError, KeyError, TypeError) as error:
        raise no_logprobs(error) from error
    return YesNoResponse(p_yes=yes_share(pairs), usage=usage_of(getattr(completion, "usage", None)))


def no_logprobs(error: BaseException) -> BackendError:
    """The error for a yes/no reply without log-probabilities (not worth retrying)."""
    return BackendError(
        "no log-probabilities in the reply (does the server support logprobs?)",
        transient=False,
    )


def yes_share(pairs: Iterable[tuple[str, float]]) -> float:
    """P(yes) / (P(yes) + P(no)) over (token, logprob) pairs; "Yes", " yes" all count."""
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in pairs:
        word = token.strip().lower()
        if word in mass:
            mass[word] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    if total <= 0.0:
        raise BackendError("neither yes nor no among the top tokens", transient=False)
    return min(max(mass["yes"] / total, 0.0), 1.0)


def ordered_vectors(data: Iterable[Any], expected: int) -> list[list[float]]:
    """Vectors sorted by their ``index`` (objects or dicts), checked against the input count."""
    try:
        items = [(_field(d, "index"), _field(d, "embedding")) for d in data]
        vectors = [[float(x) for x in vector] for _, vector in sorted(items, key=lambda i: i[0])]
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise BackendError(f"malformed embeddings reply ({error})", transient=True) from error
    if len(vectors) != expected:
        raise BackendError(f"expected {expected} vectors, got {len(vectors)}", transient=True)
    return vectors


def _field(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, Mapping) else getattr(item, name)


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
