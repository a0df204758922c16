"""`rag-judge few-shot` and `score --few-shot`: examples from labels, into the judge's calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401

from rag_judge.calibration.few_shot import WorkedExample, few_shot_id, write_examples
from rag_judge.cli import main


def _scored(id_: str, value: float, claims: list[str], contexts: list[str]) -> dict[str, Any]:
    result = {"value": value, "status": "ok", "claims": [{"claim": c} for c in claims]}
    return {"id": id_, "contexts": contexts, "results": {"faithfulness": result}}


SCORES = [
    _scored("a", 0.1, ["Ann won."], ["Ann won the race."]),  # label 1: a disagreement
    _scored("b", 0.9, ["Bob won."], ["Bob lost. Bob won once."]),  # label 0: a disagreement
    _scored("c", 0.9, ["Cy won."], ["Cy won."]),  # label 1: agrees
    _scored("d", 0.1, ["Di won.", "Di ran."], ["Di won."]),  # two claims: never an example
]
LABELS = [{"id": "a", "label": 1}, {"id": "b", "label": False}, {"id": "c", "label": 1},
          {"id": "d", "label": 1}, {"id": "e", "label": None}]  # fmt: skip


def _files(tmp_path: Path, scores: list[dict[str, Any]] = SCORES) -> tuple[Path, Path]:
    s, labels = tmp_path / "scores.jsonl", tmp_path / "labels.jsonl"
    s.write_text("".join(json.dumps(r) + "\n" for r in scores), encoding="utf-8")
    labels.write_text("".join(json.dumps(r) + "\n" for r in LABELS), encoding="utf-8")
    return s, labels


def _few_shot(tmp_path: Path, *extra: str, scores: list[dict[str, Any]] = SCORES) -> Any:
    s, labels = _files(tmp_path, scores)
    args = ["few-shot", "--scores", str(s), "--labels", str(labels), *extra]
    return CliRunner().invoke(main, [*args, "-o", str(tmp_path / "examples.jsonl")])


def test_few_shot_writes_the_disagreements_as_examples(tmp_path: Path) -> None:
    run = _few_shot(tmp_path, "--per-label", "1")
    assert run.exit_code == 0, run.output
    lines = (tmp_path / "examples.jsonl").read_text(encoding="utf-8").splitlines()
    examples = [WorkedExample(**json.loads(line)) for line in lines]
    assert examples == [
        WorkedExample("Ann won.", "Ann won the race.", "supported", "a"),
        WorkedExample("Bob won.", "Bob lost. Bob won once.", "unsupported", "b"),
    ]
    assert "2 worked examples (1 supported, 1 unsupported)" in run.output
    assert few_shot_id(examples) in run.output


def test_no_disagreement_is_exit_2_with_a_reason(tmp_path: Path) -> None:
    run = _few_shot(tmp_path, scores=SCORES[2:])
    assert run.exit_code == 2
    assert "nothing to make examples from" in run.output
    assert not (tmp_path / "examples.jsonl").exists()


def test_a_bad_label_file_names_its_line(tmp_path: Path) -> None:
    s, labels = _files(tmp_path)
    labels.write_text('{"id": "a", "label": "maybe"}\n', encoding="utf-8")
    out = str(tmp_path / "examples.jsonl")
    run = CliRunner().invoke(
        main, ["few-shot", "--scores", str(s), "--labels", str(labels), "-o", out]
    )
    assert run.exit_code == 2
    assert f"{labels}:1" in run.output


@pytest.fixture
def served(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> FakeOpenAIServer:
    def judge_model(body: dict[str, Any]) -> str:
        if '"verdicts"' in body["messages"][0]["content"]:
            checks = [{"claim": 1, "reason": "r", "verdict": "supported", "passages": [1]}]
            return json.dumps({"verdicts": checks})
        return json.dumps({"claims": ["It was built in 1889."]})

    fake_openai.respond = judge_model
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    return fake_openai


def _score(tmp_path: Path, server: FakeOpenAIServer, examples: Path) -> Any:
    data = tmp_path / "rows.jsonl"
    row = {"question": "When?", "contexts": ["Built in 1889."], "answer": "In 1889."}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    args = ["score", str(data), "-o", str(tmp_path / "out.jsonl"), "--metrics", "faithfulness",
            "--model", "openai/judge", "--base-url", f"http://127.0.0.1:{server.port}/v1",
            "--few-shot", str(examples)]  # fmt: skip
    return CliRunner().invoke(main, args, env={"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache")})


def test_score_few_shot_sends_the_examples_and_records_them(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    examples = (WorkedExample("Ann won.", "Ann won the race.", "supported", "a"),)
    write_examples(tmp_path / "examples.jsonl", examples)
    run = _score(tmp_path, served, tmp_path / "examples.jsonl")
    assert run.exit_code == 0, run.output
    verify = [b for b in served.bodies() if '"verdicts"' in b["messages"][0]["content"]]
    assert [m["role"] for m in verify[0]["messages"]] == ["system", "user", "assistant", "user"]
    assert "1. Ann won." in verify[0]["messages"][1]["content"]
    record = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8"))
    assert few_shot_id(examples) in record["results"]["faithfulness"]["prompts"]


def test_score_refuses_a_malformed_examples_file_before_any_call(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    bad = tmp_path / "examples.jsonl"
    bad.write_text('{"claim": "c", "evidence": "e", "verdict": "yes", "source_id": "r"}\n')
    run = _score(tmp_path, served, bad)
    assert run.exit_code == 2
    assert f"{bad}:1, field 'verdict'" in run.output
    assert served.total_calls == 0
