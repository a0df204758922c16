"""A configuration sweep past one process (over a local Ray cluster, through a Batch API) gives the
tables of one process; logged to a real MLflow store, it is one run holding every arm."""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
import pytest
from click.testing import CliRunner, Result
from fake_batch_server import FakeBatchServer, fake_batch  # noqa: F401
from fake_openai_server import FakeOpenAIServer, fake_openai, judge_reply  # noqa: F401
from isolated import FAKE_MODEL, cli_env

from rag_judge.cli import main
from rag_judge.integrations.tracking_store import metric_key

GRID = ["sweep", "cmrc2018_zh", "--limit", "2", "--ks", "1-2", "--grid", "chunk=set,200/1"]
GRID += ["--metrics", "faithfulness,exact_match"]
COMPARED = ("per_question.csv", "summary.csv")


def grid(base_url: str, tmp_path: Path, name: str, *extra: str) -> Result:
    """``rag-judge sweep --grid`` into ``tmp_path/name`` with a cache of its own."""
    env = cli_env(tmp_path, f"{name}-cache")
    args = [*GRID, "-o", str(tmp_path / name), "--model", FAKE_MODEL, "--base-url", base_url]
    result = CliRunner().invoke(main, [*args, *extra], env=env)
    assert result.exit_code == 0, result.output
    return result


def same_tables(tmp_path: Path, one: str, other: str) -> None:
    for table in COMPARED:
        assert (tmp_path / one / table).read_bytes() == (tmp_path / other / table).read_bytes()


def test_a_grid_over_ray_writes_the_tables_of_one_process(
    cluster: None,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.respond = judge_reply
    grid(fake_openai.base_url, tmp_path, "here")
    calls = fake_openai.total_calls
    grid(fake_openai.base_url, tmp_path, "there", "--executor", "ray")
    same_tables(tmp_path, "here", "there")
    assert fake_openai.total_calls == 2 * calls  # each configuration's questions swept once


def test_a_grid_through_a_batch_api_keeps_each_configuration_s_batches(
    fake_batch: FakeBatchServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_batch.chat.respond = judge_reply
    fake_batch.polls_before_done = 0
    grid(fake_batch.base_url, tmp_path, "live")
    live_calls = fake_batch.live_calls
    grid(fake_batch.base_url, tmp_path, "batched", "--batch")
    assert fake_batch.live_calls == live_calls  # every call of the batched grid went by batch
    same_tables(tmp_path, "live", "batched")
    for n in (1, 2):
        assert (tmp_path / "batched" / f"batches-{n}.json").is_file()
    submitted = len(fake_batch.submitted)
    grid(fake_batch.base_url, tmp_path, "batched", "--batch")
    assert len(fake_batch.submitted) == submitted  # the re-run found every reply in the cache


def test_a_grid_is_one_mlflow_run_with_every_configuration_s_figures(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    fake_openai.respond = judge_reply
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    grid(fake_openai.base_url, tmp_path, "out", "--mlflow", uri)
    client = mlflow.MlflowClient(uri)
    experiment = client.get_experiment_by_name("rag-judge sweep")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])
    params = run.data.params
    assert params["grid"] == "chunk=set,200/1"
    assert params["configurations"] == "2"
    decision = json.loads((tmp_path / "out" / "decision.json").read_text(encoding="utf-8"))
    assert params["decision.recommended_configuration"] == str(
        decision["recommended_configuration"]
    ).replace("None", "none")
    for configuration in ("chunk=set", "chunk=200/1"):
        key = metric_key(f"doc_recall.{configuration}")
        history = client.get_metric_history(run.info.run_id, key)
        assert sorted(m.step for m in history) == [1, 2]
        objective = client.get_metric_history(
            run.info.run_id, metric_key(f"decision.objective.{configuration}")
        )
        assert sorted(m.step for m in objective) == [1, 2]
    logged = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"per_question.csv", "grid.png", "decision.json"} <= logged
