"""``rag-judge score``, ``models`` and ``prompts``: the LLM judges on rows of your own."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from rag_judge.cli.common import (
    JUDGE_NAMES,
    NOTHING_JUDGED,
    call_options,
    echo_cost,
    friendly_errors,
    json_mode_option,
    judge_mode_options,
    make_console,
    metric_names,
    nothing_judged,
)
from rag_judge.cli.gating import finish_gate, gate_options
from rag_judge.cli.scale_out import echo_stages, ray_target, scale_out, scale_out_options
from rag_judge.judges import DEFAULT_METRICS
from rag_judge.judges.work import JudgeMode
from rag_judge.report.tables import judge_summary_table, to_rich


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write one JSON line per row with every judge's result.",
)
@click.option(
    "--metrics",
    default=",".join(DEFAULT_METRICS),
    show_default=True,
    help=f"Comma-separated judges; known: {', '.join(JUDGE_NAMES)}.",
)
@click.option("--model", help="Judge provider/model (default: settings, then local).")
@click.option("--judge", help="Same as --model (the name the sweep and settings use).")
@click.option("--embeddings", help="Embedder for answer relevancy (default: settings).")
@click.option("--base-url", help="OpenAI-compatible server for openai/ and litellm/ models.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Model calls in flight.")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    help="CPU threads of a local/ model (default: every core; 1 per Ray worker on one machine).",
)
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N rows.")
@click.option("--language", help="Prompt language for every row (default: detected).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
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
@gate_options
@scale_out_options("rows")
@call_options()
@judge_mode_options
@json_mode_option
@friendly_errors
def score(
    input_path: Path,
    output: Path,
    metrics: str,
    limit: int | None,
    language: str | None,
    no_cache: bool,
    judge_mode: JudgeMode | None,
    no_reasons: bool,
    repeats: int,
    executor: str,
    workers: int,
    batch: bool,
    baseline: Path | None,
    fail_under: str | None,
    gate_on: str,
    fail_if_worse: bool,
    margin: float,
    junit: Path | None,
    **settings: Any,
) -> None:
    """Judge the rows of INPUT (JSONL, JSON, CSV, TSV or Parquet) and write OUTPUT.jsonl.

    Columns may use ragas' names (user_input, retrieved_contexts, response, reference) or
    ours (question, contexts, answer, reference). Re-running is free: finished calls come
    from the cache, so an interrupted run resumes where it stopped; meanwhile OUTPUT.partial
    holds the rows it finished.
    """
    import asyncio

    from rag_judge.cli.gating import ScoreGate
    from rag_judge.cli.progress import progress_step
    from rag_judge.data.samples import load_samples
    from rag_judge.jobs.score.partial import PartialResults, partial_path
    from rag_judge.jobs.score.result import SampleResult
    from rag_judge.jobs.score.scaled import aevaluate_scaled
    from rag_judge.prompts.templates import prompt_languages
    from rag_judge.runtime.executors.batched import state_path_for
    from rag_judge.runtime.outputs import (
        check_distinct,
        check_jsonl_output,
        check_output_file,
        check_output_folder,
    )
    from rag_judge.runtime.settings import load_settings

    chosen = load_settings(settings)
    names = metric_names(metrics)
    target = ray_target(executor, workers, batch, no_cache, chosen)
    gate = ScoreGate.check(names, fail_under, gate_on, baseline, fail_if_worse, margin)
    check_jsonl_output(output)
    check_output_file(output, inputs=[input_path])
    if junit is not None:
        check_output_file(junit)
    check_distinct(
        {"INPUT": input_path, "--baseline": baseline},
        {"-o": output, "--junit": junit, "the partial results": partial_path(output),
         "the batch ids": state_path_for(output)},
    )  # fmt: skip
    if not no_cache:
        check_output_folder(chosen.cache_dir, what="cache directory")
    samples = load_samples(input_path, limit=limit)
    if language is not None and language not in (have := prompt_languages()):
        click.echo(
            f"note: no prompts in {language!r} (there are: {', '.join(have)}); the English "
            "prompts are used, and each result records prompt_language=en",
            err=True,
        )
    total = len(samples) * repeats
    with PartialResults(output) as partial, progress_step("judging", total=total) as step:
        scale = scale_out(target, batch, step)

        def finished(row: SampleResult) -> None:
            if target is None:  # over Ray, the counts across workers move the bar
                step.finished(row.failed)
            partial.add(row)

        result, stages = asyncio.run(
            aevaluate_scaled(
                samples,
                names,
                settings=chosen,
                output=output,
                scale=scale,
                cache=not no_cache,
                progress=finished,
                language=language,
                mode=judge_mode,
                reasons=not no_reasons,
                repeats=repeats,
            )
        )
        result.write_jsonl(output)
    if batch:
        echo_stages(stages, state_path_for(output))
    header, rows = judge_summary_table(result.summary())
    title = f"{len(result)} rows judged by {result.model}; results in {output}"
    make_console().print(to_rich(header, rows, title=title))
    echo_cost(result.ledger)
    if (failure := nothing_judged(result)) is not None:
        click.echo(f"error: {failure}", err=True)
        sys.exit(NOTHING_JUDGED)
    if gate.asked:
        finish_gate(gate.checks(result.to_records(), str(output)), junit)


@click.command()
def models() -> None:
    """List the chat and embedding backends, and why any of them cannot run here."""
    from rag_judge.backends.availability import list_models

    for item in list_models():
        state = "available" if item.available else f"unavailable: {item.reason}"
        click.echo(f"{item.kind:<10} {item.name:<36} {state}")


@click.group()
def prompts() -> None:
    """Check and lock the prompt files the LLM judges send (see prompts/README.md)."""


_PROMPT_DIR = click.option(
    "--dir",
    "root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Prompt directory (default: the prompts rag_judge ships).",
)


@prompts.command("validate")
@_PROMPT_DIR
@friendly_errors
def prompts_validate(root: Path | None) -> None:
    """Render every prompt with its fixtures and check it against the lock file (exit 2 if not)."""
    from rag_judge.prompts.checks import validate_prompts
    from rag_judge.prompts.templates import all_prompts

    problems = validate_prompts(root=root)
    if problems:
        for problem in problems:
            click.echo(f"problem: {problem}", err=True)
        click.echo(f"error: {len(problems)} problem(s) in the prompt files", err=True)
        sys.exit(2)
    header = ["prompt", "language", "version", "output", "inputs", "sha256"]
    rows = [
        [t.id, t.language, str(t.version), t.output, ", ".join(t.inputs), t.sha256[:12]]
        for t in all_prompts(root=root)
    ]
    make_console().print(to_rich(header, rows, title=f"{len(rows)} prompt files, all valid"))


@prompts.command("lock")
@_PROMPT_DIR
@friendly_errors
def prompts_lock(root: Path | None) -> None:
    """Record the hash of every new prompt version in prompts.lock.json (maintainers).

    Refuses, writing nothing, when a locked version's text changed: bump its `version`.
    """
    from rag_judge.prompts.checks import lock_prompts

    added = lock_prompts(root=root)
    for ref in added:
        click.echo(f"locked {ref}")
    if not added:
        click.echo("the lock file is up to date")
