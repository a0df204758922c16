"""MkDocs hook: the table on reference/examples.md, counted from the pages at build time.

Every fenced block of every page is one of five kinds, told apart by a step marker before it
(``steps``) or else by its info string and content (``kind_of``); the table says, page by
page, how many of each there are and so which are run by the tests and which are not.
``tests/docs/test_examples.py`` and ``tests/docs/test_tutorials.py`` use the same functions,
so the page and the tests cannot disagree.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

MARKER = "<!-- examples-table -->"
KINDS = ("doctest", "tutorial", "command", "output", "other")
STEP = "<!-- tutorial: "
"""How a tutorial's step is marked, on the line before its block (hidden on the page):
``<!-- tutorial: file NAME -->`` (the block is a file the reader saves as NAME), ``<!-- tutorial:
run -->`` (shell commands, exit status 0; ``run exit=N`` for another), ``<!-- tutorial: label
-->`` (``rag-judge label``, whose page the test answers), ``<!-- tutorial: output -->`` (a
recorded ``$ `` command and what it printed, run and compared verbatim)."""
NOT_RUN = "<!-- not run: "
"""How a block the tests do not run says why, on the line before it (hidden on the page):
``<!-- not run: needs an OpenAI key -->``. Every command and other block has one (or is a
tutorial step), so a reader can tell an example that was run from one that was not."""
FENCE = re.compile(
    r"(?:^<!-- tutorial: (?P<step>[^\n]*?) -->\n)?"
    r"(?:^<!-- not run: (?P<why>[^\n]*?) -->\n)?"
    r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>[^`\n]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)\s*$",
    re.M | re.S,
)


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of a page, as (info string, body)."""
    return [(m["info"].strip(), m["body"]) for m in FENCE.finditer(text)]


def unexplained(text: str) -> list[str]:
    """The first line of each command or other block that is not run and does not say why."""
    found = []
    for m in FENCE.finditer(text):
        kind = "tutorial" if m["step"] else kind_of(m["info"].strip(), m["body"])
        if kind in ("command", "other") and not (m["why"] or "").strip():
            found.append(m["body"].strip().splitlines()[0] if m["body"].strip() else "(empty)")
    return found


def steps(text: str) -> list[tuple[str, str]]:
    """A tutorial's marked blocks in page order, as (step, body): what its test runs."""
    return [(m["step"].strip(), m["body"]) for m in FENCE.finditer(text) if m["step"]]


def kind_of(info: str, body: str) -> str:
    """doctest (run by pytest), command (checked against the CLI), output (recorded), other."""
    if any(line.lstrip().startswith(">>> ") for line in body.splitlines()):
        return "doctest"
    if info in {"bash", "sh", "console"}:
        return "command"
    if info == "":
        return "output"
    return "other"


def census(docs_dir: Path) -> dict[str, Counter[str]]:
    """Per page (path under docs/), how many blocks of each kind."""
    found: dict[str, Counter[str]] = {}
    for path in sorted(docs_dir.rglob("*.md")):
        text = path.read_text("utf-8")
        counts = Counter(
            "tutorial" if m["step"] else kind_of(m["info"].strip(), m["body"])
            for m in FENCE.finditer(text)
        )
        if counts:
            found[path.relative_to(docs_dir).as_posix()] = counts
    return found


def table(docs_dir: Path, here: str) -> str:
    """The Markdown table, with links relative to the page at ``here``."""
    depth = here.count("/")
    rows = [
        "| page | doctests: run | tutorial steps: run | commands: checked, not run "
        "| recorded outputs | other (config, scripts) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    total: Counter[str] = Counter()
    for page, counts in census(docs_dir).items():
        total.update(counts)
        link = "../" * depth + page
        rows.append(f"| [{page}]({link}) | " + " | ".join(str(counts[k]) for k in KINDS) + " |")
    rows.append("| **all pages** | " + " | ".join(f"**{total[k]}**" for k in KINDS) + " |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill the marker on the page that has it."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, table(Path(config["docs_dir"]), page.file.src_uri))
