"""Compare retrievers on one eval set, by document id and by answer text, with paired tests.

Each retriever ranks the top 10 chunks of every question once. Six measures (Recall@1, @5,
@10, MRR@10, nDCG@10, joint Recall@5) are then computed twice:

- **by id**: a chunk stands for its document; the top k chunks become a document ranking
  (each document at its first occurrence, as the k-sweep does) scored against the qrels.
  Questions without a relevant document in the qrels are excluded.
- **by text**: a chunk is relevant when it covers a fragment of the reference answer (n-gram
  coverage, :mod:`rag_judge.retrieval.text_relevance`; the first reference answer, as the
  k-sweep uses); joint recall needs every fragment within the top 5. Questions whose
  reference no chunk covers are excluded (a chunking gap is not a retrieval failure); a set
  without reference answers (Cranfield) has no text measures at all.

Why the two can differ: see :data:`BY_ID_VS_BY_TEXT`. Every retriever is compared with a
baseline on the same questions: paired bootstrap CI of the difference, paired randomization
test, and McNemar's exact test where every per-question value is 0 or 1. Frames hold nullable
values (``Float64``/``Int64``), never NaN.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.compare_retrievers.frames import (
    Values,
    by_type_frame,
    excluded_frame,
    paired_frame,
    per_query_frame,
    summary_frame,
)
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.chunking import Chunk
from rag_judge.retrieval import evaluate, parse_measure
from rag_judge.retrieval.by_k import UNCOVERED, doc_ranking
from rag_judge.retrieval.gold_coverage import check_gold_coverage
from rag_judge.retrieval.text_relevance import (
    DEFAULT_THRESHOLD,
    ChunkIndex,
    TextRelevance,
    match_question,
    validate_threshold,
)

if TYPE_CHECKING:
    from rag_judge.backends.wrapper.ledger import Ledger

MEASURES: Final = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "joint_recall@5")
DEPTH: Final = 10
"""Chunks retrieved per question, once, for every measure."""
_CUTOFFS: Final = sorted({parse_measure(m).cutoff or DEPTH for m in MEASURES})
NO_QRELS: Final = "no qrels for this question"
NO_RELEVANT: Final = "no document with grade >= 1 in the qrels"
NO_REFERENCE: Final = "no reference answer"
NO_REFERENCES: Final = "the eval set has no reference answers"
BY_ID_VS_BY_TEXT: Final = (
    "By id, a chunk counts when its document is the question's gold document (qrels); by "
    "text, when it contains the reference answer (n-gram coverage), whatever document it "
    "comes from. They part both ways. An answer string (a year, a name) often also appears "
    "verbatim in another paragraph (common on CMRC), so text relevance credits paragraphs the "
    "qrels do not. And a chunk of the gold paragraph may not hold the answer: the paragraph is "
    "split into several chunks, or the answer is split across a chunk boundary, so id "
    "relevance credits a chunk text relevance does not. Text recall also divides by every "
    "chunk covering the answer, so it stays low when the answer occurs in many chunks; MRR "
    "and joint recall read more directly. The excluded questions differ too."
)
"""Why the by-id and by-text columns can disagree (also in :attr:`RetrieverComparison.note`)."""

Rankings = Mapping[str, Sequence[str]]
"""``{question_id: [chunk_id, ...]}``, best first."""
ProgressFn = Callable[[str, int, int | None], None]
"""``(step, done, total)``: called as a slow step advances (total None when unknown)."""


@dataclass(frozen=True)
class RetrieverComparison:
    """Retrievers compared on one eval set: means, paired differences, breakdown, exclusions."""

    eval_set: str
    """The eval set's name."""
    retrievers: tuple[str, ...]
    """Retriever names, in the order given."""
    baseline: str
    """The retriever the others are paired with."""
    summary: pd.DataFrame
    """Per retriever, relevance (``id``/``text``) and measure: mean, ci_low, ci_high, n and a
    status (``ok``, ``not applicable``, ``no questions``)."""
    paired: pd.DataFrame
    """Per non-baseline retriever, relevance and measure: both means, difference (retriever
    minus baseline) with its CI, p_randomization, p_mcnemar (NA unless ``binary``), n."""
    by_type: pd.DataFrame
    """Per retriever, relevance and question type: n and the mean of each measure."""
    per_query: pd.DataFrame
    """Per retriever, relevance and question: type and the value of each measure."""
    excluded: pd.DataFrame
    """Questions left out: relevance, query_id, type, reason, detail."""
    text_not_applicable: str | None
    """Why there are no text measures (no reference answers), or None."""
    threshold: float
    """n-gram coverage at which a chunk covers a reference fragment."""
    confidence: float
    """Coverage of every interval."""
    n_questions: int
    """Questions asked (before exclusions)."""
    note: str = BY_ID_VS_BY_TEXT
    """Why by-id and by-text values can differ."""
    ledger: Ledger | None = field(default=None, repr=False, compare=False)
    """Embedding and reranking calls, cache hits and tokens per model (None: not tracked)."""

    def excluded_for(self, relevance: str) -> dict[str, str]:
        """``{query_id: reason}`` of the questions excluded from ``id`` or ``text`` measures."""
        rows = self.excluded[self.excluded["relevance"] == relevance]
        return dict(zip(rows["query_id"], rows["reason"], strict=True))


@dataclass(frozen=True)
class _TextPlan:
    qrels: dict[str, dict[str, int]]
    requirements: dict[str, list[frozenset[str]]]
    excluded: dict[str, tuple[str, str]]
    not_applicable: str | None


def compare_rankings(
    eval_set: EvalSet,
    rankings: Mapping[str, Rankings],
    chunks: Sequence[Chunk],
    *,
    baseline: str | None = None,
    text_threshold: float = DEFAULT_THRESHOLD,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> RetrieverComparison:
    """Score precomputed chunk rankings (``{retriever: {question_id: chunk ids}}``).

    Args:
        eval_set: Questions, qrels and reference answers.
        rankings: Per retriever, each question's chunk ids best first (the top 10 count).
        chunks: Every chunk of the index (text relevance needs them all, and their documents).
        baseline: The retriever the others are paired with (default: the first).
        text_threshold: n-gram coverage at which a chunk covers a reference fragment.
        confidence: Coverage of the bootstrap intervals.
        n_resamples: Bootstrap resamples (the randomization test uses its own 10,000).
        seed: Seed of the bootstrap and the randomization test.

    Raises:
        InputError: no retriever, unknown baseline, a question without a ranking, or a chunk
            id that is not in ``chunks``.
    """
    names = _checked_names(rankings, baseline)
    threshold = validate_threshold(text_threshold)
    doc_of = {chunk.id: chunk.doc_id for chunk in chunks}
    for name in names:
        _check_rankings(name, rankings[name], eval_set, doc_of)
    types = {q.id: q.type for q in eval_set.queries}
    id_excluded = _id_exclusions(eval_set)
    id_ids = [q.id for q in eval_set.queries if q.id not in id_excluded]
    plan = _text_plan(eval_set, chunks, threshold)
    text_ids = list(plan.qrels)
    id_qrels = {q: eval_set.qrels[q] for q in id_ids}
    values: dict[tuple[str, str], Values] = {}
    for name in names:
        top = {q: list(rankings[name][q][:DEPTH]) for q in types}
        if id_ids:
            docs = {q: {k: doc_ranking(top[q][:k], doc_of) for k in _CUTOFFS} for q in id_ids}
            values[name, "id"] = _scored(id_qrels, docs)
        if text_ids:
            cut = {q: {k: top[q][:k] for k in _CUTOFFS} for q in text_ids}
            values[name, "text"] = _scored(plan.qrels, cut, plan.requirements)
    ids = {"id": id_ids, "text": text_ids}
    chosen = baseline or names[0]
    stats: dict[str, Any] = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    per_query = per_query_frame(MEASURES, values, ids, types)
    excluded = {"id": {q: (why, "") for q, why in id_excluded.items()}, "text": plan.excluded}
    return RetrieverComparison(
        eval_set=eval_set.name,
        retrievers=names,
        baseline=chosen,
        summary=summary_frame(names, MEASURES, values, plan.not_applicable, **stats),
        paired=paired_frame(names, chosen, MEASURES, values, **stats),
        by_type=by_type_frame(per_query, MEASURES),
        per_query=per_query,
        excluded=excluded_frame(excluded, types),
        text_not_applicable=plan.not_applicable,
        threshold=threshold,
        confidence=confidence,
        n_questions=len(eval_set.queries),
    )


async def acompare_retrievers(
    eval_set: EvalSet,
    retrievers: Mapping[str, Retriever],
    chunks: Sequence[Chunk],
    *,
    progress: ProgressFn | None = None,
    batch_size: int = 32,
    **options: Any,
) -> RetrieverComparison:
    """Retrieve the top 10 chunks per question with every retriever, then compare them.

    ``options`` are those of :func:`compare_rankings` (baseline, text_threshold, confidence,
    n_resamples, seed). Questions go to each retriever ``batch_size`` at a time, and
    ``progress`` hears of each batch.
    """
    if not retrievers:
        raise InputError("give at least one retriever", field="retrievers")
    questions = [q.question for q in eval_set.queries]
    rankings: dict[str, dict[str, list[str]]] = {}
    for name, retriever in retrievers.items():
        hits: list[list[str]] = []
        for start in range(0, len(questions), batch_size):
            batch = questions[start : start + batch_size]
            found = await retriever.search(batch, DEPTH)
            if len(found) != len(batch):
                raise InputError(
                    f"retriever '{name}' returned {len(found)} rankings for {len(batch)} queries",
                    field="retrievers",
                )
            hits.extend([h.chunk_id for h in ranking] for ranking in found)
            if progress is not None:
                progress(f"retrieving ({name})", len(hits), len(questions))
        rankings[name] = {q.id: ids for q, ids in zip(eval_set.queries, hits, strict=True)}
    return compare_rankings(eval_set, rankings, chunks, **options)


def compare_retrievers(
    eval_set: EvalSet,
    retrievers: Mapping[str, Retriever],
    chunks: Sequence[Chunk],
    *,
    baseline: str | None = None,
    text_threshold: float = DEFAULT_THRESHOLD,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> RetrieverComparison:
    """:func:`acompare_retrievers` from synchronous code (see :func:`compare_rankings`)."""
    return asyncio.run(
        acompare_retrievers(
            eval_set,
            retrievers,
            chunks,
            baseline=baseline,
            text_threshold=text_threshold,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
    )


def _checked_names(rankings: Mapping[str, Rankings], baseline: str | None) -> tuple[str, ...]:
    names = tuple(rankings)
    if not names:
        raise InputError("give at least one retriever", field="retrievers")
    if baseline is not None and baseline not in rankings:
        raise InputError(
            f"baseline '{baseline}' is not one of the retrievers: {', '.join(names)}",
            field="baseline",
        )
    return names


def _check_rankings(
    name: str, rankings: Rankings, eval_set: EvalSet, doc_of: Mapping[str, str]
) -> None:
    for query in eval_set.queries:
        if query.id not in rankings:
            raise InputError(f"no ranking for question '{query.id}'", source=f"retriever {name}")
        unknown = next((c for c in rankings[query.id][:DEPTH] if c not in doc_of), None)
        if unknown is not None:
            raise InputError(
                f"chunk '{unknown}' is not among the chunks",
                source=f"retriever {name}, question '{query.id}'",
                field="chunk_id",
            )


def _id_exclusions(eval_set: EvalSet) -> dict[str, str]:
    excluded: dict[str, str] = {}
    for query in eval_set.queries:
        judged = eval_set.qrels.get(query.id)
        if not judged:
            excluded[query.id] = NO_QRELS
        elif not any(grade >= 1 for grade in judged.values()):
            excluded[query.id] = NO_RELEVANT
    return excluded


def _text_plan(eval_set: EvalSet, chunks: Sequence[Chunk], threshold: float) -> _TextPlan:
    """Chunk qrels and fragment requirements of the covered questions; why others are out."""
    if not eval_set.has_reference_answers:
        reason = eval_set.not_applicable.get("text_relevance", NO_REFERENCES)
        return _TextPlan({}, {}, {}, reason)
    index = ChunkIndex({chunk.id: chunk.text for chunk in chunks})
    excluded: dict[str, tuple[str, str]] = {}
    matches: dict[str, TextRelevance] = {}
    uncovered: dict[str, str] = {}
    for query in eval_set.queries:
        if not query.answers:
            excluded[query.id] = (NO_REFERENCE, "")
            continue
        try:
            match = match_question(query.id, query.answers[0], index, threshold=threshold)
        except InputError:  # a fragment without letters or digits: the check says which
            match = None
        if match is None or match.uncovered_fragments:
            uncovered[query.id] = query.answers[0]
            excluded[query.id] = (UNCOVERED, "")
        else:
            matches[query.id] = match
    details = check_gold_coverage(uncovered, index, threshold=threshold).uncovered
    excluded |= {q: (UNCOVERED, details.get(q, "")) for q in uncovered}
    qrels = {q: dict.fromkeys(sorted(m.relevant_doc_ids), 1) for q, m in matches.items()}
    requirements = {q: m.requirements for q, m in matches.items()}
    return _TextPlan(qrels, requirements, excluded, None)


def _scored(
    qrels: Mapping[str, Mapping[str, int]],
    ranking_at: Mapping[str, Mapping[int, list[str]]],
    requirements: Mapping[str, list[frozenset[str]]] | None = None,
) -> Values:
    """Each measure at its cutoff k, from ``ranking_at[q][k]``, in the question order of qrels."""
    query_ids = list(qrels)
    out: Values = {}
    for k in _CUTOFFS:
        names = [m for m in MEASURES if parse_measure(m).cutoff == k]
        result = evaluate(
            {q: dict(qrels[q]) for q in query_ids},
            {q: ranking_at[q][k] for q in query_ids},
            names,
            missing="zero",
            requirements=requirements,
        )
        position = {q: i for i, q in enumerate(result.query_ids)}
        order = [position[q] for q in query_ids]
        out |= {name: result.values[name][order] for name in names}
    return {name: out[name] for name in MEASURES}
