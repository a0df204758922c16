"""The two ways to run a calibration: from files, or by judging a bundled calibration set.

:func:`calibrate_files` reads a score file (``rag-judge score`` output), a label file and
optionally more unlabelled scores, and calls :func:`~rag_judge.calibration.report.calibrate`.

:func:`calibrate_set_job` (by keywords: :func:`run_calibration`, :func:`arun_calibration` in a
notebook) loads the set (``wice_dev``, ``begin_dev``, ``alce_utility`` or a set folder), judges
its samples with :func:`rag_judge.jobs.score.job.score_job` (cached: a re-run makes no model
call), writes
``scores.jsonl`` into the output folder exactly as ``rag-judge score`` would, reads it back and
calls :func:`~rag_judge.calibration.report.calibrate` with the labels and the label kind of the
set's manifest. Labels that have no place on the set's scale (BEGIN's ``Generic``, null in
``labels.jsonl``) are excluded and listed, never guessed.

:func:`read_row_details` reads back what the judge said per row (question, answer, claims with
verdicts and reasons), to show beside the worst disagreements.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rag_judge.backends.protocol import EmbeddingBackend
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.calibration.annotators import agreement_lines, annotator_agreement
from rag_judge.calibration.estimate import BootstrapOptions
from rag_judge.calibration.judge_scores import read_judge_scores
from rag_judge.calibration.label_log import Sampling, is_label_log, read_label_log
from rag_judge.calibration.labels import (
    HumanLabels,
    LabelKind,
    LabelLevel,
    PairwisePreference,
    human_labels_from_records,
    read_human_labels,
    read_pairwise_labels,
)
from rag_judge.calibration.report import (
    CalibrationKind,
    CalibrationReport,
    ClaimDetail,
    RowDetail,
    calibrate,
)
from rag_judge.calibration.thresholds import Objective
from rag_judge.core import json_text
from rag_judge.core.errors import InputError
from rag_judge.data.calibration_sets import CalibrationSet, load_calibration_set
from rag_judge.data.score_file import read_score_rows, shown_rows
from rag_judge.jobs.score.job import score_job
from rag_judge.jobs.score.options import ScoreOptions
from rag_judge.jobs.score.result import EvaluationResult, SampleResult
from rag_judge.judges import DEFAULT_CALIBRATED, JUDGES
from rag_judge.judges.work import JudgeMode
from rag_judge.runtime.events import QUIET, Callbacks, Events
from rag_judge.runtime.executors import IN_PROCESS, Executor
from rag_judge.runtime.executors.batched import Stage
from rag_judge.runtime.session import Session, open_session
from rag_judge.runtime.settings import Settings, load_settings

SCORES_FILE = "scores.jsonl"


@dataclass(frozen=True)
class CalibrationRun:
    """A calibration set judged and calibrated."""

    calibration_set: CalibrationSet
    """The set, limited to the samples judged."""
    evaluation: EvaluationResult
    scores_path: Path
    report: CalibrationReport
    stages: tuple[Stage, ...] = ()
    """The batches the judging waited on (a :class:`~rag_judge.runtime.executors.Batch`
    executor; none otherwise)."""


def set_metrics(calibration_set: CalibrationSet) -> list[str]:
    """The metrics the set's manifest says it calibrates (``calibrates[].metric``), in order."""
    entries = calibration_set.manifest.get("calibrates")
    if not isinstance(entries, list):
        return []
    return [
        e["metric"] for e in entries if isinstance(e, dict) and isinstance(e.get("metric"), str)
    ]


def set_labels(calibration_set: CalibrationSet) -> HumanLabels:
    """The set's labels as :class:`HumanLabels`; null labels are excluded (and listed).

    Raises:
        InputError: The set's labels are nominal (class names), which calibration cannot use.
    """
    kind = calibration_set.label_kind
    if kind == "nominal":
        raise InputError(
            f"set '{calibration_set.name}' has nominal labels; calibration needs binary or "
            "ordinal ones",
            field="label_kind",
        )
    label_kind: LabelKind = kind
    values = {v for v in calibration_set.labels.values() if v is not None}
    mapping: dict[Any, float | None] = {v: float(v) for v in values if isinstance(v, int)}
    mapping[None] = None
    records = [{"id": s.id, "label": calibration_set.labels[s.id]} for s in calibration_set.samples]
    source = str(calibration_set.path / "labels.jsonl")
    return human_labels_from_records(records, label_kind, mapping=mapping, source=source)


def set_scale(calibration_set: CalibrationSet) -> tuple[int, int] | None:
    """An ordinal set's whole scale (from the manifest's label counts), or None."""
    if calibration_set.label_kind != "ordinal":
        return None
    counts = calibration_set.manifest.get("counts", {}).get("labels", {})
    levels = [int(k) for k in counts if isinstance(k, str) and k.lstrip("-").isdigit()]
    return (min(levels), max(levels)) if len(levels) >= 2 else None


def calibrated_metric(chosen_set: CalibrationSet, metric: str | None) -> str:
    """The judge a run calibrates: ``metric``, else the first the set's manifest names, else
    faithfulness.

    Raises:
        InputError: a name that is no judge.
    """
    named = set_metrics(chosen_set)
    name = metric or (named[0] if named else DEFAULT_CALIBRATED)
    if name not in JUDGES:
        raise InputError(f"unknown metric '{name}'; known: {', '.join(JUDGES)}", field="metric")
    return name


@dataclass(frozen=True)
class Figures:
    """How agreement is measured, in both modes: the threshold (or how it is chosen) and the
    bootstrap."""

    threshold: float | None = None
    """Binary: the judge says supported iff value >= this (None: 0.5)."""
    select: Objective | None = None
    """Binary: choose the threshold on a dev split instead."""
    beta: float = 1.0
    """β of the unsupported class's F-beta."""
    confidence: float = 0.95
    """Nominal coverage of the intervals."""
    n_resamples: int = 2000
    """Bootstrap resamples."""
    seed: int = 0
    """Seed of the bootstrap and the dev split."""


@dataclass(frozen=True)
class LabelFile:
    """How to read a label file against a score file."""

    metric: str = DEFAULT_CALIBRATED
    """The judge metric of the score file to calibrate."""
    kind: CalibrationKind = "binary"
    level: LabelLevel = "sample"
    label_field: str = "label"
    mapping: Mapping[Any, float | None] | None = None
    """Raw label -> number (None to exclude)."""
    unlabelled: str | os.PathLike[str] | None = None
    """More scores without labels (prediction-powered intervals)."""
    scale: tuple[int, int] | None = None
    """The ordinal scale the judge's [0, 1] value is mapped onto."""
    second: str | os.PathLike[str] | None = None
    """A second annotator's labels of the same rows: κ between the people beside the judge's."""


@dataclass(frozen=True)
class SetOptions:
    """What ``calibrate --run`` judges: which metric, how many rows, the judges' knobs."""

    metric: str | None = None
    """The judge to calibrate (None: the first the set's manifest names, else faithfulness)."""
    limit: int | None = None
    """Judge at most this many samples, balanced over the labels."""
    support_probability: bool | None = None
    mode: JudgeMode | None = None
    reasons: bool = True
    figures: Figures = Figures()


def run_calibration(
    name_or_path: str | Path | CalibrationSet, out_dir: str | Path, **options: Any
) -> CalibrationRun:
    """:func:`arun_calibration` from synchronous code (same arguments).

    In a notebook, whose cells already run in an event loop, ``await arun_calibration(...)``.
    """
    return asyncio.run(arun_calibration(name_or_path, out_dir, **options))


async def arun_calibration(
    name_or_path: str | Path | CalibrationSet,
    out_dir: str | Path,
    *,
    metric: str | None = None,
    limit: int | None = None,
    model: str | None = None,
    settings: Settings | None = None,
    cache: bool | str | Path = True,
    client: ModelClient | None = None,
    embedder: EmbeddingClient | EmbeddingBackend | None = None,
    progress: Callable[[SampleResult], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    support_probability: bool | None = None,
    mode: JudgeMode | None = None,
    reasons: bool = True,
    threshold: float | None = None,
    select: Objective | None = None,
    beta: float = 1.0,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> CalibrationRun:
    """:func:`calibrate_set_job` by keywords, for Python and notebooks.

    Args:
        name_or_path: A bundled set (``begin_dev``, ``wice_dev``, ``alce_utility``), a folder,
            or a loaded set.
        out_dir: Folder for ``scores.jsonl`` (created if missing).
        metric: The judge to calibrate (default: the first the manifest names, else
            faithfulness).
        limit: Judge at most this many samples, balanced over the labels
            (:meth:`CalibrationSet.limit`).
        model: Chat model ``provider/model`` (default: settings, then the local model).
        settings: Explicit settings (model, base URL, concurrency, cache folder).
        cache: The response cache: True for the settings' one, a path, or False for none.
        client: A ready model client (tests, custom backends); overrides ``model``.
        embedder: A ready embedder (answer relevancy); default: settings.
        progress: Called with each judged sample.
        on_start: Called with the number of samples before judging starts.
        support_probability: Ask P(supported) per claim (default: where the model's provider
            gives it for free).
        mode: ``score`` or ``generate`` (default: by backend; see :func:`~rag_judge.evaluate`).
        reasons: ``score`` mode: a one-line reason for each claim that ends unsupported.
        threshold, select, beta, confidence, n_resamples, seed: :class:`Figures`.

    Raises:
        InputError: An unknown set or metric, nominal labels, or anything :func:`calibrate`
            refuses (e.g. no labelled sample got a score).
    """
    figures = Figures(threshold, select, beta, confidence, n_resamples, seed)
    options = SetOptions(metric, limit, support_probability, mode, reasons, figures)
    chosen = settings or load_settings({"model": model})
    # With a ready client and the default cache, embeddings share the client's cache.
    store = client.cache if client is not None and cache is True else cache
    session = open_session(chosen, cache=store, client=client, embedder=embedder)
    return await calibrate_set_job(
        name_or_path,
        out_dir,
        session,
        options,
        events=Callbacks(started=on_start, finished=progress),
    )


async def calibrate_set_job(
    name_or_path: str | Path | CalibrationSet,
    out_dir: str | Path,
    session: Session,
    options: SetOptions,
    *,
    executor: Executor = IN_PROCESS,
    events: Events = QUIET,
) -> CalibrationRun:
    """Judge a calibration set's samples with the session (where ``executor`` says: a batch
    keeps its ids beside ``out_dir/scores.jsonl``), write ``scores.jsonl`` into ``out_dir``,
    and calibrate the judge against the set's labels."""
    chosen_set = (
        name_or_path
        if isinstance(name_or_path, CalibrationSet)
        else load_calibration_set(name_or_path)
    )
    if options.limit is not None:
        chosen_set = chosen_set.limit(options.limit)
    name = calibrated_metric(chosen_set, options.metric)
    named = set_metrics(chosen_set)
    labels = set_labels(chosen_set)
    events.started(len(chosen_set.samples))
    scoring = ScoreOptions(
        metrics=(name,),
        support_probability=options.support_probability,
        mode=options.mode,
        reasons=options.reasons,
    )
    scores_path = Path(out_dir) / SCORES_FILE
    run = await score_job(
        list(chosen_set.samples), session, scoring, executor=executor, events=events
    )
    result, stages = run.result, run.stages
    scores_path = result.write_jsonl(scores_path)
    figures = options.figures
    report = calibrate(
        read_judge_scores(scores_path, name),
        labels,
        threshold=figures.threshold,
        select=figures.select,
        beta=figures.beta,
        scale=set_scale(chosen_set),
        details=read_row_details(scores_path, name),
        confidence=figures.confidence,
        n_resamples=figures.n_resamples,
        seed=figures.seed,
    )
    if named and name not in named:
        note = (
            f"The set's manifest calibrates {', '.join(named)}, not {name}: read these figures "
            "with its notes in mind."
        )
        report = _with_note(report, note)
    return CalibrationRun(chosen_set, result, scores_path, report, stages)


def calibrate_files(
    scores: str | os.PathLike[str],
    labels: str | os.PathLike[str],
    reading: LabelFile = LabelFile(),
    figures: Figures = Figures(),
) -> CalibrationReport:
    """Calibrate ``reading.metric`` in a score file against a label file (formats in
    :mod:`rag_judge.calibration.labels`); the judge's claims and reasons come along for the
    worst disagreements.

    Raises:
        InputError: A file that cannot be read (naming file:line and field), a metric the
            scores do not hold (the message lists those they do), pairwise labels per claim,
            or anything :func:`calibrate` refuses (e.g. no id in common).
    """
    metric = reading.metric
    judge = read_judge_scores(scores, metric)
    human: HumanLabels | tuple[PairwisePreference, ...]
    if reading.kind == "pairwise":
        if reading.level != "sample":
            raise InputError("pairwise preferences compare whole rows, not claims", field="level")
        human = read_pairwise_labels(labels)
    else:
        human = read_human_labels(
            labels,
            reading.kind,
            mapping=reading.mapping,
            level=reading.level,
            label_field=reading.label_field,
        )
    unlabelled = reading.unlabelled
    report = calibrate(
        judge,
        human,
        threshold=figures.threshold,
        select=figures.select,
        beta=figures.beta,
        scale=reading.scale,
        unlabelled=None if unlabelled is None else read_judge_scores(unlabelled, metric),
        details=read_row_details(scores, metric),
        confidence=figures.confidence,
        n_resamples=figures.n_resamples,
        seed=figures.seed,
    )
    if (note := sampling_note(labels)) is not None:
        report = _with_note(report, note)
    if reading.second is not None and isinstance(human, HumanLabels):
        second = read_human_labels(
            reading.second, human.kind, mapping=reading.mapping, label_field=reading.label_field
        )
        threshold = figures.threshold if figures.threshold is not None else 0.5
        bootstrap = BootstrapOptions(
            confidence=figures.confidence, n_resamples=figures.n_resamples, seed=figures.seed
        )
        found = annotator_agreement(judge, human, second, threshold=threshold, bootstrap=bootstrap)
        report = _with_note(report, " ".join(agreement_lines(found)))
    return report


SAMPLING_SUPPORTS = {
    "random": (
        "the labelled rows are a random sample, so every figure here (and the PPI interval) "
        "estimates the whole score file"
    ),
    "all": "every scored row was offered in file order, so the figures describe the whole file",
    "stratified": (
        "the labelled rows were stratified by the judge's value: the reliability diagram and "
        "per-bin rates are sound, but accuracy, κ, AUC and the mean label over-weight the "
        "value ranges with few rows and do not estimate the whole file (nor does PPI)"
    ),
    "uncertain": (
        "the labelled rows were those nearest the threshold: good for finding disagreements "
        "and for fitting, but every agreement figure here is biased low and estimates nothing "
        "about the whole file (nor does PPI)"
    ),
}
"""Per sampling strategy of ``rag-judge label``: which figures it supports."""


def label_file_sampling(labels: str | os.PathLike[str]) -> Sampling | None:
    """How a ``rag-judge label`` file's rows were chosen; None for a plain label file."""
    from rag_judge.data.readers import read_jsonl

    if not is_label_log(record for _, record in read_jsonl(labels)):
        return None
    return read_label_log(labels).sampling


def sampling_note(labels: str | os.PathLike[str]) -> str | None:
    """What the label file's sampling supports, when it is a ``rag-judge label`` file."""
    sampling = label_file_sampling(labels)
    if sampling is None:
        return None
    says = SAMPLING_SUPPORTS.get(sampling.strategy, f"sampled by {sampling.strategy!r}")
    size = "every row" if sampling.sample is None else f"a sample of {sampling.sample}"
    return (
        f"Labels from rag-judge label ({sampling.strategy}, {size} of {sampling.population} "
        f"rows): {says}."
    )


def parse_scale(text: str) -> tuple[int, int]:
    """``"1-5"`` → ``(1, 5)``.

    Raises:
        InputError: Not two integers ``LOW-HIGH`` with LOW < HIGH.
    """
    match = re.fullmatch(r"\s*(-?\d+)\s*-\s*(-?\d+)\s*", text)
    if match is None or int(match.group(1)) >= int(match.group(2)):
        raise InputError(
            f"expected LOW-HIGH with LOW < HIGH, e.g. 1-5; got {text!r}", field="scale"
        )
    return int(match.group(1)), int(match.group(2))


def parse_mapping(text: str) -> dict[Any, float | None]:
    """A JSON object of raw label → number or null, e.g. ``{"yes": 1, "no": 0, "n/a": null}``.

    Raises:
        InputError: Not a JSON object of numbers and nulls.
    """
    try:
        value = json_text.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}", field="mapping") from None
    if not isinstance(value, dict) or not all(
        v is None or (isinstance(v, int | float) and not isinstance(v, bool))
        for v in value.values()
    ):
        raise InputError(
            "expected a JSON object of label → number or null, e.g. "
            '{"attributable": 1, "not attributable": 0, "generic": null}',
            field="mapping",
        )
    return {k: None if v is None else float(v) for k, v in value.items()}


def read_row_details(path: str | os.PathLike[str], metric: str) -> dict[str, RowDetail]:
    """Question, answer, status and claims (verdicts, reasons) per row id, from a score file.

    Raises:
        InputError: If the file is missing or a line is not a JSON object.
    """
    return row_details_from_records((record for _, record in read_score_rows(path)), metric)


def row_details_from_records(
    records: Iterable[Mapping[str, Any]], metric: str
) -> dict[str, RowDetail]:
    """Like :func:`read_row_details`, for records in memory (``EvaluationResult.to_records()``).

    Lenient: a field that is missing or of the wrong type shows as empty, because the scores
    themselves are checked by :func:`~rag_judge.calibration.read_judge_scores`.
    """
    return {
        row.id: RowDetail(
            id=row.id,
            question=row.question,
            answer=row.answer,
            status=row.status,
            error=row.error,
            claims=tuple(
                ClaimDetail(
                    claim=c.claim, verdict=c.verdict, reason=c.reason, probability=c.probability
                )
                for c in row.claims
            ),
        )
        for row in shown_rows(records, metric)
    }


def _with_note(report: CalibrationReport, note: str) -> CalibrationReport:
    return replace(report, notes=(*report.notes, note))
