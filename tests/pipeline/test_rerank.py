"""Reranking: the LLM's P(yes) and a (fake) cross-encoder re-order a retriever's candidates.

The scripted model says "yes" to a passage containing the question's keyword. Scores tie
often (1.0 or 0.0), so every expected order below follows the project's tie rule: score
descending, then chunk id descending.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sweep_toy import CHUNKS, TOY, column, respond, toy_sweep

from rag_judge.backends import ModelClient, ResponseCache
from rag_judge.backends.errors import BackendError
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.types import ChatRequest, YesNoResponse
from rag_judge.backends.wrapper.client import CallPolicy
from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep import SweepOptions
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.pipeline.base import Hit
from rag_judge.pipeline.rerank import (
    CrossEncoderReranker,
    LLMReranker,
    RerankedRetriever,
    reranker_from_spec,
)

TEXTS = {
    "a": "Berlin is a city.",
    "b": "Paris is the capital of France.",
    "c": "FAIL: this passage breaks the model.",
    "d": "France borders Spain; its capital is Paris.",
    "e": "Rome is old.",
    "f": "FAIL again.",
}
_QUESTION = re.compile(r"^(?:Question|问题)[:：] ?(.*)$", re.MULTILINE)
_PASSAGE = re.compile(r"^(?:Passage|段落)[:：] ?(.*)$", re.MULTILINE)


def judge(request: ChatRequest) -> str | float:
    """yes when the passage names Paris; a passage saying FAIL makes the call fail."""
    passage = _PASSAGE.findall(request.messages[-1].content)[0]
    if passage.startswith("FAIL"):
        raise BackendError("scripted failure", transient=False)
    return "yes" if "Paris" in passage else "no"


class Recorded:
    """A fixed base ranking per call; records the k it was asked for."""

    def __init__(self, order: Sequence[str]) -> None:
        self.order = list(order)
        self.asked: list[int] = []

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        self.asked.append(k)
        return [
            [Hit(c, 1.0 / r, r) for r, c in enumerate(self.order[:k], start=1)] for _ in queries
        ]


def client_for(respond_: Any = judge, **policy: Any) -> tuple[ModelClient, ScriptedBackend]:
    backend = ScriptedBackend(respond=respond_)
    return ModelClient(backend, policy=CallPolicy(max_attempts=1, **policy)), backend


def ids(rankings: list[list[Hit]]) -> list[list[str]]:
    return [[h.chunk_id for h in ranking] for ranking in rankings]


def test_llm_reranker_orders_by_p_yes_ties_by_chunk_id_descending() -> None:
    client, backend = client_for()
    reranker = LLMReranker(client, TEXTS)
    base = Recorded(["a", "b", "e", "d"])
    top = asyncio.run(RerankedRetriever(base, reranker, depth=4).search(["Capital?"], 3))
    # P(yes): a 0, b 1, e 0, d 1 -> the 1.0 tie d > b, then the 0.0 tie e > a; keep 3.
    assert ids(top) == [["d", "b", "e"]]
    assert [(h.score, h.rank) for h in top[0]] == [(1.0, 1), (1.0, 2), (0.0, 3)]
    assert len(backend.requests) == 4  # one call per candidate
    assert all((r.prompt_id or "").startswith("rerank/relevant.en@1#") for r in backend.requests)
    assert reranker.failures == 0


def test_p_yes_values_order_the_candidates() -> None:
    p_yes = {"a": 0.2, "b": 0.9, "d": 0.4, "e": 0.7}
    by_text = {text: p_yes[cid] for cid, text in TEXTS.items() if cid in p_yes}

    def graded(request: ChatRequest) -> float:
        return by_text[_PASSAGE.findall(request.messages[-1].content)[0]]

    client, _ = client_for(graded)
    base = Recorded(["a", "b", "d", "e"])
    top = asyncio.run(RerankedRetriever(base, LLMReranker(client, TEXTS), depth=4).search(["Q"], 4))
    assert ids(top) == [["b", "e", "d", "a"]]
    assert [h.score for h in top[0]] == [0.9, 0.7, 0.4, 0.2]


def test_depth_bounds_the_candidates_and_never_goes_below_k() -> None:
    client, _ = client_for()
    base = Recorded(["a", "e", "c", "b"])  # the only Paris passage is 4th
    shallow = RerankedRetriever(base, LLMReranker(client, TEXTS), depth=3)
    deep = RerankedRetriever(base, LLMReranker(client, TEXTS), depth=4)
    assert ids(asyncio.run(deep.search(["Q"], 1))) == [["b"]]
    # depth 3 never sees b: a and e tie at 0.0 (e > a), c failed and ranks last.
    assert ids(asyncio.run(shallow.search(["Q"], 1))) == [["e"]]
    assert ids(asyncio.run(shallow.search(["Q"], 4))) == [["b", "e", "a", "c"]]
    assert base.asked == [4, 3, 4]  # max(k, depth)


def test_failed_calls_rank_last_in_base_order_and_are_counted() -> None:
    client, _ = client_for()
    reranker = LLMReranker(client, TEXTS)
    candidates = [[Hit(c, 0.0, r) for r, c in enumerate(["f", "a", "c", "b"], start=1)]]
    top = asyncio.run(reranker.rerank(["Q"], candidates, 4))
    # b 1.0, a 0.0, then the failures by base rank: f (1st) -> -1, c (3rd) -> -3.
    assert ids(top) == [["b", "a", "f", "c"]]
    assert [h.score for h in top[0]] == [1.0, 0.0, -1.0, -3.0]
    assert reranker.failures == 2
    asyncio.run(reranker.rerank(["Q"], candidates, 1))
    assert reranker.failures == 4  # counted over every call


def test_language_is_detected_per_query_unless_given() -> None:
    client, backend = client_for()
    candidates = [[Hit("b", 0.0, 1)], [Hit("b", 0.0, 1)]]
    questions = ["法国的首都在哪里？", "Capital?"]
    asyncio.run(LLMReranker(client, TEXTS).rerank(questions, candidates, 1))
    assert [(r.prompt_id or "")[:19] for r in backend.requests] == [
        "rerank/relevant.zh@",
        "rerank/relevant.en@",
    ]
    assert _QUESTION.findall(backend.requests[0].messages[-1].content) == ["法国的首都在哪里？"]
    client, backend = client_for()
    english = LLMReranker(client, TEXTS, language="en")
    assert asyncio.run(english.rerank(["法国的首都？"], [[]], 1)) == [[]]  # nothing to score
    asyncio.run(english.rerank(["法国的首都？"], candidates[:1], 1))
    assert [(r.prompt_id or "")[:19] for r in backend.requests] == ["rerank/relevant.en@"]


def test_calls_are_cached_and_bounded_by_the_client(tmp_path: Path) -> None:
    live = peak = 0

    class Counting(ScriptedBackend):
        async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
            nonlocal live, peak
            live += 1
            peak = max(peak, live)
            await asyncio.sleep(0.01)
            live -= 1
            return await super().yes_probability(request)

    candidates = [[Hit(c, 0.0, r) for r, c in enumerate("abde", start=1)]] * 2
    first = Counting(respond=judge)
    client = ModelClient(first, cache=ResponseCache(tmp_path / "c.sqlite"), policy=CallPolicy(2))
    asyncio.run(LLMReranker(client, TEXTS).rerank(["Q1", "Q2"], candidates, 2))
    assert (len(first.requests), peak) == (8, 2)
    again = ScriptedBackend()  # no replies: any call would fail
    cached = ModelClient(again, cache=ResponseCache(tmp_path / "c.sqlite"))
    reranker = LLMReranker(cached, TEXTS)
    assert ids(asyncio.run(reranker.rerank(["Q1", "Q2"], candidates, 2))) == [["d", "b"]] * 2
    assert (again.requests, reranker.failures) == ([], 0)


def test_bad_candidates_are_input_errors() -> None:
    client, backend = client_for()
    reranker = LLMReranker(client, TEXTS)
    with pytest.raises(InputError, match="1 queries but 2 candidate lists"):
        asyncio.run(reranker.rerank(["Q"], [[], []], 1))
    with pytest.raises(InputError, match="candidate chunk 'zz' has no text"):
        asyncio.run(reranker.rerank(["Q"], [[Hit("a", 0.0, 1), Hit("zz", 0.0, 2)]], 1))
    assert backend.requests == []  # checked before any call
    with pytest.raises(InputError, match="k must be an integer >= 1"):
        asyncio.run(reranker.rerank(["Q"], [[]], 0))


class FakeCrossEncoder:
    """Scores a pair by how many times the passage says the query's last word."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[tuple[str, str]], int, str]] = []

    def predict(self, inputs: list[tuple[str, str]], *, batch_size: int) -> list[float]:
        self.calls.append((inputs, batch_size, threading.current_thread().name))
        return [float(p.count(q.split()[-1])) for q, p in inputs]


def test_cross_encoder_scores_pairs_off_the_event_loop(tmp_path: Path) -> None:
    model = FakeCrossEncoder()
    loaded: list[Path] = []

    def loader(path: Path) -> FakeCrossEncoder:
        loaded.append(path)
        return model

    reranker = CrossEncoderReranker(tmp_path, TEXTS, batch_size=7, loader=loader)
    assert loaded == []  # loaded on first use
    candidates = [[Hit(c, 0.0, r) for r, c in enumerate("abd", start=1)]] * 2
    top = asyncio.run(reranker.rerank(["about Paris", "about capital"], candidates, 2))
    # "Paris": a 0, b 1, d 1 -> d > b on the tie; "capital": a 0, b 1, d 1 -> the same.
    assert ids(top) == [["d", "b"], ["d", "b"]]
    asyncio.run(reranker.rerank(["about Berlin"], candidates[:1], 1))
    assert loaded == [tmp_path]  # once
    pairs, batch_size, thread = model.calls[0]
    assert len(pairs) == 6  # one predict per rerank, every query's pairs
    assert pairs[0] == ("about Paris", TEXTS["a"])
    assert batch_size == 7
    assert thread != threading.main_thread().name


def test_a_cross_encoder_must_give_one_finite_score_per_pair(tmp_path: Path) -> None:
    class Broken:
        def predict(self, inputs: list[tuple[str, str]], *, batch_size: int) -> list[float]:
            return [float("nan")] * len(inputs)

    reranker = CrossEncoderReranker(tmp_path, TEXTS, loader=lambda _: Broken())
    with pytest.raises(InputError, match="one finite score per pair"):
        asyncio.run(reranker.rerank(["Q"], [[Hit("a", 0.0, 1)]], 1))


def test_reranker_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client, _ = client_for()
    assert isinstance(reranker_from_spec("llm", client=client, chunk_texts=TEXTS), LLMReranker)
    found = reranker_from_spec(str(tmp_path), client=None, chunk_texts=TEXTS)
    assert isinstance(found, CrossEncoderReranker)
    assert found.path == tmp_path
    with pytest.raises(InputError, match=r"unknown reranker 'bm25'.*'llm'.*cross-encoder"):
        reranker_from_spec("bm25", client=client, chunk_texts=TEXTS)
    with pytest.raises(InputError, match="needs a model client"):
        reranker_from_spec("llm", client=None, chunk_texts=TEXTS)
    with pytest.raises(InputError, match=r"no cross-encoder at .*missing: no such path"):
        CrossEncoderReranker(tmp_path / "missing", TEXTS)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sentence_transformers" else real(name, *a),
    )
    with pytest.raises(InputError, match=r"needs sentence-transformers: pip install"):
        CrossEncoderReranker(tmp_path, TEXTS)


def test_a_sweep_with_a_reranked_retriever() -> None:
    """The toy sweep's q1 ranking d2#0, d1#0, d1#1, d3#0, reranked by 'mentions France'."""

    def routed(request: ChatRequest) -> str:
        if (request.prompt_id or "").startswith("rerank/"):
            passage = _PASSAGE.findall(request.messages[-1].content)[0]
            question = _QUESTION.findall(request.messages[-1].content)[0]
            country = question.rstrip("?").split()[-1]
            return "yes" if country in passage else "no"
        return respond(request)

    from sweep_toy import FixedRetriever

    backend = ScriptedBackend(respond=routed)
    client = ModelClient(backend, policy=CallPolicy(concurrency=1))
    retriever = RerankedRetriever(
        FixedRetriever(), LLMReranker(client, {c.id: c.text for c in CHUNKS}), depth=4
    )
    result = asyncio.run(
        sweep_questions(
            TOY,
            SweepOptions(ks=(1, 2), metrics=()),
            retriever=retriever,
            chunks=CHUNKS,
            client=client,
        )
    )
    # q1: d1#0 and d1#1 mention France -> d1#1 > d1#0, then d3#0 > d2#0 at 0.0.
    assert result.retrieved["q1"] == ("d1#1", "d1#0")
    assert column(result, "q1", "doc_mrr") == [1.0, 1.0]  # was [0.0, 0.5] before reranking
    assert column(result, "q1", "text_mrr") == [0.0, 0.5]  # Paris is in d1#0, now 2nd
    unranked, _ = toy_sweep(ks=(1, 2), metrics=())
    assert column(unranked, "q1", "doc_mrr") == [0.0, 0.5]


def test_what_reranking_cost_is_part_of_every_k_s_cost() -> None:
    """An LLM reranker's prompts are counted per question (the same at every k) and added to
    what serving each k costs in the decision; a cross-encoder asks no model."""
    from sweep_toy import FixedRetriever

    from rag_judge.jobs.sweep.decision import decide

    def routed(request: ChatRequest) -> str:
        if (request.prompt_id or "").startswith("rerank/"):
            return "yes" if "capital" in request.messages[-1].content else "no"
        return respond(request)

    client = ModelClient(ScriptedBackend(respond=routed), policy=CallPolicy(concurrency=1))
    reranker = LLMReranker(client, {c.id: c.text for c in CHUNKS})
    retriever = RerankedRetriever(FixedRetriever(), reranker, depth=4)
    options = SweepOptions(ks=(1, 2), metrics=())
    result = asyncio.run(
        sweep_questions(TOY, options, retriever=retriever, chunks=CHUNKS, client=client)
    )
    frame = result.per_question
    spent = frame.groupby("question_id")["rerank_prompt_tokens"].agg(["min", "max"])
    assert (spent["min"] == spent["max"]).all()
    assert (spent["min"] > 0).all()
    assert reranker.last_prompt_tokens == [int(spent.loc[q, "min"]) for q in ("q1", "q2")]
    plain = asyncio.run(
        sweep_questions(TOY, options, retriever=FixedRetriever(), chunks=CHUNKS, client=client)
    )
    assert "rerank_prompt_tokens" not in plain.per_question.columns
    costs = {s.k: s.cost for s in decide(result, "answer_f1").recommendation.standings}
    answer = frame.groupby("k")["answer_prompt_tokens"].mean()
    reranking = float(spent["min"].mean())
    assert costs == {k: float(answer[k]) + reranking for k in (1, 2)}
