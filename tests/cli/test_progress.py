"""The progress display on a log file: a plain line every half minute, none for a quick run."""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import Progress

from rag_judge.cli.progress import LOG_EVERY, RATE_WINDOW, Step


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _step(total: int | None) -> tuple[Step, io.StringIO, Clock]:
    out, clock = io.StringIO(), Clock()
    console = Console(file=out, force_terminal=False, width=200)
    bar = Progress(console=console, disable=True)
    return Step(bar, bar.add_task("judging", total=total), console, clock=clock), out, clock


def test_a_quick_run_prints_no_plain_line() -> None:
    step, out, clock = _step(3)
    for _ in range(3):
        clock.now += 1
        step.advance()
    assert out.getvalue() == ""


def test_a_long_run_prints_a_line_every_half_minute_and_at_the_end() -> None:
    step, out, clock = _step(4)
    for _ in range(4):
        clock.now += LOG_EVERY / 2 + 1
        step.advance()
    lines = out.getvalue().splitlines()
    assert lines == [
        "judging: 2/4 (50%), 32s elapsed, about 32s left",
        "judging: 4/4 (100%), 1m04s elapsed",
    ]


def test_a_total_set_late_is_used() -> None:
    step, out, clock = _step(None)
    clock.now = LOG_EVERY + 1
    step.update(total=10)
    clock.now += LOG_EVERY + 1
    step.advance()
    assert out.getvalue().splitlines() == [
        "judging: 0/10 (0%), 31s elapsed",
        "judging: 1/10 (10%), 1m02s elapsed, about 9m18s left",
    ]


def test_a_terminal_gets_the_bar_not_lines() -> None:
    out, clock = io.StringIO(), Clock()
    console = Console(file=out, force_terminal=True, width=200)
    bar = Progress(console=console, disable=True)
    step = Step(bar, bar.add_task("judging", total=2), console, clock=clock)
    clock.now = 100
    step.advance()
    assert out.getvalue() == ""


def test_failed_rows_and_ray_counts_show_beside_the_description() -> None:
    from rag_judge.runtime.executors.on_ray import RowCounts

    step, out, clock = _step(4)
    step.finished(False)
    step.finished(True)
    clock.now = LOG_EVERY + 1
    step.finished(False)
    assert out.getvalue().splitlines() == [
        "judging (1 failed): 3/4 (75%), 31s elapsed, about 10s left"
    ]
    clock.now += LOG_EVERY + 1
    step.show_counts(RowCounts(done=4, in_flight=0, failed=2))
    assert (
        out.getvalue().splitlines()[-1]
        == "judging (0 in flight, 2 failed): 4/4 (100%), 1m02s elapsed"
    )


def test_a_resumed_run_estimates_from_its_recent_pace_not_the_cached_rows() -> None:
    """100 of 150 rows come from the cache at once, then one every 30 s: the time left is
    what the last minutes' pace says (not a rate since the start, inflated by the cache)."""
    step, out, clock = _step(150)
    for _ in range(100):
        step.advance()
    while clock.now < RATE_WINDOW * 2:
        clock.now += 30
        step.advance()
    last = out.getvalue().splitlines()[-1]
    assert last == "judging: 120/150 (80%), 10m00s elapsed, about 15m00s left"
