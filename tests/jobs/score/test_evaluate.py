"""evaluate(): query selection policies, input forms, joint recall and hand-derived values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rag_judge.core.errors import InputError
from rag_judge.retrieval import evaluate, rank_documents

QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": 1}, "q2": {"x": 1}, "q3": {"y": 0}}
RUN = {"q1": ["c", "b", "a", "z"], "q2": ["w", "v"], "q3": ["y"]}


def test_hand_derived_values() -> None:
    result = evaluate(
        QRELS,
        RUN,
        ["precision@2", "recall@3", "f1@3", "mrr", "map", "ndcg@3", "ndcg_exp@3", "rprec"],
    ).per_query()["q1"]
    # q1 ranking: c(1) b(0) a(2) z(unjudged); relevant = {a, c, d}, R = 3.
    assert result["precision@2"] == 0.5  # c
    assert result["recall@3"] == pytest.approx(2 / 3)  # c, a
    p3, r3 = 2 / 3, 2 / 3
    assert result["f1@3"] == pytest.approx(2 * p3 * r3 / (p3 + r3))
    assert result["mrr"] == 1.0
    assert result["map"] == pytest.approx((1 / 1 + 2 / 3) / 3)  # d never retrieved adds 0
    dcg = 1 / math.log2(2) + 0 + 2 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)  # grades 2, 1, 1
    assert result["ndcg@3"] == pytest.approx(dcg / idcg)
    dcg_exp = 1 / math.log2(2) + 3 / math.log2(4)  # 2^1-1, 2^2-1
    idcg_exp = 3 + 1 / math.log2(3) + 1 / math.log2(4)
    assert result["ndcg_exp@3"] == pytest.approx(dcg_exp / idcg_exp)
    assert result["rprec"] == pytest.approx(2 / 3)  # c, a in top 3


def test_tie_rule_is_score_desc_then_doc_id_desc() -> None:
    assert rank_documents({"a": 1.0, "b": 1.0, "c": 2.0, "B": 1.0}) == ["c", "b", "a", "B"]
    # A list keeps its order: list order is rank.
    assert rank_documents(["a", "c", "b"]) == ["a", "c", "b"]


def test_query_without_relevant_documents_scores_zero_and_is_listed() -> None:
    result = evaluate(QRELS, RUN, ["recall@1", "ndcg@1"])
    assert result.query_ids == ("q1", "q2", "q3")
    assert result.per_query()["q3"] == {"recall@1": 0.0, "ndcg@1": 0.0}
    assert result.no_relevant == ("q3",)


def test_no_relevant_skip_leaves_them_out_with_a_reason() -> None:
    result = evaluate(QRELS, RUN, ["recall@1"], no_relevant="skip")
    assert result.query_ids == ("q1", "q2")
    assert "no document with grade >= 1" in result.excluded["q3"]


def test_missing_queries_skip_or_zero() -> None:
    run = {"q1": RUN["q1"], "extra": ["e"]}
    skipped = evaluate(QRELS, run, ["hit_rate@1"])
    assert skipped.query_ids == ("q1",)
    assert skipped.excluded == {
        "extra": "not in the qrels (no relevance judgements)",
        "q2": "no ranking in the run",
        "q3": "no ranking in the run",
    }
    zero = evaluate(QRELS, run, ["hit_rate@1"], missing="zero")
    assert zero.query_ids == ("q1", "q2", "q3")
    assert zero.aggregate()["hit_rate@1"] == pytest.approx(1 / 3)


def test_user_exclusions_carry_their_reason() -> None:
    result = evaluate(QRELS, RUN, ["mrr"], exclude={"q2": "answer not in any chunk"})
    assert result.query_ids == ("q1", "q3")
    assert result.excluded == {"q2": "answer not in any chunk"}


def test_joint_recall_default_needs_every_relevant_document() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": ["a", "x", "b"]}
    values = evaluate(qrels, run, ["joint_recall@2", "joint_recall@3", "recall@2"]).aggregate()
    assert values == {"joint_recall@2": 0.0, "joint_recall@3": 1.0, "recall@2": 0.5}


def test_joint_recall_with_alternative_sources_per_requirement() -> None:
    # Two answer fragments: the first is in chunk a or b, the second only in c.
    requirements = {"q": [{"a", "b"}, {"c"}]}
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": ["b", "c", "a"]}
    result = evaluate(
        qrels, run, ["joint_recall@1", "joint_recall@2", "recall@2"], requirements=requirements
    )
    assert result.aggregate() == {
        "joint_recall@1": 0.0,
        "joint_recall@2": 1.0,  # b covers fragment 1, c fragment 2
        "recall@2": pytest.approx(2 / 3),  # single-source recall hides "found everything"
    }


def test_rel_level_and_judged_only() -> None:
    assert evaluate(QRELS, RUN, ["recall@3"], rel_level=2).per_query()["q1"]["recall@3"] == 1.0
    # judged_only removes the unjudged 'z', so the relevant 'a' moves up to rank 1.
    judged = evaluate({"q": {"a": 1, "b": 0}}, {"q": ["z", "a", "b"]}, ["mrr"], judged_only=True)
    assert judged.aggregate()["mrr"] == 1.0


def test_max_depth_truncates_rankings() -> None:
    result = evaluate(QRELS, RUN, ["recall", "num_ret"], max_depth=1)
    assert result.per_query()["q1"] == {"recall": pytest.approx(1 / 3), "num_ret": 1.0}


def test_dataframes_in_and_out() -> None:
    qrels = pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "relevance": [1, 0]})
    scored = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [0.1, 0.9]})
    ranked = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [2, 1]})
    for run in (scored, ranked):
        frame = evaluate(qrels, run, ["mrr"]).to_dataframe()
        assert frame.loc["q", "mrr"] == 0.5


def test_count_measures_sum_in_the_aggregate_like_trec_eval() -> None:
    agg = evaluate(QRELS, RUN, ["num_ret", "num_rel", "num_rel_ret"]).aggregate()
    assert agg == {"num_ret": 7.0, "num_rel": 4.0, "num_rel_ret": 2.0}


def test_negative_grades_are_unjudged_never_relevant() -> None:
    result = evaluate({"q": {"a": -1, "b": 1}}, {"q": ["a", "b"]}, ["mrr", "num_rel", "ndcg"])
    assert result.aggregate() == {
        "mrr": 0.5,
        "num_rel": 1.0,
        "ndcg": pytest.approx(1 / math.log2(3)),
    }
    # A query judged only with negative grades has nothing relevant: scored 0 and listed.
    only_negative = evaluate({"q": {"a": -1}}, {"q": ["a", "b"]}, ["ndcg@2", "num_ret"])
    assert only_negative.per_query()["q"] == {"ndcg@2": 0.0, "num_ret": 2.0}
    assert only_negative.no_relevant == ("q",)


@pytest.mark.parametrize(
    ("qrels", "run", "kwargs", "message"),
    [
        ({"q": {"a": 1}}, {"q": {"a": float("nan")}}, {}, "not a finite number"),
        ({"q": {"a": 1}}, {"q": ["a", "a"]}, {}, "appears twice"),
        ({"q": {"a": 1}}, {"q": "a b"}, {}, "got str"),
        ({"q": {"a": 1.5}}, {"q": ["a"]}, {}, "not an integer"),
        ({"q": {"a": 1}}, {"other": ["a"]}, {}, "no query has both"),
        ({"q": {"a": 1}}, {"q": ["a"]}, {"missing": "maybe"}, "missing must be"),
        ({"q": {"a": 1}}, {"q": ["a"]}, {"max_depth": 0}, "max_depth"),
        ({"q": {"a": 1}}, {"q": ["a"]}, {"rel_level": 1.5}, "rel_level"),
        ("qrels.txt", {"q": ["a"]}, {}, "mapping or DataFrame"),
    ],
)
def test_bad_input_raises_input_error(
    qrels: object, run: object, kwargs: dict, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        evaluate(qrels, run, ["mrr"], **kwargs)  # type: ignore[arg-type]


def test_no_measures_is_an_error() -> None:
    with pytest.raises(InputError, match="no measure"):
        evaluate({"q": {"a": 1}}, {"q": ["a"]}, [])


def test_results_never_contain_nan() -> None:
    result = evaluate(
        {"q": {}, "r": {"a": 0}}, {"q": [], "r": []}, ["ndcg", "f1", "map", "precision"]
    )
    for values in result.per_query().values():
        assert all(math.isfinite(v) for v in values.values())
