"""Every tutorial runs end to end: its marked steps, as the page shows them, in a folder of their
own, on the bundled data, checked against what the page says they produce.

The models are a fake OpenAI-compatible server (``tests/support/fake_openai_server.py``) playing
a lexical model (``tests/support/tutorial_model.py``), named the way a reader names a server:
``RAG_JUDGE_MODEL``, ``RAG_JUDGE_EMBEDDINGS`` and ``RAG_JUDGE_BASE_URL`` in the environment.
The commands themselves are the page's, character for character (``tutorial_run``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docs_site import ROOT
from fake_openai_server import FakeOpenAIServer
from tutorial_model import tutorial_reply
from tutorial_run import reader_env, reader_folder, run_tutorial, steps_of


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    """One lexical model for the module's tutorials (each has its own cache)."""
    served = FakeOpenAIServer(respond=tutorial_reply).start()
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture
def reader(tmp_path: Path, server: FakeOpenAIServer) -> tuple[Path, dict[str, str]]:
    """The reader's folder and environment, the models being the fake server's."""
    settings = {
        "RAG_JUDGE_MODEL": "openai-compatible/tutorial",
        "RAG_JUDGE_EMBEDDINGS": "openai-compatible/tutorial-embed",
        "RAG_JUDGE_BASE_URL": server.base_url,
    }
    return reader_folder(tmp_path), reader_env(tmp_path, settings)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize(
    "page",
    [
        "tutorials/sweep-your-rag.md",
        "tutorials/sweep-configurations.md",
        "tutorials/own-documents.md",
        "tutorials/calibrate-judge.md",
        "tutorials/ci-gate.md",
        "tutorials/track-in-mlflow.md",
    ],
)
def test_every_tutorial_has_steps_that_run(page: str) -> None:
    kinds = [step.split()[0] for step, _ in steps_of(page)]
    assert "run" in kinds, f"{page} has no step the tests run"


def test_calibrate_judge(reader: tuple[Path, dict[str, str]]) -> None:
    work, env = reader
    truth = {r["id"]: r["label"] for r in records(ROOT / "eval_sets" / "wice_dev" / "labels.jsonl")}
    ran = run_tutorial(
        "tutorials/calibrate-judge.md", work, env, labeller=lambda row: truth[row["id"]]
    )
    scored = records(work / "scores.jsonl")
    assert len(scored) == 80
    values = {r["results"]["faithfulness"]["value"] for r in scored}
    assert len(values) > 1  # the judge tells rows apart: a fit has something to learn
    labelled = [e for e in records(work / "labels.jsonl") if "label" in e]
    assert len(labelled) == 40
    assert all(e["label"] == truth[e["id"]] for e in labelled)
    assert "stopped: 40 of 40 labelled, 0 skipped" in ran[1].stderr
    for name in ("metrics.csv", "summary.md", "reliability.png", "report.html"):
        assert (work / "agreement" / name).is_file(), name
    assert "out of fold" in ran[2].stdout
    profile = json.loads((work / "profile.json").read_text(encoding="utf-8"))
    assert profile["judge"]["model"] == "openai-compatible/tutorial"
    assert profile["labels"]["n"] == 40
    assert profile["labels"]["sampling"]["strategy"] == "random"
    said = ran[2].stdout + ran[2].stderr  # the last score: every call from the cache
    assert re.search(r"openai-compatible/tutorial: 0 calls made, \d+ answered from the cache", said)
    calibrated = records(work / "calibrated.jsonl")
    assert len(calibrated) == 80
    for row in calibrated:
        given = row["calibrated"]["faithfulness"]
        assert given["supported"] == (given["probability"] >= profile["threshold"])


SWEEP_FILES = (
    "per_question.parquet",
    "per_question.csv",
    "summary.csv",
    "decision.json",
    "sweep.png",
    "report.html",
    "summary.md",
)
"""What a sweep writes (tutorials/sweep-your-rag.md, "What it writes")."""


def decided(out: Path) -> dict[str, Any]:
    """A sweep's folder holds every file the page lists, and its summary opens with the
    decision that decision.json holds."""
    for name in SWEEP_FILES:
        assert (out / name).is_file(), f"{out.name}/{name}"
    decision = json.loads((out / "decision.json").read_text(encoding="utf-8"))
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert decision["sentence"].replace("*", "\\*") in summary
    return decision


def test_sweep_your_rag(reader: tuple[Path, dict[str, str]]) -> None:
    import pandas as pd

    work, env = reader
    ran = run_tutorial("tutorials/sweep-your-rag.md", work, env)
    dry_and_sweep = ran[1]
    assert "dry run" in dry_and_sweep.stdout.lower() + dry_and_sweep.stderr.lower()
    decided(work / "my_sweep")
    decided(work / "jsonl_sweep")
    assert len((work / "retrievals.jsonl").read_text(encoding="utf-8").splitlines()) == 5
    by_function = pd.read_parquet(work / "my_sweep" / "per_question.parquet")
    by_file = pd.read_parquet(work / "jsonl_sweep" / "per_question.parquet")
    assert sorted(by_function.k.unique()) == [1, 2, 3]
    assert by_function.question_id.nunique() == 5
    retrieval = ["question_id", "k", "doc_recall", "doc_ndcg"]
    pd.testing.assert_frame_equal(  # the same passages: the same retrieval figures per k
        by_function[retrieval].sort_values(["question_id", "k"]).reset_index(drop=True),
        by_file[retrieval].sort_values(["question_id", "k"]).reset_index(drop=True),
    )


def test_sweep_configurations(reader: tuple[Path, dict[str, str]]) -> None:
    import pandas as pd

    work, env = reader
    ran = run_tutorial("tutorials/sweep-configurations.md", work, env)
    assert "4 configurations x 3 ks = 12 arms" in ran[0].stdout
    files = ("per_question.parquet", "summary.csv", "decision.json", "grid.png", "report.html")
    for name in files:
        assert (work / "configs" / name).is_file(), name
    decision = json.loads((work / "configs" / "decision.json").read_text(encoding="utf-8"))
    assert decision["decision"] in ran[0].stdout
    assert decision["grid"]["configurations"] == [
        "retriever=bm25,chunk=set", "retriever=bm25,chunk=200/1",
        "retriever=dense,chunk=set", "retriever=dense,chunk=200/1",
    ]  # fmt: skip
    frame = pd.read_parquet(work / "configs" / "per_question.parquet")
    assert len(frame) == 30 * 4 * 3
    until = json.loads((work / "configs_until" / "decision.json").read_text(encoding="utf-8"))
    record = until["sequential"]
    assert record["answers_fixed"] == 200 * 2 * 3
    assert record["answers_used"] <= record["answers_fixed"]
    mine = json.loads((work / "my_rags" / "decision.json").read_text(encoding="utf-8"))
    assert mine["grid"]["configurations"] == ["rag=two_rags:by_words", "rag=two_rags:by_characters"]


def test_own_documents(reader: tuple[Path, dict[str, str]]) -> None:
    from rag_judge.data.eval_sets import load_eval_set

    work, env = reader
    [ran] = run_tutorial("tutorials/own-documents.md", work, env)
    assert len((work / "my_docs" / "abstracts.jsonl").read_text().splitlines()) == 30
    for name in ("corpus.jsonl", "queries.jsonl", "qrels.tsv", "manifest.json", "rejects.jsonl"):
        assert (work / "my_set" / name).is_file(), name
    manifest = json.loads((work / "my_set" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["synth"]["documents"]["documents"] == 30
    written = load_eval_set(work / "my_set")
    assert 0 < len(written.queries) == sum(manifest["synth"]["kept"].values()) <= 6
    assert f"my_set: {len(written.queries)} questions" in ran.stderr + ran.stdout
    decision = decided(work / "my_set-sweep")
    assert decision["n_questions"] == len(written.queries)
    assert decision["sentence"].replace("*", "\\*") in ran.stdout  # the summary, printed


def test_ci_gate(reader: tuple[Path, dict[str, str]]) -> None:
    work, env = reader
    recorded, gate, _, plugin = run_tutorial("tutorials/ci-gate.md", work, env)
    assert "| faithfulness | 236 |" in recorded.stdout  # and all of it, as recorded
    main, new = records(work / "main.jsonl"), records(work / "new.jsonl")
    assert [r["id"] for r in main] == [r["id"] for r in new]
    changed = [a["id"] for a, b in zip(main, new, strict=True) if a["answer"] != b["answer"]]
    assert changed == ["en-faithful"]  # the one answer the "pull request" changed
    assert "gate: pass faithfulness not worse than the baseline" in gate.stderr
    assert "<testcase" in (work / "gate.xml").read_text(encoding="utf-8")
    for name in ("comparison.md", "comparison.csv", "comparison.json", "comparison.html"):
        assert (work / "comparison" / name).is_file(), name
    assert "1 passed" in plugin.stdout
    assert 'failures="0"' in (work / "junit.xml").read_text(encoding="utf-8")
    [judged] = records(work / "judged.jsonl")
    assert (judged["sample"], judged["metric"], judged["passed"]) == (
        "eiffel",
        "faithfulness",
        True,
    )
    assert judged["value"] >= judged["bound"] == 0.8


def test_track_in_mlflow(reader: tuple[Path, dict[str, str]]) -> None:
    mlflow = pytest.importorskip("mlflow", reason="the mlflow extra: rag-judge[mlflow]")
    work, env = reader
    [ran] = run_tutorial("tutorials/track-in-mlflow.md", work, env)
    decision = decided(work / "sweep_out")
    assert "logged to MLflow at" in ran.stdout + ran.stderr
    client = mlflow.MlflowClient(f"sqlite:///{work / 'mlflow.db'}")
    [run] = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert run.data.tags["rag_judge.decision"] == decision["decision"]
    steps = [m.step for m in client.get_metric_history(run.info.run_id, "doc_recall")]
    assert sorted(steps) == [1, 2, 3, 4, 5]
