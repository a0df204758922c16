"""``rag-judge label``'s command line: what it says, and bad input as one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from label_toy import write_scores

from rag_judge.cli import main


@pytest.fixture
def scores(tmp_path: Path) -> Path:
    return write_scores(tmp_path / "scores.jsonl")


@pytest.fixture
def stopped_at_once(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The server as if Ctrl-C came at once; the addresses it was ready to serve."""
    from rag_judge.labelling import serve

    ready_at: list[str] = []

    def interrupted(app: Any, sock: Any, *, ready: Any) -> None:
        ready_at.append(sock.getsockname()[0])
        ready()
        sock.close()
        raise KeyboardInterrupt

    monkeypatch.setattr(serve, "serve", interrupted)
    return ready_at


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["label", *args], prog_name="rag-judge")


def test_it_says_what_it_offers_where_and_stops_cleanly(
    scores: Path, tmp_path: Path, stopped_at_once: list[str]
) -> None:
    result = run(str(scores), "-o", str(tmp_path / "labels.jsonl"), "--no-browser")
    assert result.exit_code == 0, result.output
    assert stopped_at_once == ["127.0.0.1"]
    assert f"labelling 4 of 4 scored rows of {scores} (faithfulness)" in result.stderr
    assert "1 row without a value not offered" in result.stderr
    assert "label at http://127.0.0.1:" in result.stderr
    assert "stopped: 0 of 4 labelled, 0 skipped" in result.stderr
    assert "Traceback" not in result.output


def test_a_sample_larger_than_the_scored_rows_is_all_of_them(
    scores: Path, tmp_path: Path, stopped_at_once: list[str]
) -> None:
    result = run(str(scores), "-o", str(tmp_path / "l.jsonl"), "--sample", "9", "--no-browser")
    assert result.exit_code == 0, result.output
    assert "--sample 9 is more than the 4 scored rows: all of them" in result.stderr
    assert "(faithfulness, random, seed 0)" in result.stderr


def test_a_resume_says_how_far_it_got(
    scores: Path, tmp_path: Path, stopped_at_once: list[str]
) -> None:
    labels = tmp_path / "labels.jsonl"
    event = {"id": "r1", "label": 1, "metric": "faithfulness", "annotator": "a", "note": ""}
    sampling = {"strategy": "all", "seed": None, "sample": None, "population": 4}
    labels.write_text(json.dumps(event | {"sampling": sampling | {"scores": str(scores)}}) + "\n")
    result = run(str(scores), "-o", str(labels), "--no-browser")
    assert result.exit_code == 0, result.output
    assert f"resuming {labels}: 1 of 4 labelled, 0 skipped" in result.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["missing.jsonl", "-o", "l.jsonl"], "missing.jsonl: file not found"),
        (["SCORES", "-o", "SCORES"], "the output would overwrite the input"),
        (["SCORES", "-o", "l.jsonl", "--metric", "nope"], "no row has results for metric 'nope'"),
        (["SCORES", "-o", "l.jsonl", "--sample", "0"], "0 is not in the range x>=1"),
        (["SCORES", "-o", "l.jsonl", "--strategy", "best"], "'best' is not one of"),
        (["SCORES"], "Missing option '-o'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    scores: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(*[str(scores) if a == "SCORES" else a for a in args], "--no-browser")
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "l.jsonl").exists()


def test_a_resume_of_another_sample_is_refused(scores: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    event = {"id": "r1", "label": 1, "metric": "faithfulness", "note": ""}
    sampling = {"strategy": "random", "seed": 0, "sample": 2, "population": 4}
    labels.write_text(json.dumps(event | {"sampling": sampling | {"scores": str(scores)}}) + "\n")
    result = run(str(scores), "-o", str(labels), "--sample", "2", "--seed", "1", "--no-browser")
    assert result.exit_code == 2, result.output
    assert "holds the labels of another sample (--seed 1 here, 0 in the log)" in result.output


def test_a_taken_port_is_one_line(scores: Path, tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        result = run(str(scores), "-o", str(tmp_path / "l.jsonl"), "--port", port, "--no-browser")
    assert result.exit_code == 2, result.output
    assert f"error: cannot serve on 127.0.0.1:{port}: Address already in use" in result.output
    assert "Traceback" not in result.output
