"""How a job's model calls are carried out: in process (the default), through a Batch API in
stages over the response cache, or across a Ray cluster. A job takes one of these records as
its ``executor`` argument; the modules beside this one carry them out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_judge.runtime.executors.on_ray import RayTarget


@dataclass(frozen=True)
class InProcess:
    """Every call from this process, as many at once as the settings' concurrency."""


@dataclass(frozen=True)
class Batch:
    """Through the model server's Batch API, in stages over the response cache."""

    state_path: Path
    """Where the run keeps its batch ids, so an interrupted wait resumes."""
    poll_seconds: float = 10.0
    """Seconds between two polls of a submitted batch."""


@dataclass(frozen=True)
class OnRay:
    """The items split into Ray tasks, each worker with a session of its own."""

    target: RayTarget


Executor = InProcess | Batch | OnRay
"""Where a job's model calls go."""

IN_PROCESS = InProcess()
"""The default executor."""

__all__ = ["IN_PROCESS", "Batch", "Executor", "InProcess", "OnRay", "RayTarget"]
