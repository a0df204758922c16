"""Worked examples in the claim check: earlier turns of the conversation, before the passages.

Each example is the same prompt rendered for the example's claim and evidence (the user turn,
its texts fenced as data exactly as the row's own passages and claim are) followed by the
person's verdict in the form the path expects (the assistant turn): ``yes``/``no`` for the
scoring path's support probe, a one-claim ``{"verdicts": [...]}`` for the generative path's
``claims/verify``. The turns sit between the system message and the row's own user turn, so
no prompt file changes (their ``id@version#hash`` stay valid) and every call with the same
examples starts with the same tokens: the in-process model's KV cache reads them once.

A request that carries examples differs in its messages, hence in its cache key; each result
that used them lists :func:`~rag_judge.calibration.few_shot.few_shot_id` among its prompts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from rag_judge.backends.types import ChatRequest, Message
from rag_judge.calibration.few_shot import WorkedExample, few_shot_id
from rag_judge.judges.fences import fenced
from rag_judge.prompts.templates import PromptTemplate, load_prompt

_REASONS = {"supported": "[1] states it", "unsupported": "no passage states it"}
"""The one-line reason of an example's verdict on the generative path."""


@dataclass(frozen=True)
class ExampleTurns:
    """The example turns of one path and language, and the id results record for them."""

    messages: tuple[Message, ...] = ()
    ref: str | None = None
    """``few_shot#<hash>``; None without examples."""

    def apply(self, request: ChatRequest) -> ChatRequest:
        """``request`` with the examples after its system message (unchanged without any)."""
        if not self.messages:
            return request
        head, rest = request.messages[:1], request.messages[1:]
        if not head or head[0].role != "system":
            head, rest = (), request.messages
        return request.model_copy(update={"messages": (*head, *self.messages, *rest)})

    @property
    def refs(self) -> tuple[str, ...]:
        """The id to record among a result's prompts (none without examples)."""
        return () if self.ref is None else (self.ref,)


NO_EXAMPLES = ExampleTurns()


def support_turns(examples: Sequence[WorkedExample], language: str) -> ExampleTurns:
    """Turns for the yes/no support probe (``claims/support``): the scoring path's, and the
    generative path's optional P(supported)."""
    if not examples:
        return NO_EXAMPLES
    prompt = load_prompt("claims/support", language)
    messages: list[Message] = []
    for example in examples:
        user = _user(
            prompt, passages=[fenced(example.evidence)], question="", claim=fenced(example.claim)
        )
        answer = "yes" if example.verdict == "supported" else "no"
        messages += [user, Message(role="assistant", content=answer)]
    return ExampleTurns(tuple(messages), few_shot_id(examples))


def verify_turns(examples: Sequence[WorkedExample], language: str) -> ExampleTurns:
    """Turns for the generative path's ``claims/verify``: one claim, one passage, and the
    reply that path parses (an unsupported example is ``not_mentioned``: the label does not
    tell contradicted from not mentioned)."""
    if not examples:
        return NO_EXAMPLES
    prompt = load_prompt("claims/verify", language)
    messages: list[Message] = []
    for example in examples:
        user = _user(prompt, passages=[fenced(example.evidence)], claims=[fenced(example.claim)])
        supported = example.verdict == "supported"
        check = {
            "claim": 1,
            "reason": _REASONS[example.verdict],
            "verdict": "supported" if supported else "not_mentioned",
            "passages": [1] if supported else [],
        }
        reply = json.dumps({"verdicts": [check]}, ensure_ascii=False)
        messages += [user, Message(role="assistant", content=reply)]
    return ExampleTurns(tuple(messages), few_shot_id(examples))


def _user(prompt: PromptTemplate, **inputs: object) -> Message:
    """The rendered prompt's user turn (its system message is the row's own, sent once)."""
    return next(m for m in prompt.render(**inputs) if m.role == "user")
