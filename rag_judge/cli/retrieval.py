"""``rag-judge retrieval``, ``compare-runs`` and ``measures``: the retrieval core on files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from rag_judge.cli.common import F, friendly_errors, make_console
from rag_judge.cli.options import bootstrap_options
from rag_judge.report.tables import comparison_table, eval_result_table, to_csv, to_rich
from rag_judge.retrieval import FAMILIES, EvalResult, evaluate, read_qrels, read_run
from rag_judge.retrieval.compare import compare_runs

DEFAULT_MEASURES = ("map", "mrr@10", "ndcg@10", "precision@5", "recall@10", "hit_rate@5")


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


@click.command()
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
@friendly_errors
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
        make_console().print(to_rich(header, rows, title=title))


@click.command("compare-runs")
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
@bootstrap_options("Seed of the bootstrap and the randomization test.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
@friendly_errors
def compare_runs_command(
    qrels: Path,
    run_a: Path,
    run_b: Path,
    confidence: float,
    resamples: int,
    seed: int,
    fmt: str,
    **kwargs: Any,
) -> None:
    """Compare two retrieval runs, RUN_B against RUN_A, on the same queries: means, B - A with a
    paired-bootstrap CI, a paired randomization test, and McNemar's exact test for binary
    measures (hit_rate@k). Formerly `rag-judge compare` (that name still works, with a note)."""
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
    make_console().print(to_rich(header, rows, title=title))


@click.command()
def measures() -> None:
    """List the retrieval measures and what they compute."""
    for family, (takes_k, text) in FAMILIES.items():
        click.echo(f"{family + ('@k' if takes_k else ''):<16} {text}")
