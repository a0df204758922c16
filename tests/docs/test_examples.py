"""Every example on the site is run, checked or said not to be (docs/reference/examples.md).

Doctests (``>>>``) are run by pytest itself (``--doctest-glob='*.md'`` over docs/). Here: every
``rag-judge`` command line in a shell block names a real command and only its options; every
plain Python block compiles; the settings file parses and loads; every command is shown.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import click
import pytest
from docs_site import DOCS, commands, examples_module, options

from rag_judge.cli import main
from rag_judge.runtime.settings import load_settings

EXAMPLES = examples_module()
PAGES = sorted(DOCS.rglob("*.md"))
BLOCKS = [
    (page.relative_to(DOCS).as_posix(), info, body)
    for page in PAGES
    for info, body in EXAMPLES.blocks(page.read_text(encoding="utf-8"))
]
COMMANDS = dict(commands(main))


def command_lines(body: str) -> list[str]:
    """The ``rag-judge ...`` invocations of a shell block, continuation lines joined."""
    joined = re.sub(r"\s*\\\n\s*", " ", body)
    found = []
    for line in joined.splitlines():
        line = re.split(r"\s#\s", line)[0]
        for part in re.split(r"\s(?:&&|;|\|)\s|&\s*$", line):
            match = re.search(r"(?:^|[\s/])rag-judge\s+(.*)", part)
            if match:
                found.append(match.group(1).strip())
    return found


def check(invocation: str) -> list[str]:
    """What is wrong with one invocation: an unknown command or an option it does not take."""
    words = shlex.split(invocation.replace("[", " ").replace("]", " ").replace("|", " "))
    name = words[0] if words else ""
    if name not in COMMANDS:
        return [f"no command `rag-judge {name}`"]
    if (
        isinstance(COMMANDS[name], click.Group)
        and len(words) > 1
        and f"{name} {words[1]}" in COMMANDS
    ):
        name = f"{name} {words[1]}"
    command = COMMANDS[name]
    if name == "serve":  # options after serve's own go to llama-cpp-python's server unchanged
        return []
    used = {w.split("=")[0] for w in words if re.fullmatch(r"--?[a-zA-Z][\w-]*(=.*)?", w)}
    unknown = [f"`rag-judge {name}` has no option {opt}" for opt in sorted(used - options(command))]
    missing = [
        f"`rag-judge {name}` needs {param.opts[-1]}"
        for param in command.params
        if isinstance(param, click.Option) and param.required and not used & set(param.opts)
    ]
    return unknown + missing


SHELL = [(page, body) for page, info, body in BLOCKS if EXAMPLES.kind_of(info, body) == "command"]


@pytest.mark.parametrize(
    ("page", "body"), SHELL, ids=[f"{p}:{i}" for i, (p, _) in enumerate(SHELL)]
)
def test_shell_examples_name_real_commands_and_options(page: str, body: str) -> None:
    problems = [p for line in command_lines(body) for p in check(line)]
    assert problems == [], f"{page}: {problems}"


def test_a_wrong_option_or_command_is_caught() -> None:
    assert check("sweep cmrc2018_zh -o out --dry-run --ks 1-3") == []
    assert check("sweep cmrc2018_zh -o out --dry-runn") == [
        "`rag-judge sweep` has no option --dry-runn"
    ]
    assert check("sweep cmrc2018_zh --dry-run") == ["`rag-judge sweep` needs --output"]
    assert check("sweeep x") == ["no command `rag-judge sweeep`"]
    assert command_lines(".venv/bin/rag-judge score a.jsonl \\\n    -o b.jsonl  # judge") == [
        "score a.jsonl -o b.jsonl"
    ]


def test_plain_python_examples_compile() -> None:
    for page, info, body in BLOCKS:
        if info == "python" and EXAMPLES.kind_of(info, body) == "other":
            compile(body, page, "exec")


def test_the_settings_file_example_loads(tmp_path: Path) -> None:
    tomls = [body for _, info, body in BLOCKS if info == "toml"]
    assert tomls
    for body in tomls:
        path = tmp_path / "rag_judge.toml"
        path.write_text(body, encoding="utf-8")
        tomllib.loads(body)
        assert load_settings(config_path=path, env={}).judge


def test_every_command_is_shown_on_a_page() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    for name in COMMANDS:
        if name:
            assert f"rag-judge {name}" in text, f"no page shows `rag-judge {name}`"


def test_the_examples_page_counts_every_kind(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "```python\n>>> 1 + 1\n2\n```\n\n```bash\nrag-judge measures\n```\n\n```\nout\n```\n"
        "\n<!-- tutorial: run -->\n```bash\nrag-judge measures\n```\n",
        encoding="utf-8",
    )
    (tmp_path / "b.md").write_text("no examples\n", encoding="utf-8")
    assert dict(EXAMPLES.census(tmp_path)["a.md"]) == {
        "doctest": 1,
        "tutorial": 1,
        "command": 1,
        "output": 1,
    }
    assert EXAMPLES.steps((tmp_path / "a.md").read_text(encoding="utf-8")) == [
        ("run", "rag-judge measures\n")
    ]
    assert "b.md" not in EXAMPLES.census(tmp_path)
    assert "| [a.md](../a.md) | 1 | 1 | 1 | 1 | 0 |" in EXAMPLES.table(tmp_path, "reference/x.md")


def test_every_example_that_is_not_run_says_why() -> None:
    """A shell command, a script or a config block the tests do not run carries a hidden
    ``<!-- not run: REASON -->`` line before it, so the page can say which examples ran."""
    missing = {
        page.relative_to(DOCS).as_posix(): found
        for page in PAGES
        if (found := EXAMPLES.unexplained(page.read_text(encoding="utf-8")))
    }
    assert missing == {}
