"""A calibration profile: a judge fitted to labels, the judge it fits, and what the fit is worth.

``rag-judge calibrate --fit -o PROFILE.json`` writes one; ``score --calibration`` and ``sweep
--calibration`` apply it. A profile holds:

- ``judge``: the metric, model, mode and prompt refs (``id.lang@version#hash``) of the score
  file it was fitted on. A fit is a fact about that judge only: applied to another model,
  another path or an edited prompt, it is refused (:func:`check_profile`), with the reason.
- ``map`` and ``threshold``: the learnt map to P(supported), and the cut on it.
- ``labels``: where they came from — ``human`` (people, with the sampling that chose the rows)
  or ``silver`` (a stronger judge's verdicts, naming that judge). The two are never mixed.
- ``cross_validation``: the k-fold figures before and after, with their intervals.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag_judge.calibration.probability_map import ProbabilityMap
from rag_judge.core.errors import InputError

PROFILE_FORMAT = 1
"""The profile file's format version; a file from a newer one is refused."""

LabelSource = Literal["human", "silver"]


class JudgeIdentity(BaseModel):
    """The judge a profile was fitted on: what must not change for the fit to hold."""

    model_config = ConfigDict(frozen=True)

    metric: str
    model: str
    """``provider/model`` of the judge, as the score file records it."""
    mode: str
    """``score`` or ``generate``: the path the judge took."""
    prompts: tuple[str, ...]
    """Every prompt ref the labelled rows were judged with (``claims/support.en@2#…``)."""


class LabelOrigin(BaseModel):
    """Where the labels came from."""

    model_config = ConfigDict(frozen=True)

    source: LabelSource
    """``human``: people's labels; ``silver``: a stronger judge's verdicts."""
    files: tuple[str, ...]
    n: int
    """Labelled rows fitted on."""
    supported: int
    """Of them, labelled supported (1)."""
    silver_model: str | None = None
    """For silver labels: the judge whose verdicts they are."""
    sampling: dict[str, Any] | None = None
    """How the labelled rows were chosen (``rag-judge label``'s record), when known."""


class Figure(BaseModel):
    """One cross-validated figure: estimate and interval (None with the reason if undefined)."""

    model_config = ConfigDict(frozen=True)

    estimate: float | None
    low: float | None
    high: float | None
    reason: str | None = None


class CrossValidated(BaseModel):
    """The k-fold figures: before (the raw judge at 0.5), after (out of fold), change."""

    model_config = ConfigDict(frozen=True)

    folds: int
    seed: int
    n: int
    before: dict[str, Figure]
    after: dict[str, Figure]
    change: dict[str, Figure]
    fold_maps: tuple[str, ...]
    """The map each outer fold chose."""


class CalibrationProfile(BaseModel):
    """A fitted judge, as written to and read from ``PROFILE.json``."""

    model_config = ConfigDict(frozen=True)

    format: int = PROFILE_FORMAT
    judge: JudgeIdentity
    map: dict[str, Any]
    """:meth:`ProbabilityMap.to_json`."""
    threshold: float
    """Supported iff the calibrated probability >= threshold."""
    objective: str
    labels: LabelOrigin
    cross_validation: CrossValidated
    created: str = ""
    notes: tuple[str, ...] = Field(default_factory=tuple)

    def probability_map(self) -> ProbabilityMap:
        return ProbabilityMap.from_json(self.map)

    def calibrate(self, value: float, min_probability: float | None) -> float:
        """The calibrated P(supported) of one row.

        Raises:
            InputError: the map reads claim probabilities and the row has none.
        """
        fitted = self.probability_map()
        inputs: list[float] = [value]
        if "min_probability" in fitted.features:
            if min_probability is None:
                raise InputError(
                    "this profile's map reads the claims' support probabilities, and the row "
                    "has none",
                    field="claims",
                )
            inputs.append(min_probability)
        out = fitted.apply(np.asarray([inputs], dtype=np.float64))
        return float(np.clip(out[0], 0.0, 1.0))


class CalibratedValue(BaseModel):
    """A profile applied to one result: the calibrated probability and verdict (the raw value
    stays in the result itself), or None and why."""

    model_config = ConfigDict(frozen=True)

    probability: float | None
    supported: bool | None
    threshold: float
    profile: str
    """The profile file's name and sha256 prefix."""
    reason: str | None = None
    """Why there is no calibrated value (the row was not scored, or judged otherwise)."""


def check_profile(
    profile: CalibrationProfile,
    *,
    metric: str,
    model: str,
    mode: str,
    current_prompts: Mapping[str, str],
    run_refs: Sequence[str] = (),
) -> None:
    """Refuse a profile whose judge is not this one, naming what changed.

    ``current_prompts`` maps each of the profile's prompt-file refs (``id.lang@v#hash``) to the
    ref that prompt has now (the same ref when unchanged; missing when it no longer exists).
    ``run_refs`` are the other refs this run's results will record (``few_shot#…`` when the
    judge takes worked examples); the profile's own such refs must be exactly these.

    Raises:
        InputError: the metric, model or mode differ, a prompt changed or is gone, or the
            worked examples differ.
    """
    judge = profile.judge
    why = f"the profile was fitted on {judge.metric} by {judge.model} ({judge.mode} path)"
    if metric != judge.metric:
        raise InputError(f"{why}, not {metric}: fit a profile for {metric}", field="metric")
    if model != judge.model:
        raise InputError(f"{why}; this run's judge is {model}: the fit does not carry over "
                         "to another model (fit one for it)", field="model")  # fmt: skip
    if mode != judge.mode:
        raise InputError(f"{why}; this run takes the {mode} path: fit one for that path",
                         field="mode")  # fmt: skip
    fitted_extra = sorted(ref for ref in judge.prompts if not is_prompt_file_ref(ref))
    if fitted_extra != sorted(run_refs):
        fitted = ", ".join(fitted_extra) or "no worked examples"
        given = ", ".join(sorted(run_refs)) or "none"
        raise InputError(
            f"{why}, with {fitted}; this run has {given}: worked examples change the judge "
            "(fit a profile on rows judged with the same --few-shot file)",
            field="prompts",
        )
    for ref in judge.prompts:
        if not is_prompt_file_ref(ref):
            continue
        now = current_prompts.get(ref)
        if now is None:
            raise InputError(f"{why}, with prompt {ref}, which no longer exists", field="prompts")
        if now != ref:
            raise InputError(
                f"{why}, with prompt {ref}; that prompt is now {now}: the fit does not hold "
                "for an edited prompt (re-score the labelled rows and fit again)",
                field="prompts",
            )


def is_prompt_file_ref(ref: str) -> bool:
    """Whether ``ref`` names a prompt file (``claims/support.en@2#…``), not e.g. the worked
    examples a run added (``few_shot#…``)."""
    head, at, _ = ref.partition("@")
    return bool(at) and "/" in head and "." in head


def row_outside_profile(
    profile: CalibrationProfile, prompts: Sequence[str], mode: str | None
) -> str | None:
    """Why one judged row falls outside the profile (another prompt or path), or None."""
    if mode is not None and mode != profile.judge.mode:
        return f"judged on the {mode} path; the profile is for the {profile.judge.mode} path"
    unknown = [p for p in prompts if p not in profile.judge.prompts]
    if unknown:
        return f"judged with {unknown[0]}, which the profile was not fitted with"
    extra = [p for p in profile.judge.prompts if not is_prompt_file_ref(p)]
    if missing := [p for p in extra if p not in prompts]:
        return f"judged without {missing[0]}, which the profile was fitted with"
    return None


def read_profile(path: str | os.PathLike[str]) -> tuple[CalibrationProfile, str]:
    """The profile in ``path`` and its short name (``file@sha12``).

    Raises:
        InputError: the file is missing, not JSON, from a newer format, or malformed (naming
            the field).
    """
    import hashlib

    source = Path(path)
    try:
        raw = source.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the profile: {error.strerror}", source=str(path)) from error
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"not a JSON profile: {error}", source=str(path)) from error
    newer = isinstance(data, dict) and isinstance(data.get("format"), int)
    if newer and data["format"] > PROFILE_FORMAT:
        raise InputError(
            f"profile format {data['format']} is newer than this rag-judge reads "
            f"({PROFILE_FORMAT}); upgrade rag-judge",
            source=str(path),
        )
    try:
        profile = CalibrationProfile.model_validate(data)
        profile.probability_map()
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise InputError(f"not a calibration profile: {first['msg']}", source=str(path),
                         field=field) from error  # fmt: skip
    except InputError as error:
        raise InputError(str(error), source=str(path)) from error
    return profile, f"{source.name}@{hashlib.sha256(raw).hexdigest()[:12]}"


def profile_text(profile: CalibrationProfile) -> str:
    """The profile as the file's text: indented JSON, keys in model order, a final newline."""
    return json.dumps(profile.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
