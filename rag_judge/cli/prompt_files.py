"""``rag-judge prompts validate`` and ``lock``: the prompt files the judges send."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rag_judge.cli.common import friendly_errors, make_console
from rag_judge.report.tables import to_rich


@click.group()
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
@friendly_errors
def prompts_validate(root: Path | None) -> None:
    """Render every prompt with its fixtures and check it against the lock file (exit 2 if not)."""
    from rag_judge.prompts.checks import validate_prompts
    from rag_judge.prompts.templates import all_prompts

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
    make_console().print(to_rich(header, rows, title=f"{len(rows)} prompt files, all valid"))


@prompts.command("lock")
@_PROMPT_DIR
@friendly_errors
def prompts_lock(root: Path | None) -> None:
    """Record the hash of every new prompt version in prompts.lock.json (maintainers).

    Refuses, writing nothing, when a locked version's text changed: bump its `version`.
    """
    from rag_judge.prompts.checks import lock_prompts

    added = lock_prompts(root=root)
    for ref in added:
        click.echo(f"locked {ref}")
    if not added:
        click.echo("the lock file is up to date")
