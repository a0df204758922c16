"""What a running job tells whoever runs it: one sink object instead of a callback per event.

A job calls its sink's methods as things happen; :class:`Events` itself does nothing, so a
caller overrides only what it shows (the CLI's progress bar, a notebook's counter, a test's
list). Jobs never print.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_judge.backends.batch.batch_api import BatchState
    from rag_judge.runtime.executors.batched import Stage
    from rag_judge.runtime.executors.on_ray import Emit, RowCounts


class Events:
    """A job's events; every method does nothing unless a subclass says otherwise."""

    def started(self, total: int) -> None:
        """The job knows how many items (rows, questions) it will finish."""

    def finished(self, item: Any) -> None:
        """One item is done: a score row (``SampleResult``) or a sweep question
        (``QuestionRun``)."""

    def advanced(self, step: str, done: int, total: int | None) -> None:
        """A slow step (indexing, embedding, retrieving) moved on (``total`` None: unknown)."""

    def counts(self, counts: RowCounts) -> None:
        """Ray: items done, in flight and failed across workers, as they change."""

    def polled(self, stage: Stage | None, state: BatchState) -> None:
        """Batch: one poll of a submitted batch (its status and line counts)."""


QUIET = Events()
"""The sink that shows nothing."""


class Callbacks(Events):
    """Events handed to plain callables: the keyword forms' ``progress=`` and ``on_start=``."""

    def __init__(
        self,
        *,
        started: Callable[[int], None] | None = None,
        finished: Callable[[Any], None] | None = None,
        advanced: Callable[[str, int, int | None], None] | None = None,
    ) -> None:
        self._started, self._finished, self._advanced = started, finished, advanced

    def started(self, total: int) -> None:
        if self._started is not None:
            self._started(total)

    def finished(self, item: Any) -> None:
        if self._finished is not None:
            self._finished(item)

    def advanced(self, step: str, done: int, total: int | None) -> None:
        if self._advanced is not None:
            self._advanced(step, done, total)


class Emitting(Events):
    """A Ray task's sink: each finished item goes to the driver through the task's ``emit``
    (:func:`~rag_judge.runtime.executors.on_ray.task_events`), as ``record(item)``."""

    def __init__(self, emit: Emit, record: Callable[[Any], Any] | None = None) -> None:
        self.emit = emit
        self.record = record

    def finished(self, item: Any) -> None:
        self.emit(item if self.record is None else self.record(item), item.failed)
