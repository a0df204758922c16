"""The ``rag-judge`` command line: parse arguments, call the library, print. Nothing else."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from rag_judge import __version__
from rag_judge.errors import RagJudgeError
from rag_judge.judges import DEFAULT_METRICS, JUDGES
from rag_judge.report.tables import (
    comparison_table,
    eval_result_table,
    judge_summary_table,
    to_csv,
    to_rich,
)
from rag_judge.retrieval import FAMILIES, EvalResult, evaluate, read_qrels, read_run
from rag_judge.retrieval.compare import compare_runs

if TYPE_CHECKING:
    from rag_judge.backends.ledger import Ledger

JUDGE_NAMES = tuple(JUDGES)
DEFAULT_MEASURES = ("map", "mrr@10", "ndcg@10", "precision@5", "recall@10", "hit_rate@5")
F = TypeVar("F", bound=Callable[..., Any])


def _friendly_errors(command: F) -> F:
    """Print our input errors as one line on stderr and exit 2, without a traceback."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except RagJudgeError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def _split_measures(values: Sequence[str]) -> list[str]:
    names = [part.strip() for value in values for part in value.split(",") if part.strip()]
    return names or list(DEFAULT_MEASURES)


def _eval_options(command: F) -> F:
    """Options shared by every command that scores runs."""
    options = [
        click.option(
            "-m",
            "--measure",
            "measures",
            multiple=True,
            metavar="MEASURE",
            help="Measure such as ndcg@10, map, hit_rate@5 (repeat or comma-separate). "
            f"Default: {', '.join(DEFAULT_MEASURES)}. See `rag-judge measures`.",
        ),
        click.option(
            "--missing-as-zero",
            is_flag=True,
            help="Score queries that are in the qrels but not in the run as 0 (trec_eval -c). "
            "Default: skip them and say so.",
        ),
        click.option(
            "--rel-level",
            type=int,
            default=1,
            show_default=True,
            help="Minimum grade that counts as relevant (trec_eval -l).",
        ),
        click.option(
            "--no-relevant",
            type=click.Choice(["zero", "skip"]),
            default="zero",
            show_default=True,
            help="Queries whose qrels have no relevant document: score 0 (trec_eval) or skip.",
        ),
        click.option(
            "--judged-only", is_flag=True, help="Drop unjudged documents first (trec_eval -J)."
        ),
        click.option(
            "--max-depth",
            type=click.IntRange(min=1),
            default=None,
            help="Only the top N documents of each ranking count (trec_eval -M).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _settings(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {
        "rel_level": kwargs["rel_level"],
        "missing": "zero" if kwargs["missing_as_zero"] else "skip",
        "no_relevant": kwargs["no_relevant"],
        "judged_only": kwargs["judged_only"],
        "max_depth": kwargs["max_depth"],
    }


def _notes(result: EvalResult, label: str = "") -> None:
    """Say on stderr which queries were left out and why, so nothing vanishes silently."""
    prefix = f"{label}: " if label else ""
    if result.excluded:
        shown = ", ".join(f"{q} ({why})" for q, why in list(result.excluded.items())[:10])
        more = f", and {len(result.excluded) - 10} more" if len(result.excluded) > 10 else ""
        click.echo(
            f"note: {prefix}{len(result.excluded)} queries not evaluated: {shown}{more}", err=True
        )
        if (
            result.settings.missing == "skip"
            and "no ranking in the run" in result.excluded.values()
        ):
            click.echo("note: --missing-as-zero scores queries with no ranking as 0", err=True)
    scored_without = [q for q in result.no_relevant if q in set(result.query_ids)]
    if scored_without:
        click.echo(
            f"note: {prefix}{len(scored_without)} evaluated queries have no relevant document "
            f"in the qrels and score 0 (--no-relevant skip leaves them out): "
            f"{', '.join(scored_without[:10])}",
            err=True,
        )


def _echo_cost(ledger: Ledger) -> None:
    """What each model cost, on stderr: calls, cache hits, tokens (or why unknown), spend."""
    for model in ledger.models:
        click.echo(ledger.describe(model), err=True)


def _console(*, stderr: bool = False) -> Console:
    """A console that does not squeeze tables to 80 columns when output is piped."""
    console = Console(stderr=stderr)
    return console if console.is_terminal else Console(stderr=stderr, width=160)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rag-judge")
def main() -> None:
    """Evaluate retrieval-augmented generation end to end."""


@main.command()
@click.argument("qrels", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("run", type=click.Path(dir_okay=False, path_type=Path))
@_eval_options
@click.option("--per-query", "-q", is_flag=True, help="Also print one row per query.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="table: 4 decimals as trec_eval prints; csv and json: every digit.",
)
@_friendly_errors
def retrieval(qrels: Path, run: Path, per_query: bool, fmt: str, **kwargs: Any) -> None:
    """Score a RUN against QRELS (TREC files, CSV/TSV with a header, or JSON).

    Ranking follows trec_eval: by score descending, ties by document id descending.
    """
    result = evaluate(
        read_qrels(qrels), read_run(run), _split_measures(kwargs["measures"]), **_settings(kwargs)
    )
    _notes(result)
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    header, rows = eval_result_table(result, per_query=per_query or False, exact=fmt == "csv")
    if fmt == "csv":
        click.echo(to_csv(header, rows), nl=False)
    else:
        title = f"{run.name} vs {qrels.name}: {len(result.query_ids)} queries"
        _console().print(to_rich(header, rows, title=title))


@main.command()
@click.argument("qrels", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("run_a", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(dir_okay=False, path_type=Path))
@_eval_options
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
)
@click.option(
    "--resamples",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Bootstrap resamples.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed for bootstrap and randomization."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@_friendly_errors
def compare(
    qrels: Path,
    run_a: Path,
    run_b: Path,
    confidence: float,
    resamples: int,
    seed: int,
    fmt: str,
    **kwargs: Any,
) -> None:
    """Compare RUN_B against RUN_A on the same queries: means, B - A with a paired-bootstrap CI,
    a paired randomization test, and McNemar's exact test for binary measures (hit_rate@k)."""
    comparison = compare_runs(
        read_qrels(qrels),
        read_run(run_a),
        read_run(run_b),
        _split_measures(kwargs["measures"]),
        confidence=confidence,
        n_resamples=resamples,
        seed=seed,
        **_settings(kwargs),
    )
    if comparison.dropped:
        shown = ", ".join(f"{q} ({why})" for q, why in list(comparison.dropped.items())[:10])
        click.echo(f"note: {len(comparison.dropped)} queries not compared: {shown}", err=True)
    if fmt == "json":
        records = comparison.to_records()
        click.echo(json.dumps({"a": str(run_a), "b": str(run_b), "measures": records}, indent=2))
        return
    if fmt == "csv":
        click.echo(comparison.to_dataframe().to_csv(index=False), nl=False)
        return
    header, rows = comparison_table(comparison)
    title = f"A = {run_a.name}, B = {run_b.name}: {len(comparison.query_ids)} queries"
    _console().print(to_rich(header, rows, title=title))


@main.command()
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
@click.option("--model", help="Chat model provider/model (default: settings, then local).")
@click.option("--embeddings", help="Embedder for answer relevancy (default: settings).")
@click.option("--base-url", help="OpenAI-compatible server for openai/ and litellm/ models.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Model calls in flight.")
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N rows.")
@click.option("--language", help="Prompt language for every row (default: detected).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@_friendly_errors
def score(
    input_path: Path,
    output: Path,
    metrics: str,
    limit: int | None,
    language: str | None,
    no_cache: bool,
    **settings: Any,
) -> None:
    """Judge the rows of INPUT (JSONL, JSON, CSV, TSV or Parquet) and write OUTPUT.jsonl.

    Columns may use ragas' names (user_input, retrieved_contexts, response, reference) or
    ours (question, contexts, answer, reference). Re-running is free: finished calls come
    from the cache, so an interrupted run resumes where it stopped.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from rag_judge.evaluation import evaluate
    from rag_judge.prompts import prompt_languages
    from rag_judge.samples import load_samples
    from rag_judge.settings import load_settings

    chosen = load_settings(settings)
    samples = load_samples(input_path, limit=limit)
    if language is not None and language not in (have := prompt_languages()):
        click.echo(
            f"note: no prompts in {language!r} (there are: {', '.join(have)}); the English "
            "prompts are used, and each result records prompt_language=en",
            err=True,
        )
    names = [m.strip() for m in metrics.split(",") if m.strip()]
    columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeRemainingColumn(), console=_console(stderr=True)) as bar:
        task = bar.add_task("judging", total=len(samples))
        result = evaluate(
            samples,
            names,
            cache=not no_cache,
            language=language,
            progress=lambda _: bar.advance(task),
            settings=chosen,
        )
    result.write_jsonl(output)
    header, rows = judge_summary_table(result.summary())
    title = f"{len(result)} rows judged by {result.model}; results in {output}"
    _console().print(to_rich(header, rows, title=title))
    _echo_cost(result.ledger)


@main.command()
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
    default="faithfulness,answer_relevancy,completeness,context_recall",
    show_default=True,
    help=f"Comma-separated judges; known: {', '.join(JUDGE_NAMES)}.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Sweep only the first N questions.")
@click.option(
    "--objective",
    help="What 'best k' maximises: a metric or a product such as faithfulness*completeness "
    "(default; a reference-free set falls back to what it has).",
)
@click.option("--model", help="Generator and judge provider/model (default: settings, then local).")
@click.option("--embeddings", help="Embedder for answer relevancy and dense retrieval.")
@click.option("--base-url", help="OpenAI-compatible server for openai/ and litellm/ models.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Model calls in flight.")
@click.option(
    "--support-probability",
    is_flag=True,
    help="Also ask P(supported) per claim (one more call per claim; local models only).",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@_friendly_errors
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
    **settings: Any,
) -> None:
    """Retrieve, answer and judge every question of EVAL_SET for each k, and report.

    EVAL_SET is a bundled set (cmrc2018_zh, cranfield) or a folder in the eval-set format.
    Per question, answers are generated in ascending k (the local model reuses its cached
    prompt prefix), then judged; context recall for every k comes from one pass over the top
    K. Interrupted? Run the same command again: finished calls come from the cache.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from rag_judge.report.sweep_report import write_sweep_report
    from rag_judge.settings import load_settings
    from rag_judge.sweep.job import run_job
    from rag_judge.sweep.plan import parse_ks

    chosen = load_settings(settings)
    columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeRemainingColumn(), console=_console(stderr=True)) as bar:
        task = bar.add_task("building the index", total=None)

        def started(n_questions: int) -> None:
            bar.update(task, description="questions swept", total=n_questions)

        result = run_job(
            eval_set,
            retriever=retriever,
            rerank=rerank,
            rerank_depth=rerank_depth,
            rag=rag,
            ks=parse_ks(ks),
            limit=limit,
            metrics=[m.strip() for m in metrics.split(",") if m.strip()],
            embeddings=embeddings,
            cache=not no_cache,
            support_probability=support_probability,
            settings=chosen,
            progress=lambda _: bar.advance(task),
            on_start=started,
        )
    report = write_sweep_report(result, output, objective=objective, title=f"{eval_set} k-sweep")
    click.echo(report.markdown_path.read_text(encoding="utf-8"))


@main.command("calibrate")
@click.option(
    "--scores",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Judge output of `rag-judge score` (JSONL).",
)
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, path_type=Path),
    help='Human labels (JSONL): {"id", "label"} per row, {"id", "claim", "label"} with '
    '--level claim, {"id_a", "id_b", "preferred": "a"|"b"|"tie"} with --kind pairwise.',
)
@click.option(
    "--run",
    "run_set",
    metavar="EVAL_SET",
    help="Instead of --scores/--labels: judge a bundled calibration set (begin_dev, wice_dev, "
    "alce_utility) and calibrate against its human labels.",
)
@click.option(
    "--metric",
    help="Judge metric to calibrate (default: faithfulness; with --run, the set's own).",
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
@click.option("--threshold", type=float, help="Binary: supported iff value >= X (default 0.5).")
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
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write metrics.csv, summary.md, reliability.png, disagreements.jsonl and report.html "
    "here (with --run also scores.jsonl; default calibration_EVAL_SET).",
)
@click.option(
    "--limit", type=click.IntRange(min=1), help="--run: judge N samples, balanced over labels."
)
@click.option("--model", help="--run: judge provider/model (default: settings, then local).")
@click.option("--base-url", help="--run: OpenAI-compatible server for openai/ and litellm/.")
@click.option("--concurrency", type=click.IntRange(min=1), help="--run: model calls in flight.")
@click.option("--no-cache", is_flag=True, help="--run: do not read or write the response cache.")
@click.option(
    "--resamples",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Bootstrap resamples per interval.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap and split seed.")
@_friendly_errors
def calibrate_command(
    scores: Path | None,
    labels: Path | None,
    run_set: str | None,
    metric: str | None,
    kind: str | None,
    level: str,
    label_field: str,
    mapping: str | None,
    scale: str | None,
    threshold: float | None,
    select: str | None,
    beta: float,
    unlabelled: Path | None,
    output: Path | None,
    limit: int | None,
    no_cache: bool,
    resamples: int,
    seed: int,
    **settings: Any,
) -> None:
    """Measure how far a judge agrees with human labels, every figure with a bootstrap CI.

    Give --scores (from `rag-judge score`) and --labels, or --run a bundled calibration set:
    its samples are judged (cached: re-runs are free), scores.jsonl is written to the output
    folder, and the judge is calibrated against the set's labels. Binary labels get accuracy,
    balanced accuracy, precision/recall/F1 of the unsupported class, kappa, alpha, AUC, Brier,
    ECE and correlations; ordinal ones weighted kappa, alpha and rank correlations. Prints the
    figures; -o also writes the report.
    """
    from rag_judge.calibration import run as calibration_run
    from rag_judge.report.calibration_html import (
        figure_table,
        summary_lines,
        write_calibration_report,
    )

    if threshold is not None and select is not None:
        raise click.UsageError("give --threshold or --select, not both")
    if select == "f1" and beta != 1.0:
        raise click.UsageError("--select f1 is F-beta with beta 1; use --select f_beta")
    objective: Any = {"f1": "f_beta"}.get(select or "", select)
    common: dict[str, Any] = {
        "threshold": threshold,
        "select": objective,
        "beta": beta,
        "n_resamples": resamples,
        "seed": seed,
    }
    if run_set is not None:
        given: dict[str, object] = {"--scores": scores, "--labels": labels, "--kind": kind}
        given |= {"--unlabelled": unlabelled, "--mapping": mapping, "--scale": scale}
        if extra := [name for name, value in given.items() if value is not None]:
            raise click.UsageError(f"--run takes the set's own scores and labels, not {extra[0]}")
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        from rag_judge.settings import load_settings

        chosen = load_settings(settings)
        out = output or Path(f"calibration_{Path(run_set).name}")
        columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn())
        with Progress(*columns, TimeRemainingColumn(), console=_console(stderr=True)) as bar:
            task = bar.add_task("judging", total=None)
            run = calibration_run.run_calibration(
                run_set,
                out,
                metric=metric,
                limit=limit,
                settings=chosen,
                cache=not no_cache,
                progress=lambda _: bar.advance(task),
                on_start=lambda n: bar.update(task, total=n),
                **common,
            )
        report, output = run.report, out
        click.echo(f"scores of {len(run.evaluation)} samples in {run.scores_path}", err=True)
    else:
        if scores is None or labels is None:
            raise click.UsageError("give --scores and --labels, or --run EVAL_SET")
        used = {"--limit": limit, **{f"--{k.replace('_', '-')}": v for k, v in settings.items()}}
        if extra := [name for name, value in used.items() if value is not None] + (
            ["--no-cache"] if no_cache else []
        ):
            raise click.UsageError(f"{extra[0]} applies to --run only")
        common |= {"kind": kind or "binary", "level": level}
        report = calibration_run.calibrate_files(
            scores,
            labels,
            metric=metric or calibration_run.DEFAULT_METRIC,
            label_field=label_field,
            mapping=None if mapping is None else calibration_run.parse_mapping(mapping),
            unlabelled=unlabelled,
            scale=None if scale is None else calibration_run.parse_scale(scale),
            **common,
        )
    header, rows = figure_table(report)
    title = f"{report.metric} vs {report.kind} human labels: {report.n} compared"
    _console().print(to_rich(header, rows, title=title))
    for line in summary_lines(report):
        click.echo(line)
    if output is not None:
        written = write_calibration_report(report, output)
        click.echo(f"report: {', '.join(str(p) for p in written.paths.values())}", err=True)


@main.command()
def models() -> None:
    """List the chat and embedding backends, and why any of them cannot run here."""
    from rag_judge.backends.availability import list_models

    for item in list_models():
        state = "available" if item.available else f"unavailable: {item.reason}"
        click.echo(f"{item.kind:<10} {item.name:<36} {state}")


@main.command()
def measures() -> None:
    """List the retrieval measures and what they compute."""
    for family, (takes_k, text) in FAMILIES.items():
        click.echo(f"{family + ('@k' if takes_k else ''):<16} {text}")


@main.group()
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
@_friendly_errors
def prompts_validate(root: Path | None) -> None:
    """Render every prompt with its fixtures and check it against the lock file (exit 2 if not)."""
    from rag_judge.prompt_checks import validate_prompts
    from rag_judge.prompts import all_prompts

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
    _console().print(to_rich(header, rows, title=f"{len(rows)} prompt files, all valid"))


@prompts.command("lock")
@_PROMPT_DIR
@_friendly_errors
def prompts_lock(root: Path | None) -> None:
    """Record the hash of every new prompt version in prompts.lock.json (maintainers).

    Refuses, writing nothing, when a locked version's text changed: bump its `version`.
    """
    from rag_judge.prompt_checks import lock_prompts

    added = lock_prompts(root=root)
    for ref in added:
        click.echo(f"locked {ref}")
    if not added:
        click.echo("the lock file is up to date")


@main.command("compare-retrievers")
@click.argument("eval_set")
@click.option(
    "--retrievers",
    default="bm25,dense,rrf",
    show_default=True,
    help="Comma-separated: bm25, dense, rrf (RRF of both). The first is the baseline.",
)
@click.option(
    "--rerank",
    metavar="llm|PATH",
    help="Also compare rrf+rerank: RRF's top 20 reranked by the model's yes/no probability "
    "(llm) or by a cross-encoder at PATH.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--model", help="Model for --rerank llm, provider/model (default: settings).")
@click.option(
    "--embeddings", help="Embedder for dense retrieval (default: settings; multilingual if not en)."
)
@click.option("--base-url", help="OpenAI-compatible server for openai/ and litellm/ models.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "markdown"]),
    default="table",
    show_default=True,
)
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write the CSVs (every digit) and comparison.md into this folder.",
)
@_friendly_errors
def compare_retrievers_command(
    eval_set: str,
    retrievers: str,
    rerank: str | None,
    limit: int | None,
    fmt: str,
    out_dir: Path | None,
    **settings: Any,
) -> None:
    """Compare retrievers on EVAL_SET, by document id and by answer text.

    EVAL_SET is a bundled set (cmrc2018_zh, cranfield) or a folder in the eval-set format.
    Each retriever ranks the top 10 chunks once; Recall@1/5/10, MRR@10, nDCG@10 and joint
    Recall@5 follow, each as mean [95% CI], by id (qrels) and by answer text (n-gram
    coverage of the reference; not applicable without reference answers). Then each
    retriever minus the first (paired bootstrap CI, randomization test, McNemar where values
    are 0/1), a breakdown by question type, and the questions left out and why.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress

    from rag_judge.report.retriever_tables import (
        comparison_csv,
        comparison_markdown,
        display_tables,
        to_rich_table,
        write_comparison,
    )
    from rag_judge.retriever_comparison_job import run_comparison

    columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=_console(stderr=True)) as bar:
        tasks: dict[str, Any] = {}

        def progress(step: str, done: int, total: int | None) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total)
            bar.update(tasks[step], completed=done, total=total)

        comparison = run_comparison(
            eval_set,
            retrievers=retrievers,
            rerank=rerank,
            limit=limit,
            progress=progress,
            **settings,
        )
    if fmt == "csv":
        click.echo(comparison_csv(comparison), nl=False)
        click.echo(f"note: {comparison.note}", err=True)
    elif fmt == "markdown":
        click.echo(comparison_markdown(comparison), nl=False)
    else:
        console = _console()
        for table in display_tables(comparison, split_main=True):
            console.print(to_rich_table(table))
        console.print(f"note: {comparison.note}", markup=False, highlight=False)
    if out_dir is not None:
        written = write_comparison(comparison, out_dir)
        click.echo(f"wrote {', '.join(p.name for p in written)} to {out_dir}", err=True)
