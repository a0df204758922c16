"""Every command's ``--help``, byte for byte as recorded (tests/fixtures/cli_help/).

The help is the CLI's contract with its users and the manual: a change to it should be a
decision, made by re-recording the file, never a side effect of moving code.
Re-record with ``python tests/cli/test_help.py`` after an intended change.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_judge.cli import main

RECORDED = Path(__file__).parents[1] / "fixtures" / "cli_help"
COMMANDS = (
    "",
    "retrieval",
    "compare-runs",
    "measures",
    "score",
    "models",
    "prompts",
    "prompts validate",
    "prompts lock",
    "sweep",
    "synth",
    "compare-retrievers",
    "compare-scores",
    "calibrate",
    "label",
    "few-shot",
    "serve",
)


def _help(command: str) -> str:
    result = CliRunner().invoke(
        main, [*command.split(), "--help"], prog_name="rag-judge", terminal_width=100
    )
    assert result.exit_code == 0, result.output
    return result.output


def _file(command: str) -> Path:
    return RECORDED / f"{command.replace(' ', '_') or 'main'}.txt"


@pytest.mark.parametrize("command", COMMANDS)
def test_help_is_as_recorded(command: str) -> None:
    assert _help(command) == _file(command).read_text(encoding="utf-8")


def _commands(group: str) -> set[str]:
    listed = _help(group).split("Commands:")[1]
    return {f"{group} {name}".strip() for name in re.findall(r"^  (\w[\w-]*)\s", listed, re.M)}


def test_every_command_is_recorded() -> None:
    assert _commands("") | _commands("prompts") | {"", "prompts"} == set(COMMANDS)


if __name__ == "__main__":
    for name in COMMANDS:
        _file(name).write_text(_help(name), encoding="utf-8")
    sys.stdout.write(f"recorded {len(COMMANDS)} help texts in {RECORDED}\n")
