"""score over a local Ray cluster (2 workers): the same output file as in process, a killed
worker's task run again, and a clear error when Ray is absent."""

from __future__ import annotations

import asyncio
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
from isolated import FAKE_MODEL, cli_env, server_settings

from rag_judge.core.errors import RagJudgeError
from rag_judge.core.types import RagSample
from rag_judge.jobs.score.job import score_job
from rag_judge.jobs.score.options import ScoreOptions
from rag_judge.jobs.score.run import evaluate
from rag_judge.runtime.events import Events
from rag_judge.runtime.executors import OnRay
from rag_judge.runtime.executors.on_ray import RayTarget
from rag_judge.runtime.session import open_session

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


class Seen(Events):
    """Rows and counts handed to two callbacks."""

    def __init__(self, progress: Any, on_counts: Any) -> None:
        self.progress, self.on_counts = progress, on_counts

    def finished(self, item: Any) -> None:
        if self.progress is not None:
            self.progress(item)

    def counts(self, counts: Any) -> None:
        if self.on_counts is not None:
            self.on_counts(counts)


def evaluate_on_ray(
    samples: list[RagSample], settings: Any, progress: Any = None, on_counts: Any = None
) -> Any:
    """The score job over Ray (a local cluster of 2 workers), METRICS judged."""
    return asyncio.run(
        score_job(
            samples,
            open_session(settings),
            ScoreOptions(metrics=tuple(METRICS)),
            executor=OnRay(RayTarget(None, 2)),
            events=Seen(progress, on_counts),
        )
    ).result


def settings_for(server: Any, cache: Path) -> Any:
    return server_settings(server.base_url, cache)


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
        settings_for(fake_openai, tmp_path / "b"),
        progress=lambda row: seen.append(row.sample.id),
    )
    here.write_jsonl(tmp_path / "here.jsonl")
    there.write_jsonl(tmp_path / "there.jsonl")
    assert (tmp_path / "here.jsonl").read_bytes() == (tmp_path / "there.jsonl").read_bytes()
    assert sorted(seen) == sorted(r["id"] for r in ROWS)
    mine, theirs = here.ledger.summary(), there.ledger.summary()
    assert theirs[FAKE_MODEL]["calls"] == mine[FAKE_MODEL]["calls"]


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
        result["value"] = evaluate_on_ray(samples, settings)

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
    from rag_judge.runtime.executors.on_ray import require_ray

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
    args = ["score", str(rows), "-o", str(tmp_path / "out.jsonl"), "--metrics", "faithfulness"]
    args += ["--model", FAKE_MODEL, "--base-url", fake_openai.base_url]
    env = cli_env(tmp_path, "c")
    run = CliRunner().invoke(main, [*args, "--executor", "ray"], env=env)
    assert run.exit_code == 0, run.output
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in ROWS[:6]]
    bad = CliRunner().invoke(main, [*args, "--executor", "spark"], env=env)
    assert bad.exit_code == 2
    assert "--executor takes local, ray, ray://ADDRESS or ray:auto" in bad.output


def test_progress_counts_rows_done_in_flight_and_failed_across_workers(
    cluster: None,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    def reply(body: Any) -> str:  # rows about building 3 get prose: a parse_error, a failed row
        return "no idea" if "building 3 " in json.dumps(body).lower() else judge_reply(body)

    fake_openai.respond = reply
    fake_openai.latency = 0.02
    seen: list[Any] = []
    rows: list[str] = []
    evaluate_on_ray(
        [RagSample.model_validate(r) for r in ROWS],
        settings_for(fake_openai, tmp_path / "cache"),
        progress=lambda row: rows.append(row.sample.id),
        on_counts=seen.append,
    )
    assert sorted(rows) == sorted(r["id"] for r in ROWS)  # every row, as it finished
    assert seen[-1].done == len(ROWS)
    assert seen[-1].in_flight == 0
    assert seen[-1].failed == 1  # r3; r13 is "building 13"
    assert max(c.in_flight for c in seen) > 0
    assert [c.done for c in seen] == sorted(c.done for c in seen)


@pytest.mark.slow  # starts a Ray head of its own (`ray start --head`), as the manual's example does
def test_score_joins_a_cluster_that_ray_start_runs(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The manual's example for an existing cluster (docs/how-to/scale-out.md): ``ray start
    --head``, then ``--executor ray:auto`` from a shell that knows its address."""
    import socket
    import subprocess
    import sys
    import tempfile
    import uuid

    fake_openai.respond = judge_reply
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ray_bin = Path(sys.executable).with_name("ray")
    short = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    # The cluster's shared secret, given to the head and to every process that joins it.
    secret = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": uuid.uuid4().hex}
    start = [str(ray_bin), "start", "--head", "--port", str(port), "--num-cpus", "2", "--block"]
    head = subprocess.Popen(
        [*start, "--disable-usage-stats", "--include-dashboard=false", "--temp-dir", short],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: killed whole, whatever it started
        env={**os.environ, **secret},
    )
    try:
        assert head.stdout is not None
        for line in head.stdout:  # up once it says so
            if "Ray runtime started" in line:
                break
        rows = tmp_path / "rows.jsonl"
        rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:4]), encoding="utf-8")
        env = {**os.environ, **secret, "RAY_ADDRESS": f"127.0.0.1:{port}", **cli_env(tmp_path)}
        command = [str(Path(sys.executable).with_name("rag-judge")), "score", str(rows), "-o"]
        command += [str(tmp_path / "out.jsonl"), "--metrics", "faithfulness"]
        command += ["--model", FAKE_MODEL, "--base-url", fake_openai.base_url]
        done = subprocess.run(
            [*command, "--executor", "ray:auto"], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in ROWS[:4]]
        assert fake_openai.total_calls > 0
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()


AFTER_A_FAILED_CONNECT = """
import ray
from rag_judge.backends.errors import BackendUnavailable
from rag_judge.runtime.executors.on_ray import RayTarget, connected
try:
    with connected(RayTarget(address="ray://127.0.0.1:1", workers=1)):
        raise SystemExit("connected to nowhere")
except BackendUnavailable as error:
    assert "cannot start Ray at ray://127.0.0.1:1" in str(error), error
with connected(RayTarget(address=None, workers=1)) as started:
    print(started.get(started.put(7)))
"""


@pytest.mark.slow
def test_a_failed_ray_client_connect_leaves_ray_startable_in_the_same_process() -> None:
    """``ray://`` to nowhere puts Ray in client mode with gRPC threads (qdrant-client brings
    grpcio along); unless undone, every later ``ray.init`` in that process fails. Run in a
    process of its own: this test session's cluster is already up."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", AFTER_A_FAILED_CONNECT],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "7"
