"""Griffe extension: show the docstrings' doctests as Python code on the API page.

The package's docstrings carry doctests inline (run by ``pytest --doctest-modules``) rather than
under an ``Examples:`` heading; without this, Markdown runs their lines into the prose. Each run
of lines from a ``>>>`` to the next blank line is wrapped in a fenced ``python`` block.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    """``text`` with every doctest (``>>>`` to the next blank line) in a fenced python block."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        starts = line.lstrip().startswith(">>>")
        if starts and not inside:
            out.append("```python")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Fence the doctests of every object mkdocstrings loads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite the object's docstring before it is parsed."""
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
