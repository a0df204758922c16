"""Reasons in a sweep: written after it, for the rows the report shows, not for every row."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd

from rag_judge.backends.providers.scripted import ScriptedBackend, register
from rag_judge.backends.types import ChatRequest
from rag_judge.jobs.sweep import SweepOptions, SweepResult
from rag_judge.jobs.sweep import sweep as sweep_set
from rag_judge.jobs.sweep.explain import SHOWN_WORST, STEP, worst_rows
from rag_judge.jobs.sweep.job import sweep_job
from rag_judge.report.sweep_html import worst_cases
from rag_judge.runtime.events import Events
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import load_settings

REASON = "没有段落提到火星。"


def respond(request: ChatRequest) -> str | float:
    """Every answer names a place no passage mentions: each row's one claim is unsupported."""
    prompt = (request.prompt_id or "").split(".")[0]
    if prompt == "generate/answer":
        return "火星"
    if prompt in ("claims/answer", "claims/support", "claims/contradict"):
        return 0.0
    if prompt == "claims/reason":
        return REASON
    raise AssertionError(f"unexpected prompt {prompt}")


def sweep(tmp_path: Path, **options: Any) -> tuple[SweepResult, list[str]]:
    backend = ScriptedBackend(respond=respond, name="scripted/explain")
    result = sweep_set(
        "cmrc2018_zh_chunked",
        limit=3,
        ks=[1, 2, 3],
        metrics=["faithfulness"],
        mode="score",
        model=register(backend),
        cache=tmp_path / "responses.sqlite",
        **options,
    )
    return result, [(r.prompt_id or "").split(".")[0] for r in backend.requests]


def test_reasons_are_written_after_the_sweep_for_the_shown_rows_only(tmp_path: Path) -> None:
    result, prompts = sweep(tmp_path)
    frame = result.per_question
    assert len(frame) == 9
    assert (frame["faithfulness"] < 0.5).all()  # no claim supported
    shown = {
        (r["question_id"], r["k"])
        for r in worst_rows(frame, "faithfulness", SHOWN_WORST).to_dict("records")
    }
    assert len(shown) == SHOWN_WORST
    for (qid, k), judged in result.judgements.items():
        (claim,) = judged["faithfulness"].claims
        assert claim.verdict == "not_mentioned"
        assert claim.reason == (REASON if (qid, k) in shown else "")
        reasoned = any(p.startswith("claims/reason") for p in judged["faithfulness"].prompts)
        assert reasoned == ((qid, k) in shown)
    # One reason per shown row, all after the last answer; the support and contradiction
    # checks of those rows were asked once, in the sweep: the second time came from the cache.
    assert prompts.count("claims/reason") == SHOWN_WORST
    last_answer = max(i for i, p in enumerate(prompts) if p == "generate/answer")
    assert min(i for i, p in enumerate(prompts) if p == "claims/reason") > last_answer
    assert prompts.count("claims/answer") == prompts.count("claims/contradict") == 9
    # The report's rows are those rows, with their reasons.
    cases = worst_cases(result, "faithfulness", SHOWN_WORST)
    assert {(c.question_id, c.k) for c in cases} == shown
    assert all(row.reason == REASON for c in cases for row in c.claims)
    # The reason calls are in the ledger.
    assert result.ledger is not None
    tally = result.ledger.summary()["scripted/explain"]
    assert tally["calls"] == len(prompts)


def test_no_reasons_asks_for_none(tmp_path: Path) -> None:
    result, prompts = sweep(tmp_path, reasons=False)
    assert "claims/reason" not in prompts
    assert all(
        c.reason == ""
        for judged in result.judgements.values()
        for c in judged["faithfulness"].claims
    )


def test_worst_rows_are_the_lowest_scored_values_ties_by_question_and_k() -> None:
    frame = pd.DataFrame(
        {
            "question_id": ["b", "a", "a", "c", "d"],
            "k": [1, 2, 1, 1, 1],
            "faithfulness": [0.0, 0.0, 0.0, None, 0.5],
        }
    )
    rows = worst_rows(frame, "faithfulness", 4)
    assert list(zip(rows.question_id, rows.k, strict=True)) == [
        ("a", 1),
        ("a", 2),
        ("b", 1),
        ("d", 1),
    ]


class Steps(Events):
    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int | None]] = []

    def advanced(self, step: str, done: int, total: int | None) -> None:
        self.seen.append((step, done, total))


def test_writing_the_reasons_shows_progress(tmp_path: Path) -> None:
    model = register(ScriptedBackend(respond=respond, name="scripted/explain"))
    session = open_session(load_settings({"model": model}), cache=tmp_path / "r.sqlite")
    options = SweepOptions.build(limit=2, ks=[1, 2, 3], metrics=["faithfulness"], mode="score")
    steps = Steps()
    asyncio.run(sweep_job("cmrc2018_zh_chunked", session, options, events=steps))
    assert steps.seen == [(STEP, n, SHOWN_WORST) for n in range(SHOWN_WORST + 1)]
