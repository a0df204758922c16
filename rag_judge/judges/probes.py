"""The scoring path (``mode="score"``): a small local model reads and scores instead of writing.

Every decoded token costs ~0.1 s on two cores and long free-form replies are where a 1.5B model
loops or invents, so the steps here ask for one token wherever they can:

1. **Claims**: the text is split into sentences (a long one into its clauses) with no model
   (:mod:`rag_judge.judges.segment`); a sentence that is not plainly a statement goes to a
   yes/no probe, which drops what states nothing (a question, an instruction to the
   evaluator, a refusal); only a long or compound segment is decomposed by
   the model, under a grammar that caps the list, with a budget sized from the text, cut at a
   repeated item, and every written claim must be made of its segment or it is dropped.
2. **Verdicts** from probabilities: P(supported) per claim from the first reply token over the
   passages, which come first in every prompt so llama.cpp reads them once per sample; where
   P(supported) is low, a second one-token probe on the same prefix tells ``contradicted`` from
   ``not_mentioned``.
3. **Reasons on demand**: one short line, only for the claims that end unsupported.

Long passages are focused on the sentences that bear on the claims first
(:mod:`rag_judge.judges.evidence`). Context recall at every k asks for the top k from k = K
down, so each prompt's passages are a prefix of the previous prompt's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.client import ModelClient, parse_structured
from rag_judge.core.types import ClaimVerdict, VerdictLabel
from rag_judge.judges.evidence import Focused, focus
from rag_judge.judges.fences import fenced
from rag_judge.judges.few_shot import NO_EXAMPLES, ExampleTurns
from rag_judge.judges.lexical import coverage, grounded_in, unstated_facts
from rag_judge.judges.scoring import support_probability
from rag_judge.judges.segment import (
    is_fragment,
    is_long,
    is_refusal,
    plainly_states,
    short_answer,
    split_clauses,
    split_segments,
    until_repeat,
)
from rag_judge.judges.steps import Cost, Outcome
from rag_judge.prompts.schemas import MAX_PARTS, ClaimSplit
from rag_judge.prompts.templates import PromptTemplate, load_prompt

SUPPORTED_AT: Final = 0.5
"""A claim is ``supported`` when P(supported) reaches this."""
CONTRADICTED_AT: Final = 0.5
"""An unsupported claim is ``contradicted`` when P(contradicted) reaches this."""
STATEMENT_AT: Final = 0.5
"""A segment is a claim to check when P(it states something) reaches this."""
REASON_TOKENS: Final = 48
"""Budget of a one-line reason."""


def claims_without_model(question: str | None, text: str) -> list[str] | None:
    """The claims of ``text`` when no model call is needed to split it (a fragment answer,
    short plain statements, none for a bare refusal), else None: :func:`split_claims` would
    ask the model."""
    if is_refusal(text):
        return []
    segments = split_segments(text)
    answers = short_answer(segments, question)
    claims: list[str] = []
    for segment in segments:
        if not (answers or plainly_states(segment)):
            return None
        parts = split_clauses(segment) if is_long(segment) else [segment]
        if any(is_long(part) for part in parts):
            return None
        claims.extend(parts)
    return list(dict.fromkeys(claims))


async def split_claims(
    client: ModelClient, *, question: str | None, text: str, language: str
) -> Outcome[list[str]]:
    """The claims of ``text`` (an answer or a reference), with what was dropped and why."""
    segments = split_segments(text)
    free = claims_without_model(question, text)
    if free is not None:
        dropped = segments if is_refusal(text) else []
        return Outcome(free, details={"segments": len(segments), "not_statements": dropped})
    cost = Cost()
    statement = load_prompt("claims/statement", language)
    kept: list[str] = []
    not_statements: list[str] = []
    answers = short_answer(segments, question)
    for segment in segments:
        if answers or plainly_states(segment):  # no need to ask the model
            kept.append(segment)
            continue
        request = statement.request(
            question=fenced(question or ""), answer=fenced(text), sentence=fenced(segment)
        )
        probed = await client.yes_probability(request)
        cost += Cost(1, probed.usage, (statement.ref,))
        if probed.status != "ok" or probed.p_yes is None:
            return Outcome(None, probed.status, probed.error, cost)
        (kept if probed.p_yes >= STATEMENT_AT else not_statements).append(segment)
    claims: list[str] = []
    details: dict[str, Any] = {"segments": len(segments), "not_statements": not_statements}
    for sentence in kept:
        if not is_long(sentence):
            claims.append(sentence)
            continue
        for segment in split_clauses(sentence):  # a long sentence's clauses, then the model
            if not is_long(segment):
                claims.append(segment)
                continue
            parts, part_cost, found = await _decompose(client, question, segment, language)
            cost += part_cost
            for key, value in found.items():
                details[key] = details.get(key, 0 if isinstance(value, int) else []) + value
            claims.extend(parts or [segment])
    return Outcome(list(dict.fromkeys(claims)), cost=cost, details=details)


async def _decompose(
    client: ModelClient, question: str | None, segment: str, language: str
) -> tuple[list[str], Cost, dict[str, Any]]:
    """The facts of one long segment, each made of its words, and what was dropped: a failed
    or empty reply gives none (the caller keeps the segment whole)."""
    prompt = load_prompt("claims/decompose", language)
    budget = min(320, 32 + len(segment))  # the facts restate the segment: its length bounds them
    request = prompt.request(
        question=fenced(question or ""), sentence=fenced(segment), max_tokens=budget
    )
    # No repair round: a reply that does not parse keeps the segment whole, at no more cost.
    schema = ClaimSplit.model_json_schema()
    result = await client.chat(request.model_copy(update={"json_schema": schema}))
    cost = Cost(1, result.usage, (prompt.ref,))
    found: dict[str, Any] = {"decomposed": 1}
    value, _ = (None, None) if result.text is None else parse_structured(result.text, ClaimSplit)
    if result.status != "ok" or value is None:
        return [], cost, found | {"decompose_failed": 1}
    replied = [c.strip() for c in value.claims if c.strip()]
    written = until_repeat(replied, limit=MAX_PARTS)
    parts = [c for c in written if grounded_in(c, segment, question or "")]
    found["ungrounded"] = [c for c in written if c not in parts]
    if len(written) < len(replied):
        found["cut_at_repeat"] = len(replied) - len(written)
    return parts, cost, found


async def score_claims(
    client: ModelClient,
    *,
    passages: Sequence[str],
    question: str | None,
    claims: Sequence[str],
    language: str,
    reasons: bool = True,
    examples: ExampleTurns = NO_EXAMPLES,
) -> Outcome[list[ClaimVerdict]]:
    """A verdict per claim from P(supported) (and P(contradicted) where that is low).

    ``examples`` (worked examples of the support check) go before the passages in every call
    here, the contradiction and reason calls too, so all of them share one prefix.
    """
    shown = focus(passages, " ".join(claims))
    fragment = _fragment(claims, question)
    verdicts: list[ClaimVerdict] = []
    signals: list[dict[str, Any]] = []
    cost = Cost()
    for claim in claims:
        found = await _probe(
            client, shown.passages, question, claim, language,
            as_answer=fragment, examples=examples,
        )  # fmt: skip
        cost += found.cost
        if not found.ok or found.value is None:
            return Outcome(None, found.status, found.error, cost)
        signal = support_signal(found.value, claim, passages, as_answer=fragment)
        signals.append(signal)
        judged = await _verdict(
            client, shown.passages, question, claim, language,
            p_supported(signal), reasons=reasons, missing=signal.get("unstated", []),
            examples=examples,
        )  # fmt: skip
        cost += judged.cost
        if not judged.ok or judged.value is None:
            return Outcome(None, judged.status, judged.error, cost)
        verdicts.append(judged.value)
    return Outcome(verdicts, cost=cost, details=_focus_details(shown) | {"support": signals})


async def score_claims_by_k(
    client: ModelClient,
    *,
    passages: Sequence[str],
    question: str | None,
    claims: Sequence[str],
    language: str,
    reasons: bool = True,
) -> Outcome[list[ClaimVerdict]]:
    """Verdicts over the top K, and each claim's P(supported) given the top k for every k.

    The top k are asked for every k and claim, from k = K down to 1: each prompt's passages
    are then a prefix of the previous prompt's, so llama.cpp, holding the top K from the
    sweep's last answer, re-reads only each prompt's last lines. A claim's support at k is the
    best P(supported) over the top 1..k (more passages cannot un-support a claim); its
    ``chunks`` is the first k at which that reaches :data:`SUPPORTED_AT`, which is what recall
    at every k counts.
    """
    shown = focus(passages, " ".join(claims))
    fragment = _fragment(claims, question)
    cost = Cost()
    at_k: list[dict[int, float]] = [{} for _ in claims]
    for k in range(len(shown.passages), 0, -1):
        for i, claim in enumerate(claims):
            found = await _probe(
                client, shown.passages[:k], question, claim, language, as_answer=fragment
            )
            cost += found.cost
            if not found.ok or found.value is None:
                return Outcome(None, found.status, found.error, cost)
            signal = support_signal(found.value, claim, passages[:k], as_answer=fragment)
            at_k[i][k] = p_supported(signal)
    best = [0.0] * len(claims)
    by_k: list[list[float]] = [[] for _ in claims]
    first: list[int | None] = [None] * len(claims)
    for k in range(1, len(shown.passages) + 1):
        for i in range(len(claims)):
            best[i] = max(best[i], at_k[i][k])
            by_k[i].append(best[i])
            if first[i] is None and best[i] >= SUPPORTED_AT:
                first[i] = k
    verdicts = []
    for i, claim in enumerate(claims):
        if (at := first[i]) is not None:
            supported = ClaimVerdict(
                claim=claim, verdict="supported", chunks=(at,), support_probability=best[i]
            )
            verdicts.append(supported)
            continue
        missing = unstated_facts(claim, *passages)
        judged = await _verdict(
            client, shown.passages, question, claim, language, best[i],
            reasons=reasons, missing=missing,
        )  # fmt: skip
        cost += judged.cost
        if not judged.ok or judged.value is None:
            return Outcome(None, judged.status, judged.error, cost)
        verdicts.append(judged.value)
    details = _focus_details(shown) | {"support_by_k": by_k}
    return Outcome(verdicts, cost=cost, details=details)


async def _probe(
    client: ModelClient,
    passages: Sequence[str],
    question: str | None,
    claim: str,
    language: str,
    *,
    as_answer: bool = False,
    examples: ExampleTurns = NO_EXAMPLES,
) -> Outcome[float]:
    """The model's P(yes) that the passages support the claim: one token. A fragment answering
    the question ("光荣和ω-force") is asked as an answer ("does it answer the question
    correctly?"): as a statement it asserts nothing, and any span of the passage would pass."""
    prompt_id = "claims/answer" if as_answer else "claims/support"
    support = load_prompt(prompt_id, language)
    request = examples.apply(_support_request(support, passages, question, claim))
    probed = await client.yes_probability(request)
    cost = Cost(1, probed.usage, (support.ref, *examples.refs))
    if probed.status != "ok" or probed.p_yes is None:
        return Outcome(None, probed.status, probed.error, cost)
    return Outcome(probed.p_yes, cost=cost)


async def _verdict(
    client: ModelClient,
    passages: Sequence[str],
    question: str | None,
    claim: str,
    language: str,
    p_supported: float,
    *,
    reasons: bool,
    missing: Sequence[str] = (),
    examples: ExampleTurns = NO_EXAMPLES,
) -> Outcome[ClaimVerdict]:
    """The claim's label from P(supported); if it is not supported, P(contradicted) on the
    same prefix tells contradicted from not mentioned, and a reason is written on demand (or,
    when the claim has a number no passage states, said without a call)."""
    if p_supported >= SUPPORTED_AT:
        verdict = ClaimVerdict(claim=claim, verdict="supported", support_probability=p_supported)
        return Outcome(verdict)
    contradict = load_prompt("claims/contradict", language)
    request = examples.apply(_support_request(contradict, passages, question, claim))
    probed = await client.yes_probability(request)
    cost = Cost(1, probed.usage, (contradict.ref, *examples.refs))
    if probed.status != "ok" or probed.p_yes is None:
        return Outcome(None, probed.status, probed.error, cost)
    label: VerdictLabel = "contradicted" if probed.p_yes >= CONTRADICTED_AT else "not_mentioned"
    reason = ""
    if reasons and missing:
        reason = _NUMBER_REASON.get(language, _NUMBER_REASON["en"]).format(", ".join(missing))
    elif reasons:
        explain = load_prompt("claims/reason", language)
        request = _support_request(explain, passages, question, claim, max_tokens=REASON_TOKENS)
        said = await client.chat(examples.apply(request))
        cost += Cost(1, said.usage, (explain.ref, *examples.refs))
        reason = _one_line(said.text) if said.status == "ok" and said.text else ""
        if examples.messages and _ANSWER_WORD.fullmatch(reason):
            reason = ""  # the examples' one-word replies, echoed: not a reason
    verdict = ClaimVerdict(
        claim=claim, verdict=label, reason=reason, support_probability=p_supported
    )
    return Outcome(verdict, cost=cost)


def _fragment(claims: Sequence[str], question: str | None) -> bool:
    """The claims are one fragment answering the question (the whole text was one): it is
    asked as an answer, with ``claims/answer``."""
    return len(claims) == 1 and is_fragment(claims[0], question)


def support_signal(
    p_model: float, claim: str, passages: Sequence[str], *, as_answer: bool
) -> dict[str, Any]:
    """What P(supported) is computed from: the model's P(yes), the claim's lexical coverage by
    the passages, whether it was asked as a fragment answer (``answer``; left out when not),
    and the exact facts (numbers; Latin names in Chinese text) it states that no passage does
    (``unstated``; left out when none)."""
    signal: dict[str, Any] = {"model": p_model, "coverage": coverage(claim, *passages)}
    if as_answer:
        signal["answer"] = True
    if missing := unstated_facts(claim, *passages):
        signal["unstated"] = missing
    return signal


def p_supported(signal: dict[str, Any]) -> float:
    """P(supported) from a claim's recorded signal (see ``support_signal``)."""
    return support_probability(
        signal["model"],
        signal["coverage"],
        unstated_fact=bool(signal.get("unstated")),
        fragment=bool(signal.get("answer")),
    )


_ANSWER_WORD: Final = re.compile(r"(?i)\s*(yes|no|是|否|不是)\W*")
"""A reply that is only the support probe's answer word (after worked examples, whose
replies are such words, the reason call sometimes answers so)."""
_NUMBER_REASON: Final = {"en": "No passage states {}.", "zh": "没有段落给出{}。"}
"""The reason of a claim whose number no passage states (no model call needed)."""


def _support_request(
    prompt: PromptTemplate,
    passages: Sequence[str],
    question: str | None,
    claim: str,
    *,
    max_tokens: int | None = None,
) -> ChatRequest:
    """The support, contradiction or reason prompt: the same text up to its last line."""
    return prompt.request(
        passages=[fenced(p) for p in passages],
        question=fenced(question or ""),
        claim=fenced(claim),
        max_tokens=max_tokens,
    )


def _one_line(text: str) -> str:
    """The reply's first line, trimmed (a reason is one line)."""
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def _focus_details(shown: Focused) -> dict[str, Any]:
    if shown.whole:
        return {}
    return {"evidence_chars": {"kept": shown.kept_chars, "total": shown.total_chars}}
