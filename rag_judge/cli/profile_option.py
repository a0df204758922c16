"""``--calibration PROFILE.json`` of ``score`` and ``sweep``: a fitted profile, checked before
the first model call against the judge the run will use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from rag_judge.calibration.few_shot import WorkedExample
    from rag_judge.calibration.profile import CalibrationProfile
    from rag_judge.runtime.settings import Settings

F = TypeVar("F", bound=Callable[..., object])


def calibration_option(command: F) -> F:
    """``--calibration``: apply a profile of ``rag-judge calibrate --fit``."""
    return click.option(
        "--calibration",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="PROFILE.json",
        help="Apply a profile of `calibrate --fit`: each row gets the calibrated P(supported) "
        "and verdict beside the raw value. Refused when the judge's model, path or prompts "
        "differ from those it was fitted on.",
    )(command)


def checked_profile(
    path: Path | None,
    metrics: Sequence[str],
    settings: Settings,
    mode: str | None,
    few_shot: Sequence[WorkedExample] = (),
) -> tuple[CalibrationProfile, str] | None:
    """The profile at ``path`` and its name, if it fits this run's judge; None without one.

    Raises:
        InputError: the profile cannot be read, calibrates a metric the run does not judge, or
            was fitted on another model, path or prompt version.
    """
    if path is None:
        return None
    from rag_judge.jobs.calibrate.fit_profile import profile_for_run

    return profile_for_run(path, metrics, model=settings.judge_model, mode=mode, few_shot=few_shot)
