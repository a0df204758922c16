"""Small cases with known values from peer test suites (ranx, ir_measures, pytrec_eval).

Sources and licences: tests/fixtures/toy/SOURCE*.txt. Each case names the peer test it came from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rag_judge.retrieval import evaluate

TOY = Path(__file__).parents[1] / "fixtures" / "toy"
CASES = json.loads((TOY / "toy_metric_cases.json").read_text())["cases"]

#: Peer measures we do not implement (count of hits, raw DCG, inferred AP).
NOT_IMPLEMENTED = ("hits", "dcg", "infAP")

#: peer measure label -> (our measure with {k} for the case's k, evaluate() settings)
MAPPING: dict[str, tuple[str, dict[str, Any]]] = {
    "hit_rate": ("hit_rate@{k}", {}),
    "hit_rate (success@k)": ("hit_rate@{k}", {}),
    "precision@k": ("precision@{k}", {}),
    "map@k (AP, denominator = #relevant in qrels = 4)": ("map@{k}", {}),
    "mrr@k": ("mrr@{k}", {}),
    "r-precision": ("rprec", {}),
    "recall@k": ("recall@{k}", {}),
    "ndcg (linear gain; ideal from qrels)": ("ndcg@{k}", {}),
    "ndcg (linear gain)": ("ndcg@{k}", {}),
    "ndcg_burges": ("ndcg_exp@{k}", {}),
    "precision (k=0: whole run)": ("precision", {}),
    "recall (whole run)": ("recall", {}),
    "f1 (whole run; 0 when P+R=0)": ("f1", {}),
    "nDCG": ("ndcg", {}),
    "nDCG@3": ("ndcg@3", {}),
    "nDCG(gains={0:1,1:4})": ("ndcg[0=1,1=4]", {}),
    "AP": ("map", {}),
    "AP(rel=2)": ("map", {"rel_level": 2}),
    "Success@2 (rel>=1)": ("hit_rate@2", {}),
    "Success(rel=2)@2": ("hit_rate@2", {"rel_level": 2}),
    "P@4": ("precision@4", {}),
    "P(judged_only=True)@4 (docs with negative/absent judgements removed first)": (
        "precision@4",
        {"judged_only": True},
    ),
}


def _cases() -> list[Any]:
    params = []
    for number, case in enumerate(CASES):
        label = case["measure"]
        if label.startswith(NOT_IMPLEMENTED):
            continue
        params.append(pytest.param(case, id=f"{number}-{case['test']}-{label[:20]}"))
    return params


def test_every_case_is_mapped_or_declared_unsupported() -> None:
    for case in CASES:
        assert case["measure"] in MAPPING or case["measure"].startswith(NOT_IMPLEMENTED)
    assert len(_cases()) >= 40


@pytest.mark.parametrize("case", _cases())
def test_toy_case(case: dict[str, Any]) -> None:
    template, settings = MAPPING[case["measure"]]
    measure = template.format(k=case["k"])
    if "run_rows_docid_rank_score" in case:
        # ir_measures cases give scores; ranking them exercises the trec_eval tie rule.
        run: dict[str, Any] = {
            "q": {doc: score for doc, _, score in case["run_rows_docid_rank_score"]}
        }
    else:
        run = {"q": case["ranking"]}
    result = evaluate({"q": case["qrels"]}, run, [measure], **settings)
    value = result.aggregate()[measure]
    expected = float(case["expected"])
    decimals = len(str(case["expected"]).split(".")[1]) if "." in str(case["expected"]) else 0
    # Short values in the peer tests are truncated, not rounded: allow one unit in the last place.
    tolerance = 1e-12 if decimals >= 10 else 10.0**-decimals
    assert value == pytest.approx(expected, abs=tolerance)


PYTREC = json.loads((TOY / "cases.json").read_text())


@pytest.mark.parametrize("case", PYTREC["cases"], ids=lambda c: f"{c['measure']}={c['expected']}")
def test_pytrec_eval_inline_case(case: dict[str, Any]) -> None:
    measure = case["measure"].replace("ndcg_cut_", "ndcg@")
    result = evaluate(PYTREC["qrel"], {"q1": case["run_q1"]}, [measure])
    assert result.query_ids == ("q1",)
    assert result.aggregate()[measure] == pytest.approx(case["expected"], abs=1e-12)


def test_pytrec_eval_empty_behaviour() -> None:
    qrels = PYTREC["qrel"]
    # A query present with an empty ranking is scored (all zeros).
    result = evaluate(qrels, {"q1": {"d2": 1.0}, "q2": {}}, ["ndcg", "map"])
    assert result.per_query()["q2"] == {"ndcg": 0.0, "map": 0.0}
    # Queries absent from the run are skipped and listed, unless missing="zero".
    result = evaluate(qrels, {"q1": {"d2": 1.0}}, ["ndcg"])
    assert result.query_ids == ("q1",)
    assert "q2" in result.excluded
    assert evaluate(qrels, {"q1": {"d2": 1.0}}, ["ndcg"], missing="zero").query_ids == ("q1", "q2")
