"""MkDocs hook: tidy the command-line reference that mkdocs-click renders from the commands.

Click 8.2 and later mark an option without a default with a sentinel (``UNSET``), which
mkdocs-click 0.9 prints as its name; the table says "none" instead, as ``--help`` does by
showing nothing.
"""

from __future__ import annotations

from typing import Any

UNSET = "<code>Sentinel.UNSET</code>"


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Replace the sentinel's name in the rendered reference."""
    if page.file.src_uri != "reference/cli.md":
        return html
    return html.replace(UNSET, "<em>none</em>")
