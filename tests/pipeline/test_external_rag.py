"""Bring your own RAG: a callable, a JSONL file and an HTTP endpoint feed the k-sweep.

Each source serves the toy set of ``test_sweep`` with the rankings its fixed retriever gives,
so a sweep through it must reproduce that sweep's values: every ``doc_*`` measure, the text
measures that need only the retrieved passages, and every judge. Answers given by the source
replace generation: no ``generate/answer`` prompt is sent, and each row costs one call less.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from aiohttp import web
from sweep_toy import KS, RANKINGS, TEXTS, TOY, column, respond, toy_sweep

from rag_judge.backends import ModelClient
from rag_judge.backends.providers.scripted import ScriptedBackend, ScriptedEmbedder
from rag_judge.backends.wrapper.client import CallPolicy
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalQuery
from rag_judge.jobs.sweep import SweepOptions, SweepResult
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.jobs.sweep.sources import NO_INDEX
from rag_judge.pipeline.external.base import (
    CallableRag,
    ExternalRag,
    ExternalRagError,
    JsonlRag,
    Passage,
)
from rag_judge.pipeline.external.http import HttpRag
from rag_judge.pipeline.external.load import load_external_rag

SHARED = [  # columns an external RAG must reproduce exactly
    "answer",
    *(f"doc_{m}" for m in ("recall", "precision", "hit_rate", "mrr", "ndcg")),
    *(f"text_{m}" for m in ("precision", "hit_rate", "mrr", "joint_recall")),
    "faithfulness",
    "answer_relevancy",
    "completeness",
    "context_recall",
]
QID = {q.question: q.id for q in TOY.queries}


def contexts(question: str, k: int) -> list[dict[str, str]]:
    """The toy retriever's top k as passages with their document ids."""
    return [{"id": c, "text": TEXTS[c][1], "doc_id": TEXTS[c][0]} for c in RANKINGS[question][:k]]


def answer(question: str, k: int) -> str:
    """What the scripted generator of test_sweep answers from the top k."""
    found = [w for c in RANKINGS[question][:k] for w in ("Paris", "Tokyo") if w in TEXTS[c][1]]
    return f"The capital is {found[0]}." if found else "I do not know."


def external_sweep(rag: ExternalRag) -> tuple[SweepResult, ScriptedBackend]:
    backend = ScriptedBackend(respond=respond)
    result = asyncio.run(
        sweep_questions(
            TOY,
            SweepOptions(ks=KS),
            rag=rag,
            client=ModelClient(backend, policy=CallPolicy(concurrency=1)),
            embedder=EmbeddingClient(ScriptedEmbedder()),
        )
    )
    return result, backend


def prompts_sent(backend: ScriptedBackend) -> set[str]:
    return {(r.prompt_id or "").split(".")[0] for r in backend.requests}


def assert_same_values(result: SweepResult, reference: SweepResult) -> None:
    pd.testing.assert_frame_equal(
        result.per_question[["question_id", "k", *SHARED]],
        reference.per_question[["question_id", "k", *SHARED]],
    )


def test_a_sync_callable_reproduces_the_fixed_retriever_sweep() -> None:
    asked: list[tuple[str, int]] = []

    def search(question: str, k: int) -> list[dict[str, str]]:
        asked.append((question, k))
        return contexts(question, k + 3)  # more than k: the sweep keeps the first k

    result, backend = external_sweep(CallableRag(search))
    reference, _ = toy_sweep()
    assert asked == [(q.question, 4) for q in TOY.queries]  # top K once per question, in order
    assert_same_values(result, reference)
    assert result.retrieved == {QID[q]: tuple(ids) for q, ids in RANKINGS.items()}
    assert set(result.per_question.answer_source) == {"generated"}
    assert "generate/answer" in prompts_sent(backend)
    # Recall and nDCG by text need the whole index: missing, with the reason.
    assert result.skipped == {"text_recall": NO_INDEX, "text_ndcg": NO_INDEX}
    assert result.per_question.text_recall.isna().all()
    assert result.uncovered == {}


def test_an_async_callable_of_plain_strings_skips_the_doc_measures() -> None:
    async def search(question: str, k: int) -> list[str]:
        await asyncio.sleep(0)
        return [TEXTS[c][1] for c in RANKINGS[question][:k]]

    result, _ = external_sweep(CallableRag(search, name="strings"))
    assert result.retrieved["q1"] == ("q1#1", "q1#2", "q1#3", "q1#4")
    assert not [c for c in result.per_question.columns if c.startswith("doc_")]
    reason = "8 of 8 passages from strings carry no doc_id"
    assert {k: v for k, v in result.skipped.items() if k.startswith("doc_")} == {
        f"doc_{m}": reason for m in ("recall", "precision", "hit_rate", "mrr", "ndcg")
    }
    assert column(result, "q1", "text_hit_rate") == [0.0, 1.0, 1.0, 1.0]
    assert column(result, "q1", "faithfulness") == [None, 1.0, 1.0, 1.0]


def test_a_question_no_retrieved_passage_covers_scores_zero_not_excluded() -> None:
    def search(question: str, k: int) -> list[dict[str, str]]:
        return [p for p in contexts(question, k) if "Paris" not in p["text"]]  # q1 misses

    result, _ = external_sweep(CallableRag(search))
    assert result.uncovered == {}
    assert column(result, "q1", "text_hit_rate") == [0.0, 0.0, 0.0, 0.0]
    assert column(result, "q1", "text_joint_recall") == [0.0, 0.0, 0.0, 0.0]
    assert column(result, "q1", "n_contexts") == [1, 2, 3, 3]
    assert column(result, "q2", "text_mrr") == [1.0, 1.0, 1.0, 1.0]


def test_callable_failures_name_the_question() -> None:
    def broken(question: str, k: int) -> list[str]:
        raise RuntimeError("index offline")

    with pytest.raises(ExternalRagError, match=r"broken failed on question 'q1'.*index offline"):
        external_sweep(CallableRag(broken))

    def exits(question: str, k: int) -> list[str]:
        sys.exit(0)  # ended the sweep with status 0 and no files

    with pytest.raises(ExternalRagError, match=r"exits called sys\.exit\(0\) on question 'q1'"):
        external_sweep(CallableRag(exits))
    with pytest.raises(InputError, match=r"row q1, field 'contexts\[1\]': a passage is a string"):
        external_sweep(CallableRag(lambda q, k: ["fine", 42]))
    with pytest.raises(InputError, match=r"field 'contexts': must be a list of passages, got str"):
        external_sweep(CallableRag(lambda q, k: "one string"))
    with pytest.raises(InputError, match="passage id 'x' appears twice"):
        external_sweep(CallableRag(lambda q, k: [Passage("x", "a"), Passage("x", "b")]))


def write_jsonl(path: Path, records: Sequence[object]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_answers_replace_generation(tmp_path: Path) -> None:
    records = [
        {
            "question_id": QID[q],
            "contexts": contexts(q, 4),
            "answers": {str(k): f"  {answer(q, k)} " for k in (*KS, 7)},  # extra ks are fine
        }
        for q in RANKINGS
    ]
    result, backend = external_sweep(JsonlRag(write_jsonl(tmp_path / "rag.jsonl", records)))
    reference, _ = toy_sweep()
    assert_same_values(result, reference)  # answers stripped, judged the same
    assert "generate/answer" not in prompts_sent(backend)
    assert set(result.per_question.answer_source) == {"external"}
    assert set(result.per_question.generation_status) == {"ok"}
    saved = reference.per_question.calls - result.per_question.calls
    assert saved.tolist() == [1] * 8  # no generation call on any row


def test_jsonl_without_answers_is_generated_for(tmp_path: Path) -> None:
    records = [{"question_id": QID[q], "contexts": contexts(q, 9)} for q in reversed(RANKINGS)]
    path = write_jsonl(tmp_path / "rag.jsonl", ["", *records, "   "])  # blank lines are skipped
    result, backend = external_sweep(load_external_rag(str(path)))
    assert_same_values(result, toy_sweep()[0])
    assert "generate/answer" in prompts_sent(backend)


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (['{"question_id": "q1",'], r"rag.jsonl:1: not valid JSON"),
        ([[1]], r"rag.jsonl:1: must be a JSON object"),
        ([{"contexts": []}], r"rag.jsonl:1, field 'question_id': must be a string"),
        ([{"question_id": "q1", "contexts": "x"}], r":1, field 'contexts': must be a list"),
        (
            [{"question_id": "q1", "contexts": ["a"]}, {"question_id": "q2", "contexts": [{}]}],
            r"rag.jsonl:2, field 'contexts\[0\].text': must be a string",
        ),
        (
            [{"question_id": "q1", "contexts": [{"text": "a", "doc_id": ["d1"]}]}],
            r":1, field 'contexts\[0\].doc_id': must be a string",
        ),
        (
            [{"question_id": "q1", "contexts": [], "answers": ["a"]}],
            r":1, field 'answers': must be an object",
        ),
        (
            [{"question_id": "q1", "contexts": [], "answers": {"0": "a"}}],
            r":1, field 'answers': key '0' is not a k >= 1",
        ),
        (
            [{"question_id": "q1", "contexts": [], "answers": {"1": None}}],
            r":1, field 'answers.1': must be a string, got NoneType",
        ),
        (
            [{"question_id": "q1", "contexts": []}, {"question_id": "q1", "contexts": []}],
            r"rag.jsonl:2: question 'q1' already on line 1",
        ),
    ],
)
def test_malformed_jsonl_lines_name_file_line_and_field(
    tmp_path: Path, records: list[Any], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        JsonlRag(write_jsonl(tmp_path / "rag.jsonl", records))


def test_jsonl_must_cover_every_question_and_every_k(tmp_path: Path) -> None:
    only_q2 = [{"question_id": "q2", "contexts": ["a"]}, {"question_id": "q9", "contexts": []}]
    with pytest.raises(InputError, match=r"1 of 2 questions of the eval set have no line: 'q1'"):
        external_sweep(JsonlRag(write_jsonl(tmp_path / "a.jsonl", only_q2)))
    partial = [
        {"question_id": "q1", "contexts": ["a"], "answers": {"1": "a", "2": "b"}},
        {"question_id": "q2", "contexts": ["a"]},
    ]
    with pytest.raises(InputError, match=r"b.jsonl:1, field 'answers': no answer for k=3"):
        external_sweep(JsonlRag(write_jsonl(tmp_path / "b.jsonl", partial)))
    with pytest.raises(InputError, match="no such file"):
        JsonlRag(tmp_path / "missing.jsonl")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def http_sweep(handler: Handler, **options: Any) -> tuple[SweepResult, ScriptedBackend]:
    """A sweep against ``handler`` served on 127.0.0.1 for the sweep's duration."""

    async def main() -> tuple[SweepResult, ScriptedBackend]:
        app = web.Application()
        app.router.add_post("/rag", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        backend = ScriptedBackend(respond=respond)
        try:
            result = await sweep_questions(
                TOY,
                SweepOptions(ks=KS),
                rag=HttpRag(f"http://{host}:{port}/rag", **options),
                client=ModelClient(backend, policy=CallPolicy(concurrency=1)),
                embedder=EmbeddingClient(ScriptedEmbedder()),
            )
        finally:
            await runner.cleanup()
        return result, backend

    return asyncio.run(main())


def test_an_endpoint_that_answers_is_asked_for_every_k() -> None:
    seen: list[tuple[str, int]] = []

    async def rag(request: web.Request) -> web.Response:
        body = await request.json()
        question, k = body["question"], body["k"]
        seen.append((QID[question], k))
        return web.json_response({"contexts": contexts(question, k), "answer": answer(question, k)})

    result, backend = http_sweep(rag)
    assert_same_values(result, toy_sweep()[0])
    assert "generate/answer" not in prompts_sent(backend)
    assert set(result.per_question.answer_source) == {"external"}
    assert sorted(seen) == [(q, k) for q in ("q1", "q2") for k in KS]
    assert [k for q, k in seen if q == "q1"] == [4, 1, 2, 3]  # the top K first


def test_an_endpoint_without_answers_is_asked_once_per_question() -> None:
    seen: list[int] = []

    async def rag(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body["k"])
        return web.json_response({"contexts": contexts(body["question"], body["k"])})

    result, backend = http_sweep(rag)
    assert_same_values(result, toy_sweep()[0])
    assert seen == [4, 4]
    assert "generate/answer" in prompts_sent(backend)


def test_endpoint_errors_name_the_url_and_status() -> None:
    async def failing(request: web.Request) -> web.Response:
        return web.Response(status=503, text="overloaded")

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.json_response({"contexts": []})

    async def not_json(request: web.Request) -> web.Response:
        return web.Response(text="<html>")

    async def reordered(request: web.Request) -> web.Response:
        body = await request.json()
        question, k = body["question"], body["k"]
        return web.json_response({"contexts": contexts(question, k)[::-1], "answer": "a"})

    async def answers_only_top_k(request: web.Request) -> web.Response:
        body = await request.json()
        reply = {"contexts": contexts(body["question"], body["k"])}
        return web.json_response(reply | ({"answer": "a"} if body["k"] == 4 else {}))

    with pytest.raises(ExternalRagError, match=r"http://127\.0\.0\.1:\d+/rag answered HTTP 503"):
        http_sweep(failing)
    with pytest.raises(ExternalRagError, match=r"/rag gave no reply within 0\.2 s"):
        http_sweep(slow, timeout=0.2)
    with pytest.raises(InputError, match=r"/rag, row q\d: the reply is not JSON"):
        http_sweep(not_json)
    with pytest.raises(InputError, match="its top 1 is not the first 1 of its top 4"):
        http_sweep(reordered)
    with pytest.raises(InputError, match=r"row q\d: answered for k=4 but not k=1"):
        http_sweep(answers_only_top_k)


def test_an_unreachable_endpoint_is_reported() -> None:
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rag = HttpRag(f"http://127.0.0.1:{port}/rag", timeout=5)
    query = EvalQuery("q1", "Q?", (), "t")
    with pytest.raises(ExternalRagError, match=rf"127\.0\.0\.1:{port}/rag is unreachable"):
        asyncio.run(rag.retrieve([query], 2, (1, 2)))


def test_specs_choose_the_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_rag_under_test.py").write_text(
        "class Search:\n    @staticmethod\n    def top(question, k):\n        return ['p'] * k\n"
    )
    monkeypatch.chdir(tmp_path)  # the current directory is tried for module:function
    monkeypatch.delitem(sys.modules, "my_rag_under_test", raising=False)
    found = load_external_rag("my_rag_under_test:Search.top")
    assert isinstance(found, CallableRag)
    assert found.name == "callable my_rag_under_test:Search.top"
    query = EvalQuery("q7", "Q?", (), "t")
    [got] = asyncio.run(found.retrieve([query], 2, (1, 2)))
    assert got.passages == (Passage("q7#1", "p"), Passage("q7#2", "p"))
    assert str(tmp_path) not in sys.path
    monkeypatch.delitem(sys.modules, "my_rag_under_test")
    write_jsonl(tmp_path / "r.JSONL", [{"question_id": "q1", "contexts": []}])
    assert isinstance(load_external_rag(str(tmp_path / "r.JSONL")), JsonlRag)
    assert isinstance(load_external_rag("https://rag.example/search"), HttpRag)
    with pytest.raises(InputError, match=r"cannot tell what 'rag\.txt' is: give module:function"):
        load_external_rag("rag.txt")
    with pytest.raises(InputError, match="cannot import 'no_such_module_here'"):
        load_external_rag("no_such_module_here:search")
    with pytest.raises(InputError, match="'os' has no attribute 'nope'"):
        load_external_rag("os:nope")
    with pytest.raises(InputError, match="'os:sep' is not callable"):
        load_external_rag("os:sep")


BROKEN_MODULES = {
    "syntax": ("def search(question, k)\n    return []\n", "SyntaxError: expected ':'", 1),
    "raises": ("import os\n\nINDEX = os.environ['NO_SUCH_INDEX_VARIABLE']\n",
               "KeyError: 'NO_SUCH_INDEX_VARIABLE'", 3),
    "needs": ("import no_such_package_for_rag\n",
              "ModuleNotFoundError: No module named 'no_such_package_for_rag'", 1),
    "exits": ("import sys\n\nsys.exit('no index')\n", "called sys.exit('no index')", 3),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(BROKEN_MODULES))
def test_a_module_that_fails_as_it_loads_is_one_line_naming_its_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Your own code behind --rag: a syntax error, a raise, a missing package or an exit as it
    loads is an input error (exit 2) naming the file and line, not a traceback through ours."""
    text, said, line = BROKEN_MODULES[kind]
    module = tmp_path / f"broken_rag_{kind}.py"
    module.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as caught:
        load_external_rag(f"broken_rag_{kind}:search")
    message = str(caught.value)
    assert f"cannot import 'broken_rag_{kind}': " in message
    assert said in message
    assert f"{module}:{line}" in message
    assert "\n" not in message


def test_a_callable_that_raises_names_the_line_of_its_own_code() -> None:
    def broken(question: str, k: int) -> list[str]:
        return [str(1 / 0)]

    line = broken.__code__.co_firstlineno + 1
    with pytest.raises(ExternalRagError) as caught:
        external_sweep(CallableRag(broken))
    assert f"ZeroDivisionError: division by zero (at {__file__}:{line})" in str(caught.value)


def test_run_sweep_takes_either_a_rag_or_a_retriever() -> None:
    from sweep_toy import CHUNKS, FixedRetriever

    client = ModelClient(ScriptedBackend(respond=respond))
    rag = CallableRag(contexts)
    with pytest.raises(InputError, match="give either rag or retriever and chunks, not both"):
        asyncio.run(sweep_questions(TOY, rag=rag, retriever=FixedRetriever(), client=client))
    with pytest.raises(InputError, match="give a retriever and its chunks, or rag"):
        asyncio.run(sweep_questions(TOY, chunks=CHUNKS, client=client))
