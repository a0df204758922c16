"""Backend failures, classified once so the shared wrapper knows what is worth retrying."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable

from rag_judge.core.errors import RagJudgeError

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth retrying: timeouts, conflicts, rate limits and server errors."""


class BackendError(RagJudgeError):
    """A model call that failed; ``transient`` says whether trying again may help."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.status_code = status_code
        self.retry_after = retry_after


class BackendTimeout(BackendError):
    """No reply within the timeout: retried like other transient errors, status ``timeout``."""


class BackendRefusal(BackendError):
    """The model declined to answer (e.g. a safety refusal): not retried, status ``refused``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, transient=False)


class BackendUnavailable(RagJudgeError):
    """A backend that cannot be used here: package not installed, no key, no weights."""


_REQUEST_FIELDS = re.compile(r"\b(response_format|json_schema|json_object|top_logprobs|logprobs)\b")
"""Request fields a server may refuse; an error naming one is about the request, not the load."""


def names_request_field(message: str) -> bool:
    """True when an error message names a field of the request (``response_format`` ...)."""
    return _REQUEST_FIELDS.search(message) is not None


def classify_status(status_code: int | None, message: str = "") -> bool:
    """True when an HTTP status (None: no response at all) is worth retrying.

    A 5xx whose message names one of the request's own fields is not: llama-cpp-python's
    server answers ``response_format: json_schema`` with a 500 quoting its validation error,
    and sending the same request again gets the same 500.

    >>> classify_status(500), classify_status(500, "response_format.type: Input should be ...")
    (True, False)
    """
    if status_code is None:
        return True
    if status_code >= 500 and names_request_field(message):
        return False
    return status_code in TRANSIENT_STATUS


def format_rejected(error: BackendError) -> bool:
    """True when a server refused the request's ``response_format`` (any 4xx or 5xx that names
    it: 400 from llama.cpp's ``llama-server``, 422 from vLLM, 500 from llama-cpp-python's)."""
    status = error.status_code
    text = str(error)
    named = "response_format" in text or "json_schema" in text
    return status is not None and 400 <= status < 600 and named


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds form); None if absent or a date."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(seconds, 0.0)


PLACEHOLDER_KEY = "not-needed"
"""The key sent to a local server that wants none (never a secret, never redacted)."""


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Replace every secret (API keys) in a text with ``***``."""
    for secret in secrets:
        if secret and secret != PLACEHOLDER_KEY and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def server_said(body: bytes, limit: int = 200) -> str:
    """A server's error body in one short line: a JSON error's message, an HTML page's title
    (or its text without tags), else the text itself, whitespace collapsed.

    >>> server_said(b'<html><head><title>404 Not Found</title></head><body><h1>Not Found'
    ...             b'</h1>\\n<p>The requested URL was not found.</p></body></html>')
    '404 Not Found'
    >>> server_said(b'{"error": {"message": "no such route", "type": "invalid_request"}}')
    'no such route'
    """
    text = body.decode("utf-8", "replace")
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    if isinstance(found, dict):
        error = found.get("error", found.get("detail"))
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message.strip():
            text = message
    elif text.lstrip().startswith("<"):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.S | re.I)
        text = title.group(1) if title else re.sub(r"<[^>]+>", " ", text)
    text = " ".join(html.unescape(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
