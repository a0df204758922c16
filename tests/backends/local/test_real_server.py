"""`rag-judge score` through a real OpenAI-compatible server, llama-cpp-python's own, on all
three server backends: structured output (the server refuses ``json_schema`` with a 500)
behind a proxy that fails a third of the requests, yes/no log-probabilities for the scoring
path, and the cache making a second run free."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from fault_proxy import FaultProxy, fault_proxy_for  # noqa: F401
from real_llama_server import RealServer, llama_server, second_llama_server  # noqa: F401

from rag_judge.backends.registry import DEFAULT_MODEL
from rag_judge.cli import main

pytestmark = pytest.mark.slow  # one real server per session, ~4 minutes on 2 cores

ROWS = [
    {
        "question": "What is the capital of France?",
        "contexts": ["Paris is the capital and largest city of France."],
        "answer": "The capital of France is Paris.",
        "reference": "Paris.",
    },
    {
        "question": "When was the Eiffel Tower built?",
        "contexts": ["The Eiffel Tower was built from 1887 to 1889."],
        "answer": "It was finished in 1889.",
        "reference": "From 1887 to 1889.",
    },
]
MODELS = {
    "openai": "openai/local",
    "openai-compatible": "openai-compatible/local",
    "litellm": "litellm/openai/local",
}


def score(tmp_path: Path, server: RealServer | FaultProxy, model: str, *extra: str) -> Any:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    args = ["score", str(data), "-o", str(tmp_path / "out.jsonl"), "--metrics", METRICS]
    args += ["--model", model, "--base-url", server.base_url, *extra]
    env = {
        "RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "RAG_JUDGE_CONFIG": str(tmp_path / "empty.toml"),
        "OPENAI_API_KEY": None,
    }
    return CliRunner().invoke(main, args, env=env)


METRICS = "faithfulness,completeness,context_recall"


def results(tmp_path: Path, metric: str = "faithfulness") -> list[dict[str, Any]]:
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["results"][metric] for line in lines]


@pytest.mark.parametrize("backend", list(MODELS))
def test_generate_mode_through_failures_scores_every_row_and_a_rerun_calls_nothing(
    tmp_path: Path,
    llama_server: RealServer,  # noqa: F811
    fault_proxy_for: Any,  # noqa: F811
    backend: str,
) -> None:
    """429 with Retry-After, 500 and truncated JSON on a third of the requests: retried, and
    every row ends ``ok``; the same command again reaches the server zero times."""
    proxy = fault_proxy_for(llama_server.base_url)
    run = score(tmp_path, proxy, MODELS[backend], "--judge-mode", "generate")
    assert run.exit_code == 0, run.output
    judged = [r for metric in METRICS.split(",") for r in results(tmp_path, metric)]
    assert [r["status"] for r in judged] == ["ok"] * 6, judged
    assert all(0.0 <= r["value"] <= 1.0 and r["claims"] for r in judged)
    assert set(proxy.injected) == {"429", "500", "truncated"}, proxy.injected
    reached = proxy.upstream_calls
    again = score(tmp_path, proxy, MODELS[backend], "--judge-mode", "generate")
    assert again.exit_code == 0, again.output
    assert [r for metric in METRICS.split(",") for r in results(tmp_path, metric)] == judged
    assert proxy.upstream_calls == reached  # all from the cache


@pytest.mark.parametrize("backend", list(MODELS))
def test_score_mode_reads_log_probabilities_from_the_real_server(
    tmp_path: Path,
    llama_server: RealServer,  # noqa: F811
    backend: str,
) -> None:
    mode = "score"
    run = score(tmp_path, llama_server, MODELS[backend], "--judge-mode", mode)
    assert run.exit_code == 0, run.output
    judged = results(tmp_path)
    assert [r["status"] for r in judged] == ["ok", "ok"], judged
    assert all(0.0 <= r["value"] <= 1.0 for r in judged)
    assert all(r["claims"] for r in judged)
    again = score(tmp_path, llama_server, MODELS[backend], "--judge-mode", mode)
    assert again.exit_code == 0, again.output
    assert results(tmp_path) == judged
    assert "0 calls made" in again.output, again.output


def test_a_sweep_generates_in_process_and_judges_through_the_server(
    tmp_path: Path,
    llama_server: RealServer,  # noqa: F811
) -> None:
    """The generator and the judge apart: the embedded model answers, the server judges (on
    the scoring path, from its log-probabilities), and the summary names both."""
    out = tmp_path / "sweep"
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    args = ["sweep", "cmrc2018_zh_chunked", "--limit", "2", "--ks", "1-3", "-o", str(out)]
    args += ["--generator", DEFAULT_MODEL, "--judge", "openai-compatible/local"]
    args += ["--base-url", llama_server.base_url, "--judge-mode", "score"]
    args += ["--metrics", "faithfulness"]
    env = {
        "RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "RAG_JUDGE_CONFIG": str(tmp_path / "empty.toml"),
    }
    run = CliRunner().invoke(main, args, env=env)
    assert run.exit_code == 0, run.output
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"Generator `{DEFAULT_MODEL}`, judge `openai-compatible/local`, k = 1, 2, 3" in summary
    assert "Warning" not in summary
    frame = pd.read_csv(out / "per_question.csv")
    assert len(frame) == 6
    assert set(frame["generation_status"]) == {"ok"}
    assert frame["faithfulness_status"].isin(["ok", "no_claims"]).all()
    assert f"- {DEFAULT_MODEL}: " in summary
    assert "- openai-compatible/local: " in summary


@pytest.mark.parametrize("generator_server", ["--generator-base-url", "OPENAI_BASE_URL"])
def test_generator_and_judge_each_on_their_own_real_server(
    tmp_path: Path,
    llama_server: RealServer,  # noqa: F811
    second_llama_server: RealServer,  # noqa: F811
    fault_proxy_for: Any,  # noqa: F811
    generator_server: str,
) -> None:
    """Your RAG's model on one server, the judge on another (two llama-cpp-python servers,
    each behind a proxy that fails a third of the requests once): the generator's requests
    reach only its server, given by its own flag or by the provider's own environment variable
    beside a judge's --judge-base-url, and the judge's reach only the judge's."""
    answers = fault_proxy_for(llama_server.base_url)
    judging = fault_proxy_for(second_llama_server.base_url)
    out = tmp_path / "sweep"
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    args = ["sweep", "cmrc2018_zh_chunked", "--limit", "1", "--ks", "1-2", "-o", str(out)]
    args += ["--generator", "openai/writer", "--judge", "openai-compatible/critic"]
    args += ["--judge-base-url", judging.base_url, "--judge-mode", "score"]
    args += ["--metrics", "faithfulness"]
    env = {
        "RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "RAG_JUDGE_CONFIG": str(tmp_path / "empty.toml"),
        "OPENAI_API_KEY": None,
        "OPENAI_BASE_URL": None,
    }
    if generator_server == "OPENAI_BASE_URL":
        env["OPENAI_BASE_URL"] = answers.base_url
    else:
        args += ["--generator-base-url", answers.base_url]
    run = CliRunner().invoke(main, args, env=env)
    assert run.exit_code == 0, run.output
    assert set(answers.models) == {"writer"}, answers.models
    assert set(judging.models) == {"critic"}, judging.models
    frame = pd.read_csv(out / "per_question.csv")
    assert set(frame["generation_status"]) == {"ok"}
    assert frame["faithfulness_status"].isin(["ok", "no_claims"]).all()


def test_batch_on_the_real_server_says_it_has_no_batch_api_before_judging(
    llama_server: RealServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = score(tmp_path, llama_server, MODELS["openai-compatible"], "--batch")
    assert run.exit_code == 2, run.output
    assert "has no Batch API" in run.output
    assert "run without --batch" in run.output
    assert not (tmp_path / "out.jsonl").exists()
