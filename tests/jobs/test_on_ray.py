"""score over a local Ray cluster (2 workers): the same output file as in process, a killed
worker's task run again, and a clear error when Ray is absent."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from fake_openai_server import FakeOpenAIServer, fake_openai, judge_reply  # noqa: F401

from rag_judge.core.errors import RagJudgeError
from rag_judge.jobs.on_ray import RayTarget
from rag_judge.jobs.score.on_ray import evaluate_on_ray
from rag_judge.jobs.score.run import evaluate
from rag_judge.runtime.settings import load_settings

pytest.importorskip("ray")

METRICS = ["faithfulness", "completeness"]
ROWS = [
    {
        "id": f"r{i}",
        "question": f"When was building {i} built?",
        "contexts": [f"Building {i} was built in 18{i % 10}0."],
        "answer": f"It was built in 18{i % 10}0.",
        "reference": f"18{i % 10}0.",
    }
    for i in range(16)
]


def settings_for(server: FakeOpenAIServer, cache: Path) -> Any:
    chosen = {"model": "openai-compatible/m", "base_url": server.base_url, "cache_dir": cache}
    return load_settings(chosen, env={})


def test_ray_writes_the_same_file_as_one_process(
    cluster: None,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.respond = judge_reply
    here = evaluate(ROWS, METRICS, settings=settings_for(fake_openai, tmp_path / "a"))
    seen: list[str] = []
    there = evaluate_on_ray(
        [s.sample for s in here.samples],
        METRICS,
        settings=settings_for(fake_openai, tmp_path / "b"),
        target=RayTarget(None, 2),
        progress=lambda row: seen.append(row.sample.id),
    )
    here.write_jsonl(tmp_path / "here.jsonl")
    there.write_jsonl(tmp_path / "there.jsonl")
    assert (tmp_path / "here.jsonl").read_bytes() == (tmp_path / "there.jsonl").read_bytes()
    assert sorted(seen) == sorted(r["id"] for r in ROWS)
    mine, theirs = here.ledger.summary(), there.ledger.summary()
    assert theirs["openai-compatible/m"]["calls"] == mine["openai-compatible/m"]["calls"]


def test_a_killed_worker_is_replaced_and_nothing_is_lost(
    cluster: None,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.respond = judge_reply
    fake_openai.latency = 0.05
    settings = settings_for(fake_openai, tmp_path / "cache")
    result: dict[str, Any] = {}

    def run() -> None:
        from rag_judge.core.types import RagSample

        samples = [RagSample.model_validate(r) for r in ROWS]
        result["value"] = evaluate_on_ray(
            samples, METRICS, settings=settings, target=RayTarget(None, 2)
        )

    thread = threading.Thread(target=run)
    thread.start()
    killed = _kill_a_worker_once_it_works(fake_openai)
    thread.join(timeout=300)
    assert killed
    done = result["value"]
    assert [s.sample.id for s in done.samples] == [r["id"] for r in ROWS]
    assert all(r.status == "ok" for s in done.samples for r in s.results.values())


def _kill_a_worker_once_it_works(server: FakeOpenAIServer) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.total_calls >= 4:
            for process in psutil.process_iter(["cmdline"]):
                if "ray::_judge_slice" in " ".join(process.info["cmdline"] or []):
                    os.kill(process.pid, signal.SIGKILL)
                    return True
        time.sleep(0.02)
    return False


def test_without_ray_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_ray(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    from rag_judge.jobs.on_ray import require_ray

    with pytest.raises(RagJudgeError, match=r"pip install 'rag-judge\[ray\]'"):
        require_ray()


def test_score_executor_ray_on_the_command_line(
    cluster: None,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner

    from rag_judge.cli import main

    fake_openai.respond = judge_reply
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:6]), encoding="utf-8")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    args = ["score", str(rows), "-o", str(tmp_path / "out.jsonl"), "--metrics", "faithfulness"]
    args += ["--model", "openai-compatible/m", "--base-url", fake_openai.base_url]
    env = {
        "RAG_JUDGE_CACHE_DIR": str(tmp_path / "c"),
        "RAG_JUDGE_CONFIG": str(tmp_path / "empty.toml"),
    }
    run = CliRunner().invoke(main, [*args, "--executor", "ray"], env=env)
    assert run.exit_code == 0, run.output
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in ROWS[:6]]
    bad = CliRunner().invoke(main, [*args, "--executor", "spark"], env=env)
    assert bad.exit_code == 2
    assert "--executor takes local, ray, ray://ADDRESS or ray:auto" in bad.output
