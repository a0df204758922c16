"""``rag-judge sweep``: the k-sweep, its report, and the best k."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from rag_judge.cli.common import (
    JUDGE_NAMES,
    NOTHING_JUDGED,
    call_options,
    friendly_errors,
    json_mode_option,
    judge_mode_options,
    metric_names,
)
from rag_judge.cli.scale_out import echo_stages, ray_target, scale_out, scale_out_options
from rag_judge.judges import DEFAULT_METRICS, DEFAULT_OBJECTIVE
from rag_judge.judges.work import JudgeMode


@click.command()
@click.argument("eval_set", metavar="EVAL_SET")
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory for per_question.parquet/.csv, summary.csv, sweep.png, report.html, "
    "summary.md.",
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
    "--rag",
    metavar="SPEC",
    help="Sweep your own RAG: module:function, a .jsonl of retrievals (and answers), or an "
    "http(s):// endpoint; --retriever and --rerank do not apply.",
)
@click.option(
    "--metrics",
    default=",".join(DEFAULT_METRICS),
    show_default=True,
    help=f"Comma-separated judges; known: {', '.join(JUDGE_NAMES)}.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Sweep only the first N questions.")
@click.option(
    "--objective",
    help=f"What 'best k' maximises: a metric or a product such as {DEFAULT_OBJECTIVE} "
    "(default; a reference-free set falls back to what it has).",
)
@click.option("--model", help="Generator and judge provider/model (default: settings, then local).")
@click.option("--generator", help="The model that answers, when it is not --model.")
@click.option(
    "--judge",
    help="The model that judges, when it is not --model (a model judging its own answers "
    "favours them: the report warns when they are one model).",
)
@click.option("--embeddings", help="Embedder for answer relevancy and dense retrieval.")
@click.option("--base-url", help="OpenAI-compatible server for openai/ and litellm/ models.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Model calls in flight.")
@click.option(
    "--support-probability",
    is_flag=True,
    help="Also ask P(supported) per claim (one more call per claim; local models only).",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@scale_out_options("questions")
@call_options()
@judge_mode_options
@json_mode_option
@friendly_errors
def sweep(
    eval_set: str,
    output: Path,
    ks: str,
    retriever: str,
    rerank: str | None,
    rerank_depth: int,
    rag: str | None,
    metrics: str,
    limit: int | None,
    objective: str | None,
    embeddings: str | None,
    support_probability: bool,
    no_cache: bool,
    judge_mode: JudgeMode | None,
    no_reasons: bool,
    executor: str,
    workers: int,
    batch: bool,
    **settings: Any,
) -> None:
    """Retrieve, answer and judge every question of EVAL_SET for each k, and report.

    EVAL_SET is a bundled set (cmrc2018_zh, cmrc2018_zh_chunked, cranfield) or a folder in the
    eval-set format.
    Per question, answers are generated in ascending k (the local model reuses its cached
    prompt prefix), then judged; context recall for every k comes from one pass over the top
    K. Interrupted? Run the same command again: finished calls come from the cache.
    """
    import asyncio

    from rag_judge.cli.progress import progress_step
    from rag_judge.data.eval_sets import load_eval_set
    from rag_judge.jobs.sweep.batched import STATE_FILE, arun_job_batched
    from rag_judge.jobs.sweep.job import run_job
    from rag_judge.jobs.sweep.objective import decide, parse_objective
    from rag_judge.jobs.sweep.on_ray import sweep_on_ray
    from rag_judge.jobs.sweep.plan import parse_ks
    from rag_judge.judges import get_judges
    from rag_judge.report.sweep_report import FILES as REPORT_FILES
    from rag_judge.report.sweep_report import write_sweep_report
    from rag_judge.runtime.outputs import check_distinct, check_output_folder
    from rag_judge.runtime.settings import load_settings

    chosen = load_settings(settings)
    cutoffs, checked = parse_ks(ks), parse_objective(objective)  # before the first model call
    names = metric_names(metrics)
    get_judges(names)  # every input error before the progress bar, not under it
    target = ray_target(executor, workers, batch, no_cache, chosen, generator=True)
    loaded = load_eval_set(eval_set)
    check_output_folder(output)
    rag_file = Path(rag) if rag and not rag.startswith(("http://", "https://")) else None
    check_distinct(
        {"--rag": rag_file if rag_file is not None and rag_file.is_file() else None},
        {f"-o {name}": output / name for name in (*REPORT_FILES, STATE_FILE)},
    )
    if not no_cache:
        check_output_folder(chosen.cache_dir, what="cache directory")
    options: dict[str, Any] = {
        "retriever": retriever,
        "rerank": rerank,
        "rerank_depth": rerank_depth,
        "rag": rag,
        "ks": cutoffs,
        "limit": limit,
        "metrics": names,
        "objective": checked,
        "embeddings": embeddings,
        "cache": not no_cache,
        "support_probability": support_probability,
        "mode": judge_mode,
        "reasons": not no_reasons,
        "settings": chosen,
    }
    state_path = output / STATE_FILE
    with progress_step("building the index") as step:

        def started(n_questions: int) -> None:
            step.rename("questions swept", total=n_questions)

        scale = scale_out(target, batch, step)
        if target is not None:
            result = sweep_on_ray(
                eval_set, target=target, on_counts=step.show_counts, on_start=started, **options
            )
        elif batch:
            run = asyncio.run(
                arun_job_batched(
                    loaded,
                    state_path=state_path,
                    on_poll=scale.on_poll,
                    progress=step.advance,
                    on_start=started,
                    **options,
                )
            )
            result = run.result
        else:
            result = run_job(
                loaded,
                on_question=lambda run: step.finished(run.failed),
                on_start=started,
                **options,
            )
    if batch:
        echo_stages(run.stages, state_path)
    decision = decide(result)  # the sweep decides; the report renders
    report = write_sweep_report(result, output, decision=decision, title=f"{loaded.name} k-sweep")
    click.echo(report.markdown_path.read_text(encoding="utf-8"))
    if (reason := result.nothing_judged()) is not None:
        click.echo(f"error: {reason}; the tables are written, but decide nothing", err=True)
        sys.exit(NOTHING_JUDGED)
