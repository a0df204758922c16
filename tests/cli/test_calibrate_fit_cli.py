"""Label, fit, apply from the command line: `score`, `calibrate --fit`, `score --calibration`
over real HTTP (a fake OpenAI server plays the judge; it says "not supported" for claims that
hold the word WRONG)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401

from rag_judge.cli import main

METRIC = "faithfulness"


def judge_model(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    text = " ".join(m["content"] for m in body["messages"])
    if '"verdicts"' in system:
        verdict = "not_mentioned" if "WRONG" in text else "supported"
        return json.dumps(
            {"verdicts": [{"claim": 1, "reason": "r", "verdict": verdict, "passages": [1]}]}
        )
    return json.dumps({"claims": ["WRONG: it was built in 1890." if "WRONG" in text else
                                  "It was built in 1889."]})  # fmt: skip


N = 20


def rows() -> list[dict[str, Any]]:
    """Every third answer is WRONG (the judge flags it)."""
    return [
        {
            "id": f"r{i}",
            "question": "When was it built?",
            "contexts": ["Built in 1889."],
            "answer": "WRONG 1890." if i % 3 == 0 else "In 1889.",
        }
        for i in range(N)
    ]


def labels() -> list[dict[str, Any]]:
    """People agree with the judge except on two rows."""
    return [{"id": f"r{i}", "label": int(i % 3 != 0) ^ int(i in (4, 9))} for i in range(N)]


@pytest.fixture
def served(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> FakeOpenAIServer:
    fake_openai.respond = judge_model
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    (tmp_path / "rows.jsonl").write_text(
        "\n".join(json.dumps(r) for r in rows()) + "\n", encoding="utf-8"
    )
    (tmp_path / "labels.jsonl").write_text(
        "\n".join(json.dumps(r) for r in labels()) + "\n", encoding="utf-8"
    )
    return fake_openai


def run(tmp_path: Path, *args: str) -> Result:
    env = {"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache")}
    return CliRunner().invoke(main, list(args), env=env)


def score(tmp_path: Path, server: FakeOpenAIServer, out: str, *extra: str) -> Result:
    return run(
        tmp_path, "score", str(tmp_path / "rows.jsonl"), "-o", str(tmp_path / out),
        "--metrics", METRIC, "--model", "openai/judge",
        "--base-url", f"http://127.0.0.1:{server.port}/v1", *extra,
    )  # fmt: skip


def fit(tmp_path: Path, *extra: str) -> Result:
    return run(
        tmp_path, "calibrate", "--fit", "--scores", str(tmp_path / "scores.jsonl"),
        "-o", str(tmp_path / "profile.json"), "--resamples", "100", *extra,
    )  # fmt: skip


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_label_fit_apply_end_to_end(tmp_path: Path, served: FakeOpenAIServer) -> None:
    scored = score(tmp_path, served, "scores.jsonl")
    assert scored.exit_code == 0, scored.output
    assert {r["judge_model"] for r in records(tmp_path / "scores.jsonl")} == {"openai/judge"}

    fitted = fit(tmp_path, "--labels", str(tmp_path / "labels.jsonl"))
    assert fitted.exit_code == 0, fitted.output
    assert "balanced accuracy" in fitted.output
    assert "out of fold" in fitted.output
    profile = json.loads((tmp_path / "profile.json").read_text(encoding="utf-8"))
    assert profile["judge"]["model"] == "openai/judge"
    assert profile["judge"]["mode"] == "generate"
    assert profile["judge"]["prompts"]
    assert profile["labels"] == {
        "source": "human", "files": [str(tmp_path / "labels.jsonl")], "n": N,
        "supported": sum(r["label"] for r in labels()), "silver_model": None, "sampling": None,
    }  # fmt: skip
    assert len(profile["cross_validation"]["fold_maps"]) == 5

    applied = score(tmp_path, served, "calibrated.jsonl", "--calibration",
                    str(tmp_path / "profile.json"))  # fmt: skip
    assert applied.exit_code == 0, applied.output
    assert "calibrated P(supported)" in applied.output
    out = records(tmp_path / "calibrated.jsonl")
    for row in out:
        calibrated = row["calibrated"][METRIC]
        assert 0.0 <= calibrated["probability"] <= 1.0
        assert calibrated["supported"] == (calibrated["probability"] >= profile["threshold"])
        assert row["results"][METRIC]["value"] in (0.0, 1.0)  # the raw value stays
    flagged = [r["calibrated"][METRIC]["probability"] for r in out if "WRONG" in r["answer"]]
    passed = [r["calibrated"][METRIC]["probability"] for r in out if "WRONG" not in r["answer"]]
    assert max(flagged) < min(passed)


def test_a_profile_is_refused_when_its_prompt_changed(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    assert score(tmp_path, served, "scores.jsonl").exit_code == 0
    assert fit(tmp_path, "--labels", str(tmp_path / "labels.jsonl")).exit_code == 0
    path = tmp_path / "profile.json"
    profile = json.loads(path.read_text(encoding="utf-8"))
    ref = profile["judge"]["prompts"][0]
    profile["judge"]["prompts"][0] = ref.split("#")[0] + "#000000000000"
    path.write_text(json.dumps(profile), encoding="utf-8")
    before = len(served.requests)
    refused = score(tmp_path, served, "again.jsonl", "--calibration", str(path))
    assert refused.exit_code == 2, refused.output
    assert "refused" in refused.output
    assert "that prompt is now" in refused.output
    assert len(served.requests) == before  # refused before any model call
    assert not (tmp_path / "again.jsonl").exists()

    profile["judge"]["prompts"][0] = ref
    profile["judge"]["model"] = "openai/other"
    path.write_text(json.dumps(profile), encoding="utf-8")
    other = score(tmp_path, served, "again.jsonl", "--calibration", str(path))
    assert other.exit_code == 2
    assert "another model" in other.output


def test_silver_labels_are_recorded_as_such(tmp_path: Path, served: FakeOpenAIServer) -> None:
    assert score(tmp_path, served, "scores.jsonl").exit_code == 0
    strong = run(
        tmp_path, "score", str(tmp_path / "rows.jsonl"), "-o", str(tmp_path / "strong.jsonl"),
        "--metrics", METRIC, "--model", "openai/strong",
        "--base-url", f"http://127.0.0.1:{served.port}/v1",
    )  # fmt: skip
    assert strong.exit_code == 0, strong.output
    fitted = fit(tmp_path, "--silver", str(tmp_path / "strong.jsonl"))
    assert fitted.exit_code == 0, fitted.output
    assert "silver labels (the verdicts of openai/strong)" in fitted.output
    origin = json.loads((tmp_path / "profile.json").read_text(encoding="utf-8"))["labels"]
    assert origin["source"] == "silver"
    assert origin["silver_model"] == "openai/strong"
    both = fit(tmp_path, "--silver", str(tmp_path / "strong.jsonl"),
               "--labels", str(tmp_path / "labels.jsonl"))  # fmt: skip
    assert both.exit_code == 2
    assert "never mixed" in both.output


def test_fit_mistakes_are_clear_errors(tmp_path: Path, served: FakeOpenAIServer) -> None:
    assert score(tmp_path, served, "scores.jsonl").exit_code == 0
    few = tmp_path / "few.jsonl"
    few.write_text("".join(json.dumps(r) + "\n" for r in labels()[:7]), encoding="utf-8")
    short = fit(tmp_path, "--labels", str(few))
    assert short.exit_code == 2
    assert "at least 10 labelled rows, got 7" in short.output
    one = tmp_path / "one.jsonl"
    one.write_text("".join(json.dumps({"id": f"r{i}", "label": 1}) + "\n" for i in range(12)))
    single = fit(tmp_path, "--labels", str(one))
    assert single.exit_code == 2
    assert "both classes" in single.output
    scores, given = str(tmp_path / "scores.jsonl"), str(tmp_path / "labels.jsonl")
    not_json = run(
        tmp_path, "calibrate", "--fit", "--scores", scores, "--labels", given,
        "-o", str(tmp_path / "p.txt"),
    )  # fmt: skip
    assert not_json.exit_code == 2
    assert "ending in .json" in not_json.output
    as_json = tmp_path / "labels.json"
    as_json.write_text((tmp_path / "labels.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    onto_input = run(
        tmp_path, "calibrate", "--fit", "--scores", scores, "--labels", str(as_json),
        "-o", str(as_json),
    )  # fmt: skip
    assert onto_input.exit_code == 2
    assert "would overwrite the input" in onto_input.output
    assert "Traceback" not in short.output + single.output + not_json.output


def test_a_profile_fitted_without_worked_examples_is_refused_with_them(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    assert score(tmp_path, served, "scores.jsonl").exit_code == 0
    assert fit(tmp_path, "--labels", str(tmp_path / "labels.jsonl")).exit_code == 0
    examples = tmp_path / "examples.jsonl"
    example = {"claim": "It was built in 1890.", "evidence": "Built in 1889.",
               "verdict": "unsupported", "source_id": "r0"}  # fmt: skip
    examples.write_text(json.dumps(example) + "\n", encoding="utf-8")
    refused = score(tmp_path, served, "again.jsonl", "--few-shot", str(examples),
                    "--calibration", str(tmp_path / "profile.json"))  # fmt: skip
    assert refused.exit_code == 2, refused.output
    assert "worked examples change the judge" in refused.output
