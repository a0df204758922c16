"""`rag-judge sweep --grid` end to end over real HTTP: the grid's files, one decision over every
arm, answers shared through the cache, resuming, elimination, and the refusals before any call."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401
from sweep_cli import run_cli, sweep_model

GRID = ("--grid", "retriever=bm25,dense", "--grid", "chunk=set,200/1")
CONFIGURATIONS = [
    "retriever=bm25,chunk=set",
    "retriever=bm25,chunk=200/1",
    "retriever=dense,chunk=set",
    "retriever=dense,chunk=200/1",
]


@pytest.fixture
def served(
    tmp_path: Path,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> FakeOpenAIServer:
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    fake_openai.respond = sweep_model
    return fake_openai


def generations(server: FakeOpenAIServer) -> int:
    """Calls that asked for an answer (no judge's JSON in the system prompt)."""
    systems = [
        str(body["messages"][0]["content"]) for body in server.bodies() if "messages" in body
    ]
    return sum(not any(k in s for k in ('"verdicts"', '"claims"', '"questions"')) for s in systems)


def test_a_grid_sweeps_every_configuration_and_decides_the_configuration_and_k(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = run_cli(tmp_path, served, *GRID, "--metrics", "exact_match")
    assert run.exit_code == 0, run.output
    out = tmp_path / "out"
    for name in ("per_question.csv", "summary.csv", "grid.png", "report.html", "ledger.json"):
        assert (out / name).stat().st_size > 0
    frame = pd.read_parquet(out / "per_question.parquet")
    assert list(frame.columns[:4]) == ["question_id", "configuration", "arm", "type"]
    assert sorted(set(frame.configuration)) == sorted(CONFIGURATIONS)
    assert len(frame) == 2 * 4 * 3  # questions x configurations x ks
    assert sorted(set(frame.arm)) == list(range(1, 13))
    decision = json.loads((out / "decision.json").read_text(encoding="utf-8"))
    assert f"**{decision['decision']}**" in run.output
    assert decision["grid"]["configurations"] == CONFIGURATIONS
    assert decision["grid"]["arms"] == 12
    assert {(e["configuration"], e["k"]) for e in decision["per_k"]} == {
        (c, k) for c in CONFIGURATIONS for k in (1, 2, 3)
    }
    # Two questions are too few to decide: the arms still in are named by configuration and k.
    assert decision["recommended_configuration"] is None
    assert len(decision["undecided_between_arms"]) == 12
    assert "The highest mean so far is retriever=" in decision["sentence"]
    # An answer is generated once per distinct (question, passages): arms that put the same
    # passages before the model share it through the response cache.
    shared, answers = decision["grid"]["shared_answers"], decision["grid"]["answers"]
    assert answers == 24
    assert generations(served) == answers - shared
    calls = served.total_calls
    again = run_cli(tmp_path, served, *GRID, "--metrics", "exact_match")
    assert again.exit_code == 0, again.output
    assert served.total_calls == calls  # the whole grid came from the cache


def test_a_grid_until_decided_drops_arms_and_settles_on_the_cheapest(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    # Every arm answers alike: the rule settles on the cheapest arm once the intervals are
    # narrower than the margin, having stopped paying for arms shown no better.
    run = run_cli(
        tmp_path, served, "--grid", "retriever=bm25,dense", "--metrics", "exact_match",
        "--limit", "120", "--until-decided", "--max-questions", "100", "--step", "20",
        "--margin", "0.1",
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    decision = json.loads((tmp_path / "out" / "decision.json").read_text(encoding="utf-8"))
    sequential = decision["sequential"]
    assert sequential["stop"] == "settled"
    assert decision["recommended_configuration"] in ("retriever=bm25", "retriever=dense")
    assert decision["recommended_k"] == 1
    assert sequential["answers_fixed"] == 100 * 6
    assert sequential["answers_used"] < sequential["answers_fixed"]
    saved = decision["grid"]["until_decided"]
    assert saved["answers_saved"] == sequential["answers_fixed"] - sequential["answers_used"]
    assert saved["minutes_saved"] >= 0
    assert f"{saved['answers_saved']:,} fewer" in run.output
    frame = pd.read_parquet(tmp_path / "out" / "per_question.parquet")
    assert frame["question_id"].nunique() == sequential["questions_used"]
    assert "arms" in decision["sentence"] or "arm" in decision["sentence"]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--grid", "retriever=bm25,splade"), "unknown retriever 'splade'"),
        (("--grid", "reranker=llm"), "unknown axis 'reranker'"),
        (("--grid", "retriever=bm25", "--retriever", "dense"), "the retriever axis is on the grid"),
        (("--grid", "rag=a.jsonl", "--grid", "chunk=300"), "not to your own RAGs"),
        (("--grid", "chunk=20"), "below the least, 50"),
        (("--grid", "chunk=big"), "is no passage size"),
        (("--grid", "rerank=none,./no/such/model"), "unknown reranker"),
        (("--grid", "retriever=bm25,bm25"), "lists 'bm25' twice"),
        (("--grid", "k=1,2"), "k is swept by --ks"),
        (("--grid", "retriever=dense", "--rag", "x.jsonl"), "not to your own RAG"),
    ],
)
def test_a_bad_grid_is_refused_before_any_call(
    tmp_path: Path, served: FakeOpenAIServer, extra: tuple[str, ...], said: str
) -> None:
    run = run_cli(tmp_path, served, *extra)
    assert run.exit_code == 2, run.output
    assert said in " ".join(run.output.split())
    assert served.total_calls == 0


def test_a_grid_dry_run_plans_every_configuration_and_calls_nothing(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = run_cli(tmp_path, served, *GRID, "--dry-run")
    assert run.exit_code == 0, run.output
    assert "4 configurations x 3 ks = 12 arms" in run.output
    for name in CONFIGURATIONS:
        assert f"| {name} |" in run.output
    assert "| the grid |" in run.output
    assert served.total_calls == 0
    rows = {
        cells[1].strip(): cells
        for line in run.output.splitlines()
        if len(cells := line.split("|")) > 5 and cells[1].strip() in CONFIGURATIONS
    }
    # a dense configuration's stand-ins are the re-cut passages when the grid re-cuts them
    assert "passages re-cut to 200/1 as stand-ins" in rows["retriever=dense,chunk=200/1"][2]
    assert "the set's own passages as stand-ins" in rows["retriever=dense,chunk=set"][2]
    tokens = {name: int(cells[5].replace(",", "")) for name, cells in rows.items()}
    assert tokens["retriever=dense,chunk=200/1"] < tokens["retriever=dense,chunk=set"]


def test_a_grid_in_the_settings_file_is_swept_unless_the_command_line_gives_one(
    tmp_path: Path, served: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "rag_judge.toml"
    config.write_text('grid = ["retriever=bm25,dense", "chunk=set,200/1"]\n', encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(config))
    planned = run_cli(tmp_path, served, "--dry-run")
    assert planned.exit_code == 0, planned.output
    assert "4 configurations x 3 ks = 12 arms" in planned.output
    replaced = run_cli(tmp_path, served, "--grid", "retriever=bm25", "--dry-run")
    assert "1 configuration x 3 ks" in replaced.output
    config.write_text('grid = "retriever=bm25,nope"\n', encoding="utf-8")
    bad = run_cli(tmp_path, served, "--dry-run")
    assert bad.exit_code == 2
    assert "unknown retriever 'nope'" in bad.output
    assert served.total_calls == 0


def test_chunk_re_cuts_the_documents_of_a_plain_sweep(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    from rag_judge.data.eval_sets import load_eval_set
    from rag_judge.pipeline.build import ChunkSize, sized_chunks

    run = run_cli(tmp_path, served, "--chunk", "200/1", "--metrics", "exact_match")
    assert run.exit_code == 0, run.output
    frame = pd.read_csv(tmp_path / "out" / "per_question.csv")
    assert "configuration" not in frame.columns  # a k-sweep, not a grid
    passages = sized_chunks(load_eval_set("cmrc2018_zh"), ChunkSize(200, 1))
    assert max(len(p.text) for p in passages) <= 400  # a window may take one sentence more
    assert {p.doc_id for p in passages} == {d.id for d in load_eval_set("cmrc2018_zh").documents}
    bad = run_cli(tmp_path, served, "--chunk", "20")
    assert bad.exit_code == 2
    assert "below the least, 50" in bad.output
