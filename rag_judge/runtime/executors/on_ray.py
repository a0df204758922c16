"""Run a job's parts as Ray tasks, counting rows done, in flight and failed across workers.

A part (a slice of rows to score, a group of sweep questions) is one Ray task, and every task
is a generator: it yields ``started`` (its rows are now in flight), one ``row`` event per
finished row (with the row's record, so the driver can write it at once), and last its whole
result. The driver waits on every task's next event, so the progress bar moves per row while
tasks run on any worker. A task whose worker dies is run again by Ray (``TASK_RETRIES``); Ray
replays a generator without handing back the events already delivered, and a part's result is
read from its last event only, so a replay neither loses nor doubles a row.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.wrapper.ledger import Ledger, ModelTally
from rag_judge.core.errors import RagJudgeError
from rag_judge.runtime.settings import Settings

TASK_RETRIES = 3
"""Ray runs a task again this often when its worker dies."""
SLICES_PER_WORKER = 4
"""Parts per worker: small enough to balance, large enough that task overhead stays small."""
POLL_SECONDS = 0.5
"""How often the driver reports counts while no task has news."""


@dataclass(frozen=True)
class RayTarget:
    """Where to run: a new local cluster (``address=None``) with ``workers`` CPUs, or an
    existing one (``auto``, ``ray://host:10001``)."""

    address: str | None = None
    workers: int = 2

    @classmethod
    def parse(cls, executor: str, workers: int) -> RayTarget:
        """``ray`` (a local cluster) or ``ray://ADDRESS`` / ``ray:auto`` (an existing one)."""
        if executor == "ray":
            return cls(None, workers)
        if executor.startswith("ray://"):
            return cls(executor, workers)
        if executor == "ray:auto":
            return cls("auto", workers)
        raise ValueError(executor)


@dataclass(frozen=True)
class RowCounts:
    """Rows finished, handed to a worker but not finished, and finished with a failed call."""

    done: int = 0
    in_flight: int = 0
    failed: int = 0


Event = tuple[str, Any]
"""What a task yields: ``("started", n_rows)``, ``("row", (record, failed))``,
``("result", part_result)``."""
Emit = Callable[[Any, bool], None]
"""What a part's job calls as each row finishes: the row's record and whether a call failed."""


def require_ray() -> Any:
    """The ``ray`` module, or a clear error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendUnavailable(
            "Ray is not installed: pip install 'rag-judge[ray]' (--executor ray)"
        ) from None
    return ray


def slice_size(n_rows: int, workers: int) -> int:
    """Rows per part: ``SLICES_PER_WORKER`` parts per worker, at least one row each."""
    return max(1, -(-n_rows // (workers * SLICES_PER_WORKER)))


def task_events(n_rows: int, work: Callable[[Emit], Any]) -> Iterator[Event]:
    """The events of one part (run inside the task): ``work(emit)`` runs in a thread (it
    usually runs an event loop of its own) while this generator yields what it emits."""
    events: queue.Queue[Event] = queue.Queue()
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = work(lambda record, failed: events.put(("row", (record, failed))))
        except BaseException as error:  # re-raised in the task, where Ray reports it
            outcome["error"] = error
        events.put(("end", None))

    yield ("started", n_rows)
    threading.Thread(target=run, daemon=True).start()
    while (event := events.get())[0] != "end":
        yield event
    if "error" in outcome:
        raise outcome["error"]
    yield ("result", outcome["result"])


@contextmanager
def connected(target: RayTarget) -> Iterator[Any]:
    """Ray, started for this run (a local cluster, or joined to ``target.address``) unless a
    caller had already initialised it; shut down again only if started here."""
    ray = require_ray()
    started_here = not ray.is_initialized()
    if started_here:
        try:
            if target.address is None:
                ray.init(num_cpus=target.workers, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=target.address, log_to_driver=False)
        except (ValueError, ConnectionError, RuntimeError, TimeoutError) as error:
            # ray:// without the Ray Client's grpc ("requires pip package ray[client]"), or no
            # cluster at the address: one line, not Ray's traceback. A failed ray:// connect
            # leaves the process in client mode (with gRPC threads), and every later ray.init
            # in it would fail: undo what the attempt set up before saying so.
            ray.shutdown()
            where = "a local Ray cluster" if target.address is None else f"Ray at {target.address}"
            hint = " (pip install 'ray[client]')" if "ray[client]" in str(error) else ""
            raise BackendUnavailable(f"cannot start {where}: {error}{hint}") from None
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()


def run_parts(
    task: Callable[..., Iterator[Event]],
    parts: Sequence[tuple[Any, ...]],
    *,
    target: RayTarget,
    on_row: Callable[[Any], None] | None = None,
    on_counts: Callable[[RowCounts], None] | None = None,
) -> list[Any]:
    """Run ``task(*part)`` for every part as a Ray generator task; their results in part order.

    ``on_row`` gets each finished row's record as it arrives; ``on_counts`` the counts across
    workers after every event and every ``POLL_SECONDS`` without one.
    """
    with connected(target) as ray:
        remote = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(task)
        pending = {remote.remote(*part): n for n, part in enumerate(parts)}
        results: dict[int, Any] = {}
        started: dict[int, int] = {}
        finished: dict[int, int] = {}
        failed = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
            for generator in ready:
                n = pending[generator]
                try:
                    kind, value = ray.get(next(generator))
                except StopIteration:
                    del pending[generator]
                    continue
                except ray.exceptions.RayTaskError as error:
                    if isinstance(error.cause, RagJudgeError):
                        raise error.cause from None  # a user's mistake: its one-line message
                    raise
                if kind == "started":
                    started[n] = value
                elif kind == "row":
                    finished[n] = finished.get(n, 0) + 1
                    failed += bool(value[1])
                    if on_row is not None:
                        on_row(value[0])
                else:
                    results[n] = value
            if on_counts is not None:
                done = sum(finished.values())
                in_flight = sum(started.get(n, 0) - finished.get(n, 0) for n in pending.values())
                on_counts(RowCounts(done, max(0, in_flight), failed))
        return [results[n] for n in range(len(parts))]


def for_workers(settings: Settings) -> Settings:
    """The settings as a worker must read them, wherever it runs: the cache directory made
    absolute (a relative one would name another folder in a worker's own working directory)."""
    return dataclasses.replace(settings, cache_dir=settings.cache_dir.resolve())


def ledger_tallies(ledger: Ledger) -> dict[str, dict[str, Any]]:
    """A worker's ledger as plain data, to ship back to the driver."""
    return {m: vars(t) | {"statuses": dict(t.statuses)} for m, t in ledger.models.items()}


def merged_ledger(tallies: Iterable[dict[str, dict[str, Any]]]) -> Ledger:
    """The driver's ledger: every worker's tallies added up."""
    ledger = Ledger()
    for tally in tallies:
        merge_tallies(ledger, tally)
    return ledger


def merge_tallies(ledger: Ledger, tallies: dict[str, dict[str, Any]]) -> None:
    """Add a worker's ledger to the driver's (calls, tokens, statuses, seconds)."""
    for model, fields in tallies.items():
        tally = ledger.models.setdefault(model, ModelTally())
        for name, value in fields.items():
            if name == "statuses":
                tally.statuses.update(value)
            elif isinstance(value, int | float):
                setattr(tally, name, getattr(tally, name) + value)
            elif isinstance(value, str) and value:
                setattr(tally, name, value)  # the last worker's word (a cache error)
