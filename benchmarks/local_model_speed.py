"""Speed and memory of the embedded local judge (Qwen2.5-Coder-1.5B Q4_K_M, llama-cpp-python).

Each configuration runs in a fresh child process of this script (``--child NAME``), so its
peak RSS (``resource.getrusage``) is its own. A child measures, through ``LocalLlama``:

* load time (weights verification via the sidecar fast path + ``Llama(...)``);
* prefill tokens/s: a ~1,000-token prompt with ``max_tokens=1`` (a fresh prefix each run);
* decode tokens/s: 128 tokens after a prompt that is already in the KV cache;
* yes/no latency per claim: 10 claims judged against one ~500-token context, as a RAG judge
  does (the first claim pays the context prefill; the others reuse it from the KV cache);
* KV-prefix reuse: the same ~1,000-token prefix twice with different short suffixes.

Configurations: ``default`` (as shipped: ``logits_all=False``, threads = usable cores),
``logits_all`` (``logits_all=True``, what llama-cpp-python's own ``logprobs`` would need) and
``omp_passive`` (default with ``OMP_WAIT_POLICY=PASSIVE``: idle OpenMP threads sleep).
The machine's load average and CPU pressure are recorded before and after each child: on a
shared machine other processes' load slows llama.cpp down a lot (its threads spin-wait).

Usage::

    .venv/bin/python benchmarks/local_model_speed.py          # ~5-15 minutes
    .venv/bin/python benchmarks/local_model_speed.py --quick  # smoke run, short prompts
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _machine import machine_info

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "local_model_speed.json"
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "logits_all": {"logits_all": True},
    "omp_passive": {},
}
"""LocalLlama keyword arguments per configuration."""
VARIANT_ENV: dict[str, dict[str, str]] = {"omp_passive": {"OMP_WAIT_POLICY": "PASSIVE"}}
"""Extra environment per configuration (OpenMP threads sleep instead of spinning)."""

PASSAGE = (
    "Passage {i}. The retrieval system indexed document {i} on topic {t}, which describes how "
    "the committee reviewed the budget, approved {n} projects and postponed the rest until "
    "the next fiscal year because the auditors asked for more detailed cost estimates. "
)
CLAIMS = [
    "The committee approved 3 projects in passage 0.",
    "The auditors asked for more detailed cost estimates.",
    "The committee cancelled every project permanently.",
    "Document 2 was indexed by the retrieval system.",
    "The projects were postponed until the next fiscal year.",
    "The passages are about a football match.",
    "The committee reviewed the budget.",
    "The auditors approved all cost estimates without questions.",
    "Passage 1 mentions topic 1.",
    "The text says nothing about a committee.",
]


def passages(count: int, seed: int) -> str:
    """Deterministic RAG-like filler text (~50 tokens per passage)."""
    return "".join(PASSAGE.format(i=i, t=(i * 7 + seed) % 13, n=3 + i % 5) for i in range(count))


def child(name: str, quick: bool) -> dict[str, Any]:
    """Run every measurement for one configuration; returns a JSON-able dict."""
    from rag_judge.backends.local.local_llama import LocalLlama
    from rag_judge.backends.local.weights import default_model_path
    from rag_judge.backends.types import ChatRequest

    long_n, context_n, n_claims = (4, 2, 3) if quick else (19, 9, len(CLAIMS))
    started = time.perf_counter()
    default_model_path()
    verify_s = time.perf_counter() - started
    backend = LocalLlama(**VARIANTS[name])
    started = time.perf_counter()
    backend.load()
    load_s = time.perf_counter() - started

    cpu: list[float] = []  # process CPU seconds of each timed call (all threads)

    async def timed(request: ChatRequest, yes_no: bool = False) -> tuple[float, Any]:
        began, began_cpu = time.perf_counter(), time.process_time()
        reply: Any = await (
            backend.yes_probability(request) if yes_no else backend.complete(request)
        )
        cpu.append(time.process_time() - began_cpu)
        return time.perf_counter() - began, reply

    async def run() -> dict[str, Any]:
        await timed(ChatRequest.of(("user", "Say hi."), max_tokens=2))  # warm-up
        prefill = []
        for run_id in range(2):  # a different first system token each run: no prefix reuse
            request = ChatRequest.of(
                ("system", f"Run {run_id + 1}. You summarise documents."),
                ("user", passages(long_n, run_id) + "\nSummarise."),
                max_tokens=1,
            )
            seconds, reply = await timed(request)
            tokens = reply.usage.prompt_tokens
            prefill.append(
                {"prompt_tokens": tokens, "s": seconds, "tok_s": tokens / seconds, "cpu_s": cpu[-1]}
            )

        count = ChatRequest.of(
            ("user", "Count from 1 to 300, numbers separated by commas, nothing else."),
            max_tokens=1,
        )
        await timed(count)  # puts the prompt in the KV cache
        seconds, reply = await timed(count.model_copy(update={"max_tokens": 128}))
        generated = reply.usage.completion_tokens
        decode = {"tokens": generated, "s": seconds, "tok_s": generated / seconds, "cpu_s": cpu[-1]}

        context = passages(context_n, 99)
        yes_no = []
        for claim in CLAIMS[:n_claims]:
            request = ChatRequest.of(
                ("system", "You check claims against a context. Answer yes or no."),
                ("user", f"Context:\n{context}\n\nClaim: {claim}\nIs the claim supported?"),
            )
            seconds, reply = await timed(request, yes_no=True)
            yes_no.append({"claim": claim, "p_yes": round(reply.p_yes, 4), "s": seconds})

        prefix = passages(long_n, 42)
        reuse = []
        for question in ("Summarise.", "List the topics."):
            request = ChatRequest.of(
                ("system", "Reuse test."), ("user", f"{prefix}\n{question}"), max_tokens=1
            )
            seconds, reply = await timed(request)
            reuse.append({"prompt_tokens": reply.usage.prompt_tokens, "s": seconds})
        return {"prefill": prefill, "decode": decode, "yes_no": yes_no, "kv_reuse": reuse}

    results = asyncio.run(run())
    warm = [c["s"] for c in results["yes_no"][1:]]
    return {
        "variant": name,
        "env": VARIANT_ENV.get(name, {}),
        "settings": {
            "n_ctx": backend.n_ctx,
            "n_threads": backend.n_threads,
            "logits_all": backend.logits_all,
        },
        "weights_check_s": verify_s,
        "load_s": load_s,
        "prefill_tok_s": statistics.median(p["tok_s"] for p in results["prefill"]),
        "decode_tok_s": results["decode"]["tok_s"],
        "prefill_cpu_ms_per_token": statistics.median(
            1000 * p["cpu_s"] / p["prompt_tokens"] for p in results["prefill"]
        ),
        "decode_cpu_ms_per_token": 1000 * results["decode"]["cpu_s"] / results["decode"]["tokens"],
        "yes_no_first_claim_s": results["yes_no"][0]["s"],
        "yes_no_mean_s": statistics.fmean(c["s"] for c in results["yes_no"]),
        "yes_no_mean_warm_s": statistics.fmean(warm) if warm else None,
        "kv_reuse_first_s": results["kv_reuse"][0]["s"],
        "kv_reuse_second_s": results["kv_reuse"][1]["s"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "details": results,
    }


def machine_load() -> dict[str, Any]:
    """Load average and CPU pressure (PSI) right now: how busy the shared machine is."""
    pressure = None
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
        pressure = float(line.split("avg10=")[1].split()[0])
    except (OSError, IndexError, ValueError):
        pass
    return {"loadavg_1m": round(os.getloadavg()[0], 2), "cpu_pressure_some_avg10": pressure}


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# Local model speed (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, llama-cpp-python)",
        "",
        f"{m['date_utc']} · {m['cpu_model']} · {m['usable_cores']} usable cores · "
        f"{m['memory_gb']} GiB · "
        f"Python {m['python']} · llama-cpp-python {m['llama_cpp_python']}",
        "",
        "| measure | " + " | ".join(r["label"] for r in report["runs"]) + " | design doc |",
        "|---|" + "---|" * len(report["runs"]) + "---|",
    ]
    rows = [
        ("load (s)", "load_s", "{:.1f}", ""),
        ("prefill (tok/s, max_tokens=1)", "prefill_tok_s", "{:.1f}", "54-80"),
        ("decode (tok/s, 128 tokens)", "decode_tok_s", "{:.1f}", "12-15"),
        ("prefill CPU time (ms/token, all threads)", "prefill_cpu_ms_per_token", "{:.0f}", ""),
        ("decode CPU time (ms/token, all threads)", "decode_cpu_ms_per_token", "{:.0f}", ""),
        ("peak RSS (MB)", "peak_rss_mb", "{:.0f}", "~1,900"),
        ("yes/no, first claim (s, pays context prefill)", "yes_no_first_claim_s", "{:.2f}", ""),
        ("yes/no, mean of other claims (s, context reused)", "yes_no_mean_warm_s", "{:.2f}", ""),
        ("yes/no, mean over all claims (s)", "yes_no_mean_s", "{:.2f}", "~1.1"),
        ("KV reuse: 1st prefill of long prefix (s)", "kv_reuse_first_s", "{:.2f}", ""),
        ("KV reuse: 2nd, same prefix (s)", "kv_reuse_second_s", "{:.2f}", ""),
    ]
    for label, key, fmt, doc in rows:
        cells = [fmt.format(r[key]) if r[key] is not None else "-" for r in report["runs"]]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {doc} |")
    for label, key in (
        ("load average during run (mean)", "loadavg_1m_mean"),
        ("CPU pressure during run (mean % some)", "cpu_pressure_mean"),
    ):
        cells = [str(r["machine_load"][key]) for r in report["runs"]]
        lines.append(f"| {label} | " + " | ".join(cells) + " | idle |")
    lines += ["", *comparisons(report["runs"])]
    first = report["runs"][0]["details"]
    lines += [
        "",
        f"Prefill prompt: {first['prefill'][0]['prompt_tokens']} tokens; KV-reuse prompt: "
        f"{first['kv_reuse'][0]['prompt_tokens']} tokens; yes/no: "
        f"{len(first['yes_no'])} claims against one context (the first claim pays its prefill).",
    ]
    lines += ["", report["note"], ""]
    return "\n".join(lines)


def comparisons(runs: list[dict[str, Any]]) -> list[str]:
    """One line per variant: its means over repeats, relative to ``default``."""
    means: dict[str, dict[str, float]] = {}
    keys = ("prefill_tok_s", "decode_tok_s", "peak_rss_mb", "yes_no_mean_warm_s")
    for name in dict.fromkeys(r["variant"] for r in runs):
        mine = [r for r in runs if r["variant"] == name]
        means[name] = {k: statistics.fmean(r[k] for r in mine if r[k] is not None) for k in keys}
    lines = []
    for name, m in means.items():
        line = (
            f"- {name} (mean of {sum(r['variant'] == name for r in runs)}): prefill "
            f"{m['prefill_tok_s']:.1f} tok/s, decode {m['decode_tok_s']:.1f} tok/s, peak RSS "
            f"{m['peak_rss_mb']:.0f} MB, yes/no {m['yes_no_mean_warm_s']:.2f} s/claim "
            "(context reused)"
        )
        if name != "default" and "default" in means:
            base = means["default"]
            line += (
                f"; vs default: prefill {m['prefill_tok_s'] / base['prefill_tok_s'] - 1:+.0%}, "
                f"decode {m['decode_tok_s'] / base['decode_tok_s'] - 1:+.0%}, "
                f"RSS {m['peak_rss_mb'] - base['peak_rss_mb']:+.0f} MB"
            )
        lines.append(line)
    return lines


def run_child(name: str, quick: bool) -> dict[str, Any]:
    """One configuration in a fresh process, sampling the machine's load every 5 s meanwhile."""
    command = [sys.executable, __file__, "--child", name] + (["--quick"] if quick else [])
    env = os.environ | VARIANT_ENV.get(name, {})
    samples = [machine_load()]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as process:
        while True:
            try:
                out, err = process.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                samples.append(machine_load())
    if process.returncode != 0:
        raise RuntimeError(f"child {name} failed:\n{err}")
    run: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    pressure = [s["cpu_pressure_some_avg10"] for s in samples if s["cpu_pressure_some_avg10"]]
    run["machine_load"] = {
        "loadavg_1m_mean": round(statistics.fmean(s["loadavg_1m"] for s in samples), 2),
        "cpu_pressure_mean": round(statistics.fmean(pressure), 1) if pressure else None,
        "cpu_pressure_max": max(pressure) if pressure else None,
        "samples": len(samples),
    }
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=sorted(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="short prompts, 3 claims")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--repeat", type=int, default=1, help="runs per variant, interleaved")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.quick)))
        return
    runs = []
    for repeat in range(1, args.repeat + 1):  # interleaved, so load changes hit every variant
        for name in args.variants:
            run = run_child(name, args.quick)
            run["label"] = name if args.repeat == 1 else f"{name} #{repeat}"
            runs.append(run)
            print(
                f"{run['label']}: " + json.dumps({k: v for k, v in run.items() if k != "details"})
            )
    report = {
        "machine": machine_info("llama-cpp-python"),
        "quick": args.quick,
        "runs": runs,
        "note": (
            "Wall-clock seconds through LocalLlama (asyncio.to_thread + lock), temperature 0. "
            "Peak RSS is ru_maxrss of the child process. With load average above the core "
            "count the numbers are lower bounds on what an idle machine gives."
        ),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
