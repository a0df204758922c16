"""What a sweep, a score run and a calibration log to MLflow (:class:`TrackedRun` records).

A sweep logs its parameters (eval set, ks, retriever, models, judges, judge mode, prompt
versions, objective, margin), each measure's mean and CI bounds per k as separate metrics with
step = k (the numbers of ``summary.csv``: the same bootstrap, the same seed), the decision's
per-k figures (objective, difference to the best of the others with its bounds, cost), the
decision itself as parameters and tags, and its files as artifacts. A score run logs each
judge's mean and CI; a calibration each figure and its CI.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_judge.calibration.report_types import CalibrationReport
from rag_judge.core.redact import redact_url
from rag_judge.integrations.tracking_store import Metric, TrackedRun
from rag_judge.jobs.grid.result import GridResult
from rag_judge.jobs.score.result import EvaluationResult
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.result import SweepResult

EXPERIMENTS = {
    "sweep": "rag-judge sweep",
    "score": "rag-judge score",
    "calibrate": "rag-judge calibrate",
}
"""The experiment each command logs to (runs of one kind side by side)."""
TAG = "rag_judge"
"""Prefix of the tags rag_judge sets (``rag_judge.command``, ``rag_judge.decision``)."""
NOTE = "mlflow.note.content"
"""The tag MLflow shows as a run's description."""


def sweep_run(
    result: SweepResult,
    artifacts: Sequence[Path],
    *,
    eval_set: str,
    options: SweepOptions | None = None,
    title: str = "",
) -> TrackedRun:
    """A sweep as MLflow sees it; ``artifacts`` are the files its report wrote, ``options``
    the job's options when known (the retriever, the limit ...)."""
    decision = result.decision
    found = {} if decision is None else decision.to_json()
    params = {
        "eval_set": eval_set,
        "ks": ",".join(map(str, result.ks)),
        "metrics": ",".join(result.metrics),
        "skipped": ",".join(result.skipped) or "none",
        "model": result.model,
        "generator": result.generator or result.model,
        "judge_mode": result.judge_mode or "unknown",
        "objective": str(result.objective),
        **({} if options is None else _option_params(options)),
        **_prompts(r for by_judge in result.judgements.values() for r in by_judge.values()),
        **{f"decision.{k}": _text(found.get(k)) for k in _DECISION_PARAMS},
    }
    rows = [{str(k): v for k, v in row.items()} for row in result.summary().to_dict("records")]
    metrics = [*_summary_metrics(rows, by_k=True), *_decision_metrics(found)]
    tags = {f"{TAG}.command": "sweep"}
    if decision is not None:
        tags |= {f"{TAG}.decision": decision.headline, NOTE: decision.sentence}
    name = title or f"{eval_set} k-sweep"
    return TrackedRun(EXPERIMENTS["sweep"], name, params, tags, metrics, tuple(artifacts))


def grid_run(
    result: GridResult,
    artifacts: Sequence[Path],
    *,
    eval_set: str,
    options: SweepOptions,
    title: str = "",
) -> TrackedRun:
    """A configuration sweep as one MLflow run: each configuration's figures under its own name
    (``answer_f1.retriever_dense``, step k), the decision's per arm, the recommended
    configuration and k as parameters; ``artifacts`` hold the per-question table."""
    decision = result.decision
    found = {} if decision is None else decision.to_json()
    params = {
        "eval_set": eval_set,
        "grid": str(result.grid),
        "configurations": str(len(result.configurations)),
        "ks": ",".join(map(str, result.ks)),
        **_option_params(options),
        **{f"decision.{k}": _text(found.get(k)) for k in _GRID_DECISION_PARAMS},
    }
    rows = [
        {**{str(k): v for k, v in row.items()}, "metric": f"{row['metric']}.{row['configuration']}"}
        for row in result.summary().to_dict("records")
    ]
    metrics = list(_summary_metrics(rows, by_k=True))
    for entry in found.get("per_k", ()):
        suffix = f".{entry['configuration']}"
        for key, value in (
            ("decision.objective", entry["mean"]),
            ("decision.regret_bound", entry["regret_bound"]),
            ("decision.cost", entry["cost"]),
        ):
            if (number := _number(value)) is not None:
                metrics.append(Metric(key + suffix, number, int(entry["k"])))
    tags = {f"{TAG}.command": "sweep --grid"}
    if decision is not None:
        tags |= {f"{TAG}.decision": decision.headline, NOTE: decision.sentence}
    name = title or f"{eval_set} configuration sweep"
    return TrackedRun(EXPERIMENTS["sweep"], name, params, tags, metrics, tuple(artifacts))


_GRID_DECISION_PARAMS = (
    "objective",
    "recommended_configuration",
    "recommended_k",
    "margin",
    "confidence",
    "n_questions",
)


def _option_params(options: SweepOptions) -> dict[str, str]:
    """What the job was asked beyond what its result records."""
    return {
        "retriever": options.retriever if options.rag is None else "your RAG",
        "rerank": options.rerank or "none",
        "rag": _rag_param(options.rag),
        "limit": str(options.limit or "all"),
        "until_decided": str(options.until_decided).lower(),
        "calibration": "none" if options.calibration is None else options.calibration.name,
    }


def _rag_param(rag: str | object | None) -> str:
    """The RAG under test as a parameter: its spec (a URL without its secrets), or the class of
    the object given from Python (a LangChain retriever, a LlamaIndex query engine ...)."""
    if rag is None:
        return "none"
    if isinstance(rag, str):
        return redact_url(rag)
    kind = type(rag)
    return f"{kind.__module__}.{kind.__qualname__}"


_DECISION_PARAMS = (
    "objective",
    "recommended_k",
    "undecided_between",
    "reference_k",
    "margin",
    "confidence",
    "n_questions",
)


def score_run(
    result: EvaluationResult,
    output: Path,
    *,
    input_path: Path,
    language: str | None = None,
    repeats: int = 1,
    mode: str | None = None,
) -> TrackedRun:
    """A score run as MLflow sees it: each judge's mean and CI; the score file as artifact."""
    modes = sorted({s.judge_mode for s in result.samples if s.judge_mode})
    params = {
        "input": input_path.name,
        "rows": str(len(result)),
        "metrics": ",".join(result.metrics),
        "model": result.model,
        "judge_mode": ",".join(modes) or mode or "unknown",
        "language": language or "detected",
        "repeats": str(repeats),
        **_prompts(r for s in result.samples for r in s.results.values()),
    }
    rows = [
        {"metric": s.metric, "mean": s.mean, "ci_low": s.ci_low, "ci_high": s.ci_high,
         "n_scored": s.n_scored}
        for s in result.summary()
    ]  # fmt: skip
    metrics = list(_summary_metrics(rows, by_k=False))
    tags = {f"{TAG}.command": "score"}
    name = f"{input_path.name} judged by {result.model}"
    return TrackedRun(EXPERIMENTS["score"], name, params, tags, metrics, (output,))


def calibration_run(report: CalibrationReport, artifacts: Sequence[Path]) -> TrackedRun:
    """A calibration as MLflow sees it: every figure with its CI; the report's files."""
    params = {
        "metric": report.metric,
        "kind": report.kind,
        "level": report.level,
        "scores": Path(report.scores_source).name,
        "labels": Path(report.labels_source).name,
        "n": str(report.n),
        "threshold": "none" if report.threshold is None else f"{report.threshold.threshold:g}",
        "confidence": str(report.confidence),
        "resamples": str(report.n_resamples),
        "seed": str(report.seed),
    }
    rows = [
        {"metric": e.name, "mean": e.estimate, "ci_low": e.low, "ci_high": e.high, "n_scored": e.n}
        for e in report.estimates
    ]
    tags = {f"{TAG}.command": "calibrate"}
    name = f"{report.metric} vs {report.kind} labels"
    metrics = list(_summary_metrics(rows, by_k=False))
    return TrackedRun(EXPERIMENTS["calibrate"], name, params, tags, metrics, tuple(artifacts))


def _summary_metrics(rows: Iterable[Mapping[str, Any]], *, by_k: bool) -> Iterable[Metric]:
    """Per row (a metric, at a k when ``by_k``): the mean under the metric's name, then
    ``.ci_low``, ``.ci_high`` and ``.n_scored``; missing values are left out, never NaN."""
    for row in rows:
        step = int(row["k"]) if by_k else 0
        for field, suffix in (("mean", ""), ("ci_low", ".ci_low"), ("ci_high", ".ci_high"),
                              ("n_scored", ".n_scored")):  # fmt: skip
            if (value := _number(row.get(field))) is not None:
                yield Metric(f"{row['metric']}{suffix}", value, step)


def _decision_metrics(found: Mapping[str, Any]) -> Iterable[Metric]:
    """The decision's per-k figures (step = k) and the recommended k (no step)."""
    for entry in found.get("per_k", ()):
        k, difference = int(entry["k"]), entry["difference_to_best_other"]
        for key, value in (
            ("decision.objective", entry["mean"]),
            ("decision.difference", difference["estimate"]),
            ("decision.difference.low", difference["low"]),
            ("decision.difference.high", difference["high"]),
            ("decision.regret_bound", entry["regret_bound"]),
            ("decision.cost", entry["cost"]),
        ):
            if (number := _number(value)) is not None:
                yield Metric(key, number, k)
    if (recommended := _number(found.get("recommended_k"))) is not None:
        yield Metric("decision.recommended_k", recommended)


def _prompts(results: Iterable[Any]) -> dict[str, str]:
    """``prompt.<id>`` = ``version#sha256`` for every prompt the judges used."""
    refs = sorted({ref for result in results for ref in result.prompts})
    return {f"prompt.{ref.split('@', 1)[0]}": ref.split("@", 1)[-1] for ref in refs}


def _number(value: Any) -> float | None:
    """A finite float, or None (pandas' NA, NaN and None alike)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _text(value: Any) -> str:
    """A parameter's text: lists joined by commas, None as ``none``."""
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value)) or "none"
    return str(value)
