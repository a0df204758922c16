"""Fit a calibration profile from a score file and labels, check it, and apply it to results.

:func:`fit_profile` joins the labels (people's, or a stronger judge's verdicts: silver) to a
score file, cross-validates the fit (:mod:`rag_judge.calibration.fit`), fits on every labelled
row and returns the profile naming the judge it holds for. :func:`check_profile_for_run`
refuses a profile before a run whose judge differs from it (model, path, a prompt edited since);
:func:`apply_profile` adds the calibrated probability and verdict to each judged row.
"""

from __future__ import annotations

import datetime
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rag_judge.calibration.estimate import Estimate
from rag_judge.calibration.few_shot import WorkedExample, few_shot_id
from rag_judge.calibration.fit import (
    DEFAULT_FOLDS,
    Candidate,
    CrossValidation,
    FitRows,
    ThresholdRule,
    check_fit_labels,
    cross_validate_fit,
    fit_judge,
)
from rag_judge.calibration.join import JoinedLabels, join_labels
from rag_judge.calibration.judge_scores import JudgeRow, JudgeScores, read_judge_scores
from rag_judge.calibration.labels import HumanLabels, human_labels_from_records
from rag_judge.calibration.profile import (
    CalibratedValue,
    CalibrationProfile,
    CrossValidated,
    Figure,
    JudgeIdentity,
    LabelOrigin,
    check_profile,
    is_prompt_file_ref,
    row_outside_profile,
)
from rag_judge.calibration.thresholds import Objective
from rag_judge.core.errors import InputError
from rag_judge.data.readers import Where
from rag_judge.data.score_file import JUDGE_MODE, JUDGE_MODEL, RESULTS, read_score_rows
from rag_judge.jobs.score.result import EvaluationResult
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.prompts.templates import UnknownPromptError, load_prompt

SILVER_THRESHOLD = 0.5
"""A silver label is the stronger judge's verdict: supported iff its value >= 0.5."""


@dataclass(frozen=True)
class FitOptions:
    """How to fit: the metric, the folds and seed, the threshold's objective, the bootstrap."""

    metric: str
    folds: int = DEFAULT_FOLDS
    seed: int = 0
    objective: Objective = "balanced_accuracy"
    beta: float = 1.0
    confidence: float = 0.95
    n_resamples: int = 2000


@dataclass(frozen=True)
class LabelSource:
    """The labels to fit on: people's (``human``) or a stronger judge's score file
    (``silver_scores``), never both."""

    human: HumanLabels | None = None
    silver_scores: str | os.PathLike[str] | None = None
    sampling: Mapping[str, Any] | None = None
    """How people's labelled rows were chosen (``rag-judge label``'s record), when known."""


@dataclass(frozen=True)
class FitOutcome:
    """The profile, and the cross-validation it reports."""

    profile: CalibrationProfile
    cross_validation: CrossValidation
    rows: FitRows


def fit_profile(
    scores: str | os.PathLike[str], labels: LabelSource, options: FitOptions
) -> FitOutcome:
    """Fit ``options.metric`` of ``scores`` to ``labels``; cross-validated, then on all rows.

    Raises:
        InputError: both or neither label source, too few labels or one class
            (:func:`~rag_judge.calibration.fit.check_fit_labels`), or a score file that does not
            say which model and path judged it.
    """
    judge = read_judge_scores(scores, options.metric)
    human, origin = _labels(labels, judge, options.metric)
    labelled = {label.id for label in human.labels}
    identity = _identity(scores, options.metric, labelled & set(judge.by_id()))
    joined, rows, cv = cross_validate_scores(judge, human, options)
    fitted = fit_judge(
        rows, objective=options.objective, beta=options.beta, inner_folds=options.folds,
        seed=options.seed,
    )  # fmt: skip
    profile = CalibrationProfile(
        judge=identity,
        map=fitted.map.to_json(),
        threshold=fitted.threshold,
        objective=fitted.objective,
        labels=origin.model_copy(
            update={"n": int(rows.labels.size), "supported": int(rows.labels.sum())}
        ),
        cross_validation=_cross_validated(cv),
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        notes=tuple(_notes(joined.describe(), cv)),
    )
    return FitOutcome(profile, cv, rows)


def cross_validate_scores(
    judge: JudgeScores,
    human: HumanLabels,
    options: FitOptions,
    candidates: Sequence[Candidate] | None = None,
    threshold_rule: ThresholdRule = "prevalence",
) -> tuple[JoinedLabels, FitRows, CrossValidation]:
    """Join ``human`` labels to ``judge`` and cross-validate the fit on the joined rows (no
    judge identity needed: the benchmarks run this on older score files too)."""
    joined = join_labels(judge, human)
    by_id = judge.by_id()
    rows = fit_rows([by_id[r.id] for r in joined.rows], joined.human())
    check_fit_labels(rows.labels, options.folds)
    cv = cross_validate_fit(
        rows,
        folds=options.folds,
        seed=options.seed,
        objective=options.objective,
        beta=options.beta,
        confidence=options.confidence,
        n_resamples=options.n_resamples,
        candidates=candidates,
        threshold_rule=threshold_rule,
    )
    return joined, rows, cv


def current_prompt_refs(refs: Iterable[str]) -> dict[str, str]:
    """Each prompt ref (``claims/support.en@2#hash``) mapped to that prompt's ref now; refs of
    prompts that no longer exist are left out. Refs that name no prompt file (``few_shot#…``)
    map to themselves."""
    out: dict[str, str] = {}
    for ref in refs:
        if not is_prompt_file_ref(ref):
            out[ref] = ref
            continue
        prompt_id, _, language = ref.partition("@")[0].rpartition(".")
        try:
            out[ref] = load_prompt(prompt_id, language).ref
        except UnknownPromptError:
            continue
    return out


def check_profile_for_run(
    profile: CalibrationProfile,
    *,
    metric: str,
    model: str,
    mode: str,
    few_shot: Sequence[WorkedExample] = (),
) -> None:
    """Refuse ``profile`` before a run of ``metric`` by ``model`` on the ``mode`` path (with
    ``few_shot`` worked examples) when its judge differs (see
    :func:`rag_judge.calibration.profile.check_profile`)."""
    check_profile(
        profile,
        metric=metric,
        model=model,
        mode=mode,
        current_prompts=current_prompt_refs(profile.judge.prompts),
        run_refs=(few_shot_id(few_shot),) if few_shot else (),
    )


def profile_for_run(
    path: str | os.PathLike[str],
    metrics: Sequence[str],
    *,
    model: str,
    mode: str | None,
    few_shot: Sequence[WorkedExample] = (),
) -> tuple[CalibrationProfile, str]:
    """The profile at ``path`` and its name, checked against a run of ``metrics`` by ``model``
    on the ``mode`` path (None: the model's default) before its first call.

    Raises:
        InputError: the profile cannot be read, calibrates a metric the run does not judge, or
            was fitted on another model, path, prompt version or worked examples.
    """
    from rag_judge.calibration.profile import read_profile
    from rag_judge.judges.work import default_mode

    profile, name = read_profile(path)
    metric = profile.judge.metric
    if metric not in metrics:
        raise InputError(
            f"the profile calibrates {metric}, which this run does not judge: add it to the "
            "metrics",
            source=str(path),
        )
    try:
        check_profile_for_run(
            profile, metric=metric, model=model, mode=mode or default_mode(model),
            few_shot=few_shot,
        )  # fmt: skip
    except InputError as error:
        raise InputError(
            f"refused: {error.message}", source=str(path), field=error.field
        ) from error
    return profile, name


def apply_profile(
    result: EvaluationResult, profile: CalibrationProfile, name: str
) -> EvaluationResult:
    """``result`` with each row's calibrated value of the profile's metric added (None with
    the reason for a row not scored, or judged with a prompt or path outside the profile)."""
    metric = profile.judge.metric
    samples = []
    for sample in result.samples:
        judged = sample.results.get(metric)
        if judged is None:
            samples.append(sample)
            continue
        calibrated = _calibrated_value(
            profile, name, judged.value, judged.prompts, sample.judge_mode,
            [c.support_probability for c in judged.claims],
        )  # fmt: skip
        samples.append(
            sample.model_copy(update={"calibrated": {**sample.calibrated, metric: calibrated}})
        )
    return EvaluationResult(
        samples, metrics=result.metrics, model=result.model, ledger=result.ledger
    )


CALIBRATED_SUFFIX = "_calibrated"
"""A sweep's column of a judge's calibrated P(supported): ``<judge>_calibrated``."""


def apply_profile_to_sweep(
    result: SweepResult, profile: CalibrationProfile, name: str
) -> SweepResult:
    """``result`` with a column of the profile's metric calibrated per question and k (empty
    where the row has no value or falls outside the profile)."""
    import pandas as pd

    metric = profile.judge.metric
    frame = result.per_question
    values: list[float | None] = []
    outside: list[str] = []
    for question, k in zip(frame["question_id"], frame["k"], strict=True):
        judged = result.judgements.get((str(question), int(k)), {}).get(metric)
        if judged is None:
            values.append(None)
            continue
        calibrated = _calibrated_value(
            profile, name, judged.value, judged.prompts, result.judge_mode or None,
            [c.support_probability for c in judged.claims],
        )  # fmt: skip
        values.append(calibrated.probability)
        if judged.value is not None and calibrated.reason is not None:
            outside.append(calibrated.reason)
    column = f"{metric}{CALIBRATED_SUFFIX}"
    with_column = frame.assign(**{column: pd.Series(values, index=frame.index, dtype="Float64")})
    skipped = dict(result.skipped)
    if outside:
        skipped[column] = (
            f"{len(outside)} judged rows left uncalibrated by {name} (first: {outside[0]})"
        )
    return replace(
        result,
        per_question=with_column,
        calibrated=(*result.calibrated, column),
        skipped=skipped,
    )


def _calibrated_value(
    profile: CalibrationProfile,
    name: str,
    value: float | None,
    prompts: Iterable[str],
    mode: str | None,
    probabilities: list[float | None],
) -> CalibratedValue:
    def none(reason: str) -> CalibratedValue:
        return CalibratedValue(
            probability=None, supported=None, threshold=profile.threshold, profile=name,
            reason=reason,
        )  # fmt: skip

    if value is None:
        return none("the row has no value to calibrate")
    if (outside := row_outside_profile(profile, tuple(prompts), mode)) is not None:
        return none(outside)
    lowest = _lowest(probabilities)
    try:
        probability = profile.calibrate(value, lowest)
    except InputError as error:
        return none(str(error))
    return CalibratedValue(
        probability=probability,
        supported=probability >= profile.threshold,
        threshold=profile.threshold,
        profile=name,
    )


def _labels(
    labels: LabelSource, judge: JudgeScores, metric: str
) -> tuple[HumanLabels, LabelOrigin]:
    """The labels to fit on and where they came from; silver labels from the stronger judge's
    thresholded values (rows it could not score are left out, counted in the join)."""
    if (labels.human is None) == (labels.silver_scores is None):
        raise InputError(
            "fit on people's labels (--labels) or on a stronger judge's scores (--silver), "
            "not both: silver labels are never mixed with people's",
            field="labels",
        )
    if labels.human is not None:
        origin = LabelOrigin(
            source="human",
            files=(labels.human.source,),
            n=0,
            supported=0,
            sampling=dict(labels.sampling) if labels.sampling else None,
        )
        return labels.human, origin
    assert labels.silver_scores is not None
    silver_path = str(labels.silver_scores)
    if os.path.abspath(silver_path) == os.path.abspath(judge.source):
        raise InputError("the silver scores are the scores being fitted", field="silver")
    silver = read_judge_scores(silver_path, metric)
    records = [
        {"id": row.id, "label": int(row.value >= SILVER_THRESHOLD)}
        for row in silver.rows
        if row.value is not None
    ]
    human = human_labels_from_records(records, "binary", source=silver_path)
    silver_model = _identity(silver_path, metric, {row.id for row in silver.rows}).model
    origin = LabelOrigin(
        source="silver", files=(silver_path,), n=0, supported=0, silver_model=silver_model
    )
    return human, origin


def fit_rows(judged: Sequence[JudgeRow], labels: np.ndarray[Any, Any]) -> FitRows:
    """The judged rows as fitting input: value, lowest claim probability (when every row has
    claim probabilities that are not just the value again), label."""
    values = np.array([row.value for row in judged], dtype=np.float64)
    lowest = [_lowest([c.support_probability for c in row.claims]) for row in judged]
    mins = None
    if lowest and all(m is not None for m in lowest):
        as_array = np.array(lowest, dtype=np.float64)
        mins = None if np.allclose(as_array, values) else as_array
    return FitRows(tuple(row.id for row in judged), values, mins, labels)


def _lowest(probabilities: list[float | None]) -> float | None:
    if not probabilities or any(p is None for p in probabilities):
        return None
    return min(p for p in probabilities if p is not None)


def _identity(scores: str | os.PathLike[str], metric: str, ids: set[str]) -> JudgeIdentity:
    """Model, path and prompt refs of the rows ``ids`` in a score file.

    Raises:
        InputError: the rows do not say their model or path (a score file from an older
            rag-judge), or they disagree.
    """
    models: set[str] = set()
    modes: set[str] = set()
    prompts: dict[str, None] = {}
    for where, record in read_score_rows(scores):
        if str(record.get("id")) not in ids:
            continue
        models.add(_field(record, JUDGE_MODEL, where))
        modes.add(_field(record, JUDGE_MODE, where))
        result = record.get(RESULTS, {}).get(metric, {})
        prompts.update(dict.fromkeys(result.get("prompts") or ()))
    for what, found in (("models", models), ("paths", modes)):
        if len(found) > 1:
            raise InputError(
                f"the labelled rows were judged by different {what} ({', '.join(sorted(found))});"
                " a profile fits one judge", source=str(scores),
            )  # fmt: skip
    if not models:
        raise InputError(
            "no labelled row is in the score file: the labels' ids must be the score file's",
            source=str(scores), field="id",
        )  # fmt: skip
    return JudgeIdentity(
        metric=metric, model=models.pop(), mode=modes.pop(), prompts=tuple(sorted(prompts))
    )


def _field(record: Mapping[str, Any], field: str, where: Where) -> str:
    value = record.get(field)
    if not isinstance(value, str) or not value:
        raise where.error(
            f"the row does not say its {field} (a score file from an older rag-judge): re-run "
            "rag-judge score on the same rows (finished calls come from the cache)",
            field,
        )
    return value


def _figure(estimate: Estimate) -> Figure:
    return Figure(
        estimate=estimate.estimate, low=estimate.low, high=estimate.high, reason=estimate.reason
    )


def _cross_validated(cv: CrossValidation) -> CrossValidated:
    return CrossValidated(
        folds=cv.folds,
        seed=cv.seed,
        n=cv.n,
        before={k: _figure(v) for k, v in cv.before.items()},
        after={k: _figure(v) for k, v in cv.after.items()},
        change={k: _figure(v) for k, v in cv.change.items()},
        fold_maps=tuple(c.map for c in cv.choices),
    )


def _notes(joined: str, cv: CrossValidation) -> list[str]:
    out = [joined]
    if math.isfinite(cv.n) and cv.n < 50:
        out.append(
            f"{cv.n} labelled rows: the intervals are wide; 100 or more make the fit's figures "
            "worth reading"
        )
    return out
