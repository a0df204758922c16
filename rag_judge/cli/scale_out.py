"""``--executor``, ``--workers`` and ``--batch``: the ways out of one process that ``score``,
``sweep`` and ``calibrate --run`` share, and how their progress reaches the bar."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rag_judge.cli.progress import Step
    from rag_judge.jobs.score.scaled import ScaleOut
    from rag_judge.runtime.executors.batched import Stage
    from rag_judge.runtime.executors.on_ray import RayTarget
    from rag_judge.runtime.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def scale_out_options(unit: str) -> Callable[[F], F]:
    """The three options; ``unit`` is what is split over Ray workers (rows, questions)."""

    def add(command: F) -> F:
        options = [
            click.option(
                "--batch",
                is_flag=True,
                help="Send the calls through the server's Batch API (openai/, "
                "openai-compatible/), in stages over the response cache; an interrupted wait "
                "resumes the same batch.",
            ),
            click.option(
                "--workers",
                type=click.IntRange(min=1),
                default=2,
                show_default=True,
                help="--executor ray: Ray workers (CPUs) of a new local cluster, and the "
                "number the tasks are sized for.",
            ),
            click.option(
                "--executor",
                default="local",
                show_default=True,
                metavar="local|ray|ray://ADDRESS|ray:auto",
                help=f"Where {unit} are judged: this process, a new local Ray cluster, or an "
                "existing one (pip install 'rag-judge[ray]').",
            ),
        ]
        for option in options:
            command = option(command)
        return command

    return add


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
        raise click.UsageError(
            "--batch hands replies over through the response cache: drop --no-cache"
        )
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


def scale_out(target: RayTarget | None, batch: bool, step: Step) -> ScaleOut:
    """The job's :class:`ScaleOut`, its progress shown on ``step``: Ray's counts across
    workers (done, in flight, failed), or each poll of a batch."""
    from rag_judge.jobs.score.scaled import ScaleOut

    if target is not None:
        return ScaleOut(ray=target, on_counts=step.show_counts)

    def polled(_stage: Any, state: Any) -> None:
        counts = state.counts
        text = f"batch {state.id} {state.status}"
        if counts:
            total, done, failed = (counts.get(k, 0) for k in ("total", "completed", "failed"))
            text += f": {done}/{total} lines done, {total - done - failed} in flight, "
            text += f"{failed} failed"
        step.note(text)
        click.echo(text, err=True)

    return ScaleOut(batch=batch, on_poll=polled)


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
