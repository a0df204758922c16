"""The ``rag-judge`` command line: parse arguments, call the library, print. Nothing else.

One module per group of commands; this one only assembles them under ``main``.
"""

from __future__ import annotations

import click

from rag_judge import __version__
from rag_judge.cli.calibrate import calibrate_command
from rag_judge.cli.common import renamed
from rag_judge.cli.compare_retrievers import compare_retrievers_command
from rag_judge.cli.compare_scores import compare_scores_command
from rag_judge.cli.few_shot import few_shot_command
from rag_judge.cli.label import label_command
from rag_judge.cli.models import models
from rag_judge.cli.prompt_files import prompts
from rag_judge.cli.retrieval import compare_runs_command, measures, retrieval
from rag_judge.cli.score import score
from rag_judge.cli.serve import serve
from rag_judge.cli.sweep import sweep
from rag_judge.cli.synth import synth


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rag-judge")
def main() -> None:
    """Evaluate retrieval-augmented generation end to end."""


for command in (
    retrieval,
    compare_runs_command,
    renamed(compare_runs_command, "compare"),
    measures,
    score,
    compare_scores_command,
    models,
    prompts,
    sweep,
    synth,
    compare_retrievers_command,
    calibrate_command,
    few_shot_command,
    label_command,
    serve,
):
    main.add_command(command)

__all__ = ["main"]
