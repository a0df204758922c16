"""The CLI stays thin: no click command function is longer than 40 lines.

A command parses, builds its options record, calls its job and prints; anything longer is a
check, a job call or a report that belongs in a helper of its own. Counted from ``def`` to the
function's last line, docstring included (decorators not).
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "rag_judge" / "cli"
MAX_LINES = 40


def _is_command(decorator: ast.expr) -> bool:
    """``@click.command``, ``@click.group``, ``@<group>.command(...)`` and the like."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr in ("command", "group")


def _command_lengths(source: str) -> dict[str, int]:
    """Each click command function in ``source`` and its length in lines."""
    return {
        node.name: (node.end_lineno or node.lineno) - node.lineno + 1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(_is_command(d) for d in node.decorator_list)
    }


def _too_long(source: str, where: str) -> list[str]:
    return [
        f"{where}: {name} is {n} lines (at most {MAX_LINES})"
        for name, n in _command_lengths(source).items()
        if n > MAX_LINES
    ]


def test_no_command_function_is_longer_than_40_lines() -> None:
    found: dict[str, int] = {}
    too_long: list[str] = []
    for path in sorted(CLI.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        found |= _command_lengths(source)
        too_long += _too_long(source, str(path.relative_to(CLI.parent)))
    assert {"main", "score", "sweep", "calibrate_command", "prompts_lock"} <= set(found)
    assert too_long == []


def test_a_long_command_is_named() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES - 1))
    source = (
        "import click\n\n"
        f"@click.command()\n@click.option('--a')\ndef long(a):\n{body}\n\n"
        f"@group.command('short')\ndef short():\n    pass\n\n"
        f"def helper():\n{body}\n"
    )
    assert _command_lengths(source) == {"long": MAX_LINES, "short": 2}
    assert _too_long(source, "x.py") == []
    longer = source.replace("def long(a):\n", "def long(a):\n    '''A docstring counts.'''\n")
    assert _too_long(longer, "x.py") == [f"x.py: long is {MAX_LINES + 1} lines (at most 40)"]
