"""OpenAI's Batch API: upload a JSONL of requests, create a batch, poll it, read the results.

The same JSONL format (one ``{"custom_id", "method", "url", "body"}`` per line) is what
``vllm run-batch`` and LiteLLM's proxy accept. Results come back as lines
``{"custom_id", "response": {"status_code", "body"}, "error"}`` in an output file, and failed
lines in an error file. A batch ends ``completed``, ``failed``, ``expired`` (its lines that
finished are still in the output file) or ``cancelled``. Plain ``urllib``: a batch job makes a
handful of calls, each run in a thread so the event loop keeps going.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_judge.backends.errors import BackendError, redact, server_said

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
"""Batch statuses after which nothing more will finish."""
CHAT_URL = "/v1/chat/completions"
NO_ROUTE = frozenset({404, 405, 501})
"""What a server without a Batch API answers on its paths: not found, method not allowed, or
(Python's plain HTTP servers) unsupported method."""


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: its cache key as ``custom_id``, the call kind, the body."""

    custom_id: str
    kind: str
    """``chat`` or ``yes_no`` (how the reply is read back into the cache)."""
    body: Mapping[str, Any]

    def jsonl(self) -> str:
        """The line as the Batch API takes it."""
        line = {"custom_id": self.custom_id, "method": "POST", "url": CHAT_URL, "body": self.body}
        return json.dumps(line, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class BatchState:
    """What the server says of a batch."""

    id: str
    status: str
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    """``total``, ``completed``, ``failed`` as the server reports them."""

    @property
    def done(self) -> bool:
        """True once nothing more will finish."""
        return self.status in TERMINAL


class BatchAPI:
    """The Batch API of one OpenAI-compatible server (``base_url`` ends in ``/v1``)."""

    def __init__(self, base_url: str, api_key: str | None, *, timeout: float = 120.0) -> None:
        self.base = base_url.rstrip("/").removesuffix("/v1")
        self._key = api_key
        self._timeout = timeout

    def upload(self, lines: Iterable[BatchLine]) -> str:
        """Upload the lines as a ``purpose=batch`` file; its id."""
        content = "".join(line.jsonl() + "\n" for line in lines).encode("utf-8")
        boundary = uuid.uuid4().hex
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                f'filename="batch.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n'
            ).encode()
            + content
            + f"\r\n--{boundary}--\r\n".encode()
        )
        reply = self._call("POST", "/v1/files", body, f"multipart/form-data; boundary={boundary}")
        return str(reply["id"])

    def create(self, file_id: str) -> BatchState:
        """Start a batch over an uploaded file (24 h window, the only one OpenAI offers)."""
        payload = {"input_file_id": file_id, "endpoint": CHAT_URL, "completion_window": "24h"}
        return _state(self._call("POST", "/v1/batches", json.dumps(payload).encode()))

    def get(self, batch_id: str) -> BatchState:
        """The batch's current state."""
        return _state(self._call("GET", f"/v1/batches/{batch_id}"))

    def check(self) -> None:
        """Ask for one batch of the list: a server without a Batch API answers 404, before any
        model call is made or a progress bar shown (a listing costs nothing on OpenAI)."""
        self._call("GET", "/v1/batches?limit=1")

    def lines(self, file_id: str | None) -> list[dict[str, Any]]:
        """The JSON lines of an output or error file (none for no file)."""
        if file_id is None:
            return []
        raw = self._call("GET", f"/v1/files/{file_id}/content", raw=True)
        return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]

    def _call(
        self,
        method: str,
        path: str,
        data: bytes | None = None,
        content_type: str = "application/json",
        *,
        raw: bool = False,
    ) -> Any:
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method)
        request.add_header("Content-Type", content_type)
        if self._key:
            request.add_header("Authorization", f"Bearer {self._key}")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            text = redact(server_said(error.read()), (self._key,))
            hint = (
                f"; {self.base} has no Batch API (llama.cpp's and llama-cpp-python's servers "
                "have none): run without --batch"
                if error.code in NO_ROUTE and path.startswith(("/v1/files", "/v1/batches"))
                else ""
            )
            raise BackendError(
                f"batch API {method} {path}: HTTP {error.code}: {text}{hint}",
                transient=error.code in (408, 409, 429) or error.code >= 500,
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            raise BackendError(f"batch API {method} {path}: {error}", transient=True) from None
        return body if raw else json.loads(body)


def _state(reply: Mapping[str, Any]) -> BatchState:
    counts = reply.get("request_counts") or {}
    return BatchState(
        id=str(reply["id"]),
        status=str(reply.get("status")),
        output_file_id=reply.get("output_file_id"),
        error_file_id=reply.get("error_file_id"),
        counts={k: int(v) for k, v in counts.items() if isinstance(v, int)},
    )
