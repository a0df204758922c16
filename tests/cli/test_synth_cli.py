"""``rag-judge synth`` as a user runs it: a set from a folder that ``sweep`` then runs with no
other step, and every bad input an exit 2 naming the file, with nothing written over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from isolated import cli_env
from synth_toy import respond, write_docs

from rag_judge.backends.providers.scripted import ScriptedBackend, register
from rag_judge.cli import main


@pytest.fixture
def model() -> str:
    return register(ScriptedBackend(respond=respond, name="scripted/synth-cli"))


def _invoke(tmp_path: Path, *args: str):
    return CliRunner().invoke(main, list(args), env=cli_env(tmp_path))


def test_a_synthesized_set_is_swept_with_no_other_step(tmp_path: Path, model: str) -> None:
    docs = write_docs(tmp_path / "docs")
    made = _invoke(
        tmp_path, "synth", str(docs), "-o", str(tmp_path / "set"), "--questions", "4",
        "--multi-source", "0.25", "--unanswerable", "0.25", "--model", model,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert "dropped by filter:" in made.output
    assert f"next: rag-judge sweep {tmp_path / 'set'}" in made.output
    manifest = json.loads((tmp_path / "set/manifest.json").read_text(encoding="utf-8"))
    assert manifest["synth"]["model"] == model
    assert manifest["counts"]["queries"] >= 1
    swept = _invoke(
        tmp_path, "sweep", str(tmp_path / "set"), "-o", str(tmp_path / "out"), "--ks", "1-2",
        "--metrics", "faithfulness,exact_match", "--model", model,
    )  # fmt: skip
    assert swept.exit_code == 0, swept.output
    assert (tmp_path / "out/summary.md").is_file()


def test_a_second_run_answers_from_the_cache(tmp_path: Path, model: str) -> None:
    docs = write_docs(tmp_path / "docs")
    args = ("synth", str(docs), "--questions", "2", "--model", model)
    assert _invoke(tmp_path, *args, "-o", str(tmp_path / "a")).exit_code == 0
    backend = ScriptedBackend(respond=respond, name="scripted/synth-cli")
    register(backend)
    again = _invoke(tmp_path, *args, "-o", str(tmp_path / "b"))
    assert again.exit_code == 0, again.output
    assert backend.requests == []
    first = (tmp_path / "a/queries.jsonl").read_text(encoding="utf-8")
    assert (tmp_path / "b/queries.jsonl").read_text(encoding="utf-8") == first


@pytest.mark.parametrize(
    ("prepare", "message"),
    [
        (lambda docs: None, "no documents to read"),
        (lambda docs: (docs / "x.txt").write_bytes(b"\x00\x01\x02"), "x.txt: binary data"),
        (lambda docs: (docs / "y.md").write_bytes(b"\xff\xfe caf\xe9"), "y.md:1: not UTF-8"),
    ],
)
def test_bad_documents_exit_2_naming_the_file(
    tmp_path: Path, model: str, prepare, message: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    prepare(docs)
    run = _invoke(tmp_path, "synth", str(docs), "-o", str(tmp_path / "set"), "--model", model)
    assert run.exit_code == 2
    assert message in run.output
    assert "Traceback" not in run.output
    assert not (tmp_path / "set").exists()


def test_a_folder_with_files_is_refused_before_any_call(tmp_path: Path) -> None:
    backend = ScriptedBackend(respond=respond, name="scripted/synth-refused")
    register(backend)
    docs = write_docs(tmp_path / "docs")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.md").write_text("my work", encoding="utf-8")
    run = _invoke(tmp_path, "synth", str(docs), "-o", str(mine), "--model", backend.name)
    assert run.exit_code == 2
    assert "has files in it" in run.output
    assert backend.requests == []
    assert (mine / "report.md").read_text(encoding="utf-8") == "my work"
