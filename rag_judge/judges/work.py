"""One sample's judging work, with each LLM step run at most once however many judges use it.

Completeness and context recall both need the reference's claims; faithfulness and noise
sensitivity both need the answer's. :class:`SampleWork` memoises every step per sample, so
asking for more judges never repeats a call (and works the same with the cache switched off).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from rag_judge.backends.registry import provider_of
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.backends.wrapper.lockstep import waiting_elsewhere
from rag_judge.calibration.few_shot import WorkedExample
from rag_judge.core.language import language_name
from rag_judge.core.types import ClaimVerdict, RagSample
from rag_judge.judges import probes, steps
from rag_judge.judges.few_shot import NO_EXAMPLES, support_turns, verify_turns
from rag_judge.judges.scoring import NoncommittalPolicy
from rag_judge.judges.steps import Outcome
from rag_judge.prompts.schemas import ReverseQuestions
from rag_judge.prompts.templates import prompt_languages

V = TypeVar("V")


JudgeMode = Literal["score", "generate"]
"""How the judges use the model: ``score`` reads and scores (claims split deterministically,
verdicts from one-token yes/no probabilities; for small local models), ``generate`` writes
(claims, verdicts and reasons as JSON; for API models)."""


def default_mode(model: str) -> JudgeMode:
    """The path the model's provider record says suits it: ``score`` for the embedded
    in-process models, ``generate`` for every other backend."""
    record = provider_of(model)
    return record.default_mode if record is not None else "generate"


def check_judge_options(options: JudgeOptions, judge_model: str) -> None:
    """Refuse knobs that do not apply to the path the judge will take with this model: a
    ``support_probability`` on the ``score`` path, which computes P(supported) for every claim
    anyway (it would change nothing, and say nothing).

    Raises:
        InputError: the first knob that does not apply.
    """
    from rag_judge.core.errors import InputError

    mode = options.mode or default_mode(judge_model)
    if options.support_probability and mode == "score":
        raise InputError(
            f"only applies to the generate path; the judge {judge_model} takes the score path, "
            "which gives every claim its P(supported) already (drop --support-probability, or "
            "add --judge-mode generate)",
            field="support_probability",
        )


_AS_REPLY = {"en": "Question: {question}\nAnswer: {text}", "zh": "问题：{question}\n回答：{text}"}
"""How an answer (or reference) reads as a passage, per prompt language."""


@dataclass(frozen=True)
class JudgeOptions:
    """Knobs that change what the judges ask or how they score."""

    n_questions: int = 3
    """Reverse questions generated for answer relevancy."""
    noncommittal: NoncommittalPolicy = "zero"
    """Answer relevancy of an evasive answer: 0, None (``unscored``) or as usual (``ignore``)."""
    support_probability: bool = False
    """Also ask P(supported) per claim from yes/no log-probabilities (``generate`` mode; the
    ``score`` mode has it always)."""
    mode: JudgeMode | None = None
    """``score`` or ``generate``; None: by backend (:func:`default_mode`)."""
    reasons: bool = True
    """``score`` mode: a one-line reason for every claim that ends unsupported."""
    few_shot: tuple[WorkedExample, ...] = ()
    """Worked examples (claim, evidence, a person's verdict) put before the passages when the
    answer's claims are checked against them (faithfulness; noise sensitivity shares it)."""


class SampleWork:
    """The steps for one sample, each computed once and shared by the judges that need it."""

    def __init__(
        self,
        sample: RagSample,
        *,
        language: str,
        client: ModelClient,
        embedder: Callable[[str], EmbeddingClient] | None,
        options: JudgeOptions,
    ) -> None:
        self.sample = sample
        self.language = language
        """The sample's language (detected or given)."""
        self.prompt_language = language if language in prompt_languages() else "en"
        """The language of the prompts used (English when there are none for ``language``)."""
        self.client = client
        self._embedder = embedder
        self.options = options
        self.mode: JudgeMode = options.mode or default_mode(client.name)
        """How the judges use the model for this sample."""
        self._memo: dict[str, asyncio.Task[Any]] = {}

    def embedder(self) -> EmbeddingClient | None:
        """The embedding client for this sample's language, if any is configured."""
        return None if self._embedder is None else self._embedder(self.language)

    async def answer_claims(self) -> Outcome[list[str]]:
        """The answer's claims (given the question)."""
        return await self._once("answer_claims", lambda: self._claims(self.sample.answer))

    def answer_claims_need_no_call(self) -> bool:
        """True when the answer's claims come without a model call (the scoring path splits a
        fragment or short plain statements itself): judging it right after it was written then
        finds its passages still in llama.cpp's cache."""
        answer = self.sample.answer
        return (
            self.mode == "score"
            and answer is not None
            and probes.claims_without_model(self.sample.question, answer) is not None
        )

    async def reference_claims(self) -> Outcome[list[str]]:
        """The reference answer's claims (given the question)."""
        return await self._once("reference_claims", lambda: self._claims(self.sample.reference))

    async def answer_vs_contexts(self) -> Outcome[list[ClaimVerdict]]:
        """The answer's claims checked against the contexts (faithfulness grid)."""
        return await self._once(
            "answer_vs_contexts",
            lambda: self._verify(self.answer_claims(), self._contexts(), examples=True),
        )

    async def reference_vs_contexts(self) -> Outcome[list[ClaimVerdict]]:
        """The reference's claims checked against the contexts (context recall grid; in
        ``score`` mode read cumulatively in ascending k, for recall at every k)."""
        return await self._once(
            "reference_vs_contexts",
            lambda: self._verify(self.reference_claims(), self._contexts(), by_k=True),
        )

    async def reference_vs_answer(self) -> Outcome[list[ClaimVerdict]]:
        """The reference's claims checked against the answer (completeness)."""
        return await self._once(
            "reference_vs_answer",
            lambda: self._verify(self.reference_claims(), [self._as_reply(self.sample.answer)]),
        )

    async def answer_vs_reference(self) -> Outcome[list[ClaimVerdict]]:
        """The answer's claims checked against the reference (correctness, for diagnostics)."""
        return await self._once(
            "answer_vs_reference",
            lambda: self._verify(self.answer_claims(), [self._as_reply(self.sample.reference)]),
        )

    async def reverse_questions(self) -> Outcome[ReverseQuestions]:
        """Questions the answer answers, for answer relevancy."""
        return await self._once(
            "reverse_questions",
            lambda: steps.reverse_questions(
                self.client,
                answer=self.sample.answer or "",
                n=self.options.n_questions,
                language=self.prompt_language,
                language_name=language_name(self.language),
            ),
        )

    def _as_reply(self, text: str | None) -> str:
        """An answer as the passage that states it: a reply to the question.

        Claims are extracted given the question ("光荣和ω-force" to a "who developed it?"
        becomes "It was developed by 光荣和ω-force"), so the text checked against them must
        carry the question too; bare, a short answer states nothing and the local model
        called such claims contradicted (measured on CMRC 2018: with the question, supported).
        """
        template = _AS_REPLY.get(self.prompt_language, _AS_REPLY["en"])
        return template.format(question=self.sample.question, text=text or "")

    def _contexts(self) -> list[str]:
        return list(self.sample.contexts or ())

    async def _claims(self, text: str | None) -> Outcome[list[str]]:
        if self.mode == "score":
            return await probes.split_claims(
                self.client,
                question=self.sample.question,
                text=text or "",
                language=self.prompt_language,
            )
        return await steps.extract_claims(
            self.client,
            question=self.sample.question,
            text=text or "",
            language=self.prompt_language,
        )

    async def _verify(
        self,
        claims: Awaitable[Outcome[list[str]]],
        passages: list[str],
        *,
        by_k: bool = False,
        examples: bool = False,
    ) -> Outcome[list[ClaimVerdict]]:
        """The claims checked against the passages (``examples``: with the worked examples
        of :attr:`JudgeOptions.few_shot`, if any)."""
        extracted = await claims
        shots = self.options.few_shot if examples else ()
        if not extracted.ok or not extracted.value:
            return Outcome([] if extracted.ok else None, extracted.status, extracted.error)
        if self.mode == "score" and by_k:
            return await probes.score_claims_by_k(
                self.client,
                passages=passages,
                question=self.sample.question,
                claims=extracted.value,
                language=self.prompt_language,
                reasons=self.options.reasons,
            )
        if self.mode == "score":
            return await probes.score_claims(
                self.client,
                passages=passages,
                question=self.sample.question,
                claims=extracted.value,
                language=self.prompt_language,
                reasons=self.options.reasons,
                examples=support_turns(shots, self.prompt_language) if shots else NO_EXAMPLES,
            )
        return await steps.verify_claims(
            self.client,
            passages=passages,
            claims=extracted.value,
            language=self.prompt_language,
            probabilities=self.options.support_probability,
            examples=verify_turns(shots, self.prompt_language) if shots else NO_EXAMPLES,
            support_examples=support_turns(shots, self.prompt_language) if shots else NO_EXAMPLES,
        )

    async def _once(self, name: str, start: Callable[[], Awaitable[V]]) -> V:
        """Run ``start`` the first time ``name`` is asked for; later callers share the result
        (and, in a lockstep, count as waiting while another task's step runs)."""
        if name not in self._memo:
            self._memo[name] = asyncio.ensure_future(start())
            return cast(V, await self._memo[name])
        started = self._memo[name]
        if started.done():
            return cast(V, started.result())
        with waiting_elsewhere():
            return cast(V, await started)
