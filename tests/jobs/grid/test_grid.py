"""The configuration sweep from Python: the grid parsed and checked, your own RAGs as named
configurations, one decision over every arm, answers shared between arms counted, elimination."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_toy import TEXTS, respond

from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient
from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalQuery, EvalSet
from rag_judge.jobs.grid.job import shared_answers, sweep_grid
from rag_judge.jobs.sweep import SweepOptions
from rag_judge.jobs.sweep.decision.arms import Arm
from rag_judge.jobs.sweep.grid_axes import Grid

CAPITALS = {"France": ("Paris", "d1#0"), "Japan": ("Tokyo", "d3#0")}


def capitals(n: int) -> EvalSet:
    """``n`` questions, France and Japan in turn."""
    queries = tuple(
        EvalQuery(f"q{i}", f"What is the capital of {country}?", (CAPITALS[country][0],), "what")
        for i in range(n)
        for country in [("France", "Japan")[i % 2]]
    )
    qrels = {q.id: {"d1" if "France" in q.question else "d3": 1} for q in queries}
    return EvalSet("capitals", Path("."), {}, (), queries, qrels, True, {})


def ranked(right_first: bool):
    """A RAG that puts the right passage first, or second behind Germany's."""

    def rag(question: str, k: int) -> list[dict[str, str]]:
        country = "France" if "France" in question else "Japan"
        right = CAPITALS[country][1]
        order = [right, "d2#0"] if right_first else ["d2#0", right]
        order += [c for c in TEXTS if c not in order]
        return [{"id": c, "text": TEXTS[c][1], "doc_id": TEXTS[c][0]} for c in order[:k]]

    return rag


def client() -> ModelClient:
    return ModelClient(ScriptedBackend(respond=respond), policy=CallPolicy(concurrency=1))


def test_your_own_rags_are_configurations_and_the_better_one_is_chosen() -> None:
    grid = sweep_grid(
        capitals(100),
        grid={"rag": {"right-second": ranked(False), "right-first": ranked(True)}},
        ks=[1, 2], metrics=["exact_match"], objective="answer_f1", margin=0.1,
        client=client(), cache=False,
    )  # fmt: skip
    decision = grid.decision
    assert decision is not None
    assert decision.headline == "Use rag=right-first at k=1"
    # the rule numbers arms in grid order; the decision speaks of the arm's k and configuration
    assert (decision.recommended_arm, decision.recommended_k) == (3, 1)
    assert decision.recommended_configuration == "rag=right-first"
    assert grid.recommended == Arm("rag=right-first", 1)
    document = decision.to_json()
    assert document["recommended_configuration"] == "rag=right-first"
    assert (document["recommended_k"], document["recommended_arm"]) == (1, 3)
    means = {(e["configuration"], e["k"]): e["mean"] for e in document["per_k"]}
    assert means[("rag=right-second", 1)] == 0.0  # Germany's passage names no capital
    assert means[("rag=right-first", 1)] == means[("rag=right-first", 2)] > 0
    frame = grid.per_question
    assert set(frame["configuration"]) == {"rag=right-first", "rag=right-second"}
    # Both put France's and Germany's passages before the model at k = 2, in another order:
    # no answer is shared; at k = 1 neither matches the other.
    assert grid.extra["shared_answers"] == {"shared": 0, "answers": 400}


def test_arms_with_the_same_passages_share_their_answer() -> None:
    grid = sweep_grid(
        capitals(10),
        grid={"rag": {"a": ranked(True), "b": ranked(True)}},
        ks=[1, 2], metrics=["exact_match"], client=client(), cache=True,
    )  # fmt: skip
    assert grid.extra["shared_answers"] == {"shared": 20, "answers": 40}


def test_until_decided_stops_paying_for_a_configuration_that_is_out() -> None:
    grid = sweep_grid(
        capitals(200),
        grid={"rag": {"right-first": ranked(True), "right-second": ranked(False)}},
        ks=[1, 2], metrics=["exact_match"], objective="answer_f1", margin=0.1,
        until_decided=True, step=20, client=client(), cache=False,
    )  # fmt: skip
    decision = grid.decision
    assert decision is not None
    assert decision.sequential is not None
    assert grid.recommended is not None
    assert grid.recommended.configuration == "rag=right-first"
    record = decision.sequential
    assert record.answers_used < record.answers_fixed
    assert "rag=right-second at k=1 went out after" in decision.sentence


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"retriever": ["bm25", "bm25"]}, "lists 'bm25' twice"),
        ({"rerank": ["none", "llm"], "rag": {"x": ranked(True)}}, "not to your own RAGs"),
        ({"chunk": "set,abc"}, "is no passage size"),
        ({}, "give at least one axis"),
        ("retriever", "is no axis"),
    ],
)
def test_a_bad_grid_names_what_is_wrong(given: object, said: str) -> None:
    with pytest.raises(InputError, match=said):
        Grid.parse(given)  # type: ignore[arg-type]


def test_a_grid_without_a_configuration_sweep_is_refused_by_the_k_sweep() -> None:
    from rag_judge.jobs.sweep.job import sweep

    with pytest.raises(InputError, match="sweep_grid"):
        sweep(
            capitals(4), SweepOptions.build(grid=["retriever=bm25"]), client=client(), cache=False
        )


def test_shared_answers_count_each_distinct_passage_list_once() -> None:
    assert shared_answers({}, (1,)) == {"shared": 0, "answers": 0}
