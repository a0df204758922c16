"""``--mlflow``: sweep, score and calibrate logged to a real MLflow store, read back with MLflow.

Each run goes to a ``sqlite:`` (or ``file:``) store in tmp_path, the model is the fake
OpenAI-compatible server, and what MLflow holds is read back with ``mlflow.MlflowClient``: the
per-k metrics with step = k and their CI bounds, the decision, the files. The failure shapes
(MLflow missing, a store that does not answer, one that fails after the run) use a stand-in
only for the failure.
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mlflow
import pandas as pd
import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401

from rag_judge.cli import main
from rag_judge.cli.common import NOT_LOGGED


def sweep_model(body: dict[str, Any]) -> str:
    """Generator and judge, routed by what the system prompt asks for."""
    system = body["messages"][0]["content"]
    if '"verdicts"' in system:
        return json.dumps(
            {"verdicts": [{"claim": 1, "reason": "r", "verdict": "supported", "passages": [1]}]}
        )
    if '"claims"' in system:
        return json.dumps({"claims": ["这是一个事实。"]})
    return "这是答案。"


@pytest.fixture
def served(
    tmp_path: Path,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> FakeOpenAIServer:
    """The fake server as the model; an empty config; MLflow's HTTP retries off (fast)."""
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")
    monkeypatch.chdir(tmp_path)  # anything MLflow put in the working directory lands here
    fake_openai.respond = sweep_model
    return fake_openai


def sweep(tmp_path: Path, server: FakeOpenAIServer, uri: str) -> Any:
    args = [
        "sweep", "cmrc2018_zh", "--limit", "2", "--ks", "1-3",
        "--metrics", "faithfulness,exact_match", "--model", "openai/judge",
        "--base-url", f"http://127.0.0.1:{server.port}/v1", "-o", str(tmp_path / "out"),
        "--mlflow", uri,
    ]  # fmt: skip
    env = {"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "test-key"}
    return CliRunner().invoke(main, args, env=env)


def only_run(uri: str, experiment: str) -> Any:
    client = mlflow.MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None
    (run,) = client.search_runs([found.experiment_id])
    return run


def test_a_sweep_logs_its_metrics_per_k_the_decision_and_its_files(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    result = sweep(tmp_path, served, uri)
    assert result.exit_code == 0, result.output
    run = only_run(uri, "rag-judge sweep")
    client = mlflow.MlflowClient(uri)
    assert run.info.status == "FINISHED"
    assert f"run {run.info.run_id}" in result.output
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    for name in ("doc_recall", "faithfulness", "exact_match"):
        rows = summary[summary.metric == name].sort_values("k")
        for field in ("mean", "ci_low", "ci_high"):
            key = name if field == "mean" else f"{name}.{field}"
            history = sorted(
                (m.step, m.value) for m in client.get_metric_history(run.info.run_id, key)
            )
            assert [step for step, _ in history] == rows.k.tolist()
            assert [value for _, value in history] == pytest.approx(rows[field].tolist())
    decision = json.loads((tmp_path / "out" / "decision.json").read_text(encoding="utf-8"))
    params, tags = run.data.params, run.data.tags
    assert params["eval_set"] == "cmrc2018_zh"
    assert params["ks"] == "1,2,3"
    # what the sweep measured: answer F1, the spans set's objective, is measured unasked
    assert params["metrics"] == "faithfulness,exact_match,answer_f1"
    assert params["model"] == "openai/judge"
    assert params["judge_mode"] in ("score", "generate")
    assert any(key.startswith("prompt.claims/") for key in params)
    assert params["decision.recommended_k"] == str(decision["recommended_k"]).replace(
        "None", "none"
    )
    assert tags["rag_judge.decision"] == decision["decision"]
    assert tags["mlflow.note.content"] == decision["sentence"]
    differences = client.get_metric_history(run.info.run_id, "decision.difference")
    assert sorted(m.step for m in differences) == [e["k"] for e in decision["per_k"]]
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"summary.md", "report.html", "per_question.parquet", "per_question.csv",
            "summary.csv", "sweep.png", "decision.json"} <= artifacts  # fmt: skip
    logged = Path(client.download_artifacts(run.info.run_id, "decision.json", str(tmp_path)))
    assert json.loads(logged.read_text(encoding="utf-8")) == decision
    assert (tmp_path / "mlartifacts").is_dir()  # beside the database, not in the working dir


def test_a_file_store_takes_the_same_run(tmp_path: Path, served: FakeOpenAIServer) -> None:
    uri = (tmp_path / "mlruns").as_uri()
    result = sweep(tmp_path, served, uri)
    assert result.exit_code == 0, result.output
    run = only_run(uri, "rag-judge sweep")
    steps = mlflow.MlflowClient(uri).get_metric_history(run.info.run_id, "faithfulness")
    assert sorted(m.step for m in steps) == [1, 2, 3]


def test_without_mlflow_installed_the_sweep_stops_before_any_call_naming_the_extra(
    tmp_path: Path, served: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # what a missing install raises
    result = sweep(tmp_path, served, f"sqlite:///{tmp_path / 'mlflow.db'}")
    assert result.exit_code == 2
    assert "pip install 'rag-judge[mlflow]'" in result.output
    assert served.total_calls == 0


def test_a_store_that_does_not_answer_fails_before_any_model_call(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    with socket_without_server() as port:
        result = sweep(tmp_path, served, f"http://user:secret@127.0.0.1:{port}")
    assert result.exit_code == 2
    assert "could not log to MLflow at http://***@127.0.0.1" in result.output
    assert "secret" not in result.output
    assert served.total_calls == 0
    assert not (tmp_path / "out").exists()


def test_not_a_tracking_uri_is_an_input_error(tmp_path: Path, served: FakeOpenAIServer) -> None:
    result = sweep(tmp_path, served, str(tmp_path / "mlflow.db"))
    assert result.exit_code == 2
    assert "is no tracking URI: give file:FOLDER, sqlite:///FILE.db" in result.output
    assert served.total_calls == 0


class FailingStore(http.server.BaseHTTPRequestHandler):
    """A tracking server that answers the check before the run and fails everything after."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.endswith("/experiments/search"):
            self._reply(200, {"experiments": []})
        else:
            self._reply(500, {"error_code": "INTERNAL_ERROR", "message": "the disk is full"})

    def do_GET(self) -> None:
        self._reply(500, {"error_code": "INTERNAL_ERROR", "message": "the disk is full"})

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def failing_store() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FailingStore)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_store_that_fails_after_the_run_loses_none_of_its_files(
    tmp_path: Path, served: FakeOpenAIServer, failing_store: str
) -> None:
    result = sweep(tmp_path, served, failing_store)
    assert result.exit_code == NOT_LOGGED, result.output
    assert "error: could not log to MLflow at http://127.0.0.1" in result.output
    assert "the disk is full" in result.output
    assert f"the run's files are in {tmp_path / 'out'}" in result.output
    for name in ("summary.md", "report.html", "decision.json", "per_question.parquet"):
        assert (tmp_path / "out" / name).stat().st_size > 0


class socket_without_server:  # noqa: N801 - a context manager used like a function
    """A local port that nothing listens on (bound, never listening, so refused at once)."""

    def __enter__(self) -> int:
        import socket

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        return int(self.socket.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.socket.close()


def test_score_logs_each_judge_with_its_ci_and_the_score_file(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    rows = tmp_path / "rows.jsonl"
    row = {
        "question": "Q?",
        "contexts": ["这是一个事实。"],
        "answer": "这是答案。",
        "reference": "这是答案。",
    }
    rows.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = [
        "score", str(rows), "-o", str(tmp_path / "scores.jsonl"), "--metrics",
        "faithfulness,exact_match", "--model", "openai/judge", "--base-url",
        f"http://127.0.0.1:{served.port}/v1", "--mlflow", uri,
    ]  # fmt: skip
    env = {"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "test-key"}
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 0, result.output
    run = only_run(uri, "rag-judge score")
    assert run.data.metrics["faithfulness"] == 1.0
    assert run.data.metrics["exact_match"] == 1.0
    assert {"faithfulness.ci_low", "faithfulness.ci_high"} <= set(run.data.metrics)
    assert run.data.params["metrics"] == "faithfulness,exact_match"
    client = mlflow.MlflowClient(uri)
    assert [a.path for a in client.list_artifacts(run.info.run_id)] == ["scores.jsonl"]


def test_calibrate_logs_every_figure_and_the_report(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    def write(path: Path, rows: list[dict[str, Any]]) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    values = {"a": 1.0, "b": 0.0, "c": 0.5, "d": 1.0}
    scores = write(tmp_path / "scores.jsonl", [
        {"id": i, "answer": i, "results": {"faithfulness": {"value": v, "status": "ok"}}}
        for i, v in values.items()
    ])  # fmt: skip
    labels = write(tmp_path / "labels.jsonl", [{"id": i, "label": int(i in "ad")} for i in values])
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = [
        "calibrate", "--scores", str(scores), "--labels", str(labels), "-o",
        str(tmp_path / "report"), "--resamples", "100", "--mlflow", uri,
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    run = only_run(uri, "rag-judge calibrate")
    assert run.data.metrics["accuracy"] == 0.75  # judge [1, 0, 1, 1] vs people [1, 0, 0, 1]
    assert {"accuracy.ci_low", "accuracy.ci_high"} <= set(run.data.metrics)
    assert run.data.params["metric"] == "faithfulness"
    artifacts = {a.path for a in mlflow.MlflowClient(uri).list_artifacts(run.info.run_id)}
    assert {"summary.md", "report.html", "metrics.csv"} <= artifacts


class _ListRag:
    """A RAG object given from Python (as a LangChain retriever would be): passages per k."""

    def __call__(self, question: str, k: int) -> list[str]:
        return ["光荣和ω-force"][:k]


def test_a_rag_object_is_logged_by_its_class_and_a_spec_without_its_secrets() -> None:
    from rag_judge.backends.providers.scripted import ScriptedBackend, register
    from rag_judge.integrations.logged_runs import sweep_run
    from rag_judge.jobs.sweep import SweepOptions, sweep

    model = register(ScriptedBackend(respond=lambda request: "光荣和ω-force", name="scripted/rag"))
    result = sweep("cmrc2018_zh", limit=1, ks=[1], metrics=["exact_match"], model=model,
                     cache=False)  # fmt: skip
    given = sweep_run(result, [], eval_set="cmrc2018_zh", options=SweepOptions(rag=_ListRag()))
    assert given.params["rag"] == f"{__name__}._ListRag"
    spec = SweepOptions(rag="https://user:secret@rag.example/ask")
    logged = sweep_run(result, [], eval_set="cmrc2018_zh", options=spec).params["rag"]
    assert "secret" not in logged
    assert "rag.example/ask" in logged
