"""The sweep's decision: refusals are outcomes, failed calls leave every k, all ks are compared on
the same questions with simultaneous intervals, and the recommendation is the cheapest k within
the margin, or an honest "undecided between".

Per-question tables are built by hand here (a sweep's columns, no model), so each rule is seen
on the rows that exercise it; the end-to-end cases run a real sweep with a scripted model.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sweep_toy import CHUNKS, TOY, FixedRetriever, respond, toy_sweep

from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep import SweepOptions
from rag_judge.jobs.sweep.decision import decide, decide_table
from rag_judge.jobs.sweep.decision.looks import SweepLooks
from rag_judge.jobs.sweep.decision.objective import Objective, ObjectiveChoice
from rag_judge.jobs.sweep.decision.outcomes import objective_table, row_outcomes
from rag_judge.jobs.sweep.decision.planning import plan_questions, shrunk_table
from rag_judge.jobs.sweep.decision.recommend import recommend
from rag_judge.jobs.sweep.decision.record import Decision
from rag_judge.jobs.sweep.decision.refusals import refusal_indicators
from rag_judge.jobs.sweep.looks_store import new_test
from rag_judge.jobs.sweep.run import sweep_questions

OBJECTIVE = Objective.parse("faithfulness*completeness")
KS = (1, 2, 3)
Cell = tuple[str, float | None, float | None]
"""(answer, faithfulness, completeness) of one row; "不知道" is a refusal."""


def sweep_frame(
    cells: dict[str, Sequence[Cell]],
    *,
    unanswerable: Sequence[str] = (),
    failed: dict[tuple[str, int], str] | None = None,
    held: Callable[[str, int], float] = lambda q, k: 1.0,
) -> pd.DataFrame:
    """A per-question table: per question one cell per k of :data:`KS`."""
    rows: list[dict[str, Any]] = []
    for qid, per_k in cells.items():
        for k, (answer, faithful, complete) in zip(KS, per_k, strict=True):
            broken = (failed or {}).get((qid, k))
            refused = answer.strip() in ("", "不知道")
            rows.append(
                {
                    "question_id": qid,
                    "k": k,
                    "answerable": qid not in unanswerable,
                    "answer": None if broken == "answer" else answer,
                    "generation_status": "backend_error" if broken == "answer" else "ok",
                    "refused": None if broken == "answer" else refused,
                    "faithfulness": None if refused or broken else faithful,
                    "faithfulness_status": (
                        "backend_error" if broken else "no_claims" if refused else "ok"
                    ),
                    "completeness": None if broken == "answer" else complete,
                    "completeness_status": "ok",
                    "answer_prompt_tokens": 100 * k,
                    "text_hit_rate": held(qid, k),
                }
            )
    frame = pd.DataFrame(rows)
    return frame.astype(
        {
            "faithfulness": "Float64",
            "completeness": "Float64",
            "text_hit_rate": "Float64",
            "answer_prompt_tokens": "Int64",
            "answerable": "boolean",
            "refused": "boolean",
        }
    )


def decided(
    frame: pd.DataFrame, objective: str | Objective = OBJECTIVE, **options: Any
) -> Decision:
    chosen = Objective.parse(objective)
    return decide_table(frame, ObjectiveChoice(chosen, chosen), KS, n_resamples=500, **options)


def test_a_refusal_to_an_answerable_question_scores_0_and_stays_in_the_mean() -> None:
    frame = sweep_frame({"q1": [("不知道", None, 0.0), ("巴黎", 1.0, 1.0), ("巴黎", 1.0, 1.0)]})
    outcomes = row_outcomes(frame, OBJECTIVE)
    assert outcomes["outcome"].tolist() == ["refusal", "answer", "answer"]
    assert outcomes["value"].tolist() == [0.0, 1.0, 1.0]
    table = objective_table(frame, OBJECTIVE)
    assert table.values.loc["q1"].tolist() == [0.0, 1.0, 1.0]  # not left out, not NaN


def test_on_an_unanswerable_question_a_refusal_is_right_and_an_answer_is_wrong() -> None:
    frame = sweep_frame(
        {"u1": [("不知道", None, None), ("巴黎", 1.0, None), ("不知道", None, None)]},
        unanswerable=["u1"],
    )
    assert row_outcomes(frame, OBJECTIVE)["value"].tolist() == [1.0, 0.0, 1.0]
    # reference free too: the judges' values do not matter on an unanswerable question
    assert row_outcomes(frame, Objective.parse("faithfulness"))["value"].tolist() == [1.0, 0.0, 1.0]


def test_a_failed_call_is_not_a_refusal_only_that_k_lacks_the_question() -> None:
    cells = {
        "q1": [("巴黎", 1.0, 1.0)] * 3,
        "q2": [("东京", 1.0, 1.0)] * 3,
        "q3": [("不知道", None, 0.0)] * 3,
    }
    frame = sweep_frame(cells, failed={("q2", 2): "answer"})
    table = objective_table(frame, OBJECTIVE)
    assert list(table.values.index) == ["q1", "q2", "q3"]  # k = 1 and 3 keep q2
    assert np.isnan(table.values.loc["q2", 2])
    assert table.values.loc["q2", 1] == 1.0
    assert table.excluded == {}
    assert table.missing == {2: {"q2": "the answer: backend_error"}}
    assert table.failure_share(2) == pytest.approx(1 / 3)
    decision = decided(frame)
    assert decision.n_questions == 3
    found = decision.recommendation
    assert found is not None
    assert (found.standing(1).n, found.standing(2).n) == (3, 2)
    # a third of k = 2's questions failed: more than 5%, so it is not recommended, and says so
    assert not found.standing(2).eligible
    assert "k=2: its calls failed or went unscored on 33% of the questions" in decision.sentence
    assert decision.failures == {1: 0.0, 2: pytest.approx(1 / 3), 3: 0.0}
    # the refusal share counts the answers there are: q3 refused, q2 at k = 2 has none
    assert decision.refusals[2]["refusal_rate"] == pytest.approx(1 / 2)
    assert decision.refusals[1]["refusal_rate"] == pytest.approx(1 / 3)
    judged = sweep_frame(cells, failed={("q1", 3): "judge"})
    assert objective_table(judged, OBJECTIVE).missing == {3: {"q1": "faithfulness: backend_error"}}
    everywhere = {("q1", k): "answer" for k in KS}
    gone = objective_table(sweep_frame(cells, failed=everywhere), OBJECTIVE)
    assert gone.excluded == {"q1": "k=1: the answer: backend_error"}  # no value at any k


def test_a_k_that_fails_where_others_answer_keeps_the_others_questions() -> None:
    """One k failing on its long prompts must not take the hard questions from the others:
    they are compared on every question, and the failing k on the ones it has, flagged."""
    rng = np.random.default_rng(3)
    cells = {}
    for i in range(120):
        hard = i % 4 == 0
        cells[f"q{i}"] = [
            ("巴黎", 1.0, float(rng.uniform() < (0.2 if hard else 0.8))),
            ("巴黎", 1.0, float(rng.uniform() < (0.4 if hard else 0.9))),
            ("巴黎", 1.0, float(rng.uniform() < (0.4 if hard else 0.9))),
        ]
    failed = {(f"q{i}", 3): "answer" for i in range(0, 120, 40)}  # 3 of 120 at k = 3
    decision = decided(sweep_frame(cells, failed=failed))
    found = decision.recommendation
    assert found is not None
    assert (found.standing(1).n, found.standing(2).n, found.standing(3).n) == (120, 120, 117)
    assert found.standing(3).eligible  # 2.5% failed: judged on what it has, flagged
    assert "k=3 has no value for 3 of the 120 questions" in decision.sentence
    assert decision.to_json()["per_k"][2]["failure_share"] == pytest.approx(0.025)


def test_a_provider_refusal_is_a_refusal_not_a_failure() -> None:
    frame = sweep_frame({"q1": [("巴黎", 1.0, 1.0)] * 3})
    frame.loc[frame["k"] == 1, ["generation_status", "answer", "refused"]] = ["refused", None, None]
    outcomes = row_outcomes(frame, OBJECTIVE)
    assert outcomes["outcome"].tolist() == ["refusal", "answer", "answer"]
    assert outcomes["value"].tolist() == [0.0, 1.0, 1.0]


def test_a_k_that_answers_too_few_answerable_questions_is_not_recommended() -> None:
    """On a set with many unanswerable questions, a k that refuses almost everything scores
    well there; it must still answer half the answerable questions the best answerer does."""
    cells = {f"u{i}": [("不知道", None, None)] * 3 for i in range(80)}
    cells |= {
        f"a{i}": [("不知道", None, 0.0) if i > 2 else ("巴黎", 1.0, 1.0), ("巴黎", 1.0, 1.0),
                  ("巴黎", 1.0, 1.0) if i % 2 else ("东京", 0.0, 0.0)]
        for i in range(40)
    }  # fmt: skip
    frame = sweep_frame(cells, unanswerable=[f"u{i}" for i in range(80)])
    frame.loc[frame["question_id"].str.startswith("u") & (frame["k"] > 1), "answer"] = "不知道"
    decision = decided(frame, margin=0.5)
    found = decision.recommendation
    assert found is not None
    assert not found.standing(1).eligible
    assert "it answered 3 answerable questions, fewer than 50% of k=2's 40" in (
        found.standing(1).why_not_eligible
    )
    assert decision.recommended_k in (2, 3)


@pytest.mark.parametrize("objective", [OBJECTIVE, "faithfulness", "completeness"])
def test_a_k_that_always_refuses_is_never_recommended(objective: str) -> None:
    # k = 1 refuses every question; k = 2 and 3 answer, poorly but alike, so with a wide
    # margin every k is "within" the best: still k = 1 is not eligible.
    poor = [("巴黎", 0.02, 0.02)] * 2
    cells = {f"q{i}": [("不知道", None, 0.0), *poor] for i in range(60)}
    decision = decided(sweep_frame(cells), objective, margin=0.5)
    assert decision.recommended_k == 2
    found = decision.recommendation
    assert found is not None
    assert not found.standing(1).eligible
    assert found.standing(1).within_margin is False
    assert "k=1: it answered 0 answerable questions" in decision.sentence


def test_a_rag_that_refuses_at_every_k_gets_no_k() -> None:
    cells = {f"q{i}": [("不知道", None, 0.0)] * 3 for i in range(30)}
    decision = decided(sweep_frame(cells), "faithfulness")
    assert (decision.recommended_k, decision.headline) == (None, "No k")
    assert "refusal at every k" in decision.sentence


def test_end_to_end_an_always_refusing_rag_names_no_k() -> None:
    def refusing(request: ChatRequest) -> str:
        if (request.prompt_id or "").startswith("generate/answer"):
            return "I don't know."
        return respond(request)

    client = ModelClient(ScriptedBackend(respond=refusing))
    result = asyncio.run(
        sweep_questions(TOY, SweepOptions(ks=(1, 2)), retriever=FixedRetriever(), chunks=CHUNKS,
                  client=client)
    )  # fmt: skip
    assert result.per_question["refused"].all()
    for objective in (OBJECTIVE, "faithfulness", "exact_match"):
        decision = decide(result, objective, n_resamples=200)
        assert decision.recommended_k is None, objective
        assert decision.headline == "No k"


def test_the_cheapest_k_within_the_margin_is_recommended_and_the_sentence_agrees() -> None:
    rng = np.random.default_rng(0)
    cells = {}
    for i in range(200):
        good = rng.uniform() < 0.7
        cells[f"q{i}"] = [
            ("不知道", None, 0.0) if rng.uniform() < 0.5 else ("巴黎", 1.0, float(good)),
            ("巴黎", 1.0, float(good)),
            ("巴黎", 1.0, float(good)),
        ]
    decision = decided(sweep_frame(cells), margin=0.05)
    found = decision.recommendation
    assert found is not None
    assert decision.recommended_k == 2  # k = 3 gives the same answers and costs more
    assert found.standing(3).within_margin
    assert not found.standing(1).within_margin
    two = found.standing(2)
    assert f"k=2 is the cheapest k whose {OBJECTIVE} is within 0.05 of the best" in (
        decision.sentence
    )
    assert f"no k is better than k=2 by more than {two.regret_bound:.3f}" in decision.sentence
    assert "comparing each of the 3 ks with the best" in decision.sentence
    assert f"k=2 has a mean of {two.mean:.3f}" in decision.sentence
    table = objective_table(sweep_frame(cells), OBJECTIVE).values
    assert two.mean == pytest.approx(table[2].mean())  # the mean over the decision's questions
    payload = decision.to_json()
    assert payload["recommended_k"] == 2
    assert payload["undecided_between"] == []
    assert [row["k"] for row in payload["per_k"]] == [1, 2, 3]
    assert json.loads(json.dumps(payload)) == payload  # plain JSON, no NaN


def test_with_few_questions_it_says_which_ks_it_cannot_separate_and_how_many_would() -> None:
    rng = np.random.default_rng(1)
    cells = {
        f"q{i}": [
            ("巴黎", 1.0, float(rng.uniform() < 0.5)),
            ("巴黎", 1.0, float(rng.uniform() < 0.55)),
            ("巴黎", 1.0, float(rng.uniform() < 0.55)),
        ]
        for i in range(20)
    }
    decision = decided(sweep_frame(cells))
    assert decision.recommended_k is None
    assert len(decision.undecided_between) >= 2
    assert decision.headline.startswith("Undecided between k = ")
    found = decision.recommendation
    assert found is not None
    assert found.questions_needed is not None
    assert found.questions_needed > 20
    assert found.settle_probability is not None
    assert found.settle_probability >= 0.8
    assert (
        f"With {found.settle_probability:.0%} probability about {found.questions_needed} "
        "questions in all"
    ) in decision.sentence


def test_the_plan_keeps_its_promise_when_the_rule_itself_is_applied() -> None:
    """The planner simulates the rule with a t critical value; applied with the rule's own
    bootstrap to resamples of that size (leads shrunk as the planner shrinks them), it settles
    about as often as the plan says."""
    rng = np.random.default_rng(5)
    ease = rng.uniform(size=(40, 1))
    small = (0.5 * rng.uniform(size=(40, 3)) + 0.5 * ease < [0.45, 0.55, 0.57]).astype(float)
    found = recommend(small, KS, margin=0.1, n_resamples=500)
    assert found.recommended_k is None
    plan = plan_questions(small, costs=KS, eligible=[True] * 3, margin=0.1,
                          level_at=lambda n: 0.05, simulations=200)  # fmt: skip
    assert plan.questions is not None
    assert plan.probability is not None
    shrunk, _ = shrunk_table(small)
    draws = [
        recommend(shrunk[rng.integers(0, 40, plan.questions)], KS, margin=0.1, n_resamples=300)
        for _ in range(60)
    ]
    settled = np.mean([d.recommended_k is not None for d in draws])
    assert settled >= plan.probability - 0.15


def test_a_margin_of_zero_needs_a_k_confirmed_best() -> None:
    rows = np.array([[0.0, 1.0], [0.0, 1.0]] * 100)
    found = recommend(rows, (1, 2), margin=0.0, n_resamples=300)
    assert found.recommended_k == 2
    tied = recommend(np.ones((50, 2)), (1, 2), margin=0.0, n_resamples=300)
    assert tied.recommended_k is None
    assert tied.questions_needed is None


def test_recommend_refuses_a_table_that_does_not_fit() -> None:
    with pytest.raises(InputError):
        recommend([[0.1, 0.2]], (1, 2, 3))
    with pytest.raises(InputError, match="margin"):
        recommend([[0.1, 0.2]], (1, 2), margin=-0.1)
    with pytest.raises(InputError):
        recommend([[0.1, 0.2]], (2, 1))


def listed(values: pd.Series) -> list[float | None]:
    return [None if pd.isna(v) else float(v) for v in values]


def test_refusal_indicators_say_when_the_generator_gave_up_on_passages_it_had() -> None:
    frame = sweep_frame(
        {
            "q1": [("不知道", None, 0.0), ("不知道", None, 0.0), ("巴黎", 1.0, 1.0)],
            "u1": [("东京", 1.0, None), ("不知道", None, None), ("不知道", None, None)],
        },
        unanswerable=["u1"],
        held=lambda q, k: 1.0 if k >= 2 else 0.0,
    )
    indicators = refusal_indicators(frame).assign(q=frame["question_id"], k=frame["k"])
    q1 = indicators[indicators.q == "q1"]
    assert listed(q1["refused_with_answer_in_top_k"]) == [None, 1.0, 0.0]  # k=1: not held
    assert listed(q1["answered_without_answer_in_top_k"]) == [0.0, None, None]
    u1 = indicators[indicators.q == "u1"]  # an unanswerable question never has it in the top k
    assert listed(u1["answered_without_answer_in_top_k"]) == [1.0, 0.0, 0.0]
    assert u1["refused_with_answer_in_top_k"].isna().all()


def test_sweep_options_check_every_value_once() -> None:
    assert SweepOptions(ks="1-3,5").ks == (1, 2, 3, 5)
    assert SweepOptions(ks=[3, 1, 1]).ks == (1, 3)
    # a text of judges is split at its commas, as --metrics is: not read as a list of letters
    assert SweepOptions(metrics="faithfulness, answer_f1").metrics == ("faithfulness", "answer_f1")
    with pytest.raises(InputError, match=r"unknown metric\(s\) faithfulnes;") as raised:
        SweepOptions(metrics="faithfulnes,answer_f1")
    assert raised.value.field == "metrics"
    for bad in ({"ks": []}, {"ks": [0, 1]}, {"ks": [1.5]}, {"ks": [True]}):
        with pytest.raises(InputError) as raised:
            SweepOptions(**bad)
        assert raised.value.field == "ks"
    for field, value in (("margin", -0.1), ("margin", 1.0), ("confidence", 1.0), ("limit", 0),
                         ("retriever", "bm26"), ("rerank_depth", 0)):  # fmt: skip
        with pytest.raises(InputError) as raised:
            SweepOptions(**{field: value})
        assert raised.value.field == field
    built = SweepOptions.build(ks=range(1, 4), margin=0.02, reasons=False)
    assert (built.ks, built.margin, built.judge.reasons) == ((1, 2, 3), 0.02, False)
    with pytest.raises(InputError, match="unknown sweep option 'kss'"):
        SweepOptions.build(kss=range(1, 4))


@pytest.mark.parametrize(
    ("values", "field", "said"),
    [
        ({"metrics": "faithfulness", "objective": "completeness"}, "objective",
         "needs completeness, which the metrics do not measure (metrics: faithfulness)"),
        ({"rag": "x.jsonl", "rerank": "llm"}, "rerank", "not to your own RAG"),
        ({"rag": "x.jsonl", "retriever": "dense"}, "retriever", "not to your own RAG"),
        ({"rag": "x.jsonl", "rerank_depth": 5}, "rerank_depth", "not to your own RAG"),
        ({"rerank_depth": 5}, "rerank_depth", "only applies with a reranker"),
        ({"rerank": "/no/such/cross-encoder"}, "rerank", "unknown reranker"),
    ],
)  # fmt: skip
def test_an_option_that_does_not_apply_is_refused_not_ignored(
    values: dict[str, object], field: str, said: str
) -> None:
    """Before any index or call: an objective the metrics cannot give (it would make every call
    and then fall back), a pipeline option beside your own RAG (silently unused), a reranker
    that does not exist."""
    with pytest.raises(InputError, match=re.escape(said)) as raised:
        SweepOptions(**values)  # type: ignore[arg-type]
    assert raised.value.field == field
    # what costs no call is measured unasked, so it needs no --metrics
    assert SweepOptions(metrics="faithfulness", objective="answer_f1").objective is not None


def test_an_objective_the_set_cannot_give_is_refused_before_any_call() -> None:
    """Cranfield has no reference answers: completeness is skipped there, so an objective that
    names it is refused before the index is built; the set's default objective falls back."""
    from rag_judge.data.eval_sets import load_eval_set
    from rag_judge.jobs.sweep.plan import check_objective_fits

    cranfield = load_eval_set("cranfield")
    with pytest.raises(InputError, match="needs completeness, which this set cannot give") as e:
        check_objective_fits(cranfield, ("faithfulness", "completeness"))
    assert e.value.field == "objective"
    check_objective_fits(cranfield, ("faithfulness", "doc_ndcg"))


def test_the_toy_sweep_counts_its_refusal() -> None:
    result, _ = toy_sweep()
    decision = decide(result, n_resamples=200)
    assert decision.n_questions == 2
    assert not decision.excluded
    found = decision.recommendation
    assert found is not None
    assert found.standing(1).mean == 0.5  # q1's refusal at k = 1 counts 0, q2 scores 1


def test_undecided_between_names_the_ks_that_could_still_be_recommended() -> None:
    """k = 1 is shown more than the margin below the others: it is out of the running; k = 2
    and 3 differ by less than the questions can tell, and both could still be recommended."""
    rng = np.random.default_rng(2)
    ease = rng.uniform(size=(40, 1))
    rows = (0.5 * rng.uniform(size=(40, 3)) + 0.5 * ease < [0.15, 0.6, 0.62]).astype(float)
    found = recommend(rows, KS, margin=0.05, n_resamples=500)
    assert found.recommended_k is None
    assert found.undecided_between == (2, 3)
    assert not found.standing(1).candidate
    assert found.standing(1).shortfall_low > 0.05
    assert not found.standing(1).could_be_best


def test_a_test_whose_horizon_is_spent_names_no_k_and_says_why() -> None:
    """A run until decided opens its test over the questions it may use (O'Brien-Fleming); a
    later look beyond that horizon has no error left to spend, and says so."""
    opened = new_test(200, SweepOptions(until_decided=True, max_questions=200))
    assert (opened.horizon, opened.spending, opened.taken) == (200, "obrien_fleming", ())
    assert opened.alpha == pytest.approx(0.05)
    assert new_test(3219, SweepOptions()).spending == "front"
    rng = np.random.default_rng(0)
    cells = {f"q{i}": [("巴黎", 1.0, float(rng.uniform() < 0.7))] * 3 for i in range(60)}
    looks = SweepLooks(40, 0.05, "obrien_fleming")
    looks = looks.with_look(40, looks.level(40, [np.eye(2)] * 3))
    decision = decided(sweep_frame(cells), looks=looks)
    assert decision.recommended_k is None
    assert "spent its error over 40 questions (its horizon" in decision.sentence
    assert "a look at 60" in decision.sentence
