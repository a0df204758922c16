"""The typed LLM steps the judges are made of: extract claims, verify them, reverse questions.

Each step renders a prompt file, calls the model through :class:`ModelClient` and returns a
:class:`Outcome`: the typed value, or a status saying why there is none, plus what it cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.types import ClaimVerdict, JudgeStatus, Usage
from rag_judge.judges.few_shot import NO_EXAMPLES, ExampleTurns
from rag_judge.prompts.schemas import ClaimChecks, ClaimList, ReverseQuestions
from rag_judge.prompts.templates import load_prompt

V = TypeVar("V")

CLAIMS_PER_CHECK = 12
"""Claims verified in one call; longer lists are split so a small model keeps count."""


@dataclass(frozen=True)
class Cost:
    """What one or more steps cost: calls, tokens and the prompts used."""

    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    prompts: tuple[str, ...] = ()

    def __add__(self, other: Cost) -> Cost:
        prompts = self.prompts + tuple(p for p in other.prompts if p not in self.prompts)
        return Cost(self.calls + other.calls, self.usage + other.usage, prompts)


@dataclass(frozen=True)
class Outcome(Generic[V]):
    """A step's typed value, or the status and error that explain its absence."""

    value: V | None
    status: JudgeStatus = "ok"
    error: str | None = None
    cost: Cost = field(default_factory=Cost)
    details: Mapping[str, Any] = field(default_factory=dict)
    """What the step found besides its value (claims dropped and why, evidence kept ...)."""

    @property
    def ok(self) -> bool:
        """True when the step produced its value."""
        return self.status == "ok" and self.value is not None


async def extract_claims(
    client: ModelClient, *, question: str | None, text: str, language: str
) -> Outcome[list[str]]:
    """Atomic, self-contained claims of ``text`` (an answer or a reference) given the question."""
    prompt = load_prompt("claims/extract", language)
    # Claims restate the text with its subject restored: a budget that grows with the text
    # (characters bound tokens from above) stops a small model's runaway list early.
    budget = min(768, 128 + len(question or "") // 2 + 2 * len(text))
    request = prompt.request(question=question or "", text=text, max_tokens=budget)
    result = await client.structured(request, ClaimList)
    cost = Cost(1 + int(result.repaired), result.usage, (prompt.ref,))
    if result.status != "ok" or result.value is None:
        return Outcome(None, result.status, result.error, cost)
    claims = [c.strip() for c in result.value.claims if c.strip()]
    return Outcome(list(dict.fromkeys(claims)), cost=cost)


async def verify_claims(
    client: ModelClient,
    *,
    passages: Sequence[str],
    claims: Sequence[str],
    language: str,
    probabilities: bool = False,
    examples: ExampleTurns = NO_EXAMPLES,
    support_examples: ExampleTurns = NO_EXAMPLES,
) -> Outcome[list[ClaimVerdict]]:
    """A verdict per claim against the numbered passages, naming every supporting passage.

    This one call per batch of claims is the (claim × passage) grid: recall at every k ≤
    len(passages) follows from the passage numbers. A claim the model skipped is asked
    again once on its own batch; still missing, the step is a ``parse_error``. With
    ``probabilities``, each claim also gets P(supported) from a yes/no log-probability call
    that shares the passages prefix (cheap on llama.cpp, which reuses its KV cache).
    ``examples`` (worked examples as earlier turns) go before the verification calls,
    ``support_examples`` before the P(supported) calls.
    """
    verdicts: dict[int, ClaimVerdict] = {}
    cost = Cost()
    for pending in _batches(list(range(len(claims)))):
        for _ in range(2):  # the batch, then whatever the model skipped, once
            found, outcome = await _check_batch(
                client, passages, claims, pending, language, examples
            )
            cost += outcome.cost
            if outcome.status != "ok":
                return Outcome(None, outcome.status, outcome.error, cost)
            verdicts |= found
            pending = [i for i in pending if i not in verdicts]
            if not pending:
                break
        if pending:
            numbers = ", ".join(str(i + 1) for i in pending)
            return Outcome(None, "parse_error", f"no verdict for claim(s) {numbers}", cost)
    ordered = [verdicts[i] for i in range(len(claims))]
    if probabilities and ordered:
        scored, prob_cost = await support_probabilities(
            client, passages=passages, verdicts=ordered, language=language,
            examples=support_examples,
        )  # fmt: skip
        return Outcome(scored, cost=cost + prob_cost)
    return Outcome(ordered, cost=cost)


async def _check_batch(
    client: ModelClient,
    passages: Sequence[str],
    claims: Sequence[str],
    indices: list[int],
    language: str,
    examples: ExampleTurns = NO_EXAMPLES,
) -> tuple[dict[int, ClaimVerdict], Outcome[None]]:
    prompt = load_prompt("claims/verify", language)
    batch = [claims[i] for i in indices]
    request = prompt.request(passages=list(passages), claims=batch, max_tokens=96 + 96 * len(batch))
    result = await client.structured(examples.apply(request), ClaimChecks)
    cost = Cost(1 + int(result.repaired), result.usage, (prompt.ref, *examples.refs))
    if result.status != "ok" or result.value is None:
        return {}, Outcome(None, result.status, result.error, cost)
    found: dict[int, ClaimVerdict] = {}
    for check in result.value.verdicts:
        if not 1 <= check.claim <= len(batch) or indices[check.claim - 1] in found:
            continue  # a number the model invented, or a second verdict for one claim
        chunks = tuple(sorted({p for p in check.passages if 1 <= p <= len(passages)}))
        if check.verdict == "not_mentioned":
            chunks = ()
        index = indices[check.claim - 1]
        found[index] = ClaimVerdict(
            claim=claims[index], verdict=check.verdict, chunks=chunks, reason=check.reason
        )
    return found, Outcome(None, "ok", cost=cost)


async def support_probabilities(
    client: ModelClient,
    *,
    passages: Sequence[str],
    verdicts: Sequence[ClaimVerdict],
    language: str,
    examples: ExampleTurns = NO_EXAMPLES,
) -> tuple[list[ClaimVerdict], Cost]:
    """Add P(supported) to each verdict; a failed call leaves that claim's probability None."""
    prompt = load_prompt("claims/support", language)
    cost = Cost(prompts=(prompt.ref, *examples.refs))
    scored = []
    for verdict in verdicts:
        result = await client.yes_probability(
            examples.apply(
                prompt.request(passages=list(passages), question="", claim=verdict.claim)
            )
        )
        cost += Cost(1, result.usage)
        scored.append(verdict.model_copy(update={"support_probability": result.p_yes}))
    return scored, cost


async def reverse_questions(
    client: ModelClient, *, answer: str, n: int, language: str, language_name: str
) -> Outcome[ReverseQuestions]:
    """``n`` questions the answer answers, in the question's language, and a noncommittal flag."""
    prompt = load_prompt("answer_relevancy/questions", language)
    request = prompt.request(answer=answer, n=n, language=language_name, max_tokens=96 + 64 * n)
    result = await client.structured(request, ReverseQuestions)
    cost = Cost(1 + int(result.repaired), result.usage, (prompt.ref,))
    if result.status != "ok" or result.value is None:
        return Outcome(None, result.status, result.error, cost)
    questions = [q.strip() for q in result.value.questions if q.strip()][:n]
    value = ReverseQuestions(questions=questions, noncommittal=result.value.noncommittal)
    return Outcome(value, cost=cost)


def _batches(indices: list[int]) -> list[list[int]]:
    return [indices[i : i + CLAIMS_PER_CHECK] for i in range(0, len(indices), CLAIMS_PER_CHECK)]
