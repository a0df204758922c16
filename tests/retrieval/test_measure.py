"""Measure names parse into values; bad names say what is known."""

from __future__ import annotations

import pytest

from rag_judge.core.errors import UnknownMeasureError
from rag_judge.retrieval import Measure, parse_measure, parse_measures


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ndcg@10", "ndcg@10"),
        ("NDCG@10", "ndcg@10"),
        ("ndcg_cut_10", "ndcg@10"),
        ("ndcg_cut.10", "ndcg@10"),
        ("P_5", "precision@5"),
        ("P.5", "precision@5"),
        ("p@5", "precision@5"),
        ("set_P", "precision"),
        ("set_F", "f1"),
        ("success_1", "hit_rate@1"),
        ("hit_rate@5", "hit_rate@5"),
        ("recip_rank", "mrr"),
        ("mrr@10", "mrr@10"),
        ("Rprec", "rprec"),
        ("map_cut_100", "map@100"),
        ("ndcg_exp@3", "ndcg_exp@3"),
        ("joint_recall@5", "joint_recall@5"),
        ("ndcg[2=9,1=3]@10", "ndcg[1=3,2=9]@10"),
        ("ndcg[1=3,2=9,4=4.5]", "ndcg[1=3,2=9,4=4.5]"),
        (" recall@1000 ", "recall@1000"),
    ],
)
def test_parses_canonical_and_trec_eval_spellings(text: str, canonical: str) -> None:
    assert parse_measure(text).name == canonical
    assert str(parse_measure(canonical)) == canonical


def test_measures_are_hashable_values() -> None:
    assert parse_measure("ndcg@10") == parse_measure("ndcg_cut_10") == Measure("ndcg", 10)
    assert len({parse_measure("P_5"), parse_measure("precision@5")}) == 1
    assert parse_measures(["map", "AP", "ndcg@10", "map"]) == (Measure("map"), Measure("ndcg", 10))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndcg@-3", "positive integer"),
        ("ndcg@0", "positive integer"),
        ("recall@2.5", "positive integer"),
        ("bleu@4", "unknown measure 'bleu@4'"),
        ("", "unknown measure"),
        ("rprec@5", "takes no cutoff"),
        ("map[1=2]", "apply to 'ndcg' only"),
        ("ndcg[1:2]", "grade=gain"),
        ("ndcg[1=nan]", "finite"),
    ],
)
def test_bad_measures_raise_clear_errors(text: str, message: str) -> None:
    with pytest.raises(UnknownMeasureError, match=message.replace("[", r"\[")):
        parse_measure(text)


def test_unknown_measure_lists_known_ones() -> None:
    with pytest.raises(UnknownMeasureError) as error:
        parse_measure("nDCG_at_ten")
    assert "ndcg@k" in str(error.value)
    assert "hit_rate@k" in str(error.value)


def test_binary_measures_are_flagged_for_mcnemar() -> None:
    assert parse_measure("hit_rate@5").is_binary
    assert parse_measure("joint_recall@5").is_binary
    assert not parse_measure("recall@5").is_binary
