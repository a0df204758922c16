"""Retrieval metrics under answer-text relevance, coverage exclusions and threshold sensitivity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_judge.retrieval.text_eval import evaluate_by_text, threshold_sensitivity
from rag_judge.retrieval.text_relevance import ChunkIndex

CORPUS = {
    "c1": "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
    "c2": "Gustave Eiffel's company designed and built the tower.",
    "c3": "Paris is the capital of France.",
    "c4": "The tower is 330 metres tall.",
}
REFERENCES = {
    "when": "completed in 1889",
    "who-and-when": "Gustave Eiffel's company built it; completed in 1889",
    "height": "The tower is 330 metres tall",
    "unanswerable": "It was painted bright green by the Romans",
}
RUN = {
    "when": ["c3", "c1", "c2"],
    "who-and-when": ["c1", "c3", "c2"],
    "height": ["c4"],
    "unanswerable": ["c1"],
}


def test_uncovered_questions_are_excluded_with_a_reason() -> None:
    scored = evaluate_by_text(REFERENCES, ChunkIndex(CORPUS), RUN, ["hit_rate@1"])
    assert scored.result.query_ids == ("height", "when", "who-and-when")
    reason = scored.result.excluded["unanswerable"]
    assert "covered by no chunk" in reason
    assert list(scored.coverage.uncovered) == ["unanswerable"]


def test_joint_recall_needs_every_fragment() -> None:
    names = ["recall@1", "hit_rate@1", "joint_recall@1", "joint_recall@3"]
    values = evaluate_by_text(REFERENCES, ChunkIndex(CORPUS), RUN, names).result.per_query()
    # Two fragments, in c2 and c1: the top 1 (c1) holds only one of them.
    assert values["who-and-when"] == {
        "recall@1": 0.5,
        "hit_rate@1": 1.0,
        "joint_recall@1": 0.0,
        "joint_recall@3": 1.0,
    }
    assert values["when"]["hit_rate@1"] == 0.0


def test_keeping_uncovered_questions_scores_them_zero() -> None:
    scored = evaluate_by_text(
        REFERENCES, ChunkIndex(CORPUS), RUN, ["hit_rate@3"], exclude_uncovered=False
    )
    assert "unanswerable" in scored.result.query_ids
    assert scored.result.per_query()["unanswerable"] == {"hit_rate@3": 0.0}


def test_threshold_sensitivity_table() -> None:
    table = threshold_sensitivity(
        REFERENCES, ChunkIndex(CORPUS), RUN, ["hit_rate@1"], thresholds=(0.2, 0.5, 1.0)
    )
    assert list(table.columns) == ["threshold", "n_evaluated", "n_uncovered", "hit_rate@1"]
    assert table["threshold"].tolist() == [0.2, 0.5, 1.0]
    # A stricter threshold can only uncover more questions.
    assert table["n_uncovered"].is_monotonic_increasing
    assert (table["n_evaluated"] + table["n_uncovered"] == len(REFERENCES)).all()


def test_real_cmrc_answers_find_their_gold_paragraph() -> None:
    rows = [
        json.loads(line)
        for line in (Path(__file__).parents[1] / "fixtures" / "cmrc_sample.jsonl").open()
    ]
    corpus = {r["doc_id"]: r["text"] for r in rows if r["kind"] == "doc"}
    queries = [r for r in rows if r["kind"] == "query"]
    references = {q["query_id"]: q["answers"][0] for q in queries}
    # A run that puts the gold paragraph (the one the question was written on) first.
    run = {q["query_id"]: [q["doc_id"], *sorted(set(corpus) - {q["doc_id"]})] for q in queries}
    scored = evaluate_by_text(references, ChunkIndex(corpus), run, ["hit_rate@1", "mrr"])
    assert not scored.result.excluded
    assert scored.result.aggregate()["hit_rate@1"] == pytest.approx(1.0)


def test_a_threshold_that_leaves_nothing_gives_none_not_nan() -> None:
    table = threshold_sensitivity(
        {"q": "Gustave Eiffel's company built it"},
        ChunkIndex(CORPUS),
        {"q": ["c2"]},
        ["recall@1"],
        thresholds=(0.5, 0.99),
    )
    records = table.to_dict("records")
    assert records[0]["recall@1"] == 1.0
    assert records[1] == {"threshold": 0.99, "n_evaluated": 0, "n_uncovered": 1, "recall@1": None}
