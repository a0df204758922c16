"""Hypothesis properties of the measures: bounds, monotonicity in k, invariance to relabelling."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_judge.retrieval import evaluate, rank_documents

KS = (1, 2, 3, 5, 10)
BOUNDED = [f"{f}@{k}" for f in ("precision", "recall", "f1", "hit_rate", "mrr", "map") for k in KS]
BOUNDED += [f"{f}@{k}" for f in ("ndcg", "ndcg_exp", "joint_recall") for k in KS]
BOUNDED += ["precision", "recall", "f1", "mrr", "map", "ndcg", "ndcg_exp", "rprec"]
MONOTONE = ("recall", "hit_rate", "joint_recall", "mrr", "map")  # non-decreasing in k

docs = st.sampled_from([f"d{i}" for i in range(12)])


@st.composite
def cases(draw: Any) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    qids = draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, unique=True))
    qrels = {
        q: draw(st.dictionaries(docs, st.integers(-1, 3), min_size=1, max_size=8)) for q in qids
    }
    run = {q: draw(st.lists(docs, unique=True, max_size=12)) for q in qids}
    return qrels, run


@settings(max_examples=200)
@given(case=cases(), rel_level=st.integers(1, 3))
def test_every_measure_is_in_the_unit_interval(case: Any, rel_level: int) -> None:
    qrels, run = case
    for values in evaluate(qrels, run, BOUNDED, rel_level=rel_level).per_query().values():
        for name, value in values.items():
            assert 0.0 <= value <= 1.0 + 1e-12, name


@settings(max_examples=200)
@given(case=cases())
def test_cumulative_measures_never_fall_as_k_grows(case: Any) -> None:
    qrels, run = case
    names = [f"{f}@{k}" for f in MONOTONE for k in KS]
    for values in evaluate(qrels, run, names).per_query().values():
        for family in MONOTONE:
            series = [values[f"{family}@{k}"] for k in KS]
            assert series == sorted(series), family


@settings(max_examples=200)
@given(case=cases())
def test_precision_times_k_counts_hits_and_deep_cutoffs_equal_whole_ranking(case: Any) -> None:
    qrels, run = case
    names = ["precision@3", "recall@1000", "recall", "map@1000", "map", "ndcg@1000", "ndcg"]
    result = evaluate(qrels, run, names).per_query()
    for qid, values in result.items():
        hits = sum(1 for d in run[qid][:3] if qrels[qid].get(d, 0) >= 1)
        assert values["precision@3"] * 3 == pytest.approx(hits)
        assert values["recall@1000"] == values["recall"]
        assert values["map@1000"] == values["map"]
        assert values["ndcg@1000"] == pytest.approx(values["ndcg"])


@settings(max_examples=150)
@given(case=cases(), salt=st.text(min_size=1, max_size=3))
def test_relabelling_documents_changes_nothing(case: Any, salt: str) -> None:
    qrels, run = case
    rename = {f"d{i}": f"{salt}-{i}-x" for i in range(12)}
    qrels2 = {q: {rename[d]: g for d, g in docs_.items()} for q, docs_ in qrels.items()}
    run2 = {q: [rename[d] for d in ranking] for q, ranking in run.items()}
    names = ["ndcg@5", "map", "mrr", "recall@3", "joint_recall@5", "rprec"]
    assert evaluate(qrels, run, names).per_query() == evaluate(qrels2, run2, names).per_query()


@settings(max_examples=150)
@given(case=cases())
def test_scores_and_their_ranked_list_give_the_same_numbers(case: Any) -> None:
    qrels, run = case
    # Descending distinct scores reproduce the list order exactly.
    scored = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
    names = ["ndcg@10", "map", "mrr@3", "precision@2"]
    assert evaluate(qrels, run, names).per_query() == evaluate(qrels, scored, names).per_query()
    for q in run:
        assert rank_documents(scored[q]) == run[q]


def test_an_ideal_ranking_scores_one() -> None:
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "d": 0}}
    names = ["ndcg", "ndcg@2", "ndcg_exp@3", "map", "mrr", "rprec", "joint_recall@3"]
    values = evaluate(qrels, {"q": ["a", "b", "c", "d"]}, names).aggregate()
    assert values == dict.fromkeys(names, 1.0)
