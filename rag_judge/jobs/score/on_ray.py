"""``score`` over a Ray cluster: rows split into tasks, each worker opening its own session.

Every task judges a slice of the rows with :func:`~rag_judge.jobs.score.run.aevaluate` from the
same settings, so a worker reaches models as the driver would: the embedded model loaded once
per worker process, or an OpenAI-compatible endpoint (a vLLM per node, or a shared one).
Workers share the settings' response cache (SQLite, safe under concurrent writers), so an
interrupted run resumes by answering finished rows from it, and a task whose worker died is run
again by Ray (``max_retries``) without redoing the calls it had finished. Results come back in
input order, and each finished slice is handed to ``progress`` as it arrives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.ledger import Ledger, ModelTally
from rag_judge.core.types import RagSample
from rag_judge.jobs.score.result import EvaluationResult, SampleResult
from rag_judge.runtime.settings import Settings

SLICES_PER_WORKER = 4
"""Tasks per worker: small enough to balance, large enough that task overhead stays small."""
TASK_RETRIES = 3
"""Ray runs a task again this often when its worker dies."""


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


def require_ray() -> Any:
    """The ``ray`` module, or a clear error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendUnavailable(
            "Ray is not installed: pip install 'rag-judge[ray]' (--executor ray)"
        ) from None
    return ray


def _judge_slice(
    settings: Settings, rows: list[dict[str, Any]], metrics: list[str], options: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """One task: judge ``rows`` with a session of this worker's own; results and its ledger."""
    import asyncio

    from rag_judge.jobs.score.run import aevaluate

    samples = [RagSample.model_validate(r) for r in rows]
    result = asyncio.run(aevaluate(samples, metrics, settings=settings, **options))
    tallies = {m: vars(t) | {"statuses": dict(t.statuses)} for m, t in result.ledger.models.items()}
    return [s.model_dump(mode="json") for s in result.samples], tallies


def evaluate_on_ray(
    samples: Sequence[RagSample],
    metrics: Sequence[str],
    *,
    settings: Settings,
    target: RayTarget,
    progress: Callable[[SampleResult], None] | None = None,
    **options: Any,
) -> EvaluationResult:
    """Judge ``samples`` over Ray (see the module docstring); the same result as in process."""
    ray = require_ray()
    started_here = not ray.is_initialized()
    if started_here:
        if target.address is None:
            ray.init(num_cpus=target.workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=target.address, log_to_driver=False)
    try:
        return _run(ray, samples, list(metrics), settings, target, progress, options)
    finally:
        if started_here:
            ray.shutdown()


def _run(
    ray: Any,
    samples: Sequence[RagSample],
    metrics: list[str],
    settings: Settings,
    target: RayTarget,
    progress: Callable[[SampleResult], None] | None,
    options: dict[str, Any],
) -> EvaluationResult:
    remote = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(_judge_slice)
    size = max(1, math.ceil(len(samples) / (target.workers * SLICES_PER_WORKER)))
    slices = [list(samples[i : i + size]) for i in range(0, len(samples), size)]
    pending = {
        remote.remote(settings, [s.model_dump(mode="json") for s in part], metrics, options): n
        for n, part in enumerate(slices)
    }
    done: dict[int, list[SampleResult]] = {}
    ledger = Ledger()
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            index = pending.pop(ref)
            records, tallies = ray.get(ref)
            done[index] = [SampleResult.model_validate(r) for r in records]
            _merge(ledger, tallies)
            for row in done[index]:
                if progress is not None:
                    progress(row)
    ordered = [row for n in range(len(slices)) for row in done[n]]
    model = settings.judge_model
    return EvaluationResult(ordered, metrics=metrics, model=model, ledger=ledger)


def _merge(ledger: Ledger, tallies: dict[str, dict[str, Any]]) -> None:
    """Add a worker's ledger to the driver's (calls, tokens, statuses, seconds)."""
    for model, fields in tallies.items():
        tally = ledger.models.setdefault(model, ModelTally())
        for name, value in fields.items():
            if name == "statuses":
                tally.statuses.update(value)
            elif isinstance(value, int | float):
                setattr(tally, name, getattr(tally, name) + value)
