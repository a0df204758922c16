"""``rag-judge calibrate``: how far a judge agrees with human labels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.cli.common import echo_cost, friendly_errors, make_console
from rag_judge.cli.mlflow_logging import check_mlflow, log_to_mlflow
from rag_judge.cli.options import (
    bootstrap_options,
    call_options,
    json_mode_option,
    judge_mode_options,
    limit_option,
    mlflow_option,
    model_options,
    no_cache_option,
    scale_out_options,
)
from rag_judge.cli.records import JudgeArgs, ModelArgs, ScaleOutArgs, gather
from rag_judge.cli.scale_out import StepEvents, echo_stages, executor_for
from rag_judge.judges import DEFAULT_CALIBRATED
from rag_judge.report.tables import to_rich

if TYPE_CHECKING:
    from rag_judge.calibration.labels import LabelLevel
    from rag_judge.calibration.report_types import CalibrationKind, CalibrationReport
    from rag_judge.data.calibration_sets import CalibrationSet
    from rag_judge.integrations.tracking_store import TrackedRun
    from rag_judge.jobs.calibrate.job import CalibrationRun, Figures
    from rag_judge.runtime.executors.on_ray import RayTarget
    from rag_judge.runtime.settings import Settings


@dataclass(frozen=True)
class CalibrateArgs:
    """What ``calibrate`` was asked, gathered from click's parameters."""

    scores: Path | None
    labels: tuple[Path, ...]
    run_set: str | None
    metric: str | None
    kind: CalibrationKind | None
    level: LabelLevel
    label_field: str
    mapping: str | None
    scale: str | None
    threshold: float | None
    select: str | None
    beta: float
    unlabelled: Path | None
    fit: bool
    silver: Path | None
    folds: int
    output: Path | None
    limit: int | None
    no_cache: bool
    resamples: int
    seed: int
    mlflow: str | None
    model: ModelArgs
    judging: JudgeArgs
    scale_out: ScaleOutArgs

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> CalibrateArgs:
        return gather(
            cls,
            params,
            model=ModelArgs.from_params(params),
            judging=JudgeArgs.from_params(params),
            scale_out=ScaleOutArgs.from_params(params),
        )


@click.command("calibrate")
@click.option(
    "--scores",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Judge output of `rag-judge score` (JSONL).",
)
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, path_type=Path),
    multiple=True,
    help='Human labels (JSONL): {"id", "label"} per row, {"id", "claim", "label"} with '
    '--level claim, {"id_a", "id_b", "preferred": "a"|"b"|"tie"} with --kind pairwise, or a '
    "`rag-judge label` file. Twice: a second annotator (kappa between the people too).",
)
@click.option(
    "--run",
    "run_set",
    metavar="EVAL_SET",
    help="Instead of --scores/--labels: judge a bundled calibration set (begin_dev, wice_dev, "
    "alce_utility, cmrc_short_answers) and calibrate against its labels.",
)
@click.option(
    "--metric",
    help=f"Judge metric to calibrate (default: {DEFAULT_CALIBRATED}; with --run, the set's own).",
)
@click.option(
    "--kind",
    type=click.Choice(["binary", "ordinal", "continuous", "pairwise"]),
    help="What the labels are (default: binary; with --run, from the set's manifest).",
)
@click.option(
    "--level",
    type=click.Choice(["sample", "claim"]),
    default="sample",
    show_default=True,
    help="A label per row, or per claim of the judge's output.",
)
@click.option("--label-field", default="label", show_default=True, help="The label's field.")
@click.option(
    "--mapping",
    metavar="JSON",
    help='Raw label -> number, null to exclude, e.g. \'{"yes": 1, "no": 0, "generic": null}\'.',
)
@click.option(
    "--scale",
    metavar="LOW-HIGH",
    help="Ordinal scale the judge's [0,1] value is mapped onto (default: the labels' range).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    help="Binary: supported iff value >= X, a score in [0, 1] (default 0.5).",
)
@click.option(
    "--select",
    type=click.Choice(["balanced_accuracy", "f1", "f_beta"]),
    help="Binary: choose the threshold on a dev half instead; figures on the held-out half.",
)
@click.option(
    "--beta",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="Beta of the unsupported class's F-beta (and of --select f_beta).",
)
@click.option(
    "--unlabelled",
    type=click.Path(dir_okay=False, path_type=Path),
    help="More scores without labels: adds a PPI estimate of the mean human label.",
)
@click.option(
    "--fit",
    is_flag=True,
    help="Learn from the labels: a calibrated probability and a threshold, 5-fold "
    "cross-validated before/after; -o PROFILE.json for score/sweep --calibration.",
)
@click.option(
    "--silver",
    type=click.Path(dir_okay=False, path_type=Path),
    help="--fit on a stronger judge's score file of the same rows instead of human labels "
    "(its verdicts at 0.5; recorded as silver in the profile).",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="--fit: cross-validation folds.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write metrics.csv, summary.md, reliability.png, disagreements.jsonl and report.html "
    "here (with --run also scores.jsonl; default calibration_EVAL_SET); with --fit, the "
    "profile (.json).",
)
@limit_option("--run: judge N samples, balanced over labels.")
@model_options(
    model="--run: judge provider/model (default: settings, then local).",
    judge="--run: same as --model (the name the sweep and settings use).",
    base_url="--run: OpenAI-compatible server for openai/ and litellm/.",
    concurrency="--run: model calls in flight.",
)
@no_cache_option("--run: do not read or write the response cache.")
@bootstrap_options("Seed of the bootstrap and the dev split.")
@scale_out_options("--run's rows")
@call_options("--run: ")
@judge_mode_options
@json_mode_option
@mlflow_option
@friendly_errors
def calibrate_command(**params: Any) -> None:
    """Measure how far a judge agrees with human labels, every figure with a bootstrap CI.

    Give --scores (from `rag-judge score`) and --labels, or --run a bundled calibration set:
    its samples are judged (cached: re-runs are free), scores.jsonl is written to the output
    folder, and the judge is calibrated against the set's labels. Binary labels get accuracy,
    balanced accuracy, precision/recall/F1 of the unsupported class, kappa, alpha, AUC, Brier,
    ECE and correlations; ordinal ones weighted kappa, alpha and rank correlations. Prints the
    figures; -o also writes the report.
    """
    options = CalibrateArgs.from_params(params)
    if options.fit:
        if options.mlflow is not None:
            raise click.UsageError("--mlflow logs a calibration report, not a --fit profile")
        _fit(options)
        return
    if options.silver is not None:
        raise click.UsageError("--silver labels a fit: add --fit")
    figures = _figure_options(options)
    output: Path | None = options.output
    if options.run_set is not None:
        report, output = _calibrate_set(options, options.run_set, figures)
    else:
        report = _calibrate_files(options, figures)
    written = _print_report(report, output)
    log_to_mlflow(options.mlflow, lambda: _tracked(report, written), output)


def _fit(options: CalibrateArgs) -> None:
    """``--fit``: learn a profile from --scores and --labels (or --silver)."""
    from rag_judge.cli.calibrate_fit import FitArgs, fit_from_files

    unused = {
        "--kind": options.kind not in (None, "binary"),
        "--level claim": options.level == "claim",
        "--threshold": options.threshold is not None,
        "--unlabelled": options.unlabelled is not None,
        "--mapping": options.mapping is not None,
        "--scale": options.scale is not None,
    }
    args = FitArgs(
        scores=options.scores, labels=options.labels, silver=options.silver,
        output=options.output, run_set=options.run_set, label_field=options.label_field,
        select=options.select, beta=options.beta, folds=options.folds, seed=options.seed,
        resamples=options.resamples, unused=unused,
    )  # fmt: skip
    fit_from_files(args, options.metric or DEFAULT_CALIBRATED)


def _figure_options(options: CalibrateArgs) -> Figures:
    """The job's options both modes share: the threshold or how it is chosen, the bootstrap."""
    threshold, select, beta = options.threshold, options.select, options.beta
    if threshold is not None and select is not None:
        raise click.UsageError("give --threshold or --select, not both")
    if select == "f1" and beta != 1.0:
        raise click.UsageError("--select f1 is F-beta with beta 1; use --select f_beta")
    from rag_judge.jobs.calibrate.job import Figures

    objective: Any = {"f1": "f_beta"}.get(select or "", select)
    return Figures(
        threshold=threshold,
        select=objective,
        beta=beta,
        n_resamples=options.resamples,
        seed=options.seed,
    )


def _calibrate_set(
    options: CalibrateArgs, run_set: str, figures: Figures
) -> tuple[CalibrationReport, Path]:
    """``--run EVAL_SET``: judge a bundled set, then calibrate against its labels."""
    from rag_judge.runtime.executors.batched import state_path_for

    _refuse_file_options(options)
    settings, target, loaded, out = _checked_set(options, run_set)
    run = _run_calibration(options, figures, settings, target, loaded, out)
    if options.scale_out.batch:
        echo_stages(run.stages, state_path_for(run.scores_path))
    click.echo(f"scores of {len(run.evaluation)} samples in {run.scores_path}", err=True)
    echo_cost(run.evaluation.ledger)
    return run.report, out


def _checked_set(
    options: CalibrateArgs, run_set: str
) -> tuple[Settings, RayTarget | None, CalibrationSet, Path]:
    """``--run``'s input errors before the progress bar; the set and the output folder."""
    from rag_judge.data.calibration_sets import load_calibration_set
    from rag_judge.jobs.calibrate import job as calibration_run
    from rag_judge.runtime.outputs import check_output_folder

    settings = options.model.load()
    target = options.scale_out.target(options.no_cache, settings)
    loaded = load_calibration_set(run_set)
    calibration_run.calibrated_metric(loaded, options.metric)
    out = options.output or Path(f"calibration_{Path(run_set).name}")
    check_output_folder(out)
    if not options.no_cache:
        check_output_folder(settings.cache_dir, what="cache directory")
    check_mlflow(options.mlflow)
    return settings, target, loaded, out


def _run_calibration(
    options: CalibrateArgs,
    figures: Figures,
    settings: Settings,
    target: RayTarget | None,
    loaded: CalibrationSet,
    out: Path,
) -> CalibrationRun:
    """The ``--run`` job, under a progress bar: judge the set, calibrate, write scores.jsonl."""
    import asyncio

    from rag_judge.cli.progress import progress_step
    from rag_judge.jobs.calibrate.job import SCORES_FILE, SetOptions, calibrate_set_job
    from rag_judge.runtime.executors.batched import state_path_for
    from rag_judge.runtime.session import open_session

    job = SetOptions(
        metric=options.metric,
        limit=options.limit,
        mode=options.judging.mode,
        reasons=options.judging.reasons,
        figures=figures,
    )
    session = open_session(settings, cache=not options.no_cache)
    state_path = state_path_for(out / SCORES_FILE)
    executor = executor_for(target, options.scale_out.batch, state_path)
    with progress_step("judging") as step:
        events = StepEvents(step, on_ray=target is not None)
        return asyncio.run(
            calibrate_set_job(loaded, out, session, job, executor=executor, events=events)
        )


def _calibrate_files(options: CalibrateArgs, figures: Figures) -> CalibrationReport:
    """``--scores`` and ``--labels``: calibrate files already judged (no model call)."""
    from rag_judge.jobs.calibrate import job as calibration_run

    if options.scores is None or not options.labels:
        raise click.UsageError("give --scores and --labels, or --run EVAL_SET")
    if len(options.labels) > 2:
        raise click.UsageError("--labels: one file, or two for two annotators")
    _refuse_run_options(options)
    if options.output is not None:
        from rag_judge.report.calibration_html import FILES
        from rag_judge.runtime.outputs import check_distinct, check_output_folder

        check_output_folder(options.output)
        check_distinct(
            {
                "--scores": options.scores,
                **{f"--labels #{i + 1}": path for i, path in enumerate(options.labels)},
                "--unlabelled": options.unlabelled,
            },
            {f"-o {name}": options.output / name for name in FILES},
        )
    check_mlflow(options.mlflow)
    mapping, scale = options.mapping, options.scale
    reading = calibration_run.LabelFile(
        metric=options.metric or DEFAULT_CALIBRATED,
        label_field=options.label_field,
        mapping=None if mapping is None else calibration_run.parse_mapping(mapping),
        unlabelled=options.unlabelled,
        scale=None if scale is None else calibration_run.parse_scale(scale),
        kind=options.kind or "binary",
        level=options.level,
        second=options.labels[1] if len(options.labels) > 1 else None,
    )
    return calibration_run.calibrate_files(options.scores, options.labels[0], reading, figures)


def _refuse_file_options(options: CalibrateArgs) -> None:
    """A usage error naming the first option given that ``--run`` takes from the set itself."""
    given: dict[str, object] = {
        "--scores": options.scores,
        "--labels": options.labels or None,
        "--kind": options.kind,
        "--unlabelled": options.unlabelled,
        "--mapping": options.mapping,
        "--scale": options.scale,
    }
    if extra := [name for name, value in given.items() if value is not None]:
        raise click.UsageError(f"--run takes the set's own scores and labels, not {extra[0]}")


def _refuse_run_options(options: CalibrateArgs) -> None:
    """A usage error naming the first option given that only ``--run`` reads."""
    settings = options.model.overrides
    used = {
        "--limit": options.limit,
        **{f"--{k.replace('_', '-')}": v for k, v in settings.items()},
    }
    switches = (
        ("--no-cache", options.no_cache),
        ("--no-reasons", not options.judging.reasons),
        ("--batch", options.scale_out.batch),
    )
    flags = [name for name, on in switches if on]
    if options.scale_out.executor != "local":
        flags.append("--executor")
    used["--judge-mode"] = options.judging.mode
    if extra := [name for name, value in used.items() if value is not None] + flags:
        raise click.UsageError(f"{extra[0]} applies to --run only")


def _tracked(report: CalibrationReport, written: tuple[Path, ...]) -> TrackedRun:
    """The calibration as ``--mlflow`` logs it: every figure with its CI, the report's files."""
    from rag_judge.integrations.logged_runs import calibration_run

    return calibration_run(report, written)


def _print_report(report: CalibrationReport, output: Path | None) -> tuple[Path, ...]:
    """The figures as a table and a summary; with an output folder, the report written there
    (its files returned)."""
    from rag_judge.report.calibration_html import (
        figure_table,
        summary_lines,
        write_calibration_report,
    )

    header, rows = figure_table(report)
    title = f"{report.metric} vs {report.kind} human labels: {report.n} compared"
    make_console().print(to_rich(header, rows, title=title))
    for line in summary_lines(report):
        click.echo(line)
    if output is None:
        return ()
    written = write_calibration_report(report, output)
    click.echo(f"report: {', '.join(str(p) for p in written.paths.values())}", err=True)
    return tuple(written.paths.values())
