"""synth past one process: each round's candidates over a local Ray cluster, and every call
through a Batch API in stages; both write the set one process writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fake_batch_server import FakeBatchServer, fake_batch  # noqa: F401
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401
from isolated import FAKE_MODEL, cli_env
from synth_toy import synth_reply, write_docs

from rag_judge.cli import main

SET_FILES = ("queries.jsonl", "qrels.tsv", "rejects.jsonl", "corpus.jsonl")


def synth(base_url: str, tmp_path: Path, name: str, *extra: str) -> Result:
    """``rag-judge synth`` of the toy folder into ``tmp_path/name``, a cache of its own."""
    docs = write_docs(tmp_path / "docs")
    args = ["synth", str(docs), "-o", str(tmp_path / name), "--questions", "4"]
    args += ["--multi-source", "0.25", "--unanswerable", "0.25", "--model", FAKE_MODEL]
    env = cli_env(tmp_path, f"{name}-cache")
    result = CliRunner().invoke(main, [*args, "--base-url", base_url, *extra], env=env)
    assert result.exit_code == 0, result.output
    return result


def same_set(tmp_path: Path, one: str, other: str) -> None:
    assert (tmp_path / one / "queries.jsonl").read_text(encoding="utf-8").count("\n") >= 2
    for name in SET_FILES:
        assert (tmp_path / one / name).read_bytes() == (tmp_path / other / name).read_bytes()


def test_synth_over_ray_writes_the_set_of_one_process(
    cluster: None,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.respond = synth_reply
    synth(fake_openai.base_url, tmp_path, "here")
    calls = fake_openai.total_calls
    synth(fake_openai.base_url, tmp_path, "there", "--executor", "ray")
    same_set(tmp_path, "here", "there")
    assert fake_openai.total_calls == 2 * calls  # each candidate decided once, by one worker


@pytest.fixture
def served(fake_batch: FakeBatchServer) -> FakeBatchServer:  # noqa: F811
    fake_batch.chat.respond = synth_reply
    fake_batch.polls_before_done = 0
    return fake_batch


def test_synth_batch_matches_a_live_run(served: FakeBatchServer, tmp_path: Path) -> None:
    synth(served.base_url, tmp_path, "live")
    live_calls = served.live_calls
    run = synth(served.base_url, tmp_path, "batched", "--batch")
    assert served.live_calls == live_calls  # every call of the batched run went by batch
    assert "stage 1: " in run.output
    same_set(tmp_path, "live", "batched")
