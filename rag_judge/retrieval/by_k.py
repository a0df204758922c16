"""Retrieval quality of the top k, for every k of a sweep, by document id and by answer text.

By id: a chunk stands for its document; the top-k chunks become a document ranking by keeping
each document's first (best) occurrence, and the eval set's document-level qrels score it.
Precision@k still divides by k (trec_eval), so two chunks of one document count once.

By answer text: a chunk is relevant when it covers a fragment of the reference answer
(:mod:`rag_judge.retrieval.text_relevance`); chunk-level qrels score the chunk ranking, and
joint recall asks for every fragment. A question whose reference some fragment of no chunk in
the index covers is left out of the text metrics (its values are missing): a chunking gap is
not a retrieval failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rag_judge.retrieval import evaluate, parse_measure
from rag_judge.retrieval.text_relevance import (
    DEFAULT_THRESHOLD,
    ChunkIndex,
    match_references,
    text_qrels,
    text_requirements,
)

ID_MEASURES = ("recall", "precision", "hit_rate", "mrr", "ndcg")
"""Measures by document id, each computed at the sweep's k (columns ``doc_<measure>``)."""
TEXT_MEASURES = (*ID_MEASURES, "joint_recall")
"""Measures by answer text, at the sweep's k (columns ``text_<measure>``)."""
UNCOVERED = "no chunk in the index covers a fragment of the reference answer"

Values = dict[tuple[str, int], dict[str, float]]
"""``(question_id, k) -> {column: value}``."""


def doc_ranking(chunk_ids: Sequence[str], doc_of: Mapping[str, str]) -> list[str]:
    """The documents of ranked chunks, in rank order, each at its first occurrence."""
    return list(dict.fromkeys(doc_of[c] for c in chunk_ids))


def id_metrics(
    rankings: Mapping[str, Sequence[str]],
    doc_of: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    ks: Iterable[int],
) -> Values:
    """Document-level measures of each question's top k chunks, for every k.

    Questions without qrels get no values. Queries with an empty ranking score 0.
    """
    judged = {q: dict(qrels[q]) for q in rankings if q in qrels}
    out: Values = {}
    if not judged:
        return out
    for k in ks:
        run = {q: doc_ranking(rankings[q][:k], doc_of) for q in judged}
        out.update(_scored(judged, run, ID_MEASURES, k, "doc"))
    return out


def text_metrics(
    rankings: Mapping[str, Sequence[str]],
    chunk_texts: Mapping[str, str],
    references: Mapping[str, str],
    ks: Iterable[int],
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> tuple[Values, dict[str, str]]:
    """Chunk-level measures by answer text for every k, and the questions left out (why).

    Args:
        rankings: Chunk ids per question, best first.
        chunk_texts: Every chunk of the index, ``id -> text`` (the coverage check needs all).
        references: The reference answer per question (questions without one are skipped).
        ks: The cutoffs.
        threshold: n-gram coverage at which a chunk covers a fragment.
    """
    matches = match_references(
        {q: r for q, r in references.items() if q in rankings and r.strip()},
        ChunkIndex(chunk_texts),
        threshold=threshold,
    )
    excluded = {q: UNCOVERED for q, m in matches.items() if m.uncovered_fragments}
    qrels = {q: r for q, r in text_qrels(matches).items() if q not in excluded}
    out: Values = {}
    if not qrels:
        return out, excluded
    requirements = text_requirements(matches)
    for k in ks:
        run = {q: list(rankings[q][:k]) for q in qrels}
        out.update(_scored(qrels, run, TEXT_MEASURES, k, "text", requirements=requirements))
    return out, excluded


def _scored(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, list[str]],
    measures: Sequence[str],
    k: int,
    prefix: str,
    requirements: Mapping[str, list[frozenset[str]]] | None = None,
) -> Values:
    names = {parse_measure(f"{m}@{k}").name: f"{prefix}_{m}" for m in measures}
    result = evaluate(
        {q: dict(g) for q, g in qrels.items()},
        run,
        list(names),
        missing="zero",
        requirements=requirements,
    )
    return {
        (qid, k): {names[name]: value for name, value in row.items()}
        for qid, row in result.per_query().items()
    }
