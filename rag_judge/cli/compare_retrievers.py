"""``rag-judge compare-retrievers``: retrievers side by side, by id and by answer text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.cli.common import echo_cost, friendly_errors, make_console
from rag_judge.cli.options import BASE_URL_HELP, limit_option, model_options, output_option
from rag_judge.runtime.events import Callbacks

if TYPE_CHECKING:
    from rag_judge.jobs.compare_retrievers.comparison import RetrieverComparison


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
@limit_option("Only the first N questions.")
@model_options(
    model="Model for --rerank llm, provider/model (default: settings).",
    embeddings="Embedder for dense retrieval (default: settings; multilingual if not en).",
    base_url=BASE_URL_HELP,
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "markdown"]),
    default="table",
    show_default=True,
)
@output_option("Also write the CSVs (every digit) and comparison.md into this folder.")
@friendly_errors
def compare_retrievers_command(
    eval_set: str,
    retrievers: str,
    rerank: str | None,
    limit: int | None,
    fmt: str,
    output: Path | None,
    **settings: Any,
) -> None:
    """Compare retrievers on EVAL_SET, by document id and by answer text.

    EVAL_SET is a bundled set (cmrc2018_zh, cmrc2018_zh_chunked, squad2_en_chunked, cranfield) or
    a folder in the eval-set format.
    Each retriever ranks the top 10 chunks once; Recall@1/5/10, MRR@10, nDCG@10 and joint
    Recall@5 follow, each as mean [95% CI], by id (qrels) and by answer text (n-gram
    coverage of the reference; not applicable without reference answers). Then each
    retriever minus the first (paired bootstrap CI, randomization test, McNemar where values
    are 0/1), a breakdown by question type, and the questions left out and why.
    """
    from rag_judge.report.retriever_tables import write_comparison

    comparison = _run_comparison(eval_set, retrievers, rerank, limit, settings)
    _print_comparison(comparison, fmt)
    if output is not None:
        written = write_comparison(comparison, output)
        click.echo(f"wrote {', '.join(p.name for p in written)} to {output}", err=True)
    if comparison.ledger is not None:
        echo_cost(comparison.ledger)  # embedding and reranking calls; BM25 alone makes none


def _run_comparison(
    eval_set: str, retrievers: str, rerank: str | None, limit: int | None, settings: dict[str, Any]
) -> RetrieverComparison:
    """The comparison job, with a progress bar per step it reports."""
    import asyncio

    from rag_judge.cli.progress import progress_steps
    from rag_judge.jobs.compare_retrievers.job import CompareOptions, compare_job, parse_retrievers
    from rag_judge.runtime.session import open_session
    from rag_judge.runtime.settings import load_settings

    options = CompareOptions(parse_retrievers(retrievers), rerank, limit)
    chosen = load_settings(
        {"model": settings["model"], "embeddings": None, "base_url": settings["base_url"]}
    )
    session = open_session(chosen, embeddings=settings["embeddings"])
    with progress_steps() as progress:
        events = Callbacks(advanced=progress)
        return asyncio.run(compare_job(eval_set, session, options, events=events))


def _print_comparison(comparison: RetrieverComparison, fmt: str) -> None:
    """The tables on stdout in the format asked for; the note on what they mean beside."""
    from rag_judge.report.retriever_tables import (
        comparison_csv,
        comparison_markdown,
        display_tables,
        to_rich_table,
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
