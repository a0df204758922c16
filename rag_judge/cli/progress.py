"""One progress display for every long command: a live bar on a terminal, and on a log file
or a CI console (where a live bar shows nothing until the end) a plain line every half minute.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TimeRemainingColumn

from rag_judge.cli.common import make_console

if TYPE_CHECKING:
    from rag_judge.runtime.executors.on_ray import RowCounts

LOG_EVERY = 30.0
"""Seconds between two plain progress lines when stderr is not a terminal."""
RATE_WINDOW = 300.0
"""Seconds of recent progress the time left is estimated from (the bar's and the lines'): a
resumed run's rows from the cache, done at once, stop counting after this long, where a rate
since the start would promise minutes for what takes an hour."""


@dataclass
class Step:
    """One counted step (``judging``, ``questions swept``): advance it, or set its total."""

    bar: Progress
    task: TaskID
    console: Console
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    logged: float = field(default=0.0)

    base: str = field(default="")
    """The step's own description; :meth:`note` adds to it."""
    failed: int = 0
    """Rows finished with a failed model call (:meth:`finished`)."""
    samples: deque[tuple[float, int]] = field(default_factory=deque)
    """(time, rows done) over the last :data:`RATE_WINDOW` seconds, and one from before it."""

    def __post_init__(self) -> None:
        self.started = self.logged = self.clock()
        self.base = self.base or str(self.bar.tasks[self.task].description)
        self.samples.append((self.started, int(self.bar.tasks[self.task].completed)))

    def advance(self, _: object = None) -> None:
        self.bar.advance(self.task)
        self._log()

    def update(self, *, completed: int | None = None, total: int | None = None) -> None:
        """Set what is done and out of how many; ``description`` stays."""
        self.bar.update(self.task, completed=completed, total=total)
        self._log()

    def rename(self, description: str, total: int | None) -> None:
        self.base = description
        self.bar.update(self.task, description=description, total=total)

    def note(self, text: str) -> None:
        """Show ``text`` beside the description (what is in flight, a batch's state)."""
        self.bar.update(self.task, description=f"{self.base} ({text})" if text else self.base)

    def finished(self, failed: bool) -> None:
        """One more row done in this process; a row with a failed call is counted beside."""
        self.failed += failed
        if failed:
            self.note(f"{self.failed} failed")
        self.advance()

    def show_counts(self, counts: RowCounts) -> None:
        """Rows done, in flight and failed across Ray workers."""
        self.note(f"{counts.in_flight} in flight, {counts.failed} failed")
        self.update(completed=counts.done)

    def _log(self) -> None:
        if self.console.is_terminal:
            return
        now = self.clock()
        task = self.bar.tasks[self.task]
        self._remember(now, int(task.completed))
        finished = task.total is not None and task.completed >= task.total
        if now - self.logged < LOG_EVERY and not (finished and now - self.started >= LOG_EVERY):
            return
        self.logged = now
        then, done_then = self.samples[0]
        recent = (now - then, int(task.completed) - done_then)
        line = plain_line(
            task.description, int(task.completed), task.total, now - self.started, recent
        )
        self.console.print(line)

    def _remember(self, now: float, done: int) -> None:
        """Keep the rows done over the last :data:`RATE_WINDOW` seconds, and one from before."""
        self.samples.append((now, done))
        while len(self.samples) > 2 and self.samples[1][0] <= now - RATE_WINDOW:
            self.samples.popleft()


def plain_line(
    description: str,
    done: int,
    total: float | None,
    elapsed: float,
    recent: tuple[float, int] | None = None,
) -> str:
    """``judging: 12/236 (5%), 1m30s elapsed, about 28m left`` (no estimate before a total). The
    time left comes from ``recent`` (seconds, rows done in them) when it counts any row, else
    from the whole run.

    >>> plain_line("judging", 12, 236, 90.0)
    'judging: 12/236 (5%), 1m30s elapsed, about 28m00s left'
    >>> plain_line("building the index", 0, None, 31.0)
    'building the index: 0, 31s elapsed'

    A resumed run: 100 rows came from the cache at once, then 10 in the last 300 seconds:

    >>> plain_line("questions swept", 110, 150, 330.0, recent=(300.0, 10))
    'questions swept: 110/150 (73%), 5m30s elapsed, about 20m00s left'
    """
    spent = _duration(elapsed)
    if not total:
        return f"{description}: {done}, {spent} elapsed"
    text = f"{description}: {done}/{int(total)} ({100 * done / total:.0f}%), {spent} elapsed"
    if 0 < done < total:
        seconds, rows = recent if recent is not None and recent[1] > 0 else (elapsed, done)
        text += f", about {_duration(seconds * (total - done) / rows)} left"
    return text


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


@contextmanager
def progress_step(description: str, total: int | None = None) -> Iterator[Step]:
    """A bar on stderr with one step; yields the :class:`Step` the job's callbacks drive."""
    console = make_console(stderr=True)
    columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn())
    with Progress(
        *columns, TimeRemainingColumn(), console=console, speed_estimate_period=RATE_WINDOW
    ) as bar:
        yield Step(bar, bar.add_task(description, total=total), console)


@contextmanager
def progress_steps() -> Iterator[Callable[[str, int, int | None], None]]:
    """A bar per named step, created when the step first reports ``(step, done, total)``."""
    console = make_console(stderr=True)
    columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console) as bar:
        steps: dict[str, Step] = {}

        def report(step: str, done: int, total: int | None) -> None:
            if step not in steps:
                steps[step] = Step(bar, bar.add_task(step, total=total), console)
            steps[step].update(completed=done, total=total)

        yield report
