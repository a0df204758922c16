"""``rag-judge compare-scores``: did NEW get worse than BASE, beyond judge and sample noise?"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.cli.common import friendly_errors, metric_names
from rag_judge.cli.gating import finish_gate
from rag_judge.cli.options import bootstrap_options, gate_options, output_option
from rag_judge.cli.records import GateArgs, gather

if TYPE_CHECKING:
    from rag_judge.jobs.compare_scores.comparison import ScoreComparison
    from rag_judge.jobs.compare_scores.gate import Check

_FILE = click.Path(dir_okay=False, path_type=Path)


@dataclass(frozen=True)
class CompareScoresArgs:
    """What ``compare-scores`` was asked, gathered from click's parameters."""

    base: Path
    new: Path
    metrics: str | None
    threshold: float
    output: Path | None
    top: int
    resamples: int
    seed: int
    gate: GateArgs

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> CompareScoresArgs:
        return gather(cls, params, gate=GateArgs.from_params(params))


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
@output_option("Also write comparison.md, .csv, .json and a self-contained .html here.")
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
def compare_scores_command(**params: Any) -> None:
    """Compare two `rag-judge score` files row by row (joined by id) and print the result.

    Per metric, over the rows scored in both: both means, NEW - BASE with a paired-bootstrap
    95% CI and a paired randomization p, and McNemar on the pass/fail verdicts; rows on one
    side only, or scored on one side only, are listed with their statuses. Exit status: 0
    (and every gate check passed), 1 a gate check failed, 2 bad input.
    """
    from rag_judge.jobs.compare_scores.gate import parse_bounds
    from rag_judge.report.score_compare import render_markdown, write_comparison

    options = CompareScoresArgs.from_params(params)
    gate, output = options.gate, options.output
    bounds = parse_bounds(gate.fail_under) if gate.fail_under is not None else None
    _check_outputs(options)
    comparison, checks = _run_compare_scores(options, bounds)
    click.echo(render_markdown(comparison, checks), nl=False)
    if output is not None:
        files = write_comparison(comparison, output, checks)
        click.echo(f"written: {files.markdown}, {files.csv}, {files.json}, {files.html}", err=True)
    finish_gate(checks, gate.junit)


def _check_outputs(options: CompareScoresArgs) -> None:
    """The files to write can be written, and none of them is BASE or NEW."""
    from rag_judge.report.score_compare import COMPARISON_FILES
    from rag_judge.runtime.outputs import check_distinct, check_output_file, check_output_folder

    output, junit = options.output, options.gate.junit
    if output is not None:
        check_output_folder(output)
    if junit is not None:
        check_output_file(junit)
    written = {f"-o {name}": output / name for name in COMPARISON_FILES} if output else {}
    check_distinct({"BASE": options.base, "NEW": options.new}, {"--junit": junit, **written})


def _run_compare_scores(
    options: CompareScoresArgs, bounds: dict[str, float] | None
) -> tuple[ScoreComparison, list[Check]]:
    """The comparison of the two files, and the gate's checks on NEW."""
    from rag_judge.jobs.compare_scores.comparison import compare_scores
    from rag_judge.jobs.compare_scores.files import read_score_file
    from rag_judge.jobs.compare_scores.gate import Gate, run_gate

    gate, metrics = options.gate, options.metrics
    before, after = read_score_file(options.base), read_score_file(options.new)
    comparison = compare_scores(
        before,
        after,
        metric_names(metrics) if metrics is not None else None,
        threshold=options.threshold,
        top=options.top,
        n_resamples=options.resamples,
        seed=options.seed,
    )
    checks = run_gate(
        after,
        Gate(bounds, "ci_low" if gate.gate_on == "ci-low" else "mean", gate.margin,
             gate.allow_unjudged),
        comparison=comparison if gate.fail_if_worse else None,
        base=before,
        n_resamples=options.resamples,
        seed=options.seed,
    )  # fmt: skip
    return comparison, checks
