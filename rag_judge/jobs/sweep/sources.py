"""Where a sweep's top K come from: our retriever over our chunks, or an external RAG.

Either way, every question's top K and its retrieval values (by document id and by answer
text) are computed before any model call, so a data problem fails fast.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.chunking import Chunk
from rag_judge.pipeline.external.base import ExternalRag, Passage
from rag_judge.retrieval import evaluate, parse_measure
from rag_judge.retrieval.by_k import ID_MEASURES, Values, id_metrics, text_metrics
from rag_judge.retrieval.text_relevance import ChunkIndex, match_question

WITHIN_RETRIEVED: Final = ("precision", "hit_rate", "mrr", "joint_recall")
"""Text measures an external RAG gets: they need the relevance of retrieved passages only."""
NEED_INDEX: Final = ("recall", "ndcg")
"""Text measures it does not: their denominators count relevant passages of the whole index."""
NO_INDEX: Final = (
    "an external RAG shows only its retrieved passages; this measure needs every relevant "
    "passage of its index"
)


@dataclass(frozen=True)
class Retrieved:
    """Each question's top K and its retrieval values, from our index or an external RAG."""

    ids: dict[str, list[str]]
    """Chunk (or passage) ids per question, best first."""
    texts: dict[str, list[str]]
    """Their texts: the contexts."""
    answers: dict[str, Mapping[int, str]]
    """An external RAG's answers per question and k (absent: we generate)."""
    by_id: Values
    by_text: Values
    uncovered: dict[str, str]
    skipped: dict[str, str]
    """Retrieval columns not computed, with the reason."""
    rerank_tokens: dict[str, int] = field(default_factory=dict)
    """Per question, the prompt tokens an LLM reranker sent for it (empty: no such reranker)."""


async def from_index(
    eval_set: EvalSet,
    retriever: Retriever,
    chunks: Sequence[Chunk],
    ks: Sequence[int],
    threshold: float,
) -> Retrieved:
    """Our retriever's top K over ``chunks``, scored by document id and by answer text."""
    queries = list(eval_set.queries)
    hits = await retriever.search([q.question for q in queries], ks[-1])
    spent = getattr(retriever, "last_prompt_tokens", [])
    rerank_tokens = (
        {q.id: int(n) for q, n in zip(queries, spent, strict=True)} if any(spent) else {}
    )
    rankings = {q.id: [h.chunk_id for h in ranked] for q, ranked in zip(queries, hits, strict=True)}
    texts = {c.id: c.text for c in chunks}
    if unknown := sorted({c for ids in rankings.values() for c in ids} - set(texts)):
        raise InputError(
            f"the retriever returned chunk ids not in chunks, e.g. {unknown[0]!r}",
            field="chunks",
        )
    # Pure and cheap: scored before any model call, so a data problem fails fast.
    by_id = id_metrics(rankings, {c.id: c.doc_id for c in chunks}, eval_set.qrels, ks)
    by_text, uncovered = text_metrics(
        rankings, texts, _references(eval_set), ks, threshold=threshold
    )
    contexts = {qid: [texts[c] for c in ids] for qid, ids in rankings.items()}
    return Retrieved(rankings, contexts, {}, by_id, by_text, uncovered, {}, rerank_tokens)


async def from_rag(
    rag: ExternalRag, eval_set: EvalSet, ks: Sequence[int], threshold: float
) -> Retrieved:
    """An external RAG's top K and answers, scored within what it retrieved (see
    :func:`~rag_judge.jobs.sweep.run.sweep_questions`)."""
    queries = list(eval_set.queries)
    got = await rag.retrieve(queries, ks[-1], ks)
    if len(got) != len(queries):
        raise InputError(f"{rag.name} gave {len(got)} retrievals for {len(queries)} questions")
    passages = {q.id: r.passages for q, r in zip(queries, got, strict=True)}
    skipped: dict[str, str] = {}
    by_id: Values = {}
    lacking = sum(p.doc_id is None for ps in passages.values() for p in ps)
    if lacking and eval_set.qrels:
        total = sum(map(len, passages.values()))
        reason = f"{lacking} of {total} passages from {rag.name} carry no doc_id"
        skipped |= dict.fromkeys((f"doc_{m}" for m in ID_MEASURES), reason)
    elif eval_set.qrels:
        doc_rankings = {q: [str(p.doc_id) for p in ps] for q, ps in passages.items()}
        ids = {d for ranking in doc_rankings.values() for d in ranking}
        known = {d.id for d in eval_set.documents}
        if ids and known and not ids & known:  # e.g. a store's UUIDs: every value would be 0
            reason = (
                f"none of the {len(ids)} doc_ids from {rag.name} is a document of the eval set "
                f"(e.g. {min(ids)!r}); give each passage the set's document id"
            )
            skipped |= dict.fromkeys((f"doc_{m}" for m in ID_MEASURES), reason)
        else:
            by_id = id_metrics(doc_rankings, {d: d for d in ids}, eval_set.qrels, ks)
    by_text = _within_retrieved(passages, _references(eval_set), ks, threshold)
    if by_text:
        skipped |= dict.fromkeys((f"text_{m}" for m in NEED_INDEX), NO_INDEX)
    return Retrieved(
        ids={q: [p.id for p in ps] for q, ps in passages.items()},
        texts={q: [p.text for p in ps] for q, ps in passages.items()},
        answers={q.id: r.answers for q, r in zip(queries, got, strict=True) if r.answers},
        by_id=by_id,
        by_text=by_text,
        uncovered={},
        skipped=skipped,
    )


def _within_retrieved(
    passages: Mapping[str, Sequence[Passage]],
    references: Mapping[str, str],
    ks: Sequence[int],
    threshold: float,
) -> Values:
    """Text measures judged within each question's retrieved passages, none excluded.

    A passage covering a reference fragment is relevant (grade 1), every other retrieved
    passage is judged not relevant (grade 0), so a question nothing covers scores 0.
    """
    qrels: dict[str, dict[str, int]] = {}
    needs: dict[str, list[frozenset[str]]] = {}
    for qid, reference in references.items():
        if qid in passages and reference.strip():
            index = ChunkIndex({p.id: p.text for p in passages[qid]})
            match = match_question(qid, reference, index, threshold=threshold)
            qrels[qid] = {p.id: 0 for p in passages[qid]} | dict.fromkeys(match.relevant_doc_ids, 1)
            needs[qid] = match.requirements
    out: Values = {}
    for k in ks if qrels else ():
        names = {parse_measure(f"{m}@{k}").name: f"text_{m}" for m in WITHIN_RETRIEVED}
        run = {qid: [p.id for p in passages[qid][:k]] for qid in qrels}
        result = evaluate(qrels, run, list(names), missing="zero", requirements=needs)
        for qid, row in result.per_query().items():
            out[(qid, k)] = {names[name]: value for name, value in row.items()}
    return out


def _references(eval_set: EvalSet) -> dict[str, str]:
    return {q.id: q.answers[0] for q in eval_set.queries if q.answers}
