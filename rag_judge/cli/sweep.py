"""``rag-judge sweep``: the k-sweep, its report, and the best k."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.cli.common import NOTHING_JUDGED, friendly_errors, metric_names
from rag_judge.cli.few_shot import few_shot_option, read_few_shot
from rag_judge.cli.mlflow_logging import check_mlflow, log_to_mlflow
from rag_judge.cli.options import (
    BASE_URL_HELP,
    CONCURRENCY_HELP,
    call_options,
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
from rag_judge.cli.profile_option import calibration_option
from rag_judge.cli.records import JudgeArgs, ModelArgs, ScaleOutArgs, gather
from rag_judge.cli.scale_out import StepEvents, echo_stages, executor_for
from rag_judge.jobs.sweep.decision.defaults import DEFAULT_CONFIDENCE, DEFAULT_MARGIN, DEFAULT_STEP
from rag_judge.judges import DEFAULT_OBJECTIVE, SPANS_OBJECTIVE

if TYPE_CHECKING:
    from rag_judge.data.eval_sets import EvalSet
    from rag_judge.integrations.tracking_store import TrackedRun
    from rag_judge.jobs.sweep.job import SweepRun
    from rag_judge.jobs.sweep.options import SweepOptions
    from rag_judge.runtime.executors.on_ray import RayTarget
    from rag_judge.runtime.settings import Settings


@dataclass(frozen=True)
class SweepArgs:
    """What ``sweep`` was asked, gathered from click's parameters."""

    eval_set: str
    output: Path
    ks: str
    retriever: str
    rerank: str | None
    rerank_depth: int
    chunk: str | None
    grid: tuple[str, ...]
    rag: str | None
    metrics: str
    limit: int | None
    objective: str | None
    margin: float
    confidence: float
    until_decided: bool
    dry_run: bool
    max_questions: int | None
    budget: str | None
    step: int
    embeddings: str | None
    support_probability: bool
    no_cache: bool
    few_shot: Path | None
    calibration: Path | None
    mlflow: str | None
    model: ModelArgs
    judging: JudgeArgs
    scale: ScaleOutArgs

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SweepArgs:
        # --embeddings goes to the job as its own option, not into the settings
        return gather(
            cls,
            params,
            model=ModelArgs.from_params(params, skip={"embeddings"}),
            judging=JudgeArgs.from_params(params),
            scale=ScaleOutArgs.from_params(params),
        )


@click.command()
@click.argument("eval_set", metavar="EVAL_SET")
@output_option(
    "Directory for per_question.parquet/.csv, summary.csv, sweep.png, report.html, summary.md.",
    required=True,
)
@click.option("--ks", default="1-10", show_default=True, help="Cutoffs: 1-10, 1,3,5 or 1-3,5.")
@click.option(
    "--retriever",
    type=click.Choice(["bm25", "dense", "hybrid"]),
    default="bm25",
    show_default=True,
    help="The retriever under test (dense and hybrid use the embedder).",
)
@click.option(
    "--rerank",
    metavar="llm|PATH",
    help="Rerank the retriever's top --rerank-depth by the model's P(yes) (llm) or by a "
    "sentence-transformers cross-encoder in a local directory.",
)
@click.option(
    "--rerank-depth",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Candidates the reranker re-scores per question.",
)
@click.option(
    "--chunk",
    metavar="SIZE[/OVERLAP]",
    help="Re-cut the set's documents into windows of whole sentences of at most SIZE "
    "characters, each starting OVERLAP sentences (default 1) before the previous one ended; "
    "passages keep their document's id. Default: the set's own chunking.",
)
@click.option(
    "--grid",
    metavar="AXIS=V1,V2",
    multiple=True,
    help="Sweep a grid of configurations, each at every k, and decide the configuration and k "
    "together (repeatable): retriever=bm25,dense,hybrid; rerank=none,llm,PATH; "
    "chunk=set,400/1,200/1; or rag=SPEC1,SPEC2 (your own RAGs). Writes grid.png and a "
    "per-question table with a configuration column.",
)
@click.option(
    "--rag",
    metavar="SPEC",
    help="Sweep your own RAG: module:attr (a function, a LangChain retriever or chain, a "
    "LlamaIndex retriever or query engine), a .jsonl of retrievals (and answers), or an "
    "http(s):// endpoint; --retriever, --rerank, --rerank-depth and --chunk do not apply "
    "(refused).",
)
@metrics_option
@limit_option("Sweep only the first N questions.")
@click.option(
    "--objective",
    help=f"What the decision maximises: a metric or a product such as {DEFAULT_OBJECTIVE}. "
    f"Default: {SPANS_OBJECTIVE} when the set's references are spans of its documents, else "
    f"{DEFAULT_OBJECTIVE}; a set that cannot give it falls back to an answer measure it has. "
    "A refusal scores 0 (1 on a question the set marks unanswerable).",
)
@click.option(
    "--margin",
    type=float,
    default=DEFAULT_MARGIN,
    show_default=True,
    help="Recommend the cheapest k whose objective is confirmed within this much of the best "
    "(0 <= margin < 1; checked with the other options).",
)
@click.option(
    "--confidence",
    type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
    default=DEFAULT_CONFIDENCE,
    show_default=True,
    help="Family-wise confidence of the decision's intervals (all ks compared at once).",
)
@click.option(
    "--until-decided",
    is_flag=True,
    help="Add questions in batches of --step, stop generating and judging the ks that are "
    "confidently out, and stop when the decision settles, --budget is spent or "
    "--max-questions are used.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (questions x ks, calls, tokens, minutes for the embedded model from "
    "this machine's measured speed, cost for a priced API model) and stop, before any model "
    "call; with --until-decided, its best and worst case.",
)
@click.option(
    "--max-questions",
    type=click.IntRange(min=1),
    help="--until-decided: the most questions to use (default: all, after --limit).",
)
@click.option(
    "--budget",
    metavar="30m|2h|200k-tokens",
    help="--until-decided: stop once this much wall time or these many tokens are spent "
    "(checked after each batch).",
)
@click.option(
    "--step",
    type=click.IntRange(min=1),
    default=DEFAULT_STEP,
    show_default=True,
    help="--until-decided: questions added between two looks.",
)
@model_options(
    model="Generator and judge provider/model (default: settings, then local).",
    generator="The model that answers, when it is not --model.",
    judge="The model that judges, when it is not --model (a model judging its own answers "
    "favours them: the report warns when they are one model).",
    embeddings="Embedder for answer relevancy and dense retrieval.",
    base_url=BASE_URL_HELP + " Generator, judge and embedder, unless one has its own.",
    generator_base_url="The generator's server, when it is not --base-url (say, your RAG's "
    "model on a vLLM server; without either, the provider's own, e.g. OPENAI_BASE_URL).",
    judge_base_url="The judge's server, when it is not --base-url.",
    concurrency=CONCURRENCY_HELP,
)
@click.option(
    "--support-probability",
    is_flag=True,
    help="Generate path: also ask P(supported) per claim (one more call per claim; a model "
    "that gives log-probabilities). The score path has it always: refused there.",
)
@no_cache_option()
@calibration_option
@few_shot_option
@scale_out_options("questions")
@call_options()
@judge_mode_options
@json_mode_option
@mlflow_option
@friendly_errors
def sweep(**params: Any) -> None:
    """Retrieve, answer and judge every question of EVAL_SET for each k, and decide k.

    EVAL_SET is a bundled set (cmrc2018_zh, cmrc2018_zh_chunked, squad2_en_chunked, cranfield) or
    a folder in the eval-set format.
    Per question, answers are generated in ascending k (the local model reuses its cached
    prompt prefix), then judged; context recall for every k comes from one pass over the top
    K. Interrupted? Run the same command again: finished calls come from the cache.
    The decision compares every k on the same questions (a refusal counts: 0, or 1 on a
    question the set marks unanswerable) and recommends the cheapest k within --margin of the
    best, or says which ks the data cannot yet separate (decision.json).
    """
    from rag_judge.jobs.sweep.options import STATE_FILE
    from rag_judge.report.sweep_report import write_sweep_report

    options = SweepArgs.from_params(params)
    settings, job, target, loaded = _checked(options)
    if job.grid is not None:
        _grid(options, settings, job, target, loaded)
        return
    if options.dry_run:
        _dry_run(options, settings, job, loaded)
        return
    run = _run_sweep(options, settings, job, target, loaded)
    result = run.result
    if options.scale.batch:
        echo_stages(run.stages, options.output / STATE_FILE)
    title = f"{loaded.name} k-sweep"
    report = write_sweep_report(result, options.output, title=title)
    click.echo(report.markdown_path.read_text(encoding="utf-8"))
    log_to_mlflow(
        options.mlflow, lambda: _tracked(loaded.name, job, run, report.paths), options.output
    )
    if (reason := result.nothing_judged()) is not None:
        click.echo(f"error: {reason}; the tables are written, but decide nothing", err=True)
        sys.exit(NOTHING_JUDGED)


def _checked(options: SweepArgs) -> tuple[Settings, SweepOptions, RayTarget | None, EvalSet]:
    """Every input error before the first model call and the progress bar: the settings, the
    job's options (cutoffs, objective and judges checked as it is built), the Ray cluster
    asked for, and the eval set loaded."""
    from rag_judge.core.errors import InputError
    from rag_judge.data.eval_sets import load_eval_set
    from rag_judge.jobs.sweep.options import STATE_FILE, SweepOptions
    from rag_judge.jobs.sweep.plan import check_objective_fits
    from rag_judge.judges.work import check_judge_options
    from rag_judge.report.grid_report import FILES as GRID_FILES
    from rag_judge.report.sweep_report import FILES as REPORT_FILES
    from rag_judge.runtime.outputs import check_distinct, check_output_folder

    settings, output, rag = options.model.load(), options.output, options.rag
    judging = options.judging
    given = {f.name: getattr(options, f.name) for f in fields(options)}
    job = SweepOptions.build(
        **{
            **{name: value for name, value in given.items() if name in SweepOptions.names()},
            "metrics": tuple(metric_names(options.metrics)),
            "mode": judging.mode,
            "reasons": judging.reasons,
            "few_shot": read_few_shot(options.few_shot),
            "grid": options.grid or settings.grid_axes or None,
        }
    )
    if job.until_decided and (options.scale.batch or options.scale.executor != "local"):
        raise InputError(
            "--until-decided runs in this process (each batch waits for the look before it): "
            "drop --executor and --batch",
            field="until_decided",
        )
    target = options.scale.target(options.no_cache, settings, generator=True)
    check_judge_options(job.judge, settings.judge_model)
    loaded = load_eval_set(options.eval_set)
    if job.objective is not None:
        check_objective_fits(loaded, job.objective.parts)
    check_output_folder(output)
    rag_file = Path(rag) if rag and not rag.startswith(("http://", "https://")) else None
    check_distinct(
        {"--rag": rag_file if rag_file is not None and rag_file.is_file() else None},
        {f"-o {name}": output / name for name in (*REPORT_FILES, *GRID_FILES, STATE_FILE)},
    )
    if not options.no_cache:
        check_output_folder(settings.cache_dir, what="cache directory")
    check_mlflow(options.mlflow)
    return settings, job, target, loaded


def _dry_run(options: SweepArgs, settings: Settings, job: SweepOptions, loaded: EvalSet) -> None:
    """Print the sweep's plan; no model call, nothing written."""
    import asyncio

    from rag_judge.jobs.sweep.dry_run import dry_run_job
    from rag_judge.runtime.session import open_session

    session = open_session(settings, cache=False, embeddings=options.embeddings)
    chosen = loaded if job.limit is None else loaded.limit(job.limit)
    found = asyncio.run(dry_run_job(chosen, session, job))
    click.echo("\n".join(found.lines()))


def _run_sweep(
    options: SweepArgs,
    settings: Settings,
    job: SweepOptions,
    target: RayTarget | None,
    loaded: EvalSet,
) -> SweepRun:
    """The sweep job, under a progress bar: over Ray, through a Batch API, or here."""
    import asyncio

    from rag_judge.cli.progress import progress_step
    from rag_judge.jobs.sweep.job import sweep_job
    from rag_judge.jobs.sweep.options import STATE_FILE
    from rag_judge.runtime.session import open_session

    session = open_session(settings, cache=not options.no_cache, embeddings=options.embeddings)
    executor = executor_for(target, options.scale.batch, options.output / STATE_FILE)
    # over Ray the set goes by name or folder, as every worker loads its own share
    chosen = options.eval_set if target is not None else loaded
    with progress_step("building the index") as step:
        events = StepEvents(step, on_ray=target is not None, renamed="questions swept")
        return asyncio.run(sweep_job(chosen, session, job, executor=executor, events=events))


def _grid(
    options: SweepArgs,
    settings: Settings,
    job: SweepOptions,
    target: RayTarget | None,
    loaded: EvalSet,
) -> None:
    """``sweep --grid``: plan it (``--dry-run``), or sweep every configuration at every k, write
    the grid's report and decide the configuration and k."""
    import asyncio

    from rag_judge.cli.progress import progress_step
    from rag_judge.jobs.grid.job import grid_job
    from rag_judge.jobs.sweep.options import STATE_FILE
    from rag_judge.report.grid_report import write_grid_report
    from rag_judge.runtime.session import open_session

    if options.dry_run:
        from rag_judge.jobs.grid.dry_run import grid_dry_run

        plan_session = open_session(settings, cache=False, embeddings=options.embeddings)
        chosen = loaded if job.limit is None else loaded.limit(job.limit)
        planned = asyncio.run(grid_dry_run(chosen, plan_session, job))
        click.echo("\n".join(planned.lines()))
        return
    session = open_session(settings, cache=not options.no_cache, embeddings=options.embeddings)
    executor = executor_for(target, options.scale.batch, options.output / STATE_FILE)
    eval_set = options.eval_set if target is not None else loaded
    with progress_step("building the indexes") as step:
        events = StepEvents(step, on_ray=target is not None, renamed="questions swept")
        run = asyncio.run(grid_job(eval_set, session, job, executor=executor, events=events))
    if options.scale.batch:
        echo_stages(run.stages, options.output / STATE_FILE)
    result = run.result
    report = write_grid_report(result, options.output, title=f"{loaded.name} configuration sweep")
    click.echo(report.markdown_path.read_text(encoding="utf-8"))

    def tracked() -> TrackedRun:
        from rag_judge.integrations.logged_runs import grid_run

        return grid_run(result, report.paths, eval_set=loaded.name, options=job)

    log_to_mlflow(options.mlflow, tracked, options.output)
    reasons = [r.nothing_judged() for r in result.results.values()]
    if reasons and all(reason is not None for reason in reasons):
        click.echo(f"error: {reasons[0]}; the tables are written, but decide nothing", err=True)
        sys.exit(NOTHING_JUDGED)


def _tracked(
    eval_set: str, job: SweepOptions, run: SweepRun, files: tuple[Path, ...]
) -> TrackedRun:
    """The sweep as ``--mlflow`` logs it: parameters, metrics per k, the decision, the files."""
    from rag_judge.integrations.logged_runs import sweep_run

    return sweep_run(run.result, files, eval_set=eval_set, options=job)
