"""What ``--executor``, ``--workers`` and ``--batch`` mean for ``score``, ``sweep`` and
``calibrate --run``: the Ray cluster checked, and how its progress reaches the bar."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.runtime.events import Events

if TYPE_CHECKING:
    from rag_judge.backends.batch.batch_api import BatchState
    from rag_judge.cli.progress import Step
    from rag_judge.runtime.executors import Executor
    from rag_judge.runtime.executors.batched import Stage
    from rag_judge.runtime.executors.on_ray import RayTarget, RowCounts
    from rag_judge.runtime.settings import Settings


def ray_target(
    executor: str,
    workers: int,
    batch: bool,
    no_cache: bool,
    settings: Settings,
    *,
    generator: bool = False,
) -> RayTarget | None:
    """The Ray cluster ``--executor`` names (None: this process). Checked now, before a model
    is loaded or a progress bar shown: the options, Ray's presence, and with ``--batch`` that
    the judge's server (and with ``generator``, the generator's) has a Batch API."""
    if batch and no_cache:
        from rag_judge.runtime.executors.batched import NEEDS_CACHE

        raise click.UsageError(NEEDS_CACHE)
    if batch and executor == "local":
        from rag_judge.runtime.executors.batched import check_batch_apis

        check_batch_apis(settings, generator=generator)
    if executor == "local":
        return None
    from rag_judge.runtime.executors.on_ray import RayTarget, require_ray

    try:
        target = RayTarget.parse(executor, workers)
    except ValueError:
        raise click.UsageError(
            f"--executor takes local, ray, ray://ADDRESS or ray:auto, not {executor!r}"
        ) from None
    if batch:
        raise click.UsageError("--batch and --executor ray are two ways to scale out: pick one")
    require_ray()
    return target


def executor_for(target: RayTarget | None, batch: bool, state_path: Path) -> Executor:
    """Where the job runs: on the Ray cluster checked, through the Batch API (its ids kept at
    ``state_path``), or in this process."""
    from rag_judge.runtime.executors import IN_PROCESS, Batch, OnRay

    if target is not None:
        return OnRay(target)
    return Batch(state_path) if batch else IN_PROCESS


class StepEvents(Events):
    """A job's events on a progress step: each finished item in this process (over Ray, the
    counts across workers move the bar), each batch poll as a note and a stderr line."""

    def __init__(
        self,
        step: Step,
        *,
        on_ray: bool,
        each: Callable[[Any], None] | None = None,
        renamed: str | None = None,
    ) -> None:
        self.step, self.on_ray, self.each, self.renamed = step, on_ray, each, renamed

    def started(self, total: int) -> None:
        if self.renamed is not None:  # the step before (building the index) is over
            self.step.rename(self.renamed, total=total)
        else:
            self.step.update(total=total)

    def finished(self, item: Any) -> None:
        if not self.on_ray:
            self.step.finished(item.failed)
        if self.each is not None:
            self.each(item)

    def counts(self, counts: RowCounts) -> None:
        self.step.show_counts(counts)

    def advanced(self, step: str, done: int, total: int | None) -> None:
        self.step.note(f"{step}: {done}" + ("" if total is None else f" of {total}"))

    def polled(self, stage: Stage | None, state: BatchState) -> None:
        counts = state.counts
        text = f"batch {state.id} {state.status}"
        if counts:
            total, done, failed = (counts.get(k, 0) for k in ("total", "completed", "failed"))
            text += f": {done}/{total} lines done, {total - done - failed} in flight, "
            text += f"{failed} failed"
        self.step.note(text)
        click.echo(text, err=True)


def echo_stages(stages: Sequence[Stage], state_path: Path) -> None:
    """One stderr line per batch a ``--batch`` run waited on, and where the ids are kept."""
    for stage in stages:
        click.echo(
            f"stage {stage.index + 1}: {stage.requests} {stage.model} requests in "
            f"{stage.batch_id} ({stage.status}): {stage.answered} answered, "
            f"{stage.sent_live} sent live" + (" (resumed)" if stage.resumed else ""),
            err=True,
        )
    click.echo(f"batch ids kept in {state_path}", err=True)
