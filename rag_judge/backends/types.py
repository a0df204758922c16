"""What goes to a model and what comes back: frozen, validated, and hashable into cache keys."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rag_judge.core.types import Usage

CallStatus = Literal["ok", "backend_error", "timeout", "parse_error", "refused"]
"""How a call ended. Everything but "ok" carries no value, and is recorded, never dropped."""


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    """Who speaks."""
    content: str
    """What is said."""


class ChatRequest(BaseModel):
    """Everything that determines a model's reply; all of it goes into the cache key."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    """The conversation, oldest first."""
    temperature: float = 0.0
    """Sampling temperature; 0 for judges."""
    max_tokens: int | None = None
    """Upper bound on generated tokens (None: the backend's default)."""
    seed: int | None = None
    """Sampling seed where the backend honours one."""
    json_schema: dict[str, Any] | None = None
    """Constrain the reply to this JSON schema (structured output)."""
    sample_index: int = 0
    """Distinguishes repeated samples of the same request in the cache."""
    prompt_id: str | None = None
    """``id@version#hash`` of the prompt file that produced the messages, for tracing."""

    @classmethod
    def of(cls, *messages: tuple[str, str], **fields: Any) -> ChatRequest:
        """Build from ``(role, content)`` pairs: ``ChatRequest.of(("user", "hi"))``."""
        return cls(messages=tuple(Message(role=r, content=c) for r, c in messages), **fields)  # type: ignore[arg-type]


class ChatResponse(BaseModel):
    """A backend's successful reply."""

    model_config = ConfigDict(frozen=True)

    text: str
    """The generated text."""
    usage: Usage = Field(default_factory=Usage)
    """Token usage of this call."""
    finish_reason: str | None = None
    """Why generation stopped (``stop``, ``length`` ...), when the backend says."""


class YesNoResponse(BaseModel):
    """The probability a model puts on "yes" against "no" as its next answer token."""

    model_config = ConfigDict(frozen=True)

    p_yes: float = Field(ge=0.0, le=1.0)
    """P(yes) / (P(yes) + P(no)) over the first answer token."""
    usage: Usage = Field(default_factory=Usage)
    """Token usage of this call."""


def cache_key(kind: str, model: str, endpoint: str | None, payload: BaseModel) -> str:
    """sha256 over what changes the output: call kind, model, endpoint and the request."""
    body = {
        "kind": kind,
        "model": model,
        "endpoint": endpoint,
        "request": payload.model_dump(mode="json"),
    }
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


JSON_MODES = ("auto", "json_schema", "json_object", "none")
"""How a JSON schema is sent to a server (setting ``json_mode``, ``--json-mode``):

- ``auto``: OpenAI's ``json_schema``; a server that refuses it by name gets ``json_object`` with
  the schema (llama.cpp's form), remembered for the rest of the run;
- ``json_schema`` / ``json_object``: that form only (a refusal is an error, not a switch);
- ``none``: no ``response_format`` at all, for a server that fails on any: the prompt asks for
  the JSON and the reply is parsed, and repaired once, like any other.
"""
