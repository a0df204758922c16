"""A provider added to ``backends/`` alone is built from settings by ``score`` and ``sweep``.

A throwaway provider is registered the way a new one would be (a :class:`Provider` record in
``PROVIDERS``), with no other edit; the CLI's ``score`` and ``sweep`` name its model and run
through it: everything they know about a backend comes from its record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sweep_toy import respond

from rag_judge.backends.protocol import ChatBackend
from rag_judge.backends.provider import BuildArgs, Provider
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.registry import PROVIDERS
from rag_judge.cli import main

BUILT: list[ScriptedBackend] = []


def _throwaway_chat(model: str, args: BuildArgs) -> ChatBackend:
    backend = ScriptedBackend(respond=respond, name=f"throwaway/{model}")
    BUILT.append(backend)
    return backend


THROWAWAY = Provider(
    prefix="throwaway",
    extra=None,
    wire="in-process",
    in_process=True,
    logprobs="none",
    batch_api=False,
    reports_tokens=True,
    priced=False,
    default_mode="generate",
    chat=_throwaway_chat,
)


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(PROVIDERS, "throwaway", THROWAWAY)
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    monkeypatch.setenv("RAG_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    BUILT.clear()


def test_score_runs_through_a_provider_added_in_backends_only(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    row = {
        "id": "r1",
        "question": "What is the capital of France?",
        "answer": "The capital is Paris.",
        "contexts": ["France is a country in Europe. Its capital is Paris."],
    }
    rows.write_text(json.dumps(row) + "\n", encoding="utf-8")
    out = tmp_path / "scores.jsonl"
    args = ["score", str(rows), "--model", "throwaway/m", "--metrics", "faithfulness", "-o"]
    args.append(str(out))
    run = CliRunner().invoke(main, args)
    assert run.exit_code == 0, run.output
    assert [b.name for b in BUILT] == ["throwaway/m"]
    assert BUILT[0].requests  # the judge's calls went to the new provider
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["results"]["faithfulness"]["value"] == 1.0
    assert "throwaway/m" in run.output  # the cost line names the model


def test_a_sweep_runs_through_a_provider_added_in_backends_only(tmp_path: Path) -> None:
    args = [
        "sweep",
        "cmrc2018_zh_chunked",
        "--limit",
        "2",
        "--ks",
        "1-2",
        "--metrics",
        "faithfulness",
        "--model",
        "throwaway/m",
        "-o",
        str(tmp_path / "out"),
    ]
    run = CliRunner().invoke(main, args)
    assert run.exit_code == 0, run.output
    assert [b.name for b in BUILT] == ["throwaway/m"]  # one client generates and judges
    prompts = {r.prompt_id.split(".")[0] for r in BUILT[0].requests if r.prompt_id}
    assert "generate/answer" in prompts
    assert (tmp_path / "out" / "summary.md").is_file()
    assert "throwaway/m" in run.output
