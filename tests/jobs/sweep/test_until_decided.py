"""A sweep until decided: batches of questions, the ks that are out dropped, a stop when the rule
settles or the budget is spent; the same looks on a re-run from the cache."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sweep_toy import CHUNKS, TOY, respond

from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalQuery, EvalSet
from rag_judge.jobs.sweep import SweepOptions, SweepResult
from rag_judge.jobs.sweep import until_decided as until_decided_module
from rag_judge.jobs.sweep.budget import Budget
from rag_judge.jobs.sweep.decision.defaults import SPENDINGS
from rag_judge.jobs.sweep.decision.looks import SweepLooks, look_level, spent
from rag_judge.jobs.sweep.decision.sequential import SequentialRecord, replay_sequential
from rag_judge.jobs.sweep.in_process import PreparedSweep, RagUnderTest
from rag_judge.jobs.sweep.looks_store import new_test
from rag_judge.pipeline.base import Hit
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import load_settings

FRANCE = ["d2#0", "d1#0", "d1#1", "d3#0"]  # Paris's passage second: k = 1 cannot answer


class France:
    """Every question asks for France's capital; its passage comes second."""

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return [[Hit(c, 1.0 / r, r) for r, c in enumerate(FRANCE[:k], start=1)] for _ in queries]


def many(n: int) -> EvalSet:
    queries = tuple(
        EvalQuery(f"q{i}", f"What is the capital of France? ({i})", ("Paris",), "what")
        for i in range(n)
    )
    return dataclasses.replace(TOY, queries=queries, qrels={q.id: {"d1": 1} for q in queries})


def run(
    tmp_path: Path, options: SweepOptions, monkeypatch: pytest.MonkeyPatch, n: int = 100
) -> tuple[SweepResult, SequentialRecord, int]:
    """The toy RAG (every question's answer in the second passage) swept until decided."""
    backend = ScriptedBackend(respond=respond)
    client = ModelClient(backend, cache=ResponseCache(tmp_path / "cache.sqlite"))
    settings = load_settings({"cache_dir": str(tmp_path)}, env={}, config_path=None)
    session = open_session(settings, client=client)

    async def prepare(*_: object) -> PreparedSweep:
        return PreparedSweep(session, RagUnderTest(CHUNKS, France(), None), None)

    monkeypatch.setattr(until_decided_module, "prepare_sweep", prepare)
    looks = new_test(n, options)
    swept = until_decided_module.sweep_until_decided(many(n), session, options, looks)
    result, record, _ = asyncio.run(swept)
    return result, record, len(backend.requests)


OPTIONS = SweepOptions(
    ks=(1, 2, 3, 4),
    metrics=("faithfulness", "completeness"),
    until_decided=True,
    step=10,
    margin=0.2,  # k = 2, 3 and 4 answer alike: 0/1 ks that never differ need many questions
)


def test_a_k_that_is_plainly_out_stops_being_judged_and_the_run_stops_when_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, record, _ = run(tmp_path, OPTIONS, monkeypatch)
    # k = 1 refuses every question: out by the 3rd look (the test spends little at its first)
    assert record.eliminated_at() == {1: 30}
    assert record.stop == "settled"
    assert record.questions_used < 100
    frame = result.per_question
    late = frame[frame["question_id"] == f"q{record.questions_used - 1}"]
    assert set(late["k"]) == {2, 3, 4}  # no k = 1 once it is out
    assert record.answers_used < record.answers_fixed
    assert record.looks[-1].recommended_k == 2  # k = 2, 3, 4 answer alike: the cheapest
    # a re-run on the same cache makes no call and takes the same looks
    _, replayed, calls = run(tmp_path, OPTIONS, monkeypatch)
    assert calls == 0
    assert replayed.looks == record.looks


def test_a_budget_stops_the_run_and_a_larger_one_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    few = dataclasses.replace(OPTIONS, budget=Budget(tokens=1))  # spent by the first batch
    _, record, _ = run(tmp_path, few, monkeypatch)
    assert (record.stop, record.questions_used) == ("budget", 10)
    _, more, calls = run(tmp_path, OPTIONS, monkeypatch)
    assert calls > 0  # the first batch from the cache, the rest asked for
    assert more.stop == "settled"
    assert more.looks[0] == record.looks[0]


def test_a_run_stops_before_a_batch_that_would_overrun_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, first, _ = run(tmp_path / "first", dataclasses.replace(OPTIONS, budget=Budget(tokens=1)),
                      monkeypatch)  # fmt: skip
    batch = first.tokens  # one batch of 10 questions at 4 ks
    assert batch > 0
    # room for half a batch more: the next (10 questions at the 3 ks still in) would overrun
    roomy = dataclasses.replace(OPTIONS, budget=Budget(tokens=int(batch * 1.5)))
    _, record, _ = run(tmp_path / "second", roomy, monkeypatch)
    assert (record.stop, record.questions_used, record.tokens) == ("budget", 10, batch)
    assert "would be by the next batch" in record.sentence()


def test_the_sequential_options_are_checked_once() -> None:
    with pytest.raises(InputError, match="until decided") as raised:
        SweepOptions(budget=Budget(seconds=60))
    assert raised.value.field == "budget"
    assert SweepOptions(until_decided=True, budget="30m").budget == Budget(seconds=1800)
    with pytest.raises(InputError) as raised:
        SweepOptions(until_decided=True, step=0)
    assert raised.value.field == "step"
    with pytest.raises(InputError, match="not a budget"):
        Budget.parse("soon")


def test_spending_adds_up_to_the_error_over_the_looks() -> None:
    for spending in SPENDINGS:
        looks = np.linspace(0.1, 1.0, 10)
        steps = np.diff([0.0, *(spent(t, 0.05, spending) for t in looks)])
        assert steps.sum() == pytest.approx(0.05)
        assert np.all(steps > 0)


def test_in_simulation_the_best_k_survives_at_the_stated_rate() -> None:
    # Known per-k means; 200 seeded runs: the truly best k (or one within the margin) is what
    # every settled run names, and a plainly bad k goes out early.
    rng = np.random.default_rng(0)
    means = np.array([0.2, 0.5, 0.6, 0.6])
    wrong = saved = 0
    runs = 200
    for seed in range(runs):
        table = (rng.uniform(size=(200, 4)) < means).astype(float)
        run = replay_sequential(table, (1, 2, 3, 4), margin=0.05, step=20, n_resamples=300,
                                seed=seed)  # fmt: skip
        k = run.recommendation.recommended_k
        if k is not None and means.max() - means[k - 1] > 0.05:
            wrong += 1
        saved += 1 - run.answers_used / (200 * 4)
    assert wrong / runs <= 0.05
    assert saved / runs > 0.1


def test_look_levels_spend_exactly_the_error_under_the_looks_joint_law() -> None:
    # Independent computation for one comparison: the looks' z-statistics are jointly normal
    # with corr(Z_i, Z_j) = sqrt(t_i / t_j); scipy's multivariate normal gives the chance that
    # none crosses its one-sided bound, which must be 1 - spent(t) at every look.
    fractions = [0.25, 0.5, 0.75, 1.0]
    for spending in SPENDINGS:
        taken: list[tuple[float, float]] = []
        for t in fractions:
            taken.append((t, look_level(taken, t, 0.05, spending, [np.eye(1)])))
        bounds = [NormalDist().inv_cdf(1 - level) for _, level in taken]
        for last in range(1, len(fractions) + 1):
            t = np.array(fractions[:last])
            corr = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
            inside = multivariate_normal(mean=np.zeros(last), cov=corr).cdf(
                np.array(bounds[:last]), rng=np.random.default_rng(0)
            )
            assert 1 - inside == pytest.approx(spent(t[-1], 0.05, spending), abs=3e-3)
    # a look at no more questions than an earlier one has nothing new to spend
    assert look_level([(0.5, 0.03)], 0.5, 0.05, "front", [np.eye(1)]) == 0.0


def test_look_levels_hold_for_the_largest_of_correlated_comparisons() -> None:
    """With three comparisons with the best (correlated 0.5), the largest crosses some look's
    bound with probability spent(t): simulated here with paths of our own."""
    corr = np.full((3, 3), 0.5) + 0.5 * np.eye(3)
    fractions = [0.2, 0.4, 0.7, 1.0]
    taken: list[tuple[float, float]] = []
    for t in fractions:
        taken.append((t, look_level(taken, t, 0.05, "pocock", [corr])))
    rng = np.random.default_rng(7)
    root = np.linalg.cholesky(corr)
    paths, before, walk = 200_000, 0.0, np.zeros((200_000, 3))
    single = (rng.standard_normal((paths, 3)) @ root.T).max(axis=1)
    crossed = np.zeros(paths, dtype=bool)
    for t, level in taken:
        walk += rng.standard_normal((paths, 3)) @ root.T * np.sqrt(t - before)
        crossed |= (walk / np.sqrt(t)).max(axis=1) > np.quantile(single, 1 - level)
        assert crossed.mean() == pytest.approx(spent(t, 0.05, "pocock"), abs=4e-3)
        before = t


def test_a_record_of_looks_round_trips_and_spends_once_per_look() -> None:
    looks = SweepLooks(300, 0.05, "front")
    corr = [np.eye(1)]
    first = looks.level(100, corr)
    assert first == pytest.approx(spent(100 / 300, 0.05, "front"))
    looks = looks.with_look(100, first)
    assert looks.level(100, corr) == first  # the same look again spends nothing new
    assert looks.with_look(100, first) == looks
    second = looks.level(200, corr)
    assert 0 < second < 0.05
    assert looks.level(50, corr) == 0.0  # fewer questions: no new information
    later = looks.with_look(200, second)
    assert SweepLooks.from_json(later.as_json()) == later
    with pytest.raises(InputError, match="not a record of looks"):
        SweepLooks.from_json({"horizon": 3})
