"""``rag-judge sweep`` and ``compare-retrievers``: the k-sweep and the retriever table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from rag_judge.cli.common import JUDGE_NAMES, echo_cost, friendly_errors, make_console


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
    with Progress(*columns, TimeRemainingColumn(), console=make_console(stderr=True)) as bar:
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


@click.command("compare-retrievers")
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
@friendly_errors
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
    with Progress(*columns, console=make_console(stderr=True)) as bar:
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
        console = make_console()
        for table in display_tables(comparison, split_main=True):
            console.print(to_rich_table(table))
        console.print(f"note: {comparison.note}", markup=False, highlight=False)
    if out_dir is not None:
        written = write_comparison(comparison, out_dir)
        click.echo(f"wrote {', '.join(p.name for p in written)} to {out_dir}", err=True)
    if comparison.ledger is not None:
        echo_cost(comparison.ledger)  # embedding and reranking calls; BM25 alone makes none
