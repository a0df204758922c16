"""One candidate through the filters: written, then checked against its chunks, the judge and
the retriever, in that order (the first filter that fails names the verdict).

The reference-support check is the score job's own judge on the session's model (the reference
stands in for an answer, the source chunks for the contexts), so a synthetic set is held to the
same standard as an answer. The near-duplicate filter needs every kept question and runs in the
job (:mod:`.job`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_judge.core.types import RagSample
from rag_judge.jobs.score.options import ScoreOptions
from rag_judge.jobs.score.run import judge_rows
from rag_judge.jobs.synth.options import SynthOptions
from rag_judge.judges import REFERENCE_SUPPORT
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.chunking import Chunk
from rag_judge.pipeline.generate import generate_answer
from rag_judge.runtime.session import Session
from rag_judge.synth.candidates import Candidate, Verdict
from rag_judge.synth.overlap import copy_overlap, is_span, refers_to_passage
from rag_judge.synth.steps import write

TOP_CHECKED = 10
"""How many of the retriever's chunks an unanswerable question is checked against."""
SUPPORT = ScoreOptions(metrics=(REFERENCE_SUPPORT,), reasons=False)
"""The judge that checks a reference against its chunks."""


@dataclass(frozen=True)
class Context:
    """What every candidate's checks read: the chunks by id, the retriever, the options."""

    session: Session
    chunks: Mapping[str, Chunk]
    retriever: Retriever
    options: SynthOptions


async def decide(candidate: Candidate, context: Context) -> Verdict:
    """Write the candidate's question, then run its filters (see the module docstring)."""
    passages = [context.chunks[c].text for c in candidate.chunk_ids]
    written = await write(context.session.client, candidate, passages)
    if written.status != "ok":
        return Verdict(written, "failed", f"{written.status}: {written.error or ''}".strip())
    figures: dict[str, float | None] = {}
    if pointer := refers_to_passage(written.question):
        return Verdict(written, "refers_to_passage", f"says {pointer!r}")
    if written.kind == "factual" and not is_span(written.answer, passages[0]):
        return Verdict(written, "not_a_span", "the answer is not a short span of the chunk")
    limit = context.options.max_overlap
    overlap = figures["overlap"] = round(copy_overlap(written.question, *passages), 4)
    if limit is not None and overlap > limit:
        return Verdict(written, "copies_chunk", f"overlap {overlap} > {limit}", figures)
    if written.kind == "unanswerable":
        return await _check_unanswered(written, context, figures)
    return await _check_supported(written, passages, context, figures)


async def _check_supported(
    written: Candidate, passages: Sequence[str], context: Context, figures: dict[str, float | None]
) -> Verdict:
    """The reference is supported by its chunks together, and (multi-source) by neither alone:
    no single chunk supports every part of a two-part answer (``a; b``), or, for an answer in
    one part, every claim of it."""
    parts = answer_parts(written.answer) if written.kind == "multi_source" else ()
    views: dict[str, tuple[tuple[str, ...], str]] = {"all": (tuple(passages), written.answer)}
    if written.kind == "multi_source":
        for view, passage in (("first", passages[0]), ("second", passages[1])):
            views |= {f"{view}:{n}": ((passage,), part) for n, part in enumerate(parts or [""])}
    samples = [
        RagSample(
            id=f"{written.id}/{view}",
            question=written.question,
            answer=answer or written.answer,
            contexts=texts,
            language=written.language,
        )
        for view, (texts, answer) in views.items()
    ]
    judged = await judge_rows(samples, context.session, SUPPORT)
    results = {
        view: row.results[REFERENCE_SUPPORT]
        for view, row in zip(views, judged.samples, strict=True)
    }
    support = results["all"].value
    figures["support_all"] = None if support is None else round(support, 4)
    if support is None:
        return Verdict(written, "unsupported", f"not judged: {results['all'].status}", figures)
    threshold = context.options.support_threshold
    if support < threshold:
        detail = f"support {figures['support_all']} < {threshold}"
        return Verdict(written, "unsupported", detail, figures)
    alone = []
    for view in ("first", "second") if written.kind == "multi_source" else ():
        mine = [r for v, r in results.items() if v.startswith(f"{view}:")]
        weakest = min((r.value or 0.0) for r in mine)
        figures[f"support_{view}"] = round(weakest, 4)
        if parts:  # two parts: this chunk alone gives both
            whole = weakest >= threshold
        else:  # one part: this chunk alone supports every claim of it
            whole = bool(mine[0].claims) and all(c.verdict == "supported" for c in mine[0].claims)
        if whole:
            alone.append(view)
    if alone:
        return Verdict(
            written, "answerable_alone", f"the {alone[0]} chunk alone supports it", figures
        )
    return Verdict(written, None, "", figures)


def answer_parts(answer: str) -> tuple[str, ...]:
    """A two-part answer's parts (``a; b``, ``甲；乙``); () when it has fewer than two.

    >>> answer_parts("Mach 2; 6 atmospheres"), answer_parts("Mach 2")
    (('Mach 2', '6 atmospheres'), ())
    """
    parts = tuple(p.strip() for p in re.split("[;；]", answer) if p.strip())
    return parts if len(parts) >= 2 else ()


async def _check_unanswered(
    written: Candidate, context: Context, figures: dict[str, float | None]
) -> Verdict:
    """The RAG's own generator, given the retriever's top 10 chunks, writes no answer they
    support: it declines, or what it writes is not supported (the reference-support judge
    below ``answered_threshold``)."""
    (hits,) = await context.retriever.search([written.question], TOP_CHECKED)
    texts = tuple(context.chunks[h.chunk_id].text for h in hits)
    if not texts:
        figures["answered"] = 0.0
        return Verdict(written, None, "no chunk shares a term with it", figures)
    session = context.session
    made = await generate_answer(
        session.generator, question=written.question, contexts=texts, language=written.language
    )
    if made.answer is None:
        return Verdict(written, "failed", f"answered check: {made.status}", figures)
    sample = RagSample(
        id=f"{written.id}/top10",
        question=written.question,
        answer=made.answer,
        contexts=texts,
        language=written.language,
    )
    (row,) = (await judge_rows([sample], session, SUPPORT)).samples
    result = row.results[REFERENCE_SUPPORT]
    if result.status == "no_claims":  # it declined: nothing to check
        figures["answered"] = 0.0
        return Verdict(written, None, "the generator declined", figures)
    if result.value is None:
        return Verdict(written, "failed", f"answered check: {result.status}", figures)
    figures["answered"] = round(result.value, 4)
    if result.value >= context.options.answered_threshold:
        detail = f"answered {made.answer[:80]!r} (support {result.value:.2f})"
        return Verdict(written, "answered_by_top10", detail, figures)
    return Verdict(written, None, "", figures)
