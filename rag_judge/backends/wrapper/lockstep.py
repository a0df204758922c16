"""Calls that advance in lockstep rounds and go to the backend together (the embedded model).

A sweep's ks of one question are independent until they are scored. Run as the tasks of a
:class:`Lockstep`, each task's model call waits until every task is waiting on one (or has
finished); the waiting calls then go to the backend's ``run_together`` at once, in task order:
round one is every k's answer, round two every k's first probe, and so on. Cache, single
flight, retries and the ledger stay per call (:class:`ModelClient`); only the backend attempt
is shared. Rounds depend on what the tasks ask, never on timing.

A backend takes calls together when it has ``takes_together(kind, request) -> bool`` and
``run_together(calls)`` (:class:`~rag_judge.backends.local.local_llama.LocalLlama`); its other
calls, and every call of other backends, are made as usual. Not a Batch API
(:mod:`rag_judge.backends.batch`): a round is answered at once, in this process.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from rag_judge.backends.errors import BackendError
from rag_judge.backends.types import ChatRequest

T = TypeVar("T")


@dataclass(frozen=True)
class _Member:
    lockstep: Lockstep
    index: int


_MEMBER: ContextVar[_Member | None] = ContextVar("rag_judge_lockstep_member", default=None)
_SECONDS: ContextVar[float | None] = ContextVar("rag_judge_round_seconds", default=None)


@dataclass
class _Call:
    index: int
    order: int
    backend: Any
    kind: str
    request: ChatRequest
    future: asyncio.Future[Any]


def can_run_together(backend: Any) -> bool:
    """True when ``backend`` answers a round's calls together (``run_together``)."""
    return callable(getattr(backend, "run_together", None)) and callable(
        getattr(backend, "takes_together", None)
    )


def taken_together(backend: Any, kind: str, request: ChatRequest) -> bool:
    """True when the running task is one of a :class:`Lockstep`'s and ``backend`` takes this
    call together with the round's others."""
    return (
        _MEMBER.get() is not None
        and can_run_together(backend)
        and bool(backend.takes_together(kind, request))
    )


async def submit(backend: Any, kind: str, request: ChatRequest) -> Any:
    """The backend's reply to this call, answered with the round's other waiting calls."""
    member = _MEMBER.get()
    if member is None:
        raise RuntimeError("submit outside a Lockstep: ask taken_together first")
    return await member.lockstep.submit(member.index, backend, kind, request)


def take_seconds() -> float | None:
    """This task's share of its last round's time (None: its last call was not in a round)."""
    seconds = _SECONDS.get()
    _SECONDS.set(None)
    return seconds


@contextmanager
def waiting_elsewhere() -> Iterator[None]:
    """Count the running task as waiting while it awaits another task's call (a single
    flight), so that the round does not wait for it."""
    member = _MEMBER.get()
    if member is None:
        yield
        return
    member.lockstep.wait(member.index, +1)
    try:
        yield
    finally:
        member.lockstep.wait(member.index, -1)


class Lockstep:
    """Concurrent tasks whose model calls advance in rounds, each round's calls made together."""

    def __init__(self) -> None:
        self._live = 0
        self._waits: Counter[int] = Counter()
        self._pending: list[_Call] = []
        self._flushing: asyncio.Task[None] | None = None
        self._order = itertools.count()

    async def gather(self, coroutines: Sequence[Awaitable[T]]) -> list[T]:
        """Run ``coroutines`` as this lockstep's tasks; their results in order."""

        async def member(index: int, coroutine: Awaitable[T]) -> T:
            _MEMBER.set(_Member(self, index))
            try:
                return await coroutine
            finally:
                self._live -= 1
                self._check()

        self._live += len(coroutines)
        tasks = [asyncio.create_task(member(i, c)) for i, c in enumerate(coroutines)]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()
            if self._flushing is not None:
                self._flushing.cancel()

    async def submit(self, index: int, backend: Any, kind: str, request: ChatRequest) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append(_Call(index, next(self._order), backend, kind, request, future))
        self._waits[index] += 1
        self._check()
        reply, seconds = await future
        _SECONDS.set(seconds)
        return reply

    def wait(self, index: int, step: int) -> None:
        self._waits[index] += step
        self._check()

    def _check(self) -> None:
        """Start a round when every live task waits on a call (and none is being answered)."""
        waiting = sum(1 for count in self._waits.values() if count > 0)
        if self._pending and self._flushing is None and waiting >= self._live:
            self._flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        calls, self._pending = sorted(self._pending, key=lambda c: (c.index, c.order)), []
        try:
            by_backend: dict[int, list[_Call]] = {}
            for call in calls:
                by_backend.setdefault(id(call.backend), []).append(call)
            for group in by_backend.values():
                await self._answer(group)
        finally:
            for call in calls:
                if not call.future.done():
                    call.future.cancel()
            self._flushing = None
            self._check()

    async def _answer(self, group: list[_Call]) -> None:
        started = time.perf_counter()
        try:
            replies = await group[0].backend.run_together([(c.kind, c.request) for c in group])
        except BackendError as error:
            replies = [error] * len(group)
        share = (time.perf_counter() - started) / len(group)
        for call, reply in zip(group, replies, strict=True):
            self._waits[call.index] -= 1  # here, not when the task resumes: see _check
            if call.future.done():
                continue
            if isinstance(reply, BaseException):
                call.future.set_exception(reply)
            else:
                call.future.set_result((reply, share))
