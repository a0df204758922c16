"""MkDocs hook: the table of every setting, generated from ``rag_judge.runtime.settings.Settings``.

``<!-- settings table -->`` in ``reference/settings.md`` becomes one row per field: its name in a
config file, its environment variable, the command-line option that overrides it, its default
and what it does (the field's own docstring), so the page cannot drift from the code.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
from pathlib import Path
from typing import Any

PLACEHOLDER = "<!-- settings table -->"
OPTIONS = {"timeout": "--timeout", "max_attempts": "--max-attempts", "json_mode": "--json-mode"}
"""Settings overridden by an option that is not one of the model options."""


def field_docs(cls: type) -> dict[str, str]:
    """Each field's docstring (the string literal after its annotation), joined into one line."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, after in itertools.pairwise(body):
        named = isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        if named and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            docs[node.target.id] = " ".join(str(after.value.value).split())  # type: ignore[union-attr]
    return docs


def settings_rows() -> list[dict[str, str]]:
    """One row per setting: name, environment variable, option, default, what it does."""
    from rag_judge.cli.options import MODEL_OPTIONS
    from rag_judge.runtime.settings import ENV_PREFIX, Settings

    docs = field_docs(Settings)
    rows = []
    for field in dataclasses.fields(Settings):
        if field.default is not dataclasses.MISSING:
            default = "none" if field.default is None else f"`{field.default}`"
        else:
            default = "the user cache directory (`platformdirs`)"
        if field.name in MODEL_OPTIONS:
            option = f"`--{field.name.replace('_', '-')}`"
        else:
            option = f"`{OPTIONS[field.name]}`" if field.name in OPTIONS else ""
        rows.append(
            {
                "setting": f"`{field.name}`",
                "environment": f"`{ENV_PREFIX}{field.name.upper()}`",
                "option": option,
                "default": default,
                "what": docs.get(field.name, "").replace("|", "\\|"),
            }
        )
    return rows


def settings_table() -> str:
    """The rows as a Markdown table."""
    header = "| setting | environment variable | option | default | what it does |"
    lines = [header, "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row.values()) + " |" for row in settings_rows()]
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Put the generated table where the settings page asks for it."""
    if Path(page.file.src_uri).as_posix() != "reference/settings.md":
        return markdown
    return markdown.replace(PLACEHOLDER, settings_table())
