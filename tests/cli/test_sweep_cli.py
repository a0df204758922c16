"""`rag-judge sweep` end to end over real HTTP, resuming an interrupted sweep, and parse_ks."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import http.server
import json
import math
import shutil
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401
from sweep_cli import run_cli, sweep_model
from sweep_toy import CHUNKS, TEXTS, TOY, FixedRetriever, respond

from rag_judge.backends import ModelClient, ResponseCache
from rag_judge.backends.providers.scripted import ScriptedBackend, ScriptedEmbedder
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.client import CallPolicy
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.cli import main
from rag_judge.core.errors import InputError
from rag_judge.core.types import Document
from rag_judge.jobs.sweep import SweepOptions
from rag_judge.jobs.sweep.decision import Objective
from rag_judge.jobs.sweep.decision.looks import spent
from rag_judge.jobs.sweep.job import sweep
from rag_judge.jobs.sweep.plan import parse_ks
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.runtime.settings import load_settings


class Killed(BaseException):
    """Stands for the process being killed: nothing in the library may catch it."""


def sweep_calls(cache: ResponseCache, *, die_after: int | None = None) -> ScriptedBackend:
    """Run the toy sweep on ``cache``; with ``die_after``, stop dead after that many replies."""
    answered = 0

    def dying(request: ChatRequest) -> str:
        nonlocal answered
        if die_after is not None and answered >= die_after:
            raise Killed
        answered += 1
        return respond(request)

    backend = ScriptedBackend(respond=dying)
    swept = sweep_questions(
        TOY,
        SweepOptions(ks=(1, 2, 3, 4)),
        retriever=FixedRetriever(),
        chunks=CHUNKS,
        client=ModelClient(backend, cache=cache, policy=CallPolicy(concurrency=1)),
        embedder=EmbeddingClient(ScriptedEmbedder()),
    )
    if die_after is None:
        asyncio.run(swept)
    else:
        with pytest.raises(Killed):
            asyncio.run(swept)
    return backend


def prompts_of(backend: ScriptedBackend) -> list[str]:
    return [f"{r.prompt_id}|{r.messages[-1].content}" for r in backend.requests]


def test_an_interrupted_sweep_resumes_without_repeating_a_call(tmp_path: Path) -> None:
    whole = prompts_of(sweep_calls(ResponseCache(tmp_path / "fresh.sqlite")))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    first = prompts_of(sweep_calls(cache, die_after=9))
    assert len(first) > 9  # nine answered and cached, then killed in flight
    rest = prompts_of(sweep_calls(cache))
    assert not set(first[:9]) & set(rest)  # nothing finished is asked again
    assert sorted(first[:9] + rest) == sorted(whole)  # and everything else is


@pytest.fixture
def served(
    tmp_path: Path,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> FakeOpenAIServer:
    """The fake server answering as sweep_model, with an empty config file."""
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    fake_openai.respond = sweep_model
    return fake_openai


def test_sweep_command_writes_the_report_and_resumes_from_the_cache(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = run_cli(tmp_path, served)
    assert run.exit_code == 0, run.output
    out = tmp_path / "out"
    for name in (
        "per_question.parquet",
        "per_question.csv",
        "summary.csv",
        "decision.json",
        "sweep.png",
    ):
        assert (out / name).stat().st_size > 0
    decision = json.loads((out / "decision.json").read_text(encoding="utf-8"))
    assert f"**{decision['decision']}**" in run.output
    frame = pd.read_parquet(out / "per_question.parquet")
    assert sorted(set(frame.k)) == [1, 2, 3]
    assert len(frame) == 6
    assert set(frame.faithfulness.dropna()) == {1.0}
    assert frame.doc_recall.notna().all()
    calls = served.total_calls
    ledger = json.loads((out / "ledger.json").read_text(encoding="utf-8"))["models"]
    assert sum(m["calls"] for m in ledger.values()) == calls  # calls that reached the server
    assert all(m["prompt_tokens"] > 0 and m["statuses"] for m in ledger.values())
    again = run_cli(tmp_path, served)
    assert again.exit_code == 0, again.output
    assert served.total_calls == calls  # everything came from the cache
    assert "openai/judge: 0 calls made" in again.output  # the summary's cost, per model
    ledger = json.loads((out / "ledger.json").read_text(encoding="utf-8"))["models"]
    assert sum(m["calls"] for m in ledger.values()) == 0
    assert sum(m["cached"] for m in ledger.values()) >= calls


def test_sweep_command_sweeps_your_own_rag_from_jsonl(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    """--rag FILE.jsonl: its retrievals and answers are swept and judged; nothing is generated."""
    passages = [{"id": f"p{i}", "text": f"第{i}段。", "doc_id": f"d{i}"} for i in range(3)]
    records = [
        {
            "question_id": qid,
            "contexts": passages,
            "answers": {str(k): f"答案{k}。" for k in (1, 2, 3)},
        }
        for qid in ("DEV_0_QUERY_0", "DEV_1_QUERY_1")
    ]
    rag = tmp_path / "my_rag.jsonl"
    rag.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n")
    run = run_cli(tmp_path, served, "--rag", str(rag))
    assert run.exit_code == 0, run.output
    frame = pd.read_parquet(tmp_path / "out" / "per_question.parquet")
    assert len(frame) == 6
    assert set(frame.answer_source) == {"external"}
    assert sorted(set(frame.answer)) == ["答案1。", "答案2。", "答案3。"]
    systems = [body["messages"][0]["content"] for body in served.bodies()]
    judged = [s for s in systems if any(k in s for k in ('"verdicts"', '"claims"', '"questions"'))]
    assert judged  # the judges were asked
    assert judged == systems  # and nothing else: no answer was generated

    rag.write_text('{"question_id": "DEV_0_QUERY_0", "contexts": "not a list"}\n')
    bad = run_cli(tmp_path, served, "--rag", str(rag))
    assert bad.exit_code == 2
    assert "my_rag.jsonl:1" in bad.output
    assert "contexts" in bad.output


def test_sweep_command_rejects_bad_ks_and_unknown_sets(tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["sweep", "cmrc2018_zh", "--ks", "3-1", "-o", str(tmp_path)])
    assert run.exit_code == 2
    assert "ranges ascending" in run.output
    run = CliRunner().invoke(main, ["sweep", "no_such_set", "-o", str(tmp_path)])
    assert run.exit_code == 2
    assert "no_such_set" in run.output


def test_a_typo_in_the_objective_fails_before_any_model_call(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = run_cli(tmp_path, served, "--objective", "faithfulnes*completeness")
    assert run.exit_code == 2
    assert "unknown metric 'faithfulnes' in objective 'faithfulnes*completeness'" in run.output
    assert served.total_calls == 0  # no answer generated, no embedding, no judge
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "cache").exists()  # not even an index was built


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--metrics", "faithfulness", "--objective", "completeness"),
         "needs completeness, which the metrics do not measure"),
        (("--objective", "faithfulness*completeness", "--set", "cranfield"),
         "needs completeness, which this set cannot give ("),
        (("--rag", "r.jsonl", "--rerank", "llm"), "not to your own RAG"),
        (("--rerank", "/no/such/model"), "unknown reranker '/no/such/model'"),
        (("--support-probability", "--judge-mode", "score"), "only applies to the generate path"),
    ],
)  # fmt: skip
def test_what_cannot_apply_fails_before_any_index_or_model_call(
    tmp_path: Path, served: FakeOpenAIServer, extra: tuple[str, ...], said: str
) -> None:
    """An objective the metrics or the set cannot give used to make every call and then fall
    back; --rerank beside --rag was silently ignored."""
    args = list(extra)
    if "--set" in args:  # another set than run_cli's
        at = args.index("--set")
        name = args.pop(at + 1)
        args.pop(at)
        run = CliRunner().invoke(
            main,
            ["sweep", name, "--limit", "2", "--ks", "1-3", "--model", "openai/judge",
             "--base-url", f"http://127.0.0.1:{served.port}/v1", "-o", str(tmp_path / "out"),
             *args],
            env={"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "test-key"},
        )  # fmt: skip
    else:
        run = run_cli(tmp_path, served, *args)
    assert run.exit_code == 2, run.output
    assert said in run.output
    assert "building the index" not in run.output  # refused before the progress bar
    assert served.total_calls == 0
    assert not (tmp_path / "cache").exists()  # not even an index was built


def test_ks_beyond_the_index_or_the_limit_fail_before_any_model_call(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = run_cli(tmp_path, served, "--ks", "1-100000000")
    assert run.exit_code == 2
    assert "ks must be at most 1000" in run.output
    assert served.total_calls == 0


def test_a_k_beyond_the_index_fails_before_any_model_call(tmp_path: Path) -> None:
    documents = tuple(Document(chunk, text) for chunk, (_, text) in TEXTS.items())
    toy = dataclasses.replace(TOY, documents=documents)
    backend = ScriptedBackend(respond=respond)
    settings = load_settings({"cache_dir": str(tmp_path)}, env={}, config_path=None)
    with pytest.raises(InputError, match=r"k=9 is more than the \d chunks in the index"):
        sweep(toy, ks=range(1, 10), client=ModelClient(backend), cache=False, settings=settings)
    assert backend.requests == []


def test_an_output_folder_that_is_a_file_fails_before_any_model_call(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    run = run_cli(tmp_path, served, "-o", str(tmp_path / "taken"))
    assert run.exit_code == 2
    assert "must be a folder" in run.output or "is a file" in run.output
    assert served.total_calls == 0


def test_the_sweep_options_check_the_objective_before_any_model_call() -> None:
    with pytest.raises(InputError, match="unknown metric 'doc_ndgc'"):
        SweepOptions(objective="doc_ndgc")


@pytest.mark.parametrize(
    ("text", "ks"),
    [("1-10", tuple(range(1, 11))), ("5", (5,)), ("1-3,5,10", (1, 2, 3, 5, 10)), ("3,1,3", (1, 3))],
)
def test_parse_ks(text: str, ks: tuple[int, ...]) -> None:
    assert parse_ks(text) == ks


def test_an_empty_objective_is_an_error_not_the_default() -> None:
    with pytest.raises(InputError, match="the objective is empty"):
        Objective.parse("  ")
    assert str(Objective.parse(None)) == "faithfulness*completeness"


@pytest.mark.parametrize("text", ["", "0", "a", "2-", "4-2", "1,,2", "-3", "1-1001"])
def test_parse_ks_refuses_what_is_not_a_list_of_ks(text: str) -> None:
    with pytest.raises(InputError):
        parse_ks(text)


class _Rag(http.server.BaseHTTPRequestHandler):
    """A RAG endpoint that answers plain strings (no doc ids: a note names the endpoint), or
    HTTP 503 to everything when the server's ``failing`` is set."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if getattr(self.server, "failing", False):
            self.send_response(503)
            self.end_headers()
            return
        reply = json.dumps({"contexts": [f"第{i}段。" for i in range(body["k"])]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


def test_credentials_in_a_rag_url_appear_nowhere(tmp_path: Path, served: FakeOpenAIServer) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Rag)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://user:SECRET@127.0.0.1:{server.server_address[1]}/rag?token=TOKEN"
        run = run_cli(tmp_path, served, "--rag", url)
        assert run.exit_code == 0, run.output
        server.failing = True  # type: ignore[attr-defined]
        failed = run_cli(tmp_path, served, "--rag", url, "--no-cache")
        assert failed.exit_code == 2, failed.output
        assert "answered HTTP 503" in failed.output
    finally:
        server.shutdown()
    shown = [run.output, failed.output]
    shown += [p.read_text(encoding="utf-8") for p in (tmp_path / "out").glob("*.md")]
    shown += [p.read_text(encoding="utf-8") for p in (tmp_path / "out").glob("*.html")]
    assert "127.0.0.1" in "".join(shown)  # the endpoint is named ...
    for text in shown:
        assert "SECRET" not in text
        assert "TOKEN" not in text


def test_a_sweep_whose_every_model_call_failed_exits_3(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    served.default_behaviour = "401"  # a wrong key: permanent, never retried
    run = run_cli(tmp_path, served)
    assert run.exit_code == 3, run.output
    assert "error: no answer was generated: every model call failed" in run.output
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    # the tables are written all the same, and name no k: a failed call is not a refusal,
    # and no retrieval measure stands in for the judges that failed
    assert "**No k**" in summary
    assert "Best k" not in summary
    assert "2 of 2 questions had no value at any k" in summary
    decision = json.loads((tmp_path / "out" / "decision.json").read_text(encoding="utf-8"))
    assert decision["recommended_k"] is None
    assert decision["objective"] == "answer_f1"  # the default where references are spans
    assert decision["n_questions"] == 0


def test_a_folder_set_is_titled_by_its_manifest_name_not_its_path(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    folder = tmp_path / "copied_here"
    shutil.copytree(Path(__file__).parents[2] / "eval_sets" / "cmrc2018_zh", folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    (folder / "manifest.json").write_text(json.dumps(manifest | {"name": "my_set"}))
    args = ["sweep", str(folder), "--limit", "1", "--ks", "1", "--model", "openai/judge"]
    args += ["--embeddings", "openai/embed", "--base-url", f"http://127.0.0.1:{served.port}/v1"]
    args += ["-o", str(tmp_path / "out")]
    env = {"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "test-key"}
    run = CliRunner().invoke(main, args, env=env)
    assert run.exit_code == 0, run.output
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# my_set k-sweep")
    assert str(tmp_path) not in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


def test_questions_run_concurrently_and_give_the_rows_of_one_at_a_time(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    """--concurrency 4 over a server: calls overlap (the first call waits for a second one to
    arrive), and every per-question row equals the one-at-a-time sweep's."""
    arrived = threading.Barrier(2, timeout=30)
    overlapped: list[bool] = []

    def model(body: dict[str, Any]) -> str:
        if not overlapped:
            try:
                arrived.wait()
                overlapped.append(True)
            except threading.BrokenBarrierError:
                overlapped.append(False)
        reply = sweep_model(body)
        if reply != "这是答案。":
            return reply
        user = body["messages"][-1]["content"]  # an answer that differs by question and k
        return f"答案{hashlib.sha256(user.encode()).hexdigest()[:6]}。"

    served.respond = model

    def frame(name: str, concurrency: int) -> pd.DataFrame:
        args = ["sweep", "cmrc2018_zh_chunked", "--limit", "4", "--ks", "1-3"]
        args += ["--model", "openai/judge", "--embeddings", "openai/embed"]
        args += ["--base-url", f"http://127.0.0.1:{served.port}/v1"]
        args += ["--concurrency", str(concurrency), "-o", str(tmp_path / name)]
        env = {"RAG_JUDGE_CACHE_DIR": str(tmp_path / f"cache_{name}"), "OPENAI_API_KEY": "k"}
        run = CliRunner().invoke(main, args, env=env)
        assert run.exit_code == 0, run.output
        return pd.read_parquet(tmp_path / name / "per_question.parquet")

    parallel = frame("parallel", 4)
    assert overlapped
    assert all(overlapped)  # the first two calls were in flight together
    serial = frame("serial", 1)
    assert serial["answer"].nunique() == len(serial) == 12
    pd.testing.assert_frame_equal(parallel, serial)


def write_profile(path: Path, model: str) -> Path:
    """A profile for ``model``'s faithfulness on the generative path, fitted with every prompt
    as it is now (so a row judged with any of them is covered): P = σ(logit(v) − 1)."""
    from rag_judge.prompts.templates import all_prompts

    empty: dict[str, Any] = {}
    profile = {
        "judge": {"metric": "faithfulness", "model": model, "mode": "generate",
                  "prompts": sorted(p.ref for p in all_prompts())},
        "map": {"kind": "logistic", "features": ["value"], "coefficients": [1.0],
                "intercept": -1.0},
        "threshold": 0.5, "objective": "balanced_accuracy",
        "labels": {"source": "human", "files": ["l.jsonl"], "n": 10, "supported": 5},
        "cross_validation": {"folds": 5, "seed": 0, "n": 10, "before": empty, "after": empty,
                             "change": empty, "fold_maps": []},
    }  # fmt: skip
    path.write_text(json.dumps(profile), encoding="utf-8")
    return path


def test_a_sweep_with_a_profile_reports_the_calibrated_judge(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    profile = write_profile(tmp_path / "profile.json", "openai/judge")
    run = run_cli(tmp_path, served, "--metrics", "faithfulness", "--calibration", str(profile))
    assert run.exit_code == 0, run.output
    frame = pd.read_parquet(tmp_path / "out" / "per_question.parquet")
    calibrated = frame["faithfulness_calibrated"]
    assert (calibrated.isna() == frame.faithfulness.isna()).all()
    expected = 1 / (1 + math.exp(-(math.log(0.9999 / 0.0001) - 1.0)))
    assert calibrated.dropna().tolist() == pytest.approx([expected] * calibrated.notna().sum())
    assert "faithfulness_calibrated" in run.output


def test_a_sweep_refuses_a_profile_of_another_model_before_any_call(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    profile = write_profile(tmp_path / "profile.json", "openai/another")
    run = run_cli(tmp_path, served, "--calibration", str(profile))
    assert run.exit_code == 2, run.output
    assert "refused" in run.output
    assert "another model" in run.output
    assert served.total_calls == 0


def test_the_python_api_returns_the_decision_the_cli_renders(
    tmp_path: Path, served: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_cli(tmp_path, served, "--margin", "0.1")
    assert run.exit_code == 0, run.output
    written = json.loads((tmp_path / "out" / "decision.json").read_text(encoding="utf-8"))
    calls = served.total_calls
    monkeypatch.setenv("RAG_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    result = sweep(
        "cmrc2018_zh",
        limit=2,
        ks="1-3",
        margin=0.1,
        model="openai/judge",
        embeddings="openai/embed",
        base_url=f"http://127.0.0.1:{served.port}/v1",
    )
    assert served.total_calls == calls  # every answer and verdict from the CLI's cache
    assert result.decision is not None
    assert result.decision.to_json() == written
    assert written["margin"] == 0.1
    assert written["n_questions"] == 2
    assert [row["k"] for row in written["per_k"]] == [1, 2, 3]
    assert {"refusal_rate", "difference_to_best_other", "regret_bound"} <= set(written["per_k"][0])


def test_until_decided_stops_when_settled_and_says_so(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    # Every k answers alike: the ks cannot be told apart, so the rule settles on the cheapest
    # once enough questions make the intervals narrower than the margin. The run's test spends
    # its error over the questions it may use (--max-questions), O'Brien-Fleming by default.
    run = run_cli(
        tmp_path, served, "--limit", "120", "--until-decided", "--max-questions", "100",
        "--step", "20", "--margin", "0.1",
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    decision = json.loads((tmp_path / "out" / "decision.json").read_text(encoding="utf-8"))
    assert decision["looks"]["horizon"] == 100
    assert decision["looks"]["spending"] == "obrien_fleming"
    sequential = decision["sequential"]
    assert sequential["stop"] == "settled"
    assert decision["recommended_k"] == 1
    assert sequential["questions_used"] < 100
    assert [look["n_questions"] for look in decision["looks"]["taken"]][-1] == (
        sequential["questions_used"]
    )
    assert sequential["questions_used"] % 20 == 0
    assert "Until decided:" in decision["sentence"]
    frame = pd.read_parquet(tmp_path / "out" / "per_question.parquet")
    assert frame["question_id"].nunique() == sequential["questions_used"]


@pytest.mark.parametrize("extra", [("--executor", "ray"), ("--batch",)])
def test_until_decided_refuses_to_scale_out_before_any_call(
    tmp_path: Path, served: FakeOpenAIServer, extra: tuple[str, ...]
) -> None:
    run = run_cli(tmp_path, served, "--until-decided", *extra)
    assert run.exit_code == 2
    assert "--until-decided runs in this process" in run.output
    assert served.total_calls == 0


def test_a_budget_without_until_decided_is_refused(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    run = run_cli(tmp_path, served, "--budget", "10m")
    assert run.exit_code == 2
    assert "budget only applies to a sweep until decided" in run.output
    assert served.total_calls == 0


LANGCHAIN_MODULE = """
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_qdrant import QdrantVectorStore

from rag_judge.data.eval_sets import load_eval_set

documents = load_eval_set("cmrc2018_zh").documents[:4]
store = QdrantVectorStore.from_documents(
    [Document(d.text, metadata={"doc_id": d.id}) for d in documents],
    DeterministicFakeEmbedding(size=16),
    location=":memory:",
    collection_name="cli",
)
retriever = store.as_retriever()
"""


def test_sweep_command_takes_a_langchain_retriever_by_module_attr(
    tmp_path: Path, served: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--rag module:attr naming a LangChain retriever over an embedded Qdrant store."""
    (tmp_path / "lc_cli_rag.py").write_text(LANGCHAIN_MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    run = run_cli(tmp_path, served, "--rag", "lc_cli_rag:retriever")
    assert run.exit_code == 0, run.output
    frame = pd.read_parquet(tmp_path / "out" / "per_question.parquet")
    assert len(frame) == 6
    assert frame["doc_recall"].notna().all()
    assert frame.groupby("question_id")["doc_hit_rate"].is_monotonic_increasing.all()
    assert set(frame.answer_source) == {"generated"}  # a retriever: our generator answers

    (tmp_path / "lc_cli_store.py").write_text(
        LANGCHAIN_MODULE.replace("retriever = store.as_retriever()", ""), encoding="utf-8"
    )
    bad = run_cli(tmp_path, served, "--rag", "lc_cli_store:store")
    assert bad.exit_code == 2
    assert "give vectorstore.as_retriever()" in bad.output


def test_a_rerun_with_more_questions_is_a_second_look_of_the_same_test(
    tmp_path: Path, served: FakeOpenAIServer
) -> None:
    """Every run of one sweep is a look of one test, recorded beside the response cache: the
    same run again spends nothing new, more questions spend what is left, fewer add nothing,
    and a run without a cache says its confidence holds for that look alone."""

    def decided(*extra: str) -> dict[str, Any]:
        run = run_cli(tmp_path, served, *extra)
        assert run.exit_code == 0, run.output
        return json.loads((tmp_path / "out" / "decision.json").read_text(encoding="utf-8"))

    first = decided("--limit", "2")
    taken = first["looks"]["taken"]
    assert [look["n_questions"] for look in taken] == [2]
    assert taken[0]["alpha"] == pytest.approx(spent(2 / 3219, 0.05, "front"))
    assert first["confidence"] == 0.95
    assert first["look_confidence"] == pytest.approx(1 - taken[0]["alpha"])
    assert "This is the first look of this sweep's test" in first["sentence"]
    assert decided("--limit", "2") == first  # the same look again: nothing new spent
    second = decided("--limit", "4")
    assert [look["n_questions"] for look in second["looks"]["taken"]] == [2, 4]
    assert 0 < second["looks"]["taken"][1]["alpha"] < 0.05
    assert "This sweep's test has looked 2 times (at 2, 4 questions" in second["sentence"]
    fewer = decided("--limit", "3")
    assert fewer["recommended_k"] is None
    assert "already looked at 4 questions; a look at 3 adds nothing" in fewer["sentence"]
    alone = decided("--limit", "4", "--no-cache")
    assert alone["looks"] is None
    assert "its confidence holds for this look alone" in alone["sentence"]


def test_a_rag_module_with_a_syntax_error_is_one_line_and_exit_2(
    tmp_path: Path, served: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mistake in your own --rag module ends like any input error: one line naming the file
    and line, exit 2, no traceback, no model call."""
    (tmp_path / "typo_rag.py").write_text("def search(question, k)\n    return []\n")
    monkeypatch.chdir(tmp_path)
    run = run_cli(tmp_path, served, "--rag", "typo_rag:search")
    assert run.exit_code == 2, run.output
    assert f"SyntaxError: expected ':' (at {tmp_path / 'typo_rag.py'}:1)" in run.output
    assert "Traceback" not in run.output
    assert served.total_calls == 0
