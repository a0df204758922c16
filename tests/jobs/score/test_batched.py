"""The batch path end to end on a fake Batch API: stages over the cache, the same results as a
live run, a re-run that submits nothing, failed and expired lines sent live, a resumed wait."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fake_batch_server import FakeBatchServer, fake_batch  # noqa: F401
from fake_openai_server import judge_reply
from isolated import FAKE_MODEL, cli_env, server_settings

from rag_judge.backends.batch.batch_collect import CollectingBackend
from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.core.types import RagSample
from rag_judge.jobs.score.job import score_job
from rag_judge.jobs.score.options import ScoreOptions
from rag_judge.jobs.score.run import aevaluate
from rag_judge.runtime.events import Events
from rag_judge.runtime.executors import Batch
from rag_judge.runtime.executors.batched import state_path_for
from rag_judge.runtime.session import open_session

METRICS = ["faithfulness", "completeness", "context_recall"]
ROWS = [
    {
        "id": f"r{i}",
        "question": f"When was building {i} built?",
        "contexts": [f"Building {i} was built in 18{i}0."],
        "answer": f"It was built in 18{i}0.",
        "reference": f"18{i}0.",
    }
    for i in range(4)
]


def settings_for(server: Any, cache: Path) -> Any:
    return server_settings(server.base_url, cache)


class Polls(Events):
    """Each poll handed to ``on_poll``."""

    def __init__(self, on_poll: Any) -> None:
        self.on_poll = on_poll

    def polled(self, stage: Any, state: Any) -> None:
        if self.on_poll is not None:
            self.on_poll(stage, state)


def score_batched(settings: Any, state_path: Path, on_poll: Any = None, poll: float = 10.0) -> Any:
    """The score job over ROWS with the Batch executor."""
    return asyncio.run(
        score_job(
            [RagSample.model_validate(r) for r in ROWS],
            open_session(settings),
            ScoreOptions(metrics=tuple(METRICS)),
            executor=Batch(state_path, poll_seconds=poll),
            events=Polls(on_poll),
        )
    )


def batched(server: FakeBatchServer, tmp_path: Path, *, on_poll: Any = None) -> Any:
    settings = settings_for(server, tmp_path / "cache")
    return score_batched(settings, state_path_for(tmp_path / "out.jsonl"), on_poll, poll=0.01)


def comparable(records: list[dict[str, Any]]) -> list[Any]:
    """What a run concluded, without what differs by construction (tokens, call counts)."""
    return [
        {
            m: (r["status"], r["value"], [c["claim"] for c in r["claims"]])
            for m, r in rec["results"].items()
        }
        for rec in records
    ]


@pytest.fixture
def served(fake_batch: FakeBatchServer) -> FakeBatchServer:  # noqa: F811
    fake_batch.chat.respond = judge_reply
    return fake_batch


def test_two_stages_then_the_same_results_as_a_live_run(
    served: FakeBatchServer, tmp_path: Path
) -> None:
    run = batched(served, tmp_path)
    # Stage 1: every row's answer and reference claims; stage 2: the verifications.
    assert [s.requests for s in run.stages] == [8, 12]
    assert [(s.status, s.answered, s.sent_live, s.resumed) for s in run.stages] == [
        ("completed", 8, 0, False),
        ("completed", 12, 0, False),
    ]
    assert served.live_calls == 0
    ids = [line["custom_id"] for batch in served.submitted for line in batch]
    assert len(ids) == len(set(ids))  # nothing asked twice
    live = asyncio.run(
        aevaluate(ROWS, METRICS, settings=settings_for(served, tmp_path / "live_cache"))
    )
    assert comparable(run.result.to_records()) == comparable(live.to_records())
    assert all(r["results"]["faithfulness"]["status"] == "ok" for r in run.result.to_records())
    line = run.result.ledger.describe(FAKE_MODEL)
    assert "20 calls made (20 through a Batch API, at 50% of the price)" in line
    state = json.loads(state_path_for(tmp_path / "out.jsonl").read_text(encoding="utf-8"))
    assert [s["batch_id"] for s in state["stages"]] == [s.batch_id for s in run.stages]
    assert state["pending"] == {}


def test_a_rerun_submits_nothing(served: FakeBatchServer, tmp_path: Path) -> None:
    first = batched(served, tmp_path)
    submitted, live = len(served.submitted), served.live_calls
    again = batched(served, tmp_path)
    assert again.stages == ()
    assert (len(served.submitted), served.live_calls) == (submitted, live)
    assert comparable(again.result.to_records()) == comparable(first.result.to_records())


@pytest.mark.parametrize(("outcome", "live_first"), [("partly_failed", 2), ("expired", 4)])
def test_lines_a_batch_did_not_answer_go_live(
    served: FakeBatchServer, tmp_path: Path, outcome: str, live_first: int
) -> None:
    served.outcome = outcome
    run = batched(served, tmp_path)
    assert run.stages[0].sent_live == live_first
    assert run.stages[0].status == ("expired" if outcome == "expired" else "completed")
    assert served.live_calls == sum(s.sent_live for s in run.stages)
    assert all(
        res["status"] == "ok" for rec in run.result.to_records() for res in rec["results"].values()
    )


def test_an_interrupted_wait_polls_the_same_batch_again(
    served: FakeBatchServer, tmp_path: Path
) -> None:
    served.polls_before_done = 3

    def interrupt(_stage: Any, state: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        batched(served, tmp_path, on_poll=interrupt)
    assert len(served.submitted) == 1
    pending = json.loads(state_path_for(tmp_path / "out.jsonl").read_text(encoding="utf-8"))[
        "pending"
    ]
    (waited_on,) = pending.values()
    assert waited_on in served.batches
    run = batched(served, tmp_path)
    assert run.stages[0].resumed
    assert run.stages[0].batch_id == waited_on
    assert len(served.submitted) == 2  # the first stage's batch once, then the second stage's


def test_only_openai_style_servers_take_batches() -> None:
    with pytest.raises(BackendUnavailable, match="batches need an openai/ or openai-compatible/"):
        CollectingBackend(ScriptedBackend())


def test_score_batch_on_the_command_line(served: FakeBatchServer, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rag_judge.cli import main

    served.polls_before_done = 0
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    args = ["score", str(rows), "-o", str(tmp_path / "out.jsonl"), "--batch"]
    args += ["--model", FAKE_MODEL, "--base-url", served.base_url]
    args += ["--metrics", "faithfulness"]
    env = cli_env(tmp_path)
    run = CliRunner().invoke(main, args, env=env)
    assert run.exit_code == 0, run.output
    assert "stage 1: 4 openai-compatible/m requests in batch_" in run.output
    assert "stage 2: 4 openai-compatible/m requests in batch_" in run.output
    assert "completed: 4/4 lines done, 0 in flight, 0 failed" in run.output
    # The final run reads every reply the batches wrote into the cache.
    assert (
        "8 calls made (8 through a Batch API, at 50% of the price), 8 answered from" in run.output
    )
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["results"]["faithfulness"]["status"] for line in lines] == ["ok"] * 4
    no_cache = CliRunner().invoke(main, [*args, "--no-cache"], env=env)
    assert no_cache.exit_code == 2
    assert "drop --no-cache" in no_cache.output


def test_the_ledger_bills_batched_tokens_at_the_discount() -> None:
    from rag_judge.backends.wrapper.ledger import BATCH_DISCOUNT, Ledger
    from rag_judge.core.types import Usage

    live, batch = Ledger(), Ledger()
    usage = Usage(prompt_tokens=10_000, completion_tokens=2_000)
    live.record("openai/gpt-4o-mini", usage=usage, status="ok", cached=False, attempts=1, seconds=0)
    batch.record_batched("openai/gpt-4o-mini", usage)
    full, discounted = live.cost_usd("openai/gpt-4o-mini"), batch.cost_usd("openai/gpt-4o-mini")
    assert full is not None
    assert discounted is not None
    assert full > 0
    assert discounted == pytest.approx(full * BATCH_DISCOUNT)
    assert batch.summary()["openai/gpt-4o-mini"]["batched"] == 1


def test_a_server_without_a_batch_api_is_named_and_nothing_is_judged(tmp_path: Path) -> None:
    """llama-cpp-python's server (like the plain fake) answers /v1/files with a 404."""
    from fake_openai_server import FakeOpenAIServer

    from rag_judge.backends.errors import BackendError

    plain = FakeOpenAIServer().start()
    try:
        with pytest.raises(BackendError, match=r"has no Batch API .*run without --batch"):
            score_batched(
                server_settings(plain.base_url, tmp_path), state_path_for(tmp_path / "out.jsonl")
            )
        assert plain.calls["/v1/chat/completions"] == 0
    finally:
        plain.stop()


def test_a_server_that_answers_with_an_html_page_is_one_line() -> None:
    """A proxy's HTML error page is named by its title, not pasted into the error."""
    from html_error_server import html_error_server

    from rag_judge.backends.batch.batch_api import BatchAPI
    from rag_judge.backends.errors import BackendError

    with html_error_server() as base, pytest.raises(BackendError) as raised:
        BatchAPI(base, None, timeout=10).check()
    message = str(raised.value)
    assert "\n" not in message
    assert "HTTP 404: 404 Not Found; " in message
    assert "<" not in message
    assert "has no Batch API" in message


def test_the_command_line_names_a_server_without_a_batch_api_before_judging(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner
    from fake_openai_server import FakeOpenAIServer

    from rag_judge.cli import main

    plain = FakeOpenAIServer().start()
    try:
        rows = tmp_path / "rows.jsonl"
        rows.write_text(json.dumps(ROWS[0]) + "\n", encoding="utf-8")
        args = ["score", str(rows), "-o", str(tmp_path / "out.jsonl"), "--batch"]
        args += ["--model", FAKE_MODEL, "--base-url", plain.base_url]
        run = CliRunner().invoke(main, args, env=cli_env(tmp_path))
        assert run.exit_code == 2
        assert "has no Batch API" in run.output
        assert "run without --batch" in run.output
        assert "judging" not in run.output  # said before the progress bar, not under it
        assert plain.total_calls == 0
        local = CliRunner().invoke(main, [*args[:5], "--model", "local/qwen2.5-coder-1.5b"])
        assert local.exit_code == 2
        assert "batches need an openai/ or openai-compatible/ model" in local.output
    finally:
        plain.stop()
