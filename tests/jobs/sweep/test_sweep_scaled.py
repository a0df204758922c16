"""sweep past one process: over a local Ray cluster (the questions split into tasks) and through
a Batch API (stages: the answers, then their claims, then the verdicts), each writing the
per-question table and summary an in-process sweep writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fake_batch_server import FakeBatchServer, fake_batch  # noqa: F401
from fake_openai_server import FakeOpenAIServer, fake_openai, judge_reply  # noqa: F401
from isolated import FAKE_MODEL, cli_env

from rag_judge.cli import main

SWEEP = ["sweep", "cmrc2018_zh", "--limit", "4", "--ks", "1-2"]
SWEEP += ["--metrics", "faithfulness,completeness,context_recall"]
COMPARED = ("per_question.csv", "summary.csv")
"""The sweep's tables: every value, status, answer and cost per question and k."""


def sweep(base_url: str, tmp_path: Path, name: str, *extra: str) -> Result:
    """``rag-judge sweep`` into ``tmp_path/name`` with a cache of its own."""
    env = cli_env(tmp_path, f"{name}-cache")
    args = [*SWEEP, "-o", str(tmp_path / name), "--model", FAKE_MODEL]
    result = CliRunner().invoke(main, [*args, "--base-url", base_url, *extra], env=env)
    assert result.exit_code == 0, result.output
    return result


def same_tables(tmp_path: Path, one: str, other: str) -> None:
    for table in COMPARED:
        assert (tmp_path / one / table).read_bytes() == (tmp_path / other / table).read_bytes()


def test_sweep_over_ray_writes_the_tables_of_one_process(
    cluster: None,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.respond = judge_reply
    sweep(fake_openai.base_url, tmp_path, "here")
    calls = fake_openai.total_calls
    sweep(fake_openai.base_url, tmp_path, "there", "--executor", "ray")
    same_tables(tmp_path, "here", "there")
    assert fake_openai.total_calls == 2 * calls  # each question swept once, by one worker


@pytest.fixture
def served(fake_batch: FakeBatchServer) -> FakeBatchServer:  # noqa: F811
    fake_batch.chat.respond = judge_reply
    fake_batch.polls_before_done = 0  # the CLI polls every 10 s: done at the first poll
    return fake_batch


def test_sweep_batch_takes_three_stages_and_matches_a_live_sweep(
    served: FakeBatchServer, tmp_path: Path
) -> None:
    sweep(served.base_url, tmp_path, "live")
    live_calls = served.live_calls
    run = sweep(served.base_url, tmp_path, "batched", "--batch")
    assert served.live_calls == live_calls  # every call of the batched sweep went by batch
    assert [len(lines) > 0 for lines in served.submitted] == [True] * 3
    assert "stage 3: " in run.output
    assert "stage 4: " not in run.output
    same_tables(tmp_path, "live", "batched")
    assert (tmp_path / "batched" / "batches.json").is_file()
    again = sweep(served.base_url, tmp_path, "batched", "--batch")
    assert len(served.submitted) == 3  # the re-run found every reply in the cache
    assert "stage 1: " not in again.output


def test_sweep_batch_and_ray_are_refused_together(tmp_path: Path) -> None:
    run = CliRunner().invoke(
        main, [*SWEEP, "-o", str(tmp_path / "o"), "--batch", "--executor", "ray"]
    )
    assert run.exit_code == 2
    assert "two ways to scale out: pick one" in run.output
