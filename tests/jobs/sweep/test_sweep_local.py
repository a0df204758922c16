"""A k-sweep on the real embedded model: each step of a question's ks as one shared-prefix
round, against the same sweep with the model's calls made one by one; and a re-run from the
response cache. Slow (about a minute)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from rag_judge.backends import CallPolicy, ModelClient, ResponseCache
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse
from rag_judge.backends.wrapper.lockstep import can_run_together
from rag_judge.data.eval_sets import load_eval_set
from rag_judge.jobs.sweep import SweepOptions, SweepResult
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.pipeline.bm25 import BM25Retriever
from rag_judge.pipeline.chunking import chunk_corpus, structure_aware

METRICS = ("faithfulness", "completeness", "exact_match")


class OneByOne:
    """The same model, without its rounds: every call made alone, as before lockstep."""

    logprobs_in_process = True
    max_concurrency = 1

    def __init__(self, model: Any) -> None:
        self.model, self.name, self.endpoint = model, model.name, model.endpoint

    async def complete(self, request: ChatRequest) -> ChatResponse:
        reply: ChatResponse = await self.model.complete(request)
        return reply

    async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
        reply: YesNoResponse = await self.model.yes_probability(request)
        return reply


def sweep(backend: Any, tmp_path: Path, cache: ResponseCache) -> tuple[SweepResult, ModelClient]:
    cmrc = load_eval_set("cmrc2018_zh").limit(1)
    cmrc = dataclasses.replace(cmrc, documents=cmrc.documents[:30])
    chunks = chunk_corpus(structure_aware(100, 400), cmrc.documents)
    retriever = BM25Retriever.build(chunks, zh_tokenizer="bigram", cache_dir=tmp_path)
    client = ModelClient(backend, cache=cache, policy=CallPolicy(concurrency=1, timeout=600))
    options = SweepOptions(ks=(1, 2, 3), metrics=METRICS)
    result = asyncio.run(
        sweep_questions(cmrc, options, retriever=retriever, chunks=chunks, client=client)
    )
    return result, client


@pytest.mark.slow
def test_a_lockstep_sweep_answers_as_one_by_one_and_resumes_from_its_cache(
    local_llama: Any, tmp_path: Path
) -> None:
    assert can_run_together(local_llama)
    assert not can_run_together(OneByOne(local_llama))
    cache = ResponseCache(tmp_path / "together.sqlite")
    together, client = sweep(local_llama, tmp_path, cache)
    alone, _ = sweep(OneByOne(local_llama), tmp_path, ResponseCache(tmp_path / "alone.sqlite"))
    ours, theirs = together.per_question, alone.per_question
    assert list(ours.answer) == list(theirs.answer)
    assert list(ours.faithfulness_status) == list(theirs.faithfulness_status)
    assert (ours.faithfulness - theirs.faithfulness).abs().max() < 0.1  # batch-size rounding
    calls = client.ledger.summary()[client.name]
    assert calls["calls"] > 0
    again, replay = sweep(local_llama, tmp_path, cache)  # a re-run: every reply from the cache
    summary = replay.ledger.summary()[replay.name]
    assert summary["calls"] == 0
    assert summary["cached"] >= calls["calls"]
    columns = ["question_id", "k", "answer", *together.value_columns]
    assert again.per_question[columns].equals(ours[columns])
