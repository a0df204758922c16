"""A stand-in backend that answers nothing: it writes down each request as a batch line.

A batch stage runs the job with a client over this backend and the real response cache: what
the cache answers goes on as usual, and every miss becomes a :class:`BatchLine` whose
``custom_id`` is the very cache key the real client would use, so the batch's replies, written
into the cache under those ids, answer the next run. A miss raises :class:`Deferred`, and the
step that needed it (and whatever depends on it) waits for a later stage.
"""

from __future__ import annotations

from typing import Any

from rag_judge.backends.batch.batch_api import BatchAPI, BatchLine, BatchState
from rag_judge.backends.errors import BackendError, BackendUnavailable
from rag_judge.backends.providers.openai_shapes import (
    chat_body,
    chat_reply,
    response_format,
    yes_no_body,
    yes_no_reply,
)
from rag_judge.backends.registry import PROVIDERS, provider_of
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse, cache_key
from rag_judge.backends.wrapper.client import ModelClient


def batch_prefixes() -> tuple[str, ...]:
    """The providers whose requests go to a Batch API as they are (the OpenAI body)."""
    return tuple(p.prefix for p in PROVIDERS.values() if p.batch_api)


def batchable(name: str) -> bool:
    """True for a model whose requests a Batch API takes as they are."""
    record = provider_of(name)
    return record is not None and record.batch_api


def require_batchable(name: str) -> None:
    """Raise a clear error unless ``name``'s provider has a Batch API (``openai/`` or
    ``openai-compatible/``)."""
    if not batchable(name):
        takers = " or ".join(f"{prefix}/" for prefix in batch_prefixes())
        raise BackendUnavailable(
            f"{name}: batches need an {takers} model (a Batch API takes the OpenAI request body)"
        )


class Deferred(BackendError):
    """The request went into the batch; its reply comes in a later stage."""

    def __init__(self) -> None:
        super().__init__("deferred to the next batch", transient=False)


class CollectingBackend:
    """Same name and endpoint as ``real`` (so the keys match), but every call is collected."""

    def __init__(self, real: Any) -> None:
        require_batchable(str(real.name))
        self.real = real
        self.name: str = real.name
        self.endpoint: str | None = real.endpoint
        self.lines: dict[str, BatchLine] = {}
        self.requests: dict[str, tuple[str, ChatRequest]] = {}
        """custom_id → (kind, request), to send a failed line again live."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Collect a chat call (with its schema as OpenAI's ``json_schema``) and defer it."""
        body = {"model": self.real.model, **chat_body(request)}
        mode = getattr(self.real, "json_mode", "auto")
        if request.json_schema is not None and mode != "none":
            form = "json_object" if mode == "json_object" else "json_schema"
            body["response_format"] = response_format(request.json_schema, form)
        self._collect("chat", request, body)
        raise Deferred

    async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
        """Collect a one-token yes/no call with ``top_logprobs`` and defer it."""
        self._collect("yes_no", request, {"model": self.real.model, **yes_no_body(request)})
        raise Deferred

    def _collect(self, kind: str, request: ChatRequest, body: dict[str, Any]) -> None:
        key = cache_key(kind, self.name, self.endpoint, request)
        self.lines[key] = BatchLine(key, kind, body)
        self.requests[key] = (kind, request)


def batch_api_of(client: ModelClient) -> BatchAPI:
    """The Batch API of the server ``client`` calls, with the backend's endpoint and key."""
    make = getattr(client.backend, "batch_api", None)
    if make is None:
        require_batchable(client.name)  # raises: says which models take batches
        raise BackendUnavailable(f"{client.name}: this backend offers no Batch API")
    api: BatchAPI = make()
    return api


def ingest_replies(
    api: BatchAPI, found: BatchState, collector: CollectingBackend, client: ModelClient
) -> set[str]:
    """Write a finished batch's successful replies into ``client``'s cache (counted in its
    ledger as batched); the custom_ids answered. Unreadable replies are left out: they are
    sent again live."""
    assert client.cache is not None
    answered = set()
    for line in api.lines(found.output_file_id):
        cid, response = line.get("custom_id"), line.get("response") or {}
        wanted = collector.lines.get(str(cid))
        if wanted is None or response.get("status_code") != 200:
            continue
        try:
            reply = (
                chat_reply(response.get("body"))
                if wanted.kind == "chat"
                else yes_no_reply(response.get("body"))
            )
        except BackendError:
            continue
        client.cache.put(
            wanted.custom_id, kind=wanted.kind, model=client.name, value=reply.model_dump_json()
        )
        client.ledger.record_batched(client.name, reply.usage)
        answered.add(wanted.custom_id)
    return answered
