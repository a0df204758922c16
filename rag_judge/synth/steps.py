"""The model call of ``synth`` that writes a question: from one chunk, from two, or one that
its chunk does not answer.

Each call goes through the session's client, so it is cached (an interrupted run re-asks
nothing), retried and counted; a failed call comes back with its status, never raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.prompts.schemas import OpenQuestion, SynthQuestion
from rag_judge.prompts.templates import load_prompt
from rag_judge.synth.candidates import Candidate, Kind

PROMPTS: Final[dict[Kind, str]] = {
    "factual": "synth/factual",
    "multi_source": "synth/multi",
    "unanswerable": "synth/unanswerable",
}
"""The prompt that writes each kind of question."""
MAX_WRITE_TOKENS: Final = 160
"""Reply budget of a written question and answer."""


async def write(
    client: ModelClient,
    candidate: Candidate,
    passages: Sequence[str],
) -> Candidate:
    """The candidate with its question (and answer) written from ``passages`` (one, or two for
    multi-source), or with the call's status when it failed."""
    prompt = load_prompt(PROMPTS[candidate.kind], candidate.language)
    inputs: dict[str, Any] = (
        {"first": passages[0], "second": passages[1]}
        if candidate.kind == "multi_source"
        else {"passage": passages[0]}
    )
    request = prompt.request(max_tokens=MAX_WRITE_TOKENS, **inputs)
    output: type[SynthQuestion | OpenQuestion] = (
        OpenQuestion if candidate.kind == "unanswerable" else SynthQuestion
    )
    result = await client.structured(request, output)
    base = {"prompt": prompt.ref, "status": result.status, "error": result.error}
    if result.value is None:
        return _with(candidate, **base)
    question = " ".join(result.value.question.split())
    answer = " ".join(getattr(result.value, "answer", "").split())
    if not question or (candidate.kind != "unanswerable" and not answer):
        empty = "question" if not question else "answer"
        return _with(candidate, **base | {"status": "parse_error", "error": f"empty {empty}"})
    return _with(candidate, question=question, answer=answer, **base)


def _with(candidate: Candidate, **changes: object) -> Candidate:
    return replace(candidate, **changes)  # type: ignore[arg-type]
