"""Random qrels and runs (with tied scores) scored by us and by trec_eval's C code.

pytrec_eval-terrier wraps trec_eval itself, so agreement here is agreement with trec_eval on
inputs no fixture anticipated: graded and negative grades, ties, unjudged documents, empty
rankings, relevance thresholds.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_judge.retrieval import evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = (1, 2, 3, 5, 10)
#: our measure -> trec_eval name (pytrec_eval output key)
OURS_TO_TREC: dict[str, str] = {
    "map": "map",
    "ndcg": "ndcg",
    "mrr": "recip_rank",
    "rprec": "Rprec",
    "precision": "set_P",
    "recall": "set_recall",
    "f1": "set_F",
    "num_rel": "num_rel",
    "num_ret": "num_ret",
    "num_rel_ret": "num_rel_ret",
    **{f"precision@{k}": f"P_{k}" for k in CUTOFFS},
    **{f"recall@{k}": f"recall_{k}" for k in CUTOFFS},
    **{f"hit_rate@{k}": f"success_{k}" for k in (1, 5, 10)},
    **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in CUTOFFS},
    **{f"map@{k}": f"map_cut_{k}" for k in CUTOFFS},
}
TREC_REQUEST = {
    "map", "ndcg", "recip_rank", "Rprec", "set_P", "set_recall", "set_F", "num_rel", "num_ret",
    "num_rel_ret", "P.1,2,3,5,10", "recall.1,2,3,5,10", "success.1,5,10",
    "ndcg_cut.1,2,3,5,10", "map_cut.1,2,3,5,10",
}  # fmt: skip

DOCS = [f"d{i}" for i in range(14)]
doc_ids = st.sampled_from(DOCS)
grades = st.sampled_from([-1, 0, 0, 1, 1, 2, 3])
scores = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.25])  # few values: many ties


@st.composite
def qrels_and_run(draw: Any) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qids = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q10", "a"]), min_size=1, unique=True))
    # A query judged only with negative grades sends trec_eval's ndcg_cut into undefined
    # behaviour (it reads rel_levels[-1]; pytrec_eval then hangs or reports num_ret = 0), so
    # every query here has at least one judgement >= 0. Ours is pinned in test_evaluate.py.
    judged = st.dictionaries(doc_ids, grades, min_size=1, max_size=10).filter(
        lambda docs: any(g >= 0 for g in docs.values())
    )
    qrels = {q: draw(judged) for q in qids}
    run = {q: draw(st.dictionaries(doc_ids, scores, min_size=1, max_size=12)) for q in qids}
    return qrels, run


@settings(max_examples=300, deadline=None)
@given(data=qrels_and_run(), rel_level=st.sampled_from([1, 2]))
def test_agrees_with_trec_eval_on_random_runs(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], rel_level: int
) -> None:
    qrels, run = data
    theirs = pytrec_eval.RelevanceEvaluator(qrels, TREC_REQUEST, relevance_level=rel_level)
    expected = theirs.evaluate(run)
    ours = evaluate(qrels, run, list(OURS_TO_TREC), rel_level=rel_level).per_query()
    assert set(ours) == set(expected)
    for qid, values in ours.items():
        for measure, value in values.items():
            trec_value = expected[qid][OURS_TO_TREC[measure]]
            assert value == pytest.approx(trec_value, abs=1e-12), (qid, measure)
