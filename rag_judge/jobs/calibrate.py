"""The two ways to run a calibration: from files, or by judging a bundled calibration set.

:func:`calibrate_files` reads a score file (``rag-judge score`` output), a label file and
optionally more unlabelled scores, and calls :func:`~rag_judge.calibration.report.calibrate`.

:func:`run_calibration` (:func:`arun_calibration` in a notebook) loads the set (``wice_dev``,
``begin_dev``, ``alce_utility`` or a set folder), judges its samples with
:func:`rag_judge.jobs.score.run.aevaluate` (cached: a re-run makes no model call), writes
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
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rag_judge.backends.protocol import EmbeddingBackend
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.calibration.judge_scores import read_judge_scores
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
from rag_judge.data.readers import read_jsonl
from rag_judge.jobs.score.result import EvaluationResult, SampleResult
from rag_judge.jobs.score.run import aevaluate
from rag_judge.jobs.score.scaled import ScaleOut, aevaluate_scaled
from rag_judge.judges import DEFAULT_CALIBRATED, JUDGES
from rag_judge.judges.work import JudgeMode
from rag_judge.runtime.executors.batched import Stage
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
    """The batches the judging waited on (``scale.batch``; none otherwise)."""


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
    scale: ScaleOut | None = None,
) -> CalibrationRun:
    """Judge a calibration set's samples, write ``scores.jsonl``, and calibrate the judge.

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
        support_probability: Ask P(supported) per claim (default: on for ``local/`` models).
        mode: ``score`` or ``generate`` (default: by backend; see :func:`~rag_judge.evaluate`).
        reasons: ``score`` mode: a one-line reason for each claim that ends unsupported.
        threshold: Binary sets: the judge says supported iff value >= this (default 0.5).
        select: Binary sets: choose the threshold on a dev split instead.
        beta: β of the unsupported class's F-beta.
        confidence: Nominal coverage of the intervals.
        n_resamples: Bootstrap resamples.
        seed: Seed of the bootstrap and the dev split.
        scale: Judge past this process: over Ray, or through the Batch API (its ids kept
            beside ``scores.jsonl``); not with a ready ``client`` or ``embedder``.

    Raises:
        InputError: An unknown set or metric, nominal labels, or anything :func:`calibrate`
            refuses (e.g. no labelled sample got a score).
    """
    chosen_set = (
        name_or_path
        if isinstance(name_or_path, CalibrationSet)
        else load_calibration_set(name_or_path)
    )
    if limit is not None:
        chosen_set = chosen_set.limit(limit)
    name = calibrated_metric(chosen_set, metric)
    named = set_metrics(chosen_set)
    labels = set_labels(chosen_set)
    if on_start is not None:
        on_start(len(chosen_set.samples))
    judging: dict[str, Any] = {
        "support_probability": support_probability,
        "mode": mode,
        "reasons": reasons,
    }
    stages: tuple[Stage, ...] = ()
    if scale is not None and (scale.batch or scale.ray is not None):
        if client is not None or embedder is not None:
            raise InputError("a ready client or embedder runs in this process only", field="scale")
        if not isinstance(cache, bool):
            raise InputError("over Ray or a Batch API, the settings' cache is used", field="cache")
        result, stages = await aevaluate_scaled(
            list(chosen_set.samples),
            [name],
            settings=settings or load_settings({"model": model}),
            output=Path(out_dir) / SCORES_FILE,
            scale=scale,
            cache=cache,
            progress=progress,
            **judging,
        )
    else:
        result = await aevaluate(
            list(chosen_set.samples),
            [name],
            model=model,
            settings=settings,
            cache=cache,
            client=client,
            embedder=embedder,
            progress=progress,
            **judging,
        )
    scores_path = result.write_jsonl(Path(out_dir) / SCORES_FILE)
    report = calibrate(
        read_judge_scores(scores_path, name),
        labels,
        threshold=threshold,
        select=select,
        beta=beta,
        scale=set_scale(chosen_set),
        details=read_row_details(scores_path, name),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
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
    *,
    metric: str = DEFAULT_CALIBRATED,
    kind: CalibrationKind = "binary",
    level: LabelLevel = "sample",
    label_field: str = "label",
    mapping: Mapping[Any, float | None] | None = None,
    unlabelled: str | os.PathLike[str] | None = None,
    scale: tuple[int, int] | None = None,
    threshold: float | None = None,
    select: Objective | None = None,
    beta: float = 1.0,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> CalibrationReport:
    """Calibrate ``metric`` in a score file against a label file (formats in
    :mod:`rag_judge.calibration.labels`); the judge's claims and reasons come along for the
    worst disagreements.

    Raises:
        InputError: A file that cannot be read (naming file:line and field), a metric the
            scores do not hold (the message lists those they do), pairwise labels per claim,
            or anything :func:`calibrate` refuses (e.g. no id in common).
    """
    judge = read_judge_scores(scores, metric)
    human: HumanLabels | tuple[PairwisePreference, ...]
    if kind == "pairwise":
        if level != "sample":
            raise InputError("pairwise preferences compare whole rows, not claims", field="level")
        human = read_pairwise_labels(labels)
    else:
        human = read_human_labels(
            labels, kind, mapping=mapping, level=level, label_field=label_field
        )
    return calibrate(
        judge,
        human,
        threshold=threshold,
        select=select,
        beta=beta,
        scale=scale,
        unlabelled=None if unlabelled is None else read_judge_scores(unlabelled, metric),
        details=read_row_details(scores, metric),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
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
    return row_details_from_records((record for _, record in read_jsonl(path)), metric)


def row_details_from_records(
    records: Iterable[Mapping[str, Any]], metric: str
) -> dict[str, RowDetail]:
    """Like :func:`read_row_details`, for records in memory (``EvaluationResult.to_records()``).

    Lenient: a field that is missing or of the wrong type shows as empty, because the scores
    themselves are checked by :func:`~rag_judge.calibration.read_judge_scores`.
    """
    found: dict[str, RowDetail] = {}
    for record in records:
        results = record.get("results")
        result = results.get(metric) if isinstance(results, dict) else None
        if record.get("id") is None or not isinstance(result, dict):
            continue
        claims = result.get("claims")
        found[str(record["id"])] = RowDetail(
            id=str(record["id"]),
            question=_text(record.get("question")),
            answer=_text(record.get("answer")),
            status=_text(result.get("status")),
            error=_text(result.get("error")),
            claims=tuple(
                ClaimDetail(
                    claim=_text(c.get("claim")),
                    verdict=c.get("verdict") if isinstance(c.get("verdict"), str) else None,
                    reason=_text(c.get("reason")),
                    probability=_probability(c.get("support_probability")),
                )
                for c in (claims if isinstance(claims, list) else [])
                if isinstance(c, dict)
            ),
        )
    return found


def _with_note(report: CalibrationReport, note: str) -> CalibrationReport:
    return replace(report, notes=(*report.notes, note))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _probability(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None
