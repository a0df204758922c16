"""The synth job's one entry: an eval set's questions from a folder's documents.

The documents are cut with the pipeline's chunker, the chunks ordered across documents
(:func:`~rag_judge.synth.sampling.stratified_order`), and candidates written in rounds: each
round asks for as many of each kind as are still missing, runs them through their filters
(:mod:`.checks`) and then the near-duplicate filter in candidate order, until every kind has its
count, the chunks run out, or a kind has had ``tries_per_question`` candidates per question.
The order depends only on the seed and the chunks, and every call goes through the session's
cache, so an interrupted run re-run asks nothing twice. ``Batch`` replays the whole job in
stages over the cache; ``OnRay`` sends each round's candidates to Ray tasks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rag_judge.core.errors import InputError
from rag_judge.core.language import detect_language
from rag_judge.core.types import Document
from rag_judge.jobs.synth.checks import Context, decide
from rag_judge.jobs.synth.options import LANGUAGES, SynthOptions
from rag_judge.pipeline.bm25 import BM25Retriever
from rag_judge.pipeline.chunking import Chunk, chunk_corpus, chunker_from_spec
from rag_judge.runtime.events import QUIET, Events
from rag_judge.runtime.executors import IN_PROCESS, Batch, Executor, OnRay
from rag_judge.runtime.executors.batched import Stage
from rag_judge.runtime.executors.on_batch import run_on_batch
from rag_judge.runtime.session import Session
from rag_judge.synth.candidates import KINDS, Candidate, Kind, Verdict
from rag_judge.synth.overlap import similarity
from rag_judge.synth.sampling import partner, stratified_order

PARTNERS_SEARCHED = 20
"""Chunks ranked by similarity to a multi-source question's first chunk, to pick its second."""


@dataclass(frozen=True)
class SynthRun:
    """Every candidate's verdict, in the order written, and what the run asked for."""

    chunks: tuple[Chunk, ...]
    verdicts: tuple[Verdict, ...]
    quotas: dict[Kind, int]
    model: str
    seconds: float
    stages: tuple[Stage, ...] = ()
    notes: tuple[str, ...] = field(default=())
    """Why a kind stopped short, when it did."""

    @property
    def kept(self) -> list[Verdict]:
        """The questions of the set, in the order written."""
        return [v for v in self.verdicts if v.kept]


def cut(documents: Sequence[Document], options: SynthOptions) -> tuple[Chunk, ...]:
    """The documents' chunks, as the options' chunker cuts them.

    Raises:
        InputError: the documents give no chunk at all.
    """
    chunks = tuple(chunk_corpus(chunker_from_spec(options.chunking), documents))
    if not chunks:
        raise InputError("the documents have no text to cut into chunks", field="documents")
    return chunks


async def synth_job(
    documents: Sequence[Document],
    session: Session,
    options: SynthOptions,
    *,
    executor: Executor = IN_PROCESS,
    events: Events = QUIET,
) -> SynthRun:
    """Write, filter and keep questions from ``documents`` (see the module docstring);
    ``events`` hears of each candidate's verdict (``finished``) after ``started(questions)``."""
    chunks = cut(documents, options)
    if isinstance(executor, Batch):

        async def work(view: Session, shown: Events) -> SynthRun:
            return await _synthesize(chunks, view, options, shown)

        run = await run_on_batch(work, session, executor, events=events)
        return replace(run.result, stages=tuple(run.stages))
    on_ray = executor if isinstance(executor, OnRay) else None
    return await _synthesize(chunks, session, options, events, on_ray=on_ray)


async def _synthesize(
    chunks: tuple[Chunk, ...],
    session: Session,
    options: SynthOptions,
    events: Events,
    *,
    on_ray: OnRay | None = None,
) -> SynthRun:
    started = time.monotonic()
    quotas = options.quotas()
    events.started(sum(quotas.values()))
    retriever = BM25Retriever.build(list(chunks))
    context = Context(session, {c.id: c for c in chunks}, retriever, options)
    order = iter(stratified_order(chunks, seed=options.seed))
    written = dict.fromkeys(KINDS, 0)
    kept = dict.fromkeys(KINDS, 0)
    verdicts: list[Verdict] = []
    notes: list[str] = []
    if quotas["multi_source"] and len(chunks) < 2:
        quotas["multi_source"] = 0
        notes.append("multi-source: one chunk only, so no question can need two")
    while True:
        batch: list[Candidate] = []
        for kind in KINDS:
            missing = quotas[kind] - kept[kind]
            allowed = quotas[kind] * options.tries_per_question - written[kind]
            for _ in range(max(0, min(missing, allowed))):
                chunk = next(order, None)
                if chunk is None:
                    break
                candidate = await _candidate(kind, written[kind], chunk, context)
                if candidate is not None:
                    batch.append(candidate)
                    written[kind] += 1
        if not batch:
            break
        if on_ray is not None:
            from rag_judge.jobs.synth.on_ray import decide_on_ray

            decided = decide_on_ray(batch, chunks, session, options, on_ray.target)
        else:
            decided = list(await asyncio.gather(*(decide(c, context) for c in batch)))
        for verdict in decided:
            verdict = _unless_duplicate(verdict, verdicts, options.duplicate_similarity)
            verdicts.append(verdict)
            if verdict.kept:
                kept[verdict.candidate.kind] += 1
            events.finished(verdict)
    for kind in KINDS:
        if kept[kind] < quotas[kind]:
            why = (
                "the chunks ran out"
                if next(order, None) is None
                else (
                    f"{written[kind]} candidates written "
                    f"({options.tries_per_question} per question)"
                )
            )
            notes.append(f"{kind}: {kept[kind]} of {quotas[kind]} kept; {why}")
    return SynthRun(
        chunks=chunks,
        verdicts=tuple(verdicts),
        quotas=quotas,
        model=session.client.name,
        seconds=round(time.monotonic() - started, 1),
        notes=tuple(notes),
    )


async def _candidate(kind: Kind, n: int, chunk: Chunk, context: Context) -> Candidate | None:
    """The candidate of ``kind`` on ``chunk`` (multi-source: and its partner; None if none)."""
    language = context.options.language or _prompt_language(chunk.text)
    chunk_ids: tuple[str, ...] = (chunk.id,)
    if kind == "multi_source":
        (hits,) = await context.retriever.search([chunk.text], PARTNERS_SEARCHED)
        second = partner(chunk, [context.chunks[h.chunk_id] for h in hits])
        if second is None:
            others = [c for c in context.chunks.values() if c.doc_id != chunk.doc_id]
            second = others[0] if others else None
        if second is None:
            return None
        chunk_ids = (chunk.id, second.id)
    return Candidate(id=f"{kind}-{n}", kind=kind, chunk_ids=chunk_ids, language=language)


def _prompt_language(text: str) -> str:
    found = detect_language(text)
    return found if found in LANGUAGES else "en"


def _unless_duplicate(verdict: Verdict, earlier: Sequence[Verdict], threshold: float) -> Verdict:
    """The verdict, or near_duplicate when a kept earlier question is this similar."""
    if not verdict.kept:
        return verdict
    question = verdict.candidate.question
    for other in earlier:
        if other.kept and (score := similarity(other.candidate.question, question)) >= threshold:
            figures = verdict.figures | {"similarity": round(score, 4)}
            detail = f"like {other.candidate.id} (similarity {score:.2f})"
            return Verdict(verdict.candidate, "near_duplicate", detail, figures)
    return verdict
