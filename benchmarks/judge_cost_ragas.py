"""The ragas side of judge_cost.py: runs in the ragas venv (benchmarks/.venv-ragas).

ragas 0.4.3's Faithfulness, ResponseRelevancy and LLMContextRecall (from ``ragas.metrics``),
one sample and one metric at a time with ``single_turn_ascore``, against the counting proxy
of judge_cost.py (an OpenAI-compatible endpoint in front of the llama server, which also serves
the embeddings). Context recall is also run with ``contexts[:k]`` for k = 1, 2 (k = 3 is the
main run): ragas has no other way to give recall at every k.

Before each (sample, metric) it tells the proxy the phase name (``POST /_bench/phase``), so the
proxy attributes the calls; after it, it prints ``RECORD {json}`` with the score, status and
wall time on stdout (the parent adds the proxy's counts). ``META {json}`` gives versions.
A NaN score (ragas' answer to parse failures, no statements, ...) is recorded as
``status="nan"``; an exception as ``status="error"`` (ragas' ``evaluate()`` would show NaN).

Usage (normally started by judge_cost.py)::

    benchmarks/.venv-ragas/bin/python benchmarks/judge_cost_ragas.py --base-url URL \
        --model NAME --embed-model NAME --samples FILE [--limit N] [--n-mode bypass|native]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import sys
import time
import urllib.request
import warnings
from importlib import metadata
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no telemetry from a benchmark
warnings.filterwarnings("ignore", category=DeprecationWarning)

TIMEOUT_S = 3600
"""Per request: a long prompt can take minutes on 2 busy cores; ragas' default 180 s would
time out and retry, adding calls that are the harness's fault."""


def set_phase(base_url: str, phase: str) -> None:
    request = urllib.request.Request(
        base_url + "/_bench/phase",
        data=json.dumps({"phase": phase}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        reply.read()


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": sys.version.split()[0]}
    for dist in ("ragas", "langchain", "langchain-core", "langchain-openai", "openai"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


class WarningCounter(logging.Handler):
    """Keeps ragas' warnings (e.g. fewer generations than requested) for the record."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage()[:300])


async def run(args: argparse.Namespace) -> None:
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas.dataset_schema import SingleTurnSample
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import Faithfulness, LLMContextRecall, ResponseRelevancy
    from ragas.run_config import RunConfig

    print("META " + json.dumps(versions()), flush=True)
    warned = WarningCounter()
    logging.getLogger("ragas").addHandler(warned)

    chat = ChatOpenAI(
        base_url=args.base_url + "/v1",
        api_key="none",
        model=args.model,
        temperature=0,
        max_retries=0,
        timeout=TIMEOUT_S,
    )
    llm = LangchainLLMWrapper(chat, bypass_n=args.n_mode == "bypass")
    embeddings = LangchainEmbeddingsWrapper(
        OpenAIEmbeddings(
            base_url=args.base_url + "/v1",
            api_key="none",
            model=args.embed_model,
            check_embedding_ctx_length=False,  # else tiktoken tokenises (and downloads) first
            max_retries=0,
        )
    )
    run_config = RunConfig(timeout=TIMEOUT_S, max_retries=1)
    faithfulness = Faithfulness(llm=llm)
    relevancy = ResponseRelevancy(llm=llm, embeddings=embeddings)  # strictness 3 (default)
    recall = LLMContextRecall(llm=llm)
    for metric in (faithfulness, relevancy, recall):
        metric.init(run_config)

    with open(args.samples, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    if args.limit:
        rows = rows[: args.limit]

    for row in rows:
        runs: list[tuple[str, Any, list[str]]] = [
            ("faithfulness", faithfulness, row["contexts"]),
            ("answer_relevancy", relevancy, row["contexts"]),
            ("context_recall", recall, row["contexts"]),
            *(
                (f"context_recall@{k}", recall, row["contexts"][:k])
                for k in range(1, len(row["contexts"]))
            ),
        ]
        if args.metrics:
            runs = [r for r in runs if r[0] in args.metrics.split(",")]
        for name, metric, contexts in runs:
            sample = SingleTurnSample(
                user_input=row["question"],
                retrieved_contexts=list(contexts),
                response=row["answer"],
                reference=row["reference"],
            )
            phase = f"ragas|{row['id']}|{name}"
            set_phase(args.base_url, phase)
            warned.messages.clear()
            started = time.perf_counter()
            value: float | None = None
            error = None
            try:
                score = await metric.single_turn_ascore(sample)
                value = float(score)
                status = "nan" if math.isnan(value) else "ok"
            except Exception as exc:
                status, error = "error", f"{type(exc).__name__}: {exc}"[:500]
            wall = time.perf_counter() - started
            set_phase(args.base_url, "idle")
            record = {
                "tool": "ragas",
                "sample_id": row["id"],
                "metric": name,
                "k": len(contexts),
                "gold_index": row.get("gold_index"),
                "phase": phase,
                "value": None if value is None or math.isnan(value) else value,
                "status": status,
                "error": error,
                "wall_s": round(wall, 3),
                "ragas_warnings": list(warned.messages),
            }
            print("RECORD " + json.dumps(record, ensure_ascii=False), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="the proxy's root URL")
    parser.add_argument("--model", required=True)
    parser.add_argument("--embed-model", required=True)
    parser.add_argument("--samples", required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--metrics",
        default=None,
        help="only these runs, comma-separated (faithfulness, answer_relevancy, context_recall, "
        "context_recall@1, context_recall@2); default all",
    )
    parser.add_argument(
        "--n-mode",
        choices=("bypass", "native"),
        default="bypass",
        help="bypass: LangchainLLMWrapper(bypass_n=True), n separate requests; native: ragas "
        "sends n in one request (llama-cpp-python's server ignores it: one choice comes back)",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
