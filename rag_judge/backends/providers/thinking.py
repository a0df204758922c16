"""Reasoning models' thinking, kept apart from their answer.

DeepSeek-R1, Qwen3 and other reasoning models think before they answer. A server either puts
the thinking in its own field (``reasoning_content``: DeepSeek's API, vLLM's
``--reasoning-parser``, llama.cpp's ``--reasoning-format deepseek``; ``reasoning`` in newer
vLLM releases) or leaves it in the content between ``<think>`` tags. The verdict is read from
the answer only, never from the thinking, and the thinking tokens are counted in the ledger.

>>> split_thinking("<think>\\nIt says 1889.\\n</think>\\n\\n{\\"verdict\\": \\"supported\\"}")
('{"verdict": "supported"}', 'It says 1889.')
>>> split_thinking("No tags here.")
('No tags here.', '')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rag_judge.core.types import Usage

_THINK = re.compile(r"\A\s*<think>(.*?)(?:</think>|\Z)", re.DOTALL)
REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Message fields in which servers return a reasoning model's thinking."""


def split_thinking(content: str) -> tuple[str, str]:
    """(answer, thinking) of a reply whose content may open with ``<think>…</think>``; a
    thinking block cut off by the token limit leaves no answer."""
    match = _THINK.match(content)
    if match is None:
        return content, ""
    return content[match.end() :].strip(), match.group(1).strip()


def thinking_field(message: Mapping[str, Any] | Any) -> str:
    """The thinking a server returned in a message field of its own ("" when none)."""
    for name in REASONING_FIELDS:
        value = message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)
        if value is None and not isinstance(message, Mapping):
            value = (getattr(message, "model_extra", None) or {}).get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def with_thinking(usage: Usage, reported: int | None, thinking: str, answer: str) -> Usage:
    """``usage`` with its thinking tokens: as the server reported them
    (``completion_tokens_details.reasoning_tokens``), else the completion tokens' share by
    characters of the thinking (servers that leave it in the content count it as completion)."""
    if reported:
        return usage.model_copy(update={"reasoning_tokens": reported})
    if not thinking or not usage.completion_tokens:
        return usage
    share = len(thinking) / (len(thinking) + len(answer))
    return usage.model_copy(update={"reasoning_tokens": round(usage.completion_tokens * share)})
