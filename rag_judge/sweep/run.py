"""Run a k-sweep: retrieve top K once, answer for every k, judge every k, score retrieval per k.

Per question, the model sees the calls in the order that lets llama.cpp reuse its KV cache:
every k's answer in ascending k back to back (each prompt extends the previous one), then the
judges in ascending k. Context recall (and precision) for every k comes from one pass over the
top K. Questions run one at a time when the client allows one call at a time (the local model),
else up to the client's concurrency. Every model call goes through the client and its response
cache, so re-running a finished sweep makes no model call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rag_judge.backends.client import ModelClient
from rag_judge.backends.embedding_client import EmbeddingClient
from rag_judge.errors import InputError
from rag_judge.eval_sets import EvalQuery, EvalSet
from rag_judge.judges import JUDGES, JudgeOptions, SampleWork
from rag_judge.judges.steps import Outcome
from rag_judge.language import detect_language
from rag_judge.pipeline import Chunk, Retriever
from rag_judge.prompts import prompt_languages
from rag_judge.retrieval.text_relevance import DEFAULT_THRESHOLD
from rag_judge.sweep.generate import generate_answer
from rag_judge.sweep.plan import SWEEP_METRICS, SweepPlan, plan_sweep
from rag_judge.sweep.result import SweepResult, build_frame
from rag_judge.sweep.retrieval_by_k import Values, id_metrics, text_metrics
from rag_judge.sweep.rows import QuestionRun, question_rows
from rag_judge.types import JudgeResult, RagSample

Progress = Callable[[str], None]
"""Called with each question's id once all its ks are judged (e.g. to advance a bar)."""


async def run_sweep(
    eval_set: EvalSet,
    *,
    retriever: Retriever,
    chunks: Sequence[Chunk],
    client: ModelClient,
    embedder: EmbeddingClient | None = None,
    ks: Iterable[int] = range(1, 11),
    metrics: Iterable[str] = SWEEP_METRICS,
    options: JudgeOptions | None = None,
    text_threshold: float = DEFAULT_THRESHOLD,
    progress: Progress | None = None,
) -> SweepResult:
    """Sweep k over the eval set's questions with one retriever, generator and judge model.

    Args:
        eval_set: Questions, reference answers, qrels and the manifest's not-applicable list.
        retriever: The retriever under test (BM25, dense, hybrid, ...).
        chunks: The chunks the retriever indexes (their texts are the contexts).
        client: Model client for generation and judging; give it a ``ResponseCache`` to make
            the sweep resumable.
        embedder: Embedding client for answer relevancy (skipped without one).
        ks: Cutoffs to sweep; run in ascending order.
        metrics: Judge names; those the set cannot support are skipped and reported.
        options: Judge options (reverse questions, noncommittal policy, support probability).
        text_threshold: n-gram coverage for relevance by answer text.
        progress: Called with each finished question's id.
    """
    plan = plan_sweep(eval_set, ks, metrics, has_embedder=embedder is not None)
    queries = list(eval_set.queries)
    hits = await retriever.search([q.question for q in queries], plan.k_max)
    rankings = {q.id: [h.chunk_id for h in ranked] for q, ranked in zip(queries, hits, strict=True)}
    texts = {c.id: c.text for c in chunks}
    if unknown := sorted({c for ids in rankings.values() for c in ids} - set(texts)):
        raise InputError(
            f"the retriever returned chunk ids not in chunks, e.g. {unknown[0]!r}",
            field="chunks",
        )
    # Pure and cheap: scored before any model call, so a data problem fails fast.
    by_id, by_text, uncovered = _retrieval_values(
        eval_set, rankings, chunks, plan.ks, text_threshold
    )
    runner = _Runner(plan, client, embedder, options or JudgeOptions())
    gate = asyncio.Semaphore(client.policy.concurrency)

    async def one(query: EvalQuery) -> QuestionRun:
        async with gate:
            done = await runner.question(query, [texts[c] for c in rankings[query.id]])
        if progress is not None:
            progress(query.id)
        return done

    runs = await asyncio.gather(*(one(q) for q in queries))
    rows = [row for run in runs for row in question_rows(run, plan)]
    frame = build_frame(rows, plan, by_id, by_text)
    return SweepResult(
        per_question=frame,
        ks=plan.ks,
        metrics=plan.metrics,
        skipped=dict(plan.skipped),
        uncovered=uncovered,
        model=client.name,
        ledger=client.ledger,
    )


def _retrieval_values(
    eval_set: EvalSet,
    rankings: dict[str, list[str]],
    chunks: Sequence[Chunk],
    ks: Sequence[int],
    threshold: float,
) -> tuple[Values, Values, dict[str, str]]:
    """Retrieval measures per question and k, by document id and by answer text."""
    by_id = id_metrics(rankings, {c.id: c.doc_id for c in chunks}, eval_set.qrels, ks)
    references = {q.id: q.answers[0] for q in eval_set.queries if q.answers}
    texts = {c.id: c.text for c in chunks}
    by_text, uncovered = text_metrics(rankings, texts, references, ks, threshold=threshold)
    return by_id, by_text, uncovered


def sweep(eval_set: EvalSet, **options: Any) -> SweepResult:
    """:func:`run_sweep` from synchronous code (same keyword arguments)."""
    return asyncio.run(run_sweep(eval_set, **options))


@dataclass(frozen=True)
class _Runner:
    """Runs one question's generations and judges in KV-cache-friendly order."""

    plan: SweepPlan
    client: ModelClient
    embedder: EmbeddingClient | None
    options: JudgeOptions

    async def question(self, query: EvalQuery, contexts: list[str]) -> QuestionRun:
        """All ks of one question: answers in ascending k, then one-pass judges, then per k."""
        language = detect_language(query.question)
        prompt_language = language if language in prompt_languages() else "en"
        generations = [
            await generate_answer(
                self.client,
                question=query.question,
                contexts=contexts[:k],
                language=prompt_language,
            )
            for k in self.plan.ks
        ]
        top = self._work(query, contexts, None, language)
        once = {name: await JUDGES[name](top) for name in self.plan.once}
        per_k: list[dict[str, JudgeResult]] = []
        for k, generation in zip(self.plan.ks, generations, strict=True):
            work = self._work(query, contexts[:k], generation.answer, language, top=top)
            per_k.append({name: await JUDGES[name](work) for name in self.plan.per_k})
        return QuestionRun(query, language, len(contexts), tuple(generations), once, per_k)

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
