"""``rag-judge compare-scores``: did NEW get worse than BASE, beyond judge and sample noise?"""

from __future__ import annotations

from pathlib import Path

import click

from rag_judge.cli.common import bootstrap_options, friendly_errors, metric_names
from rag_judge.cli.gating import finish_gate, gate_options

_FILE = click.Path(dir_okay=False, path_type=Path)


@click.command("compare-scores")
@click.argument("base", type=_FILE)
@click.argument("new", type=_FILE)
@click.option("--metrics", help="Comma-separated metrics (default: every metric both files hold).")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.5,
    show_default=True,
    help="A row passes a metric when its value is at least this (for McNemar's flips).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write comparison.md, .csv, .json and a self-contained .html here.",
)
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Changed rows shown per metric.",
)
@bootstrap_options("Seed of the bootstrap and the randomization test.")
@gate_options
@friendly_errors
def compare_scores_command(
    base: Path,
    new: Path,
    metrics: str | None,
    threshold: float,
    output: Path | None,
    top: int,
    resamples: int,
    seed: int,
    fail_under: str | None,
    gate_on: str,
    fail_if_worse: bool,
    margin: float,
    junit: Path | None,
) -> None:
    """Compare two `rag-judge score` files row by row (joined by id) and print the result.

    Per metric, over the rows scored in both: both means, NEW - BASE with a paired-bootstrap
    95% CI and a paired randomization p, and McNemar on the pass/fail verdicts; rows on one
    side only, or scored on one side only, are listed with their statuses. Exit status: 0
    (and every gate check passed), 1 a gate check failed, 2 bad input.
    """
    from rag_judge.jobs.score_compare.comparison import compare_scores
    from rag_judge.jobs.score_compare.files import read_score_file
    from rag_judge.jobs.score_compare.gate import parse_bounds, run_gate
    from rag_judge.report.score_compare import COMPARISON_FILES, render_markdown, write_comparison
    from rag_judge.runtime.outputs import check_distinct, check_output_file, check_output_folder

    bounds = parse_bounds(fail_under) if fail_under is not None else None
    if output is not None:
        check_output_folder(output)
    if junit is not None:
        check_output_file(junit)
    written = {f"-o {name}": output / name for name in COMPARISON_FILES} if output else {}
    check_distinct({"BASE": base, "NEW": new}, {"--junit": junit, **written})
    before, after = read_score_file(base), read_score_file(new)
    comparison = compare_scores(
        before,
        after,
        metric_names(metrics) if metrics is not None else None,
        threshold=threshold,
        top=top,
        n_resamples=resamples,
        seed=seed,
    )
    checks = run_gate(
        after,
        bounds=bounds,
        on="ci_low" if gate_on == "ci-low" else "mean",
        comparison=comparison if fail_if_worse else None,
        margin=margin,
        n_resamples=resamples,
        seed=seed,
    )
    click.echo(render_markdown(comparison, checks), nl=False)
    if output is not None:
        files = write_comparison(comparison, output, checks)
        click.echo(f"written: {files.markdown}, {files.csv}, {files.json}, {files.html}", err=True)
    finish_gate(checks, junit)
