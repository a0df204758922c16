"""The values of each option group, gathered from click's ``**params`` into a frozen record.

Records only gather: every check stays where the command makes it, in the same order, so a
run with two bad options still reports the same one first.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rag_judge.cli.options import MODEL_OPTIONS
from rag_judge.cli.scale_out import ray_target

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from rag_judge.judges.work import JudgeMode
    from rag_judge.runtime.executors.on_ray import RayTarget
    from rag_judge.runtime.settings import Settings

R = TypeVar("R", bound="DataclassInstance")
SETTING_OPTIONS = (*MODEL_OPTIONS, "timeout", "max_attempts", "json_mode")
"""The options that override a setting of the same name."""


def gather(record: type[R], params: Mapping[str, Any], **groups: Any) -> R:
    """``record`` with each field from the parameter of its name, or from ``groups``."""
    plain = {f.name: params[f.name] for f in fields(record) if f.name not in groups}
    return record(**plain, **groups)


@dataclass(frozen=True)
class ModelArgs:
    """The settings a command's model, call and JSON options override (None: not given)."""

    overrides: Mapping[str, Any]
    """In the order they were given on the command line: the first bad one is reported."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any], *, skip: Collection[str] = ()) -> ModelArgs:
        """The setting options among ``params``, but those in ``skip``."""
        return cls({k: v for k, v in params.items() if k in SETTING_OPTIONS and k not in skip})

    def load(self) -> Settings:
        """Defaults, config file and environment, under these overrides."""
        from rag_judge.runtime.settings import load_settings

        return load_settings(self.overrides)


@dataclass(frozen=True)
class JudgeArgs:
    """``--judge-mode`` and ``--no-reasons``: how the judges use the model."""

    mode: JudgeMode | None
    reasons: bool

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> JudgeArgs:
        return cls(params["judge_mode"], not params["no_reasons"])


@dataclass(frozen=True)
class ScaleOutArgs:
    """``--executor``, ``--workers`` and ``--batch``: where the work runs."""

    executor: str
    workers: int
    batch: bool

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> ScaleOutArgs:
        return gather(cls, params)

    def target(
        self, no_cache: bool, settings: Settings, *, generator: bool = False
    ) -> RayTarget | None:
        """The Ray cluster asked for (None: this process), checked before any model loads."""
        return ray_target(
            self.executor, self.workers, self.batch, no_cache, settings, generator=generator
        )


@dataclass(frozen=True)
class GateArgs:
    """``--fail-under``, ``--gate-on``, ``--fail-if-worse``, ``--margin``,
    ``--allow-unjudged`` and ``--junit``."""

    fail_under: str | None
    gate_on: str
    fail_if_worse: bool
    margin: float
    allow_unjudged: bool
    junit: Path | None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> GateArgs:
        return gather(cls, params)
