"""Model calls and wall time of a k-sweep, planned (rag_judge) against the naive plan.

Same eval set, questions, retriever (BM25), model and judges for both plans; no response cache
(each plan starts from nothing, so every call is paid):

* **planned** — ``rag_judge.sweep``: per question, the answers for k = 1..K in ascending k
  back to back (each prompt extends the previous one, so llama.cpp reuses its KV-cache
  prefix), then the judges; the reference's claims are extracted once per question and context
  recall for every k comes from one pass over the top K.
* **naive** — what a user gets by looping a judge library over k: for each question and each k,
  generate the answer, then judge that (question, top-k, answer) sample from scratch with
  ``rag_judge.evaluate`` (reference claims re-extracted and context recall re-run per k; the
  generation prefix is evicted by the judge calls in between).

Both use the same client settings (one call at a time for the local model). Results are
appended per plan to ``results/sweep_cost.json`` and rendered to ``results/sweep_cost.md``.

Usage::

    .venv/bin/python benchmarks/sweep_cost.py --limit 10            # the issue's size
    .venv/bin/python benchmarks/sweep_cost.py --limit 2 --ks 1-10   # what this machine allowed
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from rag_judge.backends import ModelClient
from rag_judge.backends.client import CallPolicy
from rag_judge.backends.embedding_client import EmbeddingClient
from rag_judge.backends.ledger import Ledger
from rag_judge.backends.registry import chat_backend
from rag_judge.eval_sets import load_eval_set
from rag_judge.evaluation import aevaluate
from rag_judge.language import detect_language
from rag_judge.prompts import prompt_languages
from rag_judge.settings import load_settings
from rag_judge.sweep import generate_answer, run_sweep
from rag_judge.sweep.job import build_rag
from rag_judge.sweep.plan import SWEEP_METRICS, parse_ks
from rag_judge.types import RagSample

RESULTS = Path(__file__).parent / "results"


def machine_info() -> dict[str, Any]:
    """The machine and versions the numbers were measured on."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown",
    )
    mem_kb = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal")
    )
    return {
        "date_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu_model": cpu,
        "logical_cores": os.cpu_count(),
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "llama_cpp_python": metadata.version("llama_cpp_python"),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def _client(model: str, ledger: Ledger) -> ModelClient:
    settings = load_settings({"model": model})
    policy = CallPolicy(concurrency=1, timeout=settings.timeout, max_attempts=settings.max_attempts)
    return ModelClient(chat_backend(settings.model), cache=None, policy=policy, ledger=ledger)


def _tally(ledger: Ledger, started: float) -> dict[str, Any]:
    calls = prompt = completion = 0
    for tally in ledger.models.values():
        calls += tally.calls
        prompt += tally.prompt_tokens
        completion += tally.completion_tokens
    return {
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "wall_s": round(time.perf_counter() - started, 1),
    }


async def planned(args: argparse.Namespace, eval_set: Any, rag: Any) -> dict[str, Any]:
    """The sweep as rag_judge plans it."""
    ledger = Ledger()
    client = _client(args.model, ledger)
    started = time.perf_counter()
    result = await run_sweep(
        eval_set,
        retriever=rag.retriever,
        chunks=rag.chunks,
        client=client,
        embedder=rag.embedder,
        ks=args.ks,
        metrics=args.metrics,
        progress=lambda qid: print(f"planned: {qid} done", flush=True),
    )
    out = _tally(ledger, started)
    out["means_at_k_max"] = {m: _mean(result.per_question, m, max(args.ks)) for m in result.metrics}
    return out


async def naive(args: argparse.Namespace, eval_set: Any, rag: Any) -> dict[str, Any]:
    """Every k judged from scratch: generate, then evaluate the (question, top k, answer)."""
    ledger = Ledger()
    client = _client(args.model, ledger)
    texts = {c.id: c.text for c in rag.chunks}
    queries = list(eval_set.queries)
    hits = await rag.retriever.search([q.question for q in queries], max(args.ks))
    started = time.perf_counter()
    for query, ranked in zip(queries, hits, strict=True):
        contexts = [texts[h.chunk_id] for h in ranked]
        language = detect_language(query.question)
        prompt_language = language if language in prompt_languages() else "en"
        for k in args.ks:
            generation = await generate_answer(
                client, question=query.question, contexts=contexts[:k], language=prompt_language
            )
            sample = RagSample(
                id=f"{query.id}@{k}",
                question=query.question,
                contexts=tuple(contexts[:k]),
                answer=generation.answer,
                reference=query.answers[0],
                language=language,
            )
            await aevaluate(
                [sample],
                args.metrics,
                client=client,
                embedder=rag.embedder,
                cache=False,
                support_probability=False,
            )
        print(f"naive: {query.id} done", flush=True)
    return _tally(ledger, started)


def _mean(frame: Any, metric: str, k: int) -> float | None:
    values = frame.loc[frame.k == k, metric].dropna()
    return None if values.empty else round(float(values.mean()), 4)


async def main(args: argparse.Namespace) -> None:
    eval_set = load_eval_set(args.eval_set).limit(args.limit)
    settings = load_settings({"model": args.model})
    ledger = Ledger()
    rag = await build_rag(
        eval_set,
        settings=settings,
        cache=None,
        ledger=ledger,
        needs_embedder="answer_relevancy" in args.metrics,
    )
    if rag.embedder is not None:
        # Embeddings are not model calls; keep them out of both plans' ledgers alike.
        rag = type(rag)(rag.chunks, rag.retriever, EmbeddingClient(rag.embedder.backend))
    path = RESULTS / "sweep_cost.json"
    report = json.loads(path.read_text()) if path.exists() else {"runs": []}
    setup = {
        "eval_set": args.eval_set,
        "questions": [q.id for q in eval_set.queries],
        "ks": list(args.ks),
        "metrics": list(args.metrics),
        "model": args.model,
        "retriever": "bm25",
    }
    for plan in args.plans:
        machine = machine_info()
        measured = await (planned if plan == "planned" else naive)(args, eval_set, rag)
        report["runs"].append({"plan": plan, **setup, **measured, "machine": machine})
        RESULTS.mkdir(exist_ok=True)
        path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        (RESULTS / "sweep_cost.md").write_text(render(report))
        print(json.dumps({"plan": plan, **measured}, ensure_ascii=False), flush=True)


def render(report: dict[str, Any]) -> str:
    """The runs as a markdown table."""
    lines = [
        "# k-sweep cost: planned (rag_judge) vs naive (judge every k from scratch)",
        "",
        "Written by `benchmarks/sweep_cost.py`; no response cache, one call at a time.",
        "",
        "| plan | set | questions | ks | calls | prompt tok | completion tok | wall s | load |",
        "|---|---|--:|---|--:|--:|--:|--:|---|",
    ]
    for run in report["runs"]:
        ks = run["ks"]
        lines.append(
            f"| {run['plan']} | {run['eval_set']} | {len(run['questions'])} | "
            f"{ks[0]}..{ks[-1]} | {run['calls']} | {run['prompt_tokens']:,} | "
            f"{run['completion_tokens']:,} | {run['wall_s']} | "
            f"{run['machine']['load_average_at_start']} |"
        )
    first = report["runs"][0]["machine"] if report["runs"] else {}
    lines += ["", "Machine: " + ", ".join(f"{k}={v}" for k, v in first.items()), ""]
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eval-set", default="cmrc2018_zh")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--ks", type=parse_ks, default=parse_ks("1-10"))
    parser.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    parser.add_argument("--metrics", type=lambda s: tuple(s.split(",")), default=SWEEP_METRICS)
    parser.add_argument("--plans", type=lambda s: s.split(","), default=["planned", "naive"])
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
