"""Which path the judges take with a model: the scoring path needs log-probabilities.

The scoring path (``score``) reads P(yes) from one-token log-probabilities. In-process models
always give them; a server may not (some never return ``logprobs``, some refuse the field). So
before a run judges in ``score`` mode over a server, one yes/no probe asks for them; a server
that gives none is judged on the generative path instead, said once on stderr and recorded in
the results (:class:`ModeChoice`), rather than leaving every row a ``backend_error``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.judges.work import JudgeMode, default_mode

LOG = logging.getLogger("rag_judge")

PROBE = ChatRequest.of(
    ("user", "Answer with one word, yes or no: is Paris the capital of France?"),
    prompt_id="probe/logprobs",
)
"""The one yes/no call that shows whether a server gives log-probabilities (cached when it
does, so a re-run costs nothing)."""

_NO_LOGPROBS = ("log-probabilities", "logprobs", "top_logprobs")
"""Words in an error that say the server does not give or take log-probabilities."""


@dataclass(frozen=True)
class ModeChoice:
    """The path the judges take, and why it is not the one asked for ("" when it is)."""

    mode: JudgeMode
    note: str = ""


async def choose_mode(client: ModelClient, requested: JudgeMode | None) -> ModeChoice:
    """``requested`` (default by backend), except that ``score`` over a server without
    log-probabilities falls back to ``generate``. A probe that fails for another reason (the
    server is down) keeps ``score``: the rows then record their own errors."""
    mode = requested or default_mode(client.name)
    if mode != "score" or client.logprobs_in_process:
        return ModeChoice(mode)
    probe = await client.yes_probability(PROBE)
    error = (probe.error or "").lower()
    if probe.status == "ok" or not any(word in error for word in _NO_LOGPROBS):
        return ModeChoice(mode)
    note = (
        f"{client.name} gives no log-probabilities ({probe.error}), so the judges took the "
        "generative path (claims, verdicts and reasons written as JSON) instead of the scoring "
        "path"
    )
    LOG.warning("note: %s", note)
    return ModeChoice("generate", note)
