"""Generate and judge every k of one question, in the order that lets llama.cpp reuse its cache.

llama.cpp keeps the KV cache of the previous prompt and re-reads only what differs after the
longest common prefix; any call in between evicts it (../shared/DESIGN.md has the measured
cost). So, per question:

1. the answers for every k, in ascending k back to back: each prompt extends the previous one;
2. the steps that read no passage, for every k: the answers' claims, reverse questions
   (answer relevancy), completeness against the reference — short prompts, and cache hits
   wherever two ks gave the same answer;
3. the judges that read the passages, in ascending k back to back: the passages come first in
   the verification prompt, so k's prompt shares k-1's passages as its prefix;
4. the one-pass judges over the top K (context recall for every k), which extend k = K's
   passages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rag_judge.backends.client import ModelClient
from rag_judge.backends.embedding_client import EmbeddingClient
from rag_judge.core.language import detect_language
from rag_judge.core.types import JudgeResult, RagSample
from rag_judge.data.eval_sets import EvalQuery
from rag_judge.jobs.sweep.plan import SweepPlan
from rag_judge.jobs.sweep.rows import AnswerSource, QuestionRun
from rag_judge.judges import JUDGES, JudgeOptions, SampleWork
from rag_judge.judges.steps import Outcome
from rag_judge.pipeline.generate import Generation, generate_answer
from rag_judge.prompts.templates import prompt_languages


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
        generations = [
            Generation(answer=answers[k], status="ok")
            if answers
            else await generate_answer(
                self.generator,
                question=query.question,
                contexts=contexts[:k],
                language=prompt_language,
            )
            for k in self.plan.ks
        ]
        top = self._work(query, contexts, None, language)
        works = [
            self._work(query, contexts[:k], generation.answer, language, top=top)
            for k, generation in zip(self.plan.ks, generations, strict=True)
        ]
        # Judges whose prompts hold no passage run before the passage-heavy ones.
        free = [n for n in self.plan.per_k if not JUDGES[n].reads_passages]
        reading = [n for n in self.plan.per_k if JUDGES[n].reads_passages]
        judged: list[dict[str, JudgeResult]] = [{} for _ in works]
        for work, out in zip(works, judged, strict=True):
            if reading and work.sample.answer is not None:
                await work.answer_claims()  # memoised: the passage judges reuse it
            for name in free:
                out[name] = await JUDGES[name](work)
        for work, out in zip(works, judged, strict=True):
            for name in reading:
                out[name] = await JUDGES[name](work)
        once = {name: await JUDGES[name](top) for name in self.plan.once}
        per_k = [{name: out[name] for name in self.plan.per_k} for out in judged]
        source: AnswerSource = "external" if answers else "generated"
        return QuestionRun(query, language, len(contexts), tuple(generations), once, per_k, source)

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
        sample = RagSample(
            id=query.id,
            question=query.question,
            contexts=tuple(contexts),
            answer=answer,
            reference=query.answers[0] if query.answers else None,
            references=tuple(query.answers[1:]),
            language=language,
        )
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
