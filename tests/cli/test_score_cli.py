"""`rag-judge score` end to end over real HTTP: a fake OpenAI server plays a judge model."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401

from rag_judge.cli import main


def judge_model(body: dict[str, Any]) -> str:
    """Replies like a judge model, routed by what the system prompt asks for."""
    system = body["messages"][0]["content"]
    if '"verdicts"' in system:
        return json.dumps(
            {"verdicts": [{"claim": 1, "reason": "r", "verdict": "supported", "passages": [1]}]}
        )
    if '"questions"' in system:
        return json.dumps({"questions": ["When was it built?"] * 3, "noncommittal": False})
    return json.dumps({"claims": ["It was built in 1889."]})


ROWS = [
    {
        "user_input": "When was it built?",
        "retrieved_contexts": ["Built in 1889."],
        "response": "In 1889.",
        "reference": "1889.",
    },
    {"user_input": "Who built it?", "retrieved_contexts": ["Eiffel."], "response": "Eiffel."},
]


@pytest.fixture
def served(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> FakeOpenAIServer:
    fake_openai.respond = judge_model
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    return fake_openai


def score(tmp_path: Path, server: FakeOpenAIServer, *extra: str) -> Any:
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    args = [
        "score",
        str(data),
        "-o",
        str(tmp_path / "out.jsonl"),
        "--model",
        "openai/judge",
        "--embeddings",
        "openai/embed",
        "--base-url",
        f"http://127.0.0.1:{server.port}/v1",
        *extra,
    ]
    return CliRunner().invoke(main, args, env={"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache")})


def test_score_writes_results_and_prints_a_summary(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = score(tmp_path, served)
    assert run.exit_code == 0, run.output
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == ["0", "1"]
    first, second = records[0]["results"], records[1]["results"]
    assert set(first) == {
        "faithfulness", "answer_relevancy", "completeness", "context_recall", "exact_match",
        "answer_f1",
    }  # fmt: skip
    assert first["exact_match"]["calls"] == first["answer_f1"]["calls"] == 0  # no model call
    assert first["faithfulness"]["value"] == 1.0
    assert first["answer_relevancy"]["value"] == pytest.approx(1.0)
    assert second["completeness"] == first["completeness"] | {
        "value": None,
        "status": "missing_input",
        "error": "needs reference",
        "claims": [],
        "details": {},
        "prompts": [],
        "usage": {
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "reasoning_tokens": 0,
            "reported": True,
        },
        "calls": 0,
        "by_k": None,
    }
    assert "NaN" not in "".join(lines)
    assert "faithfulness" in run.output
    assert "missing_input 1" in run.output


def test_a_second_run_is_served_from_the_cache(tmp_path: Path, served: FakeOpenAIServer) -> None:
    assert score(tmp_path, served).exit_code == 0
    calls = served.total_calls
    rerun = score(tmp_path, served)
    assert rerun.exit_code == 0, rerun.output
    assert served.total_calls == calls  # zero new HTTP calls
    assert "openai/judge: 0 calls made" in rerun.output


def test_score_limit_and_metrics(tmp_path: Path, served: FakeOpenAIServer) -> None:
    run = score(tmp_path, served, "--limit", "1", "--metrics", "context_recall,context_precision")
    assert run.exit_code == 0, run.output
    (record,) = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert set(record["results"]) == {"context_recall", "context_precision"}
    assert record["results"]["context_recall"]["by_k"] == {"1": 1.0}


def test_a_language_without_prompts_is_said_not_silent(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = score(tmp_path, served, "--limit", "1", "--metrics", "faithfulness", "--language", "fr")
    assert run.exit_code == 0, run.output
    assert "no prompts in 'fr' (there are: en, zh)" in run.output
    (record,) = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert (record["detected_language"], record["prompt_language"]) == ("fr", "en")
    quiet = score(tmp_path, served, "--limit", "1", "--metrics", "faithfulness", "--language", "zh")
    assert "no prompts in" not in quiet.output


def test_unknown_metric_and_bad_rows_are_clear_errors(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = score(tmp_path, served, "--metrics", "faithfulnes")
    assert run.exit_code == 2
    assert "unknown metric(s) faithfulnes" in run.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "contexts": "not a list"}\n', encoding="utf-8")
    run = CliRunner().invoke(main, ["score", str(bad), "-o", str(tmp_path / "o.jsonl")])
    assert run.exit_code == 2
    assert "bad.jsonl:1" in run.output
    assert "contexts" in run.output


def test_the_output_never_overwrites_the_input(tmp_path: Path, served: FakeOpenAIServer) -> None:
    data = tmp_path / "rows.jsonl"
    score(tmp_path, served)  # writes rows.jsonl
    before = data.read_text(encoding="utf-8")
    run = score(tmp_path, served, "-o", str(data), "--limit", "1")
    assert run.exit_code == 2
    assert "would overwrite the input" in run.output
    assert data.read_text(encoding="utf-8") == before


@pytest.mark.parametrize("where", ["a_folder", "under_a_file", "cache_under_a_file"])
def test_a_path_that_cannot_be_written_fails_before_any_model_call(
    tmp_path: Path, served: FakeOpenAIServer, where: str
) -> None:
    (tmp_path / "a_file").write_text("x", encoding="utf-8")
    (tmp_path / "a_folder").mkdir()
    output = {
        "a_folder": tmp_path / "a_folder",
        "under_a_file": tmp_path / "a_file" / "out.jsonl",
        "cache_under_a_file": tmp_path / "out.jsonl",
    }[where]
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    cache = tmp_path / "a_file" / "cache" if where == "cache_under_a_file" else tmp_path / "c"
    args = ["score", str(data), "-o", str(output), "--model", "openai/judge"]
    args += ["--embeddings", "openai/embed", "--base-url", served.base_url]
    run = CliRunner().invoke(main, args, env={"RAG_JUDGE_CACHE_DIR": str(cache)})
    assert run.exit_code == 2, run.output
    assert "error: " in run.output.lower()  # ours, or click's for a folder given as a file
    assert "Traceback" not in run.output
    assert served.total_calls == 0


def test_an_empty_metric_list_is_a_usage_error(tmp_path: Path, served: FakeOpenAIServer) -> None:
    run = score(tmp_path, served, "--metrics", " , ")
    assert run.exit_code == 2
    assert "--metrics names no judge" in run.output
    assert served.total_calls == 0


def stop_at_the_second_row(
    monkeypatch: pytest.MonkeyPatch, stop: Callable[[], Awaitable[None]]
) -> None:
    """Judge the first row as usual, then run ``stop`` (an interruption) before the second."""
    import rag_judge.jobs.score.run as run_module

    real = run_module._judge_sample
    judged: list[str] = []

    async def stopping(sample: Any, *args: Any) -> Any:
        if judged:
            await stop()
        judged.append(sample.id)
        return await real(sample, *args)

    monkeypatch.setattr(run_module, "_judge_sample", stopping)


def test_an_interrupted_score_keeps_its_finished_rows_and_resumes_from_the_cache(
    served: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rag_judge.jobs.score.run as run_module

    real = run_module._judge_sample

    async def interrupt() -> None:
        raise KeyboardInterrupt

    stop_at_the_second_row(monkeypatch, interrupt)
    stopped = score(tmp_path, served, "--concurrency", "1")
    assert stopped.exit_code == 130, stopped.output
    assert not (tmp_path / "out.jsonl").exists()
    kept = (tmp_path / "out.jsonl.partial").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["question"] for line in kept] == ["When was it built?"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []

    def asked_about_first_row() -> int:
        return sum("Built in 1889." in json.dumps(body) for _, body, _ in served.requests)

    first_row_calls = asked_about_first_row()
    assert first_row_calls > 0

    monkeypatch.setattr(run_module, "_judge_sample", real)
    resumed = score(tmp_path, served, "--concurrency", "1")
    assert resumed.exit_code == 0, resumed.output
    rows = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["question"] for line in rows] == [r["user_input"] for r in ROWS]
    assert not (tmp_path / "out.jsonl.partial").exists()
    assert json.loads(rows[0])["results"] == json.loads(kept[0])["results"]
    assert asked_about_first_row() == first_row_calls  # the first row: all from the cache


def test_sigterm_stops_score_like_ctrl_c_keeping_the_finished_rows(
    served: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import os
    import signal

    async def terminate() -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # what a CI cancellation sends
        await asyncio.sleep(30)

    before = signal.getsignal(signal.SIGTERM)
    stop_at_the_second_row(monkeypatch, terminate)
    stopped = score(tmp_path, served, "--concurrency", "1")
    assert stopped.exit_code == 143, stopped.output
    assert "terminated: finished model calls are in the response cache" in stopped.output
    kept = (tmp_path / "out.jsonl.partial").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["question"] for line in kept] == ["When was it built?"]
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is put back after


def test_a_run_where_every_call_fails_exits_3_and_says_why(
    served: FakeOpenAIServer, tmp_path: Path
) -> None:
    served.default_behaviour = "401"  # a wrong key: permanent, never retried
    run = score(tmp_path, served, "--metrics", "faithfulness")
    assert run.exit_code == 3, run.output
    assert "error: no row could be judged (2 backend_error); first error:" in run.output
    assert "test-key" not in run.output
    rows = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    statuses = [json.loads(line)["results"]["faithfulness"]["status"] for line in rows]
    assert statuses == ["backend_error", "backend_error"]  # written all the same


def test_reference_matches_do_not_hide_a_run_that_judged_nothing(
    served: FakeOpenAIServer, tmp_path: Path
) -> None:
    served.default_behaviour = "401"
    run = score(tmp_path, served, "--metrics", "faithfulness,exact_match,answer_f1")
    assert run.exit_code == 3, run.output  # exact match scored rows, with no model: not judging


def test_a_run_with_one_row_scored_exits_0(served: FakeOpenAIServer, tmp_path: Path) -> None:
    served.fail_when = lambda body: "401" if "Eiffel." in json.dumps(body) else None
    run = score(tmp_path, served, "--metrics", "faithfulness")
    assert run.exit_code == 0, run.output


def test_a_gate_fails_when_a_row_it_gates_could_not_be_judged(
    served: FakeOpenAIServer, tmp_path: Path
) -> None:
    """One of two rows fails on the backend: the other's mean passes the bound, and the gate
    fails all the same (an outage must not turn CI green), unless --allow-unjudged says so."""
    served.fail_when = lambda body: "401" if "Eiffel." in json.dumps(body) else None
    junit = tmp_path / "gate.xml"
    args = ["--metrics", "faithfulness", "--fail-under", "faithfulness=0.9"]
    run = score(tmp_path, served, *args, "--junit", str(junit))
    assert run.exit_code == 1, run.output
    assert "gate: pass faithfulness mean >= 0.900: mean 1.000" in run.output
    assert (
        "gate: FAIL faithfulness judged on every gated row: 1 of 2 rows of NEW could not be "
        "judged (backend_error 1; first: "
    ) in run.output
    assert 'tests="2" failures="1"' in junit.read_text(encoding="utf-8")
    allowed = score(tmp_path, served, *args, "--allow-unjudged")
    assert allowed.exit_code == 0, allowed.output
    assert "allowed by --allow-unjudged" in allowed.output


def not_supported(body: dict[str, Any]) -> str:
    """Like judge_model, but every claim ends not mentioned."""
    reply = judge_model(body)
    return reply.replace('"supported"', '"not_mentioned"')


def test_the_gate_on_score_fails_under_a_bound_and_writes_junit(
    served: FakeOpenAIServer, tmp_path: Path
) -> None:
    junit = tmp_path / "gate.xml"
    passing = score(
        tmp_path, served, "--metrics", "faithfulness", "--fail-under", "faithfulness=0.9"
    )
    assert passing.exit_code == 0, passing.output
    assert "gate: pass faithfulness mean >= 0.900: mean 1.000" in passing.output
    served.respond = not_supported
    args = ["--metrics", "faithfulness", "--fail-under", "faithfulness=0.9", "--no-cache"]
    failing = score(tmp_path, served, *args, "--junit", str(junit))
    assert failing.exit_code == 1, failing.output
    assert "gate: FAIL faithfulness mean >= 0.900: mean 0.000" in failing.output
    assert (tmp_path / "out.jsonl").exists()  # the results are written before the verdict
    assert 'failures="1"' in junit.read_text(encoding="utf-8")


def test_score_fails_if_worse_than_its_baseline(served: FakeOpenAIServer, tmp_path: Path) -> None:
    first = score(tmp_path, served, "--metrics", "faithfulness")
    assert first.exit_code == 0, first.output
    baseline = tmp_path / "base.jsonl"
    baseline.write_bytes((tmp_path / "out.jsonl").read_bytes())
    args = ["--metrics", "faithfulness", "--baseline", str(baseline), "--fail-if-worse"]
    same = score(tmp_path, served, *args)
    assert same.exit_code == 0, same.output
    served.respond = not_supported
    worse = score(tmp_path, served, *args, "--no-cache")
    assert worse.exit_code == 1, worse.output
    assert "gate: FAIL faithfulness not worse than the baseline" in worse.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-under", "completeness=0.5"], "which this run does not judge"),
        (["--fail-if-worse"], "--fail-if-worse needs --baseline"),
        (["--baseline", "missing.jsonl", "--fail-if-worse"], "missing.jsonl"),
        (["--fail-under", "faithfulness=2"], "must be in [0, 1]"),
    ],
)
def test_gate_mistakes_fail_before_any_model_call(
    served: FakeOpenAIServer, tmp_path: Path, args: list[str], message: str
) -> None:
    run = score(tmp_path, served, "--metrics", "faithfulness", *args)
    assert run.exit_code == 2, run.output
    assert message in run.output
    assert served.total_calls == 0


@pytest.mark.parametrize(
    ("output", "message"),
    [("-", "'-' is not standard output here"), ("out.csv", "the output is JSON Lines, not .csv")],
)
def test_an_output_that_promises_another_format_is_refused(
    served: FakeOpenAIServer, tmp_path: Path, output: str, message: str
) -> None:
    run = score(tmp_path, served, "--metrics", "faithfulness", "-o", str(tmp_path / output)
                if output != "-" else "-")  # fmt: skip
    assert run.exit_code == 2, run.output
    assert message in run.output
    assert served.total_calls == 0


def test_a_baseline_that_is_not_a_score_file_fails_before_any_model_call(
    served: FakeOpenAIServer, tmp_path: Path
) -> None:
    rows = tmp_path / "not_scores.jsonl"
    rows.write_text('{"id": "0", "question": "Q?"}\n')
    args = ["--metrics", "faithfulness", "--baseline", str(rows), "--fail-if-worse"]
    run = score(tmp_path, served, *args)
    assert run.exit_code == 2, run.output
    assert "is not a score file of these metrics" in run.output
    assert served.total_calls == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # --junit onto the baseline would replace the baseline with XML and pass the gate.
        (["--baseline", "{base}", "--fail-if-worse", "--junit", "{base}"],
         "--junit would overwrite --baseline"),
        (["--junit", "{out}"], "--junit and -o are the same file"),
        (["--junit", "{out}.partial"], "the partial results and --junit are the same file"),
    ],
)  # fmt: skip
def test_no_file_a_command_writes_is_one_it_reads_or_writes_twice(
    served: FakeOpenAIServer, tmp_path: Path, args: list[str], message: str
) -> None:
    first = score(tmp_path, served, "--metrics", "faithfulness")
    assert first.exit_code == 0, first.output
    base = tmp_path / "base.jsonl"
    base.write_bytes((tmp_path / "out.jsonl").read_bytes())
    calls = served.total_calls
    filled = [a.format(base=base, out=tmp_path / "out.jsonl") for a in args]
    run = score(tmp_path, served, "--metrics", "faithfulness", *filled)
    assert run.exit_code == 2, run.output
    assert message in run.output
    assert served.total_calls == calls
    assert base.read_bytes() == (tmp_path / "out.jsonl").read_bytes()  # untouched


def test_a_cache_locked_by_another_process_costs_the_cache_not_the_results(
    served: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import sqlite3

    from rag_judge.backends.wrapper import cache as cache_module

    monkeypatch.setattr(cache_module, "BUSY_SECONDS", 0.2)
    first = score(tmp_path, served, "--metrics", "completeness")  # creates the cache file
    assert first.exit_code == 0, first.output
    path = next((tmp_path / "cache").rglob("*.sqlite"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process's write lock, held throughout
    try:
        run = score(tmp_path, served, "--metrics", "faithfulness", "--concurrency", "1")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert run.exit_code == 0, run.output
    rows = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(r)["results"]["faithfulness"]["status"] for r in rows] == ["ok", "ok"]
    assert "not cached (database is locked): a re-run asks for them again" in run.output
    notices = [r for r in caplog.records if "is locked by another process" in r.getMessage()]
    assert len(notices) == 1  # said once (on stderr, outside pytest), waited for once


def test_a_full_disk_is_one_line_and_keeps_the_partial_rows(
    served: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from rag_judge.jobs.score import result as result_module

    def full(path: Path, lines: Any) -> Path:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(result_module, "write_lines", full)  # the final write only
    run = score(tmp_path, served, "--metrics", "faithfulness")
    assert run.exit_code == 2, run.output
    assert "error: No space left on device: " in run.output
    assert "Traceback" not in run.output
    kept = (tmp_path / "out.jsonl.partial").read_text(encoding="utf-8").splitlines()
    assert len(kept) == 2  # both judged rows


def test_a_ray_client_address_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "1", "question": "Q?", "answer": "A", "reference": "A"}\n')
    args = ["score", str(rows), "-o", str(tmp_path / "out.jsonl"), "--metrics", "exact_match"]
    run = CliRunner().invoke(
        main, [*args, "--executor", "ray://127.0.0.1:1"], env={"RAG_JUDGE_CACHE_DIR": str(tmp_path)}
    )
    assert run.exit_code == 2, run.output
    assert "error: cannot start Ray at ray://127.0.0.1:1:" in run.output
    assert run.exception is None or isinstance(run.exception, SystemExit)


@pytest.mark.parametrize(
    ("option", "what"), [("--embeddings", "embedder"), ("--judge", "model"), ("--model", "model")]
)
def test_a_model_name_that_does_not_parse_fails_before_any_model_call(
    tmp_path: Path, served: FakeOpenAIServer, option: str, what: str
) -> None:
    run = score(tmp_path, served, option, "nope/x")
    assert run.exit_code == 2, run.output
    assert f"error: {option}, field '{option[2:]}': {what} 'nope/x' is not" in run.output
    assert served.total_calls == 0  # no judge ran first
