"""MkDocs hook: read the docstrings' Sphinx roles on the Python API page as plain code.

The package's docstrings name other objects the Sphinx way (``:func:`~rag_judge.x.f```), which
mkdocstrings renders as the role's text before the code; the page shows just the code, with the
``~`` (Sphinx's "last part only") applied.
"""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):<code>(~?)([^<]*)</code>")


def _plain(match: re.Match[str]) -> str:
    short, name = match.groups()
    return f"<code>{name.rsplit('.', 1)[-1] if short else name}</code>"


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Drop the role prefixes on the API page."""
    if page.file.src_uri != "reference/python-api.md":
        return html
    return ROLE.sub(_plain, html)
