"""``rag-judge few-shot``: worked examples from labelled disagreements, and ``--few-shot``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from rag_judge.cli.common import friendly_errors
from rag_judge.cli.options import output_option
from rag_judge.judges import DEFAULT_CALIBRATED

if TYPE_CHECKING:
    from rag_judge.calibration.few_shot import WorkedExample

F = TypeVar("F", bound=Callable[..., object])


def few_shot_option(command: F) -> F:
    """``--few-shot EXAMPLES.jsonl``: worked examples in the faithfulness check."""
    return click.option(
        "--few-shot",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="EXAMPLES.jsonl",
        help="Worked examples (from `rag-judge few-shot`) put before the passages when the "
        f"answer's claims are checked ({DEFAULT_CALIBRATED}); each result lists "
        "few_shot#<hash> among its prompts.",
    )(command)


def read_few_shot(path: Path | None) -> tuple[WorkedExample, ...]:
    """The examples of ``--few-shot`` (none without it).

    Raises:
        InputError: the file is missing or a line is malformed (naming file, line and field).
    """
    if path is None:
        return ()
    from rag_judge.calibration.few_shot import read_examples

    return read_examples(path)


_BINARY = {0: 0.0, 1: 1.0, "0": 0.0, "1": 1.0, "false": 0.0, "true": 1.0, None: None}
"""Binary labels as JSON gives them (true/false, 0/1, quoted or not); null is no label."""


@click.command("few-shot")
@click.option(
    "--scores",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Judge results (the JSONL of `rag-judge score`, with each row's contexts).",
)
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help='Binary row-level labels, one {"id": ..., "label": 1|0} a line (1 = supported; '
    "null: not labelled, skipped).",
)
@click.option("--metric", default=DEFAULT_CALIBRATED, show_default=True, help="The judge to align.")
@click.option(
    "--per-label",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Examples of each label (supported, unsupported).",
)
@output_option("Where to write the examples (JSON Lines).", file=True, required=True)
@friendly_errors
def few_shot_command(scores: Path, labels: Path, metric: str, per_label: int, output: Path) -> None:
    """Choose worked examples for the judge from rows where it disagreed with your labels.

    From the labelled rows whose judge result has one claim and whose verdict (supported iff
    value >= 0.5) disagrees with the label, PER_LABEL rows of each label are taken, shortest
    evidence first, ties by id; each example is the claim, the passage sentences that share
    most words with it (at most 60 words) and the label. Pass the file to `score --few-shot`.
    """
    from rag_judge.calibration.few_shot import choose_examples, few_shot_id, write_examples
    from rag_judge.calibration.judge_scores import read_judge_scores
    from rag_judge.calibration.labels import read_human_labels
    from rag_judge.data.score_file import read_score_rows
    from rag_judge.runtime.outputs import check_output_file

    check_output_file(output, inputs=[scores, labels])
    judged = read_judge_scores(scores, metric)
    labelled = read_human_labels(labels, "binary", mapping=_BINARY)
    contexts = {
        str(row["id"]): [str(c) for c in row.get("contexts") or []]
        for _, row in read_score_rows(scores)
    }
    examples = choose_examples(judged, labelled, contexts, per_label=per_label)
    write_examples(output, examples)
    counts = {v: sum(e.verdict == v for e in examples) for v in ("supported", "unsupported")}
    click.echo(
        f"{len(examples)} worked examples ({counts['supported']} supported, "
        f"{counts['unsupported']} unsupported) written to {output}; {few_shot_id(examples)}",
        err=True,
    )
