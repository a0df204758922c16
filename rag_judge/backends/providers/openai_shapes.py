"""The OpenAI chat-completions and embeddings shapes: request bodies out, replies in.

One place for what the OpenAI SDK, LiteLLM, the aiohttp backend and the Batch API collector
all send and read. A reply is read the same whether it comes as the SDK's objects or as
decoded JSON (dicts), so the three backends and the Batch API share one reader per kind of
reply. Nothing here imports an SDK or does I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from rag_judge.backends.errors import BackendError, BackendRefusal
from rag_judge.backends.providers.thinking import split_thinking, thinking_field, with_thinking
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse
from rag_judge.core.types import Usage

TOP_LOGPROBS = 20
"""Top log-probabilities asked for the one token of a yes/no call."""
_REQUIRED: Any = object()


# --------------------------------------------------------------------------- request bodies


def chat_messages(request: ChatRequest) -> list[dict[str, str]]:
    """The request's messages as OpenAI message dicts."""
    return [{"role": m.role, "content": m.content} for m in request.messages]


def chat_body(request: ChatRequest) -> dict[str, Any]:
    """A chat-completions body without the model: messages, temperature, and the seed and
    reply length when the request sets them (a JSON schema is added by the caller)."""
    body = _sampled(request)
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    return body


def yes_no_body(request: ChatRequest) -> dict[str, Any]:
    """A body for P(yes): one reply token with its top log-probabilities."""
    return _sampled(request) | {"max_tokens": 1, "logprobs": True, "top_logprobs": TOP_LOGPROBS}


def _sampled(request: ChatRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": chat_messages(request),
        "temperature": request.temperature,
    }
    if request.seed is not None:
        body["seed"] = request.seed
    return body


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


# --------------------------------------------------------------------------- replies


def chat_reply(reply: Any) -> ChatResponse:
    """The answer of a chat completion; empty, refused or malformed replies raise."""
    try:
        choice = _get(reply, "choices")[0]
        message = _get(choice, "message")
        content, refusal = _get(message, "content"), _get(message, "refusal", None)
        finish_reason = _get(choice, "finish_reason", None)
        usage = usage_of(_get(reply, "usage", None))
    except (AttributeError, IndexError, KeyError, TypeError) as error:
        raise malformed_reply(error) from error
    return checked_reply(content, refusal, finish_reason, usage, thinking=thinking_field(message))


def yes_no_reply(reply: Any) -> YesNoResponse:
    """P(yes) from the first token's ``top_logprobs`` of a one-token completion."""
    try:
        first = _get(_get(_get(reply, "choices")[0], "logprobs"), "content")[0]
        pairs = [
            (str(_get(t, "token")), float(_get(t, "logprob"))) for t in _get(first, "top_logprobs")
        ]
        usage = usage_of(_get(reply, "usage", None))
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as error:
        raise no_logprobs(error) from error
    return YesNoResponse(p_yes=yes_share(pairs), usage=usage)


def embeddings_reply(reply: Any, expected: int) -> tuple[list[list[float]], Usage]:
    """The vectors of an embeddings reply in input order, and the tokens it says it read."""
    vectors = ordered_vectors(_get(reply, "data", None) or (), expected)
    return vectors, usage_of(_get(reply, "usage", None))


def usage_of(raw: Any) -> Usage:
    """Token counts from a reply's ``usage`` (absent, or not an object: unreported, not zero)."""
    if raw is None or isinstance(raw, str | bytes | int | float | list):
        return Usage(reported=False)
    details = _get(raw, "completion_tokens_details", None)
    return Usage(
        prompt_tokens=int(_get(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(_get(raw, "completion_tokens", 0) or 0),
        reasoning_tokens=_count(_get(details, "reasoning_tokens", None)),
    )


def _count(value: Any) -> int:
    """A token count as the server gave it (absent or odd: 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


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
        items = [(_get(d, "index"), _get(d, "embedding")) for d in data]
        vectors = [[float(x) for x in vector] for _, vector in sorted(items, key=lambda i: i[0])]
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise BackendError(f"malformed embeddings reply ({error})", transient=True) from error
    if len(vectors) != expected:
        raise BackendError(f"expected {expected} vectors, got {len(vectors)}", transient=True)
    return vectors


def _get(item: Any, name: str, default: Any = _REQUIRED) -> Any:
    """``item[name]`` of decoded JSON, ``item.name`` of an SDK object; ``default`` when given
    and absent (else the KeyError or AttributeError the caller turns into a status)."""
    if isinstance(item, Mapping):
        return item[name] if default is _REQUIRED else item.get(name, default)
    return getattr(item, name) if default is _REQUIRED else getattr(item, name, default)
