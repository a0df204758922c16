"""A toy eval set, a fixed retriever and a scripted model for k-sweep tests: no weights.

The toy set has two questions over three documents (four chunks). The scripted model answers
from the passages it is shown (naming the capital when a passage does), extracts each text as
one claim, and supports a claim by every passage containing the claim's last word, so every
expected value in the sweep tests follows from which chunks are in the top k.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rag_judge.backends.providers.scripted import ScriptedBackend, ScriptedEmbedder
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.data.eval_sets import EvalQuery, EvalSet
from rag_judge.jobs.sweep import SweepOptions, SweepResult
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.judges import DEFAULT_METRICS, JudgeOptions
from rag_judge.pipeline.base import Hit
from rag_judge.pipeline.chunking import Chunk

RESAMPLES = 200
"""Bootstrap resamples in report tests: enough to exercise the code, quick."""

TEXTS = {
    "d1#0": ("d1", "France is a country in Europe. Its capital is Paris."),
    "d1#1": ("d1", "France has many rivers and mountains."),
    "d2#0": ("d2", "Germany is a country in Europe. Berlin is large."),
    "d3#0": ("d3", "Japan is an island country. Its capital is Tokyo."),
}
CHUNKS = [Chunk(cid, doc, text, 0, len(text)) for cid, (doc, text) in TEXTS.items()]
RANKINGS = {
    "What is the capital of France?": ["d2#0", "d1#0", "d1#1", "d3#0"],
    "What is the capital of Japan?": ["d3#0", "d2#0", "d1#0", "d1#1"],
}
QUERIES = (
    EvalQuery("q1", "What is the capital of France?", ("Paris",), "what"),
    EvalQuery("q2", "What is the capital of Japan?", ("Tokyo",), "what"),
)
TOY = EvalSet(
    name="toy",
    path=Path("."),
    manifest={},
    documents=(),
    queries=QUERIES,
    qrels={"q1": {"d1": 1}, "q2": {"d3": 1}},
    has_reference_answers=True,
    not_applicable={},
)
KS = (1, 2, 3, 4)
_PASSAGE = re.compile(r"^\[(\d+)\] (.*?)(?=\n\[\d+\] |\n\n|\Z)", re.MULTILINE | re.DOTALL)
_CLAIM = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


class FixedRetriever:
    """Rankings fixed per question text."""

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return [
            [Hit(c, 1.0 / r, r) for r, c in enumerate(RANKINGS[q][:k], start=1)] for q in queries
        ]


def passages(request: ChatRequest) -> list[str]:
    return [m.group(2) for m in _PASSAGE.finditer(request.messages[-1].content)]


def tagged(request: ChatRequest, name: str) -> str:
    """The text between a scoring prompt's ``<name>`` tags."""
    return request.messages[-1].content.split(f"<{name}>")[1].split(f"</{name}>")[0]


def tagged_passages(request: ChatRequest) -> list[str]:
    """The numbered passages of a scoring prompt (a passage may span lines)."""
    text = tagged(request, "passages").strip()
    return [p.strip() for p in re.split(r"(?:^|\n)\[\d+\] ", text) if p.strip()]


def respond(request: ChatRequest) -> str | float:
    """The scripted model, by prompt id (see the module docstring); in score mode the same
    rules give one-token probabilities (0 or 1)."""
    assert request.prompt_id is not None
    prompt, user = request.prompt_id.split(".")[0], request.messages[-1].content
    if prompt == "claims/statement":
        return 0.0 if "know" in tagged(request, "sentence") else 1.0
    if prompt in ("claims/support", "claims/answer"):  # a fragment is asked as an answer
        tag = "answer" if prompt == "claims/answer" else "claim"
        word = tagged(request, tag).rstrip(".").split()[-1]
        return 1.0 if any(word in p for p in tagged_passages(request)) else 0.0
    if prompt == "claims/contradict":
        return 0.0
    if prompt == "claims/reason":
        return "No passage mentions it."
    if prompt == "generate/answer":
        found = [w for p in passages(request) for w in ("Paris", "Tokyo") if w in p]
        return f"The capital is {found[0]}." if found else "I do not know."
    if prompt == "claims/extract":
        text = re.split(r"Text: |文本：", user)[-1].strip()
        return json.dumps({"claims": [] if "know" in text else [text]})
    if prompt == "claims/verify":
        texts = passages(request)
        rows = []
        for match in _CLAIM.finditer(user.split("Claims")[-1]):
            word = match.group(2).rstrip(".").split()[-1]
            hits = [i for i, p in enumerate(texts, start=1) if word in p]
            verdict = "supported" if hits else "not_mentioned"
            rows.append(
                {"claim": int(match.group(1)), "reason": "r", "verdict": verdict, "passages": hits}
            )
        return json.dumps({"verdicts": rows})
    if prompt == "answer_relevancy/questions":
        return json.dumps({"questions": ["What is the capital?"] * 3, "noncommittal": False})
    raise AssertionError(f"unexpected prompt {prompt}")


def toy_sweep(
    eval_set: EvalSet = TOY,
    *,
    cache: ResponseCache | None = None,
    concurrency: int = 1,
    embed: bool = True,
    ks: Sequence[int] = KS,
    generator: ScriptedBackend | None = None,
    metrics: Sequence[str] | None = None,
    objective: str | None = None,
    options: JudgeOptions | None = None,
    backend: ScriptedBackend | None = None,
    **extra: Any,
) -> tuple[SweepResult, ScriptedBackend]:
    """The toy sweep; ``generator``: a separate model that answers (default: the judge);
    ``metrics``, ``objective`` and the judge's ``options`` go into the sweep's options, the
    rest (``progress``, ``on_question``) to :func:`sweep_questions`; ``backend``: the judge's
    (default: a scripted one answering with :func:`respond`)."""
    backend = backend or ScriptedBackend(respond=respond)
    client = ModelClient(backend, cache=cache, policy=CallPolicy(concurrency=concurrency))
    if generator is not None:
        extra["generator"] = ModelClient(generator, ledger=client.ledger)
    embedder = EmbeddingClient(ScriptedEmbedder()) if embed else None
    chosen = SweepOptions(
        ks=tuple(ks),
        metrics=DEFAULT_METRICS if metrics is None else tuple(metrics),
        objective=objective,
        judge=options or JudgeOptions(),
    )
    result = asyncio.run(
        sweep_questions(
            eval_set,
            chosen,
            retriever=FixedRetriever(),
            chunks=CHUNKS,
            client=client,
            embedder=embedder,
            **extra,
        )
    )
    return result, backend


def column(result: SweepResult, qid: str, name: str) -> list[Any]:
    frame = result.per_question
    values = frame[frame.question_id == qid].sort_values("k")[name]
    return [None if pd.isna(v) else v for v in values]
