"""``rag-judge score``: the LLM judges on rows of your own."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.cli.common import (
    NOTHING_JUDGED,
    echo_cost,
    friendly_errors,
    make_console,
    metric_names,
    nothing_judged,
)
from rag_judge.cli.few_shot import few_shot_option, read_few_shot
from rag_judge.cli.gating import finish_gate
from rag_judge.cli.mlflow_logging import check_mlflow, log_to_mlflow
from rag_judge.cli.options import (
    BASE_URL_HELP,
    CONCURRENCY_HELP,
    call_options,
    gate_options,
    json_mode_option,
    judge_mode_options,
    limit_option,
    metrics_option,
    mlflow_option,
    model_options,
    no_cache_option,
    output_option,
    scale_out_options,
)
from rag_judge.cli.profile_option import calibration_option, checked_profile
from rag_judge.cli.records import GateArgs, JudgeArgs, ModelArgs, ScaleOutArgs, gather
from rag_judge.cli.scale_out import StepEvents, echo_stages, executor_for
from rag_judge.report.tables import judge_summary_table, to_rich

if TYPE_CHECKING:
    from rag_judge.calibration.profile import CalibrationProfile
    from rag_judge.cli.gating import ScoreGate
    from rag_judge.core.types import RagSample
    from rag_judge.integrations.tracking_store import TrackedRun
    from rag_judge.jobs.score.job import ScoreRun
    from rag_judge.runtime.executors.on_ray import RayTarget
    from rag_judge.runtime.settings import Settings


@dataclass(frozen=True)
class ScoreArgs:
    """What ``score`` was asked, gathered from click's parameters."""

    input_path: Path
    output: Path
    metrics: str
    limit: int | None
    language: str | None
    no_cache: bool
    repeats: int
    baseline: Path | None
    calibration: Path | None
    few_shot: Path | None
    mlflow: str | None
    model: ModelArgs
    judging: JudgeArgs
    scale: ScaleOutArgs
    gate: GateArgs

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> ScoreArgs:
        return gather(
            cls,
            params,
            model=ModelArgs.from_params(params),
            judging=JudgeArgs.from_params(params),
            scale=ScaleOutArgs.from_params(params),
            gate=GateArgs.from_params(params),
        )


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False, path_type=Path))
@output_option(
    "Where to write one JSON line per row with every judge's result.", file=True, required=True
)
@metrics_option
@model_options(
    model="Judge provider/model (default: settings, then local).",
    judge="Same as --model (the name the sweep and settings use).",
    embeddings="Embedder for answer relevancy (default: settings).",
    base_url=BASE_URL_HELP,
    concurrency=CONCURRENCY_HELP,
    threads="CPU threads of a local/ model (default: every core; 1 per Ray worker on one machine).",
)
@limit_option("Judge only the first N rows.")
@click.option("--language", help="Prompt language for every row (default: detected).")
@no_cache_option()
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Judge every row N times (sampled, one seed each) to measure the judge's own noise: "
    "the summary shows its spread and two-level CIs.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A previous score file to compare with (for --fail-if-worse).",
)
@calibration_option
@few_shot_option
@gate_options
@scale_out_options("rows")
@call_options()
@judge_mode_options
@json_mode_option
@mlflow_option
@friendly_errors
def score(**params: Any) -> None:
    """Judge the rows of INPUT (JSONL, JSON, CSV, TSV or Parquet) and write OUTPUT.jsonl.

    Columns may use ragas' names (user_input, retrieved_contexts, response, reference) or
    ours (question, contexts, answer, reference). Re-running is free: finished calls come
    from the cache, so an interrupted run resumes where it stopped; meanwhile OUTPUT.partial
    holds the rows it finished.
    """
    from rag_judge.runtime.executors.batched import state_path_for

    options = ScoreArgs.from_params(params)
    settings, names, target, gate = _checked(options)
    few_shot = read_few_shot(options.few_shot)
    profile = checked_profile(options.calibration, names, settings, options.judging.mode, few_shot)
    samples = _samples(options)
    run = _run_score(options, samples, names, settings, target, profile)
    result = run.result
    if options.scale.batch:
        echo_stages(run.stages, state_path_for(options.output))
    header, rows = judge_summary_table(result.summary())
    title = f"{len(result)} rows judged by {result.model}; results in {options.output}"
    make_console().print(to_rich(header, rows, title=title))
    echo_cost(result.ledger)
    log_to_mlflow(options.mlflow, lambda: _tracked(options, run), options.output.parent)
    if (failure := nothing_judged(result)) is not None:
        click.echo(f"error: {failure}", err=True)
        sys.exit(NOTHING_JUDGED)
    if gate.asked:
        finish_gate(gate.checks(result.to_records(), str(options.output)), options.gate.junit)


def _checked(options: ScoreArgs) -> tuple[Settings, list[str], RayTarget | None, ScoreGate]:
    """Every input error before the first model call: settings, judges, scale-out, gate, and
    the files to write (none of them one that is read)."""
    from rag_judge.cli.gating import ScoreGate
    from rag_judge.jobs.score.partial import partial_path
    from rag_judge.runtime.executors.batched import state_path_for
    from rag_judge.runtime.outputs import (
        check_distinct,
        check_jsonl_output,
        check_output_file,
        check_output_folder,
    )

    settings = options.model.load()
    names = metric_names(options.metrics)
    target = options.scale.target(options.no_cache, settings)
    gate = ScoreGate.check(names, options.gate, options.baseline)
    output, junit = options.output, options.gate.junit
    check_jsonl_output(output)
    check_output_file(output, inputs=[options.input_path])
    if junit is not None:
        check_output_file(junit)
    check_distinct(
        {"INPUT": options.input_path, "--baseline": options.baseline},
        {"-o": output, "--junit": junit, "the partial results": partial_path(output),
         "the batch ids": state_path_for(output)},
    )  # fmt: skip
    if not options.no_cache:
        check_output_folder(settings.cache_dir, what="cache directory")
    check_mlflow(options.mlflow)
    return settings, names, target, gate


def _samples(options: ScoreArgs) -> list[RagSample]:
    """The rows to judge; a language without prompts of its own is said, not an error."""
    from rag_judge.data.samples import load_samples
    from rag_judge.prompts.templates import prompt_languages

    samples = load_samples(options.input_path, limit=options.limit)
    language = options.language
    if language is not None and language not in (have := prompt_languages()):
        click.echo(
            f"note: no prompts in {language!r} (there are: {', '.join(have)}); the English "
            "prompts are used, and each result records prompt_language=en",
            err=True,
        )
    return samples


def _tracked(options: ScoreArgs, run: ScoreRun) -> TrackedRun:
    """The score run as ``--mlflow`` logs it: each judge's mean and CI, the score file."""
    from rag_judge.integrations.logged_runs import score_run

    return score_run(
        run.result,
        options.output,
        input_path=options.input_path,
        language=options.language,
        repeats=options.repeats,
        mode=options.judging.mode,
    )


def _run_score(
    options: ScoreArgs,
    samples: list[RagSample],
    names: list[str],
    settings: Settings,
    target: RayTarget | None,
    profile: tuple[CalibrationProfile, str] | None,
) -> ScoreRun:
    """The judging job, under a progress bar, each finished row kept in OUTPUT.partial; with a
    calibration profile, each row's calibrated value is added before the file is written."""
    import asyncio

    from rag_judge.cli.progress import progress_step
    from rag_judge.jobs.score.job import score_job
    from rag_judge.jobs.score.options import ScoreOptions
    from rag_judge.jobs.score.partial import PartialResults
    from rag_judge.runtime.executors.batched import state_path_for
    from rag_judge.runtime.session import open_session

    judged = ScoreOptions(
        metrics=tuple(names),
        language=options.language,
        mode=options.judging.mode,
        reasons=options.judging.reasons,
        repeats=options.repeats,
        few_shot=read_few_shot(options.few_shot),
    )
    executor = executor_for(target, options.scale.batch, state_path_for(options.output))
    session = open_session(settings, cache=not options.no_cache)
    total = len(samples) * options.repeats
    with PartialResults(options.output) as partial, progress_step("judging", total=total) as step:
        events = StepEvents(step, on_ray=target is not None, each=partial.add)
        run = asyncio.run(score_job(samples, session, judged, executor=executor, events=events))
        if profile is not None:
            from rag_judge.jobs.calibrate.fit_profile import apply_profile

            run = replace(run, result=apply_profile(run.result, *profile))
        run.result.write_jsonl(options.output)
    return run
