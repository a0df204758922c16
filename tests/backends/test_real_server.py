"""`rag-judge score` through a real OpenAI-compatible server, llama-cpp-python's own, on all
three server backends: structured output (the server refuses ``json_schema`` with a 500),
yes/no log-probabilities for the scoring path, and the cache making a second run free."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from real_llama_server import RealServer, llama_server  # noqa: F401

from rag_judge.cli import main

ROWS = [
    {
        "question": "What is the capital of France?",
        "contexts": ["Paris is the capital and largest city of France."],
        "answer": "The capital of France is Paris.",
    },
    {
        "question": "When was the Eiffel Tower built?",
        "contexts": ["The Eiffel Tower was built from 1887 to 1889."],
        "answer": "It was finished in 1889.",
    },
]
MODELS = {
    "openai": "openai/local",
    "openai-compatible": "openai-compatible/local",
    "litellm": "litellm/openai/local",
}


def score(tmp_path: Path, server: RealServer, model: str, *extra: str) -> Any:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    args = ["score", str(data), "-o", str(tmp_path / "out.jsonl"), "--metrics", "faithfulness"]
    args += ["--model", model, "--base-url", server.base_url, *extra]
    env = {
        "RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "RAG_JUDGE_CONFIG": str(tmp_path / "empty.toml"),
        "OPENAI_API_KEY": None,
    }
    return CliRunner().invoke(main, args, env=env)


def results(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["results"]["faithfulness"] for line in lines]


@pytest.mark.parametrize("backend", list(MODELS))
@pytest.mark.parametrize("mode", ["generate", "score"])
def test_every_row_is_scored_through_the_real_server_and_a_rerun_is_free(
    tmp_path: Path,
    llama_server: RealServer,  # noqa: F811
    backend: str,
    mode: str,
) -> None:
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
