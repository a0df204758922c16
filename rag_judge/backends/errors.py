"""Backend failures, classified once so the shared wrapper knows what is worth retrying."""

from __future__ import annotations

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


def classify_status(status_code: int | None) -> bool:
    """True when an HTTP status (None: no response at all) is worth retrying."""
    return status_code is None or status_code in TRANSIENT_STATUS


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds form); None if absent or a date."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(seconds, 0.0)
