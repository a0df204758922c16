"""Data fences: the tags the scoring prompts put around passages, claims, answers and sentences."""

from __future__ import annotations

from typing import Final

FENCES: Final = ("passages", "claim", "answer", "sentence")
"""The data tags of the scoring prompts."""


def fenced(text: str) -> str:
    """Data that cannot close the prompt's data tags: ``</claim>`` in an answer becomes
    ``‹/claim›``, so text inside a tag can never pass for the prompt's own words."""
    for name in FENCES:
        for tag in (f"<{name}>", f"</{name}>"):
            text = text.replace(tag, tag.replace("<", "‹").replace(">", "›"))
    return text
