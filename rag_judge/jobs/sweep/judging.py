"""Generate and judge every k of one question, in the order that lets llama.cpp reuse its cache.

llama.cpp keeps the KV cache of the previous prompt and re-reads only what differs after the
longest common prefix; any call in between evicts it (../shared/DESIGN.md has the measured
cost). So, per question:

1. for every k in ascending order, its answer, and then at once — when the answer's claims need
   no model call (a fragment answer, short plain statements: the scoring path splits them
   itself) — the judges that read the passages: the generator's prompt (``generate/answer``)
   begins with the judges' system prompt, passage block and question line, so the judge
   re-reads only the answer and its instruction, and k + 1's prompt extends k's passages;
2. the one-pass judges over the top K (context recall for every k), which ask for the top k
   from k = K down: each prompt's passages are a prefix of the one before, the first of the
   last answer's, so only the prompts' last lines are read;
3. the steps that read no passage, for every k: the other answers' claims, reverse questions
   (answer relevancy), completeness against the reference — short prompts, and cache hits
   wherever two ks gave the same answer;
4. the passage-reading judges of the answers step 1 left (their claims took a model call,
   which evicted the passages), in ascending k back to back; when there are any, step 2 comes
   after them, whose last prompt then holds the top K.

The reference's claims, shared by every k, are split first, where a model call evicts nothing.

When one backend that runs calls together (the embedded model) both answers and judges, steps 1,
2 and 4 run every k at once in lockstep (:mod:`rag_judge.backends.wrapper.lockstep`): every k's
answer in one llama.cpp pass, then every k's probe, each reading the ks' shared prefix once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.backends.wrapper.lockstep import Lockstep, can_run_together
from rag_judge.core.language import detect_language
from rag_judge.core.types import JudgeResult, RagSample
from rag_judge.data.eval_sets import EvalQuery
from rag_judge.jobs.sweep.plan import SweepPlan
from rag_judge.jobs.sweep.rows import AnswerSource, QuestionRun
from rag_judge.judges import JUDGES, JudgeOptions, SampleWork
from rag_judge.judges.steps import Outcome
from rag_judge.pipeline.generate import Generation, generate_answer
from rag_judge.prompts.templates import prompt_languages

T = TypeVar("T")


@dataclass(frozen=True)
class QuestionRunner:
    """Runs one question's generations and judges in KV-cache-friendly order."""

    plan: SweepPlan
    client: ModelClient
    """The judge."""
    generator: ModelClient
    """The model that answers (often the judge's own client)."""
    embedder: EmbeddingClient | None
    options: JudgeOptions

    async def question(
        self, query: EvalQuery, contexts: list[str], answers: Mapping[int, str]
    ) -> QuestionRun:
        """All ks of one question, in the order of the module docstring.

        ``answers`` (per k, from an external RAG) replace generation; empty: we generate.
        """
        language = detect_language(query.question)
        prompt_language = language if language in prompt_languages() else "en"
        free = [n for n in self.plan.per_k if not JUDGES[n].reads_passages]
        reading = [n for n in self.plan.per_k if JUDGES[n].reads_passages]
        top = self._work(query, contexts, None, language)
        if query.answers and self.plan.once:
            await top.reference_claims()  # first: a call here evicts no passage read for k
        judged: list[dict[str, JudgeResult]] = [{} for _ in self.plan.ks]

        async def first_step(k: int, out: dict[str, JudgeResult]) -> tuple[Generation, SampleWork]:
            generation = (
                Generation(answer=answers[k], status="ok")
                if answers
                else await generate_answer(
                    self.generator,
                    question=query.question,
                    contexts=contexts[:k],
                    language=prompt_language,
                )
            )
            work = self._work(query, contexts[:k], generation.answer, language, top=top)
            if reading and work.answer_claims_need_no_call():  # step 1: passages still cached
                for name in reading:
                    out[name] = await JUDGES[name](work)
            return generation, work

        steps = [first_step(k, out) for k, out in zip(self.plan.ks, judged, strict=True)]
        firsts = await self._in_order(steps)
        generations = [generation for generation, _ in firsts]
        works = [work for _, work in firsts]
        left = [(work, out) for work, out in zip(works, judged, strict=True) if reading and not out]
        once = {}
        if not left:  # step 2: the top K are still cached from the last answer
            once = await self._once(top)
        for work, _ in left:
            if work.sample.answer is not None:
                await work.answer_claims()  # step 3, memoised: the passage judges reuse it
        for work, out in zip(works, judged, strict=True):
            for name in free:
                out[name] = await JUDGES[name](work)

        async def read(work: SampleWork, out: dict[str, JudgeResult]) -> None:
            for name in reading:
                out[name] = await JUDGES[name](work)

        await self._in_order([read(work, out) for work, out in left])  # step 4
        if left:  # after step 4, whose last prompt holds the top K
            once = await self._once(top)
        per_k = [{name: out[name] for name in self.plan.per_k} for out in judged]
        source: AnswerSource = "external" if answers else "generated"
        return QuestionRun(query, language, len(contexts), tuple(generations), once, per_k, source)

    async def _in_order(self, steps: Sequence[Awaitable[T]]) -> list[T]:
        """Each k's step of the module docstring: in lockstep (every k's first call together,
        then every k's next...) when the model runs calls together, else in ascending k."""
        if self._in_lockstep():
            return await Lockstep().gather(steps)
        return [await step for step in steps]

    async def _once(self, top: SampleWork) -> dict[str, JudgeResult]:
        """The one-pass judges over the top K (in a lockstep of their own when the model runs
        calls together, so that they read the passages the shared-prefix context holds)."""
        names = list(self.plan.once)
        results = await self._in_order([JUDGES[name](top) for name in names])
        return dict(zip(names, results, strict=True))

    def _in_lockstep(self) -> bool:
        """True when the model that answers and the judge are one backend running calls together."""
        backend = self.client.backend
        return can_run_together(backend) and self.generator.backend is backend

    def _work(
        self,
        query: EvalQuery,
        contexts: list[str],
        answer: str | None,
        language: str,
        *,
        top: SampleWork | None = None,
    ) -> SampleWork:
        """The judging work of one sample; with ``top``, sharing its reference claims."""
        sample = sample_of(query, contexts, answer, language)
        embedder = self.embedder
        chooser = None if embedder is None else (lambda _language: embedder)
        if top is None:
            return SampleWork(
                sample,
                language=language,
                client=self.client,
                embedder=chooser,
                options=self.options,
            )
        return _SharedReference(
            sample,
            top=top,
            language=language,
            client=self.client,
            embedder=chooser,
            options=self.options,
        )


def sample_of(
    query: EvalQuery, contexts: list[str], answer: str | None, language: str
) -> RagSample:
    """One (question, k) of a sweep as a row to judge: its top k, its answer, its references."""
    return RagSample(
        id=query.id,
        question=query.question,
        contexts=tuple(contexts),
        answer=answer,
        reference=query.answers[0] if query.answers else None,
        references=tuple(query.answers[1:]),
        language=language,
    )


class _SharedReference(SampleWork):
    """A k's work that takes the reference's claims from the top-K work: extracted once."""

    def __init__(
        self,
        sample: RagSample,
        *,
        top: SampleWork,
        language: str,
        client: ModelClient,
        embedder: Callable[[str], EmbeddingClient] | None,
        options: JudgeOptions,
    ) -> None:
        super().__init__(
            sample, language=language, client=client, embedder=embedder, options=options
        )
        self.top = top
        """The question's top-K work, whose reference claims every k shares."""

    async def reference_claims(self) -> Outcome[list[str]]:
        """The reference's claims, shared by every k of the question."""
        return await self.top.reference_claims()
