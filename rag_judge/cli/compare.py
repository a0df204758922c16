"""``rag-judge compare-retrievers``: retrievers side by side, by id and by answer text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from rag_judge.cli.common import echo_cost, friendly_errors, make_console


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

    EVAL_SET is a bundled set (cmrc2018_zh, cmrc2018_zh_chunked, cranfield) or a folder in the
    eval-set format.
    Each retriever ranks the top 10 chunks once; Recall@1/5/10, MRR@10, nDCG@10 and joint
    Recall@5 follow, each as mean [95% CI], by id (qrels) and by answer text (n-gram
    coverage of the reference; not applicable without reference answers). Then each
    retriever minus the first (paired bootstrap CI, randomization test, McNemar where values
    are 0/1), a breakdown by question type, and the questions left out and why.
    """
    from rag_judge.cli.progress import progress_steps
    from rag_judge.jobs.compare.job import run_comparison
    from rag_judge.report.retriever_tables import (
        comparison_csv,
        comparison_markdown,
        display_tables,
        to_rich_table,
        write_comparison,
    )

    with progress_steps() as progress:
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
