"""``rag-judge calibrate --fit -o PROFILE.json``: fit the judge to labels, cross-validated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.cli.common import make_console
from rag_judge.report.tables import to_rich

if TYPE_CHECKING:
    from rag_judge.jobs.calibrate.fit_profile import FitOutcome


@dataclass(frozen=True)
class FitArgs:
    """What ``calibrate --fit`` reads from the command line."""

    scores: Path | None
    labels: tuple[Path, ...]
    silver: Path | None
    output: Path | None
    run_set: str | None
    label_field: str
    select: str | None
    beta: float
    folds: int
    seed: int
    resamples: int
    unused: Mapping[str, bool]
    """Options given that a fit does not take (``--threshold``: True when given)."""


def fit_from_files(options: FitArgs, metric: str) -> FitOutcome:
    """Fit ``metric`` of ``--scores`` to ``--labels`` (or ``--silver``), write the profile to
    ``-o`` and print the cross-validated figures."""
    from rag_judge.calibration.labels import read_human_labels
    from rag_judge.calibration.profile import profile_text
    from rag_judge.jobs.calibrate.fit_profile import FitOptions, LabelSource, fit_profile
    from rag_judge.report.profile_tables import fit_lines, fit_table
    from rag_judge.runtime.atomic import write_text

    output = _checked(options)
    assert options.scores is not None
    human = None
    if options.labels:
        human = read_human_labels(options.labels[0], "binary", label_field=options.label_field)
    objective: Any = {"f1": "f_beta"}.get(options.select or "", options.select)
    outcome = fit_profile(
        options.scores,
        LabelSource(human=human, silver_scores=options.silver, sampling=_sampling(options)),
        FitOptions(
            metric=metric,
            folds=options.folds,
            seed=options.seed,
            objective=objective or "balanced_accuracy",
            beta=options.beta,
            n_resamples=options.resamples,
        ),
    )
    write_text(output, profile_text(outcome.profile))
    header, rows = fit_table(outcome.profile)
    title = f"{metric}: before and after fitting, {outcome.profile.cross_validation.n} rows"
    make_console().print(to_rich(header, rows, title=title))
    for line in fit_lines(outcome.profile):
        click.echo(line)
    click.echo(f"profile: {output}", err=True)
    return outcome


def _checked(options: FitArgs) -> Path:
    """The profile path, after refusing what a fit does not take."""
    from rag_judge.runtime.outputs import check_distinct, check_output_file

    if options.run_set is not None:
        raise click.UsageError("--fit reads --scores and --labels (or --silver), not --run")
    if options.scores is None or (not options.labels and options.silver is None):
        raise click.UsageError("--fit needs --scores and --labels (or --silver SCORES)")
    if options.labels and options.silver is not None:
        raise click.UsageError(
            "give --labels or --silver, not both: silver labels are never mixed with people's"
        )
    if len(options.labels) > 1:
        raise click.UsageError("--fit learns from one annotator's --labels; give one file")
    if extra := [name for name, on in options.unused.items() if on]:
        raise click.UsageError(f"--fit learns from binary row labels; {extra[0]} does not apply")
    if options.output is None:
        raise click.UsageError("--fit writes a profile: give -o PROFILE.json")
    output = options.output
    if output.suffix.lower() != ".json":
        raise click.UsageError(f"the profile is JSON: give -o ending in .json, not {output}")
    reads = {"--scores": options.scores, "--silver": options.silver}
    reads |= {"--labels": options.labels[0] if options.labels else None}
    check_output_file(output, inputs=[p for p in reads.values() if p is not None])
    check_distinct(reads, {"-o": output})
    return output


def _sampling(options: FitArgs) -> dict[str, Any] | None:
    """How the labelled rows were chosen, when the label file is ``rag-judge label``'s."""
    if not options.labels:
        return None
    from rag_judge.jobs.calibrate.job import label_file_sampling

    sampling = label_file_sampling(options.labels[0])
    return None if sampling is None else sampling.to_json()
