"""`rag-judge sweep` against the fake OpenAI server: its model and the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer

from rag_judge.cli import main


def sweep_model(body: dict[str, Any]) -> str:
    """An OpenAI-compatible generator and judge, routed by what the system prompt asks for."""
    system = body["messages"][0]["content"]
    if '"verdicts"' in system:
        return json.dumps(
            {"verdicts": [{"claim": 1, "reason": "r", "verdict": "supported", "passages": [1]}]}
        )
    if '"questions"' in system:
        return json.dumps({"questions": ["这是什么？"] * 3, "noncommittal": False})
    if '"claims"' in system:
        return json.dumps({"claims": ["这是一个事实。"]})
    return "这是答案。"


def run_cli(tmp_path: Path, server: FakeOpenAIServer, *extra: str) -> Any:
    args = [
        "sweep",
        "cmrc2018_zh",
        "--limit",
        "2",
        "--ks",
        "1-3",
        "--model",
        "openai/judge",
        "--embeddings",
        "openai/embed",
        "--base-url",
        f"http://127.0.0.1:{server.port}/v1",
        "-o",
        str(tmp_path / "out"),
        *extra,
    ]
    env = {"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "test-key"}
    return CliRunner().invoke(main, args, env=env)
