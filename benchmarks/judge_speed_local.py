"""Seconds per faithfulness sample with the embedded model: the scoring path against the
generative path and the single-call floor, in one run on the same rows.

Rows: the first ``--rows`` of WiCE dev's held-out half (never tuned on) and the first of
BEGIN's 400 measured rows, balanced over the labels. The model's KV cache is reset before each
(row, path), so no path reads a row whose prefix another path left cached. Every path judges
every row once, with no response cache (each call reaches the model), in one process sharing
one loaded model, the paths interleaved per row so a drift in the machine's speed hits them
alike. Per sample: wall seconds, calls, prompt tokens (as the model reports them, the whole
prompt of every call) and tokens decoded;
beside them the model's own prefill and decode rates, measured in the same run, so the
distance to the machine's limit shows.

Paths: ``score`` (the default for local models, with its one-line reasons for unsupported
claims), ``score, no reasons``, ``floor`` (one P(yes) on the whole answer over the whole
passages) and ``generate`` (``--judge-mode generate``, with P(supported) per claim as local
models had by default before the scoring path).

Usage::

    .venv/bin/python benchmarks/judge_speed_local.py [--rows 40] [--paths score,floor,generate]
        [--generate-rows 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from _machine import machine_info
from fit_support import MEASURED_BEGIN, wice_half

from rag_judge.backends.local.local_llama import LocalLlama
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient
from rag_judge.core.types import RagSample
from rag_judge.data.calibration_sets import load_calibration_set
from rag_judge.jobs.score.run import aevaluate
from rag_judge.prompts.templates import load_prompt

RESULTS = Path(__file__).parent / "results"
PATHS = ("score", "score_no_reasons", "floor", "generate")
RATE_TEXT = (
    "The committee met on Tuesday to review the budget for the coming year. It approved the "
    "plan for new school buildings, postponed the road works, and asked the auditors for a "
    "second estimate of the costs of the harbour project before the next meeting. "
)


def rows(n: int) -> list[tuple[str, RagSample]]:
    wice = load_calibration_set("wice_dev")
    begin = load_calibration_set("begin_dev").limit(MEASURED_BEGIN)
    held_out = [s for s in wice.samples if wice_half(s.id) == "held_out"][:n]
    return [("wice_dev", s) for s in held_out] + [("begin_dev", s) for s in begin.samples[:n]]


async def rates(model: LocalLlama) -> dict[str, float]:
    """Prefill tok/s over ~1,000 fresh tokens and decode tok/s over 128 tokens."""
    prompt = ChatRequest.of(("user", f"{time.time()} " + RATE_TEXT * 22 + "Summarise."))
    started = time.perf_counter()
    reply = await model.complete(prompt.model_copy(update={"max_tokens": 1}))
    prefill = reply.usage.prompt_tokens / (time.perf_counter() - started)
    started = time.perf_counter()
    decoded = await model.complete(prompt.model_copy(update={"max_tokens": 128}))
    seconds = time.perf_counter() - started  # the prompt is cached: this is decode
    return {
        "prefill_tok_s": prefill,
        "decode_tok_s": decoded.usage.completion_tokens / seconds,
        "prefill_tokens": reply.usage.prompt_tokens,
    }


async def judge(client: ModelClient, path: str, sample: RagSample) -> dict[str, Any]:
    before = client.ledger.models.get(client.name)
    calls0 = before.calls if before else 0
    prompt0 = before.prompt_tokens if before else 0
    completion0 = before.completion_tokens if before else 0
    started = time.perf_counter()
    status: str
    if path == "floor":
        support = load_prompt("claims/support", sample.language or "en")
        request = support.request(
            passages=list(sample.contexts or ()),
            question=sample.question or "",
            claim=sample.answer or "",
        )
        status = (await client.yes_probability(request)).status
    else:
        mode = "generate" if path == "generate" else "score"
        result = await aevaluate(
            [sample],
            ["faithfulness"],
            client=client,
            cache=False,
            mode=mode,
            reasons=path == "score",
            support_probability=True,
        )
        status = result.samples[0].results["faithfulness"].status
    seconds = time.perf_counter() - started
    after = client.ledger.models[client.name]
    return {
        "seconds": seconds,
        "status": status,
        "calls": after.calls - calls0,
        "prompt_tokens": after.prompt_tokens - prompt0,
        "completion_tokens": after.completion_tokens - completion0,
    }


async def run(n: int, paths: list[str], generate_rows: int | None = None) -> dict[str, Any]:
    model = LocalLlama()
    model.load()
    client = ModelClient(model, policy=CallPolicy(concurrency=1, timeout=900))
    measured = {"before": await rates(model)}
    records = []
    chosen = rows(n)
    position = {name: 0 for name, _ in chosen}
    for index, (name, sample) in enumerate(chosen, start=1):
        position[name] += 1
        for path in paths:
            if path == "generate" and generate_rows is not None and position[name] > generate_rows:
                continue
            # No path starts with another's prompt in llama.cpp's KV cache: each reads the row
            # from scratch, as a user's first look at it would (reuse within a path stays).
            model.load().reset()
            record = await judge(client, path, sample) | {"set": name, "id": sample.id}
            records.append(record | {"path": path})
            print(f"{index}/{len(chosen)} {name} {path} {record['seconds']:.1f}s", flush=True)
    measured["after"] = await rates(model)
    return {"rates": measured, "records": records}


def summary(report: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    records = report["records"]
    for name in ("wice_dev", "begin_dev"):
        for path in dict.fromkeys(r["path"] for r in records):
            mine = [r for r in records if r["set"] == name and r["path"] == path]
            if not mine:
                continue
            seconds = [r["seconds"] for r in mine]
            out.append(
                {
                    "set": name,
                    "path": path,
                    "rows": len(mine),
                    "scored": sum(r["status"] == "ok" for r in mine),
                    "median_s": statistics.median(seconds),
                    "mean_s": statistics.fmean(seconds),
                    "p90_s": sorted(seconds)[int(0.9 * (len(seconds) - 1))],
                    "calls": statistics.fmean(r["calls"] for r in mine),
                    "prompt_tokens": statistics.fmean(r["prompt_tokens"] for r in mine),
                    "completion_tokens": statistics.fmean(r["completion_tokens"] for r in mine),
                }
            )
    return out


def same_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per set, every path on the rows the generative path judged: the speed-up on equal work."""
    records = report["records"]
    out = []
    for name in ("wice_dev", "begin_dev"):
        ids = {r["id"] for r in records if r["set"] == name and r["path"] == "generate"}
        if not ids:
            continue
        row: dict[str, Any] = {"set": name, "rows": len(ids)}
        for path in dict.fromkeys(r["path"] for r in records):
            seconds = [
                r["seconds"]
                for r in records
                if r["set"] == name and r["path"] == path and r["id"] in ids
            ]
            row[path] = {"median_s": statistics.median(seconds), "total_s": sum(seconds)}
        out.append(row)
    return out


def markdown(report: dict[str, Any]) -> str:
    machine, rates_ = report["machine"], report["rates"]
    lines = [
        "# Seconds per faithfulness sample, embedded model (one run, same rows)",
        "",
        f"{machine['date_utc']} · {machine['cpu_model']} · {machine['usable_cores']} cores · "
        f"llama-cpp-python {machine.get('llama_cpp_python')} · load average at start "
        f"{machine.get('load_average_at_start')}",
        "",
        "Model rates in the same run: prefill "
        + ", ".join(f"{v['prefill_tok_s']:.0f}" for v in rates_.values())
        + " tok/s, decode "
        + ", ".join(f"{v['decode_tok_s']:.1f}" for v in rates_.values())
        + " tok/s (before, after).",
        "",
        "| set | path | rows (scored) | median s | mean s | p90 s | calls | prompt tokens | "
        "decoded tokens |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["summary"]:
        lines.append(
            f"| {row['set']} | {row['path']} | {row['rows']} ({row['scored']}) | "
            f"{row['median_s']:.1f} | {row['mean_s']:.1f} | {row['p90_s']:.1f} | "
            f"{row['calls']:.1f} | {row['prompt_tokens']:.0f} | {row['completion_tokens']:.0f} |"
        )
    if report.get("same_rows"):
        paths = [p for p in report["same_rows"][0] if p not in ("set", "rows")]
        lines += [
            "",
            "On the rows the generative path judged (the first of each set): median seconds, "
            "and the generative path's total time over each path's (x faster).",
            "",
            "| set | rows | " + " | ".join(paths) + " |",
            "|---|---:|" + "---:|" * len(paths),
        ]
        for row in report["same_rows"]:
            generate_total = row["generate"]["total_s"]
            cells = [
                f"{row[p]['median_s']:.1f} s ({generate_total / row[p]['total_s']:.1f}x)"
                for p in paths
            ]
            lines.append(f"| {row['set']} | {row['rows']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Prompt tokens are as the model reports them (the whole prompt of every call); "
        "llama.cpp re-reads only what follows the prefix it kept from the call before.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=40, help="Rows per set.")
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument(
        "--generate-rows",
        type=int,
        help="The generative path on only the first N rows of each set (it takes ~50 s a row).",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "judge_speed_local")
    args = parser.parse_args()
    machine = machine_info("llama-cpp-python")
    measured = asyncio.run(run(args.rows, args.paths.split(","), args.generate_rows))
    report = measured | {"machine": machine, "generate_rows": args.generate_rows}
    report["summary"] = summary(report)
    report["same_rows"] = same_rows(report)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))


if __name__ == "__main__":
    main()
