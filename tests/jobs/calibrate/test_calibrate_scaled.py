"""calibrate --run past one process: over a local Ray cluster and through a Batch API, the
same scores.jsonl as an in-process run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from fake_batch_server import FakeBatchServer, fake_batch  # noqa: F401
from fake_openai_server import judge_reply
from isolated import FAKE_MODEL, cli_env

from rag_judge.cli import main

RUN = ["calibrate", "--run", "wice_dev", "--limit", "6", "--model", FAKE_MODEL]


def calibrate(base_url: str, tmp_path: Path, name: str, *extra: str) -> Result:
    env = cli_env(tmp_path, f"{name}-cache")
    args = [*RUN, "-o", str(tmp_path / name), "--base-url", base_url, *extra]
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 0, result.output
    return result


def scores(tmp_path: Path, name: str) -> list[Any]:
    """Each row's verdicts and value (tokens aside: a cached call spends none)."""
    rows = (tmp_path / name / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    judged = [json.loads(row)["results"]["faithfulness"] for row in rows]
    return [(r["status"], r["value"], [c["claim"] for c in r["claims"]]) for r in judged]


def test_calibrate_run_over_ray_and_by_batch_scores_as_one_process(
    cluster: None,
    fake_batch: FakeBatchServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_batch.chat.respond = judge_reply
    fake_batch.polls_before_done = 0
    here = calibrate(fake_batch.base_url, tmp_path, "here")
    live = fake_batch.live_calls
    over_ray = calibrate(fake_batch.base_url, tmp_path, "ray", "--executor", "ray")
    assert fake_batch.live_calls == 2 * live
    batched = calibrate(fake_batch.base_url, tmp_path, "batch", "--batch")
    assert fake_batch.live_calls == 2 * live  # the batched run called nothing live
    assert len(fake_batch.submitted) == 2  # claims, then verdicts
    assert "stage 2: " in batched.output
    assert (tmp_path / "batch" / "scores.jsonl.batches.json").is_file()
    assert scores(tmp_path, "here") == scores(tmp_path, "ray") == scores(tmp_path, "batch")
    figures = [line for line in here.output.splitlines() if "accuracy" in line]
    assert figures
    assert figures == [line for line in over_ray.output.splitlines() if "accuracy" in line]


def test_scale_out_options_apply_to_run_only(tmp_path: Path) -> None:
    scores_file, labels = tmp_path / "s.jsonl", tmp_path / "l.jsonl"
    scores_file.write_text("", encoding="utf-8")
    labels.write_text("", encoding="utf-8")
    args = ["calibrate", "--scores", str(scores_file), "--labels", str(labels), "--batch"]
    run = CliRunner().invoke(main, args)
    assert run.exit_code == 2
    assert "--batch applies to --run only" in run.output
