"""The manual's pages and a walk over the CLI's commands, for the docs tests (tests/docs/)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import click

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def examples_module() -> ModuleType:
    """docs/tools/examples_table.py, the hook that counts the pages' examples by kind."""
    spec = importlib.util.spec_from_file_location(
        "examples_table", DOCS / "tools" / "examples_table.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands(
    group: click.Command, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, click.Command]]:
    """Every listed command under ``group``, as ('prompts validate', command), groups included."""
    yield " ".join(path), group
    if isinstance(group, click.Group):
        for name, command in sorted(group.commands.items()):
            if not command.hidden:  # an old name kept for a release (cli.common.renamed)
                yield from commands(command, (*path, name))


def options(command: click.Command) -> set[str]:
    """Every spelling of every visible option (``--dry-run``, ``-o``, ``--no-cache``)."""
    found = {"--help", "-h"}
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            found.update(param.opts)
            found.update(param.secondary_opts)
    return found
