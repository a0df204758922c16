"""A job under the :class:`~rag_judge.runtime.executors.Batch` executor, wired in one place.

Every job runs its work the same way through a Batch API: once per stage on a session whose
clients collect their misses (:func:`~rag_judge.runtime.executors.batched.run_batched`), then
once more from the cache. Only that last run reports to the job's events, since a stage's items
are incomplete by design; every poll goes to ``events.polled``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.runtime.events import QUIET, Events
from rag_judge.runtime.executors import Batch
from rag_judge.runtime.executors.batched import BatchRun, run_batched
from rag_judge.runtime.session import Session

T = TypeVar("T")


async def run_on_batch(
    work: Callable[[Session, Events], Awaitable[T]],
    session: Session,
    executor: Batch,
    *,
    events: Events = QUIET,
    with_generator: bool = False,
) -> BatchRun[T]:
    """Run ``work(view, shown)`` through the Batch API as ``executor`` says (module docstring).

    ``view`` is ``session`` with collecting clients in a stage and its own in the final run;
    ``shown`` is ``events`` in the final run and :data:`~rag_judge.runtime.events.QUIET` before.
    The judge's calls are batched; with ``with_generator``, the generator's too.
    """
    judge = session.client
    generator = session.generator if with_generator else None
    clients = [judge] if generator is None else [judge, generator]

    async def job(views: tuple[ModelClient, ...]) -> T:
        judging, answering = views[0], views[1] if generator is not None else None
        final = judging is judge and answering is generator
        return await work(session.using(judging, answering), events if final else QUIET)

    state_path, poll_seconds = executor.state_path, executor.poll_seconds
    return await run_batched(
        job, clients, state_path=state_path, on_poll=events.polled, poll_seconds=poll_seconds
    )
