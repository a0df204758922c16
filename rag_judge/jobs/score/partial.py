"""Rows written as they finish, so an interrupted ``score`` leaves what it judged on disk.

While a run goes on, ``OUTPUT.partial`` holds every finished row (in the order they finished),
rewritten atomically at most once per ``every`` seconds and when the run stops for any reason:
a reader never sees a broken line. The finished run writes OUTPUT in input order and removes
the partial file; an interrupted one keeps it, and running the same command again resumes
from the response cache without redoing the finished rows' model calls.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from types import TracebackType

from rag_judge.jobs.score.result import SampleResult, record_line
from rag_judge.runtime.atomic import is_device, write_lines


def partial_path(output: Path) -> Path:
    """Where the rows finished so far are kept while ``output`` is being judged."""
    return output.with_name(output.name + ".partial")


class PartialResults:
    """Collects finished rows and keeps ``partial_path(output)`` up to date with them."""

    def __init__(self, output: Path, *, every: float = 2.0) -> None:
        self.path = partial_path(output)
        self.kept = not is_device(output)
        """False for an output that is a device (``-o /dev/null``): no ``/dev/null.partial``."""
        self.every = every
        self._lines: dict[str, str] = {}
        self._new = False
        self._last = time.monotonic()

    def add(self, result: SampleResult) -> None:
        """One finished row; the file is rewritten when ``every`` seconds have passed."""
        self._lines[result.sample.id] = record_line(result)  # a repeat replaces its row
        self._new = True
        if time.monotonic() - self._last >= self.every:
            self.flush()

    def flush(self) -> None:
        """Write every row finished so far (nothing when none is new)."""
        if self._new and self.kept:
            write_lines(self.path, self._lines.values())
            self._new = False
        self._last = time.monotonic()

    def __enter__(self) -> PartialResults:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Finished: the partial file goes (OUTPUT has everything). Stopped: it is kept."""
        if kind is None:
            if self.kept:
                self.path.unlink(missing_ok=True)
            return
        with contextlib.suppress(OSError):  # a full disk: the last partial file stays whole,
            self.flush()  # and the error that stopped the run is the one to report
