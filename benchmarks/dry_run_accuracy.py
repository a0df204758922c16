"""`sweep --dry-run` against the real run: predicted vs measured calls, tokens and minutes.

The plan is made as the CLI makes it (:func:`rag_judge.jobs.sweep.dry_run.dry_run_job`, which
measures this machine's prefill and decode rates), then the same sweep runs for real with a
fresh response cache (the client's ledger counts the calls and tokens, a clock the minutes),
back to back in one process, and both are written side by side.

    python benchmarks/dry_run_accuracy.py local [--set cmrc2018_zh_chunked] [--limit 20]

``local`` is the demo's job (the embedded model, the demo's judges, reasons on). ``api`` is the
same job judged and answered by a priced API model name (``openai/gpt-4o-mini``, cost from the
ledger's price table) served by llama-cpp-python's own OpenAI-compatible server (the embedded
GGUF behind ``OPENAI_BASE_URL``): the plan counts tokens by script, as for any API model whose
tokenizer is not at hand, and the server reports its tokenizer's counts, as an API bills::

    python benchmarks/dry_run_accuracy.py api [--limit 2]

``demo`` plans
the demo's job and compares it with a finished ``make demo`` (its folder and its wall time: the
ledger's calls and tokens are read from its summary.md):

    python benchmarks/dry_run_accuracy.py demo --run-dir sweep_demo --seconds 701

``plan`` only plans the demo's job on this machine (no answer made), to show how long it
would take here: each machine's plan is kept beside the others, with its measured speed::

    python benchmarks/dry_run_accuracy.py plan

Writes ``results/dry_run_accuracy.{json,md}`` (one section per run, keyed by its command; the
plans in ``plans``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _machine import machine_info

HERE = Path(__file__).parent
RESULTS = HERE / "results"
DEMO_METRICS = ("faithfulness", "completeness", "exact_match", "answer_f1")


def _plan(
    name: str, limit: int, ks: str, metrics: Sequence[str], model: str | None = None
) -> tuple[Any, Any, float]:
    """The sweep's options and its plan (made as the CLI makes it), and the plan's seconds."""
    from rag_judge.data.eval_sets import load_eval_set
    from rag_judge.jobs.sweep import SweepOptions
    from rag_judge.jobs.sweep.dry_run import dry_run_job
    from rag_judge.runtime.session import open_session
    from rag_judge.runtime.settings import load_settings

    options = SweepOptions.build(ks=ks, limit=limit, metrics=tuple(metrics))
    loaded = load_eval_set(name).limit(limit)
    started = time.perf_counter()
    settings = load_settings({"model": model})
    plan = asyncio.run(dry_run_job(loaded, open_session(settings, cache=False), options))
    return options, plan, time.perf_counter() - started


def _side_by_side(
    command: str, plan: Any, plan_seconds: float, measured: dict[str, float], decision: Any
) -> dict[str, Any]:
    """One run's record: the plan's figures, the measured ones and their ratios."""
    predicted = {
        "calls": plan.plan.calls,
        "prompt_tokens": plan.plan.prompt_tokens,
        "completion_tokens": plan.plan.completion_tokens,
        "minutes": plan.plan.minutes,
        "cost_usd": plan.plan.cost_usd,
    }
    return {
        "command": command,
        "plan_seconds": round(plan_seconds, 1),
        "speed": {"prefill": plan.speed.prefill, "decode": plan.speed.decode}
        if plan.speed
        else None,
        "read_tokens_predicted": plan.plan.read_tokens,
        "predicted": predicted,
        "measured": measured,
        "ratio": {
            key: (predicted[key] / measured[key]) if predicted[key] and measured[key] else None
            for key in measured
        },
        "decision": decision,
    }


def measure_local(name: str, limit: int, ks: str, metrics: Sequence[str]) -> dict[str, Any]:
    """The plan, then the real sweep with a fresh cache, on the embedded model."""
    from rag_judge.jobs.sweep import sweep

    with tempfile.TemporaryDirectory(prefix="dry_run_accuracy_") as cache:
        os.environ["RAG_JUDGE_CACHE_DIR"] = cache
        options, plan, plan_seconds = _plan(name, limit, ks, metrics)
        started = time.perf_counter()
        result = sweep(name, options=options)
        seconds = time.perf_counter() - started
    assert result.ledger is not None
    tallies = result.ledger.summary()
    measured = {
        "calls": sum(t["calls"] for t in tallies.values()),
        "prompt_tokens": sum(t["prompt_tokens"] for t in tallies.values()),
        "completion_tokens": sum(t["completion_tokens"] for t in tallies.values()),
        "minutes": seconds / 60,
    }
    command = f"sweep {name} --limit {limit} --ks {ks} --metrics {','.join(metrics)}"
    headline = result.decision.headline if result.decision else None
    return _side_by_side(command, plan, plan_seconds, measured, headline)


def measure_api(limit: int, ks: str, metrics: Sequence[str]) -> dict[str, Any]:
    """The plan and the real sweep for a priced API model name, answered by a real
    OpenAI-compatible server (llama-cpp-python's, over the embedded GGUF)."""
    import subprocess
    import sys

    from rag_judge.backends.local.llama_server import wait_until_serving
    from rag_judge.backends.wrapper.ledger import price_per_token
    from rag_judge.jobs.sweep import sweep

    model, name = "openai/gpt-4o-mini", "cmrc2018_zh_chunked"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    serve = [sys.executable, "-m", "rag_judge.backends.local.llama_server", "--port", str(port)]
    serve += ["--n_threads", str(len(os.sched_getaffinity(0)))]
    server = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_serving(base_url, server, 180.0)
        os.environ |= {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "local", "NO_PROXY": "*"}
        with tempfile.TemporaryDirectory(prefix="dry_run_accuracy_") as cache:
            os.environ["RAG_JUDGE_CACHE_DIR"] = cache
            options, plan, plan_seconds = _plan(name, limit, ks, metrics, model=model)
            started = time.perf_counter()
            result = sweep(name, options=options, model=model)
            seconds = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert result.ledger is not None
    tallies = result.ledger.summary()
    prompt = sum(t["prompt_tokens"] for t in tallies.values())
    completion = sum(t["completion_tokens"] for t in tallies.values())
    price = price_per_token(model)
    assert price is not None, f"{model} has no price in the ledger's table"
    measured = {
        "calls": sum(t["calls"] for t in tallies.values()),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost_usd": prompt * price[0] + completion * price[1],
        "minutes": seconds / 60,
    }
    command = (f"sweep {name} --limit {limit} --ks {ks} --metrics {','.join(metrics)} "
               f"--model {model} (llama-cpp-python's server behind OPENAI_BASE_URL)")  # fmt: skip
    headline = result.decision.headline if result.decision else None
    return _side_by_side(command, plan, plan_seconds, measured, headline)


LEDGER = re.compile(
    r"(?P<calls>[\d,]+) calls made.*?; (?P<prompt>[\d,]+) prompt \+ (?P<completion>[\d,]+) "
    r"completion tokens"
)
"""summary.md's ledger line per model (for a demo run before the sweep wrote ledger.json)."""


def compare_demo(
    run_dir: Path, seconds: float, limit: int, metrics: Sequence[str]
) -> dict[str, Any]:
    """The demo's plan, made now, against a finished demo's ledger (its summary.md) and time."""
    name = "cmrc2018_zh_chunked"
    _, plan, plan_seconds = _plan(name, limit, "1-10", metrics)
    ledger = run_dir / "ledger.json"
    if ledger.is_file():  # the sweep's own machine-readable ledger
        models = json.loads(ledger.read_text(encoding="utf-8"))["models"].values()
        found = [
            {"calls": str(m["calls"]), "prompt": str(m["prompt_tokens"]),
             "completion": str(m["completion_tokens"])}
            for m in models
        ]  # fmt: skip
    else:  # a demo from before ledger.json: summary.md's ledger lines
        text = (run_dir / "summary.md").read_text(encoding="utf-8")
        found = [m.groupdict() for m in LEDGER.finditer(text)]
    if not found:
        raise SystemExit(f"{run_dir} has no ledger (ledger.json or summary.md's lines)")
    measured = {
        "calls": sum(int(f["calls"].replace(",", "")) for f in found),
        "prompt_tokens": sum(int(f["prompt"].replace(",", "")) for f in found),
        "completion_tokens": sum(int(f["completion"].replace(",", "")) for f in found),
        "minutes": seconds / 60,
    }
    decision = json.loads((run_dir / "decision.json").read_text(encoding="utf-8"))
    command = (f"make demo (sweep {name} --limit {limit} --ks 1-10 --metrics "
               f"{','.join(metrics)}; wall time of the job from the shell)")  # fmt: skip
    return _side_by_side(command, plan, plan_seconds, measured, decision.get("decision"))


def plan_here(limit: int, metrics: Sequence[str]) -> dict[str, Any]:
    """The demo's job planned on this machine: its measured speed and the plan's minutes."""
    _, plan, seconds = _plan("cmrc2018_zh_chunked", limit, "1-10", metrics)
    assert plan.speed is not None  # the embedded model is timed here
    return {
        "command": f"make demo's job, --limit {limit}",
        "speed": {"prefill": round(plan.speed.prefill, 1), "decode": round(plan.speed.decode, 1)},
        "minutes": round(plan.plan.minutes, 1),
        "calls": plan.plan.calls,
        "prompt_tokens": plan.plan.prompt_tokens,
        "plan_seconds": round(seconds, 1),
        "machine": machine_info("llama-cpp-python"),
    }


def render(payload: dict[str, Any]) -> str:
    lines = [
        "# `sweep --dry-run` against the real run",
        "",
        "Written by `benchmarks/dry_run_accuracy.py`: the plan, against the same sweep run with "
        "a fresh response cache (`local`: back to back in one process; `demo`: a finished "
        "demo job (`make demo`, or the after run `demo_before_after.py --keep` kept), planned "
        "right after it on the same machine).",
        "",
    ]
    for run in payload["runs"].values():
        machine = run["machine"]
        lines += [
            f"## `{run['command']}`",
            "",
            f"{machine['cpu_model']}, {machine['logical_cores']} cores; the plan took "
            f"{run['plan_seconds']} s"
            + (
                f" (measured prefill {run['speed']['prefill']:.0f} tokens/s, decode "
                f"{run['speed']['decode']:.1f} tokens/s)"
                if run["speed"]
                else ""
            )
            + f". The run decided: {run['decision']}.",
            "",
            "| | predicted | measured | predicted / measured |",
            "|---|---:|---:|---:|",
        ]
        for key in ("calls", "prompt_tokens", "completion_tokens", "minutes", "cost_usd"):
            if key not in run["measured"]:
                continue
            p, m, r = run["predicted"].get(key), run["measured"][key], run["ratio"][key]
            fmt = {"minutes": "{:,.1f}", "cost_usd": "{:,.4f}"}.get(key, "{:,.0f}")
            lines.append(
                f"| {key.replace('_', ' ')} | {'' if p is None else fmt.format(p)} "
                f"| {fmt.format(m)} | {'' if r is None else f'{r:.2f}'} |"
            )
        lines.append("")
    if payload.get("plans"):
        lines += [
            "## The demo's job planned on other machines",
            "",
            "| date (UTC) | CPU | prefill tokens/s | decode tokens/s | planned minutes |",
            "|---|---|---:|---:|---:|",
        ]
        for plan in payload["plans"]:
            lines.append(
                f"| {plan['machine']['date_utc'][:16]} | {plan['machine']['cpu_model']} "
                f"| {plan['speed']['prefill']:.1f} | {plan['speed']['decode']:.1f} "
                f"| {plan['minutes']:.1f} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    local = commands.add_parser("local", help="the embedded model (the demo's job)")
    local.add_argument("--set", default="cmrc2018_zh_chunked")
    local.add_argument("--limit", type=int, default=20)
    local.add_argument("--ks", default="1-10")
    local.add_argument("--metrics", default=",".join(DEMO_METRICS))
    api = commands.add_parser("api", help="a priced API model name, a real server behind it")
    api.add_argument("--limit", type=int, default=2)
    api.add_argument("--ks", default="1-10")
    api.add_argument("--metrics", default=",".join(DEMO_METRICS))
    demo = commands.add_parser("demo", help="the plan against a finished make demo")
    demo.add_argument("--run-dir", type=Path, required=True)
    demo.add_argument("--seconds", type=float, required=True, help="the job's wall time")
    demo.add_argument("--limit", type=int, default=20)
    demo.add_argument("--metrics", default=",".join(DEMO_METRICS))
    here = commands.add_parser("plan", help="only plan the demo's job on this machine")
    here.add_argument("--limit", type=int, default=20)
    here.add_argument("--metrics", default=",".join(DEMO_METRICS))
    args = parser.parse_args(argv)
    path = RESULTS / "dry_run_accuracy.json"
    payload = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": {}}
    if args.command == "plan":
        payload.setdefault("plans", []).append(plan_here(args.limit, args.metrics.split(",")))
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        (RESULTS / "dry_run_accuracy.md").write_text(render(payload), encoding="utf-8")
        print(render(payload))
        return
    if args.command == "demo":
        run = compare_demo(args.run_dir, args.seconds, args.limit, args.metrics.split(","))
    elif args.command == "api":
        run = measure_api(args.limit, args.ks, args.metrics.split(","))
    else:
        run = measure_local(args.set, args.limit, args.ks, args.metrics.split(","))
    run["machine"] = machine_info("llama-cpp-python")
    payload["runs"][run["command"]] = run
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (RESULTS / "dry_run_accuracy.md").write_text(render(payload), encoding="utf-8")
    print(render(payload))


if __name__ == "__main__":
    main()
