"""The generator of the RAG under test: answer a question from its top-k passages.

The prompt (``generate/answer``) puts the question first and the passages in rank order, with
a short fixed closing line after them, so the prompt for k extends the prompt for k - 1: asked
in ascending k back to back, llama.cpp re-reads only the new passage from its KV cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_judge.backends.types import CallStatus
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.types import Usage
from rag_judge.prompts.templates import load_prompt

GENERATE_PROMPT = "generate/answer"
"""The prompt id of the generator."""
MAX_ANSWER_TOKENS = 256
"""Reply budget for one answer: the prompt asks for one or two sentences."""


@dataclass(frozen=True)
class Generation:
    """One generated answer, or the status that says why there is none, and its cost."""

    answer: str | None
    """The answer text (stripped); None unless ``status`` is ``ok``."""
    status: CallStatus
    """How the call ended."""
    error: str | None = None
    """What went wrong, when it did."""
    usage: Usage = field(default_factory=Usage)
    """Tokens spent (0 when answered from the cache)."""
    cached: bool = False
    """True when the reply came from the response cache."""
    prompt: str = ""
    """``ref`` of the prompt used."""


async def generate_answer(
    client: ModelClient, *, question: str, contexts: Sequence[str], language: str
) -> Generation:
    """Answer ``question`` from ``contexts`` (best first) with the ``generate/answer`` prompt.

    Args:
        client: The model client (its cache makes a re-run free).
        question: The user's question.
        contexts: The top-k passages in rank order.
        language: Prompt language (``en``, ``zh``; others fall back to English).
    """
    prompt = load_prompt(GENERATE_PROMPT, language)
    request = prompt.request(
        question=question, contexts=list(contexts), max_tokens=MAX_ANSWER_TOKENS
    )
    result = await client.chat(request)
    answer = (result.text or "").strip() if result.status == "ok" else None
    return Generation(
        answer=answer,
        status=result.status,
        error=result.error,
        usage=result.usage,
        cached=result.cached,
        prompt=prompt.ref,
    )
