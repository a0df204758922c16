"""`sweep --dry-run` against the real run: predicted vs measured calls, tokens and minutes.

The plan is made as the CLI makes it (:func:`rag_judge.jobs.sweep.dry_run.dry_run_job`, which
measures this machine's prefill and decode rates), then the same sweep runs for real with a
fresh response cache (the client's ledger counts the calls and tokens, a clock the minutes),
back to back in one process, and both are written side by side.

    python benchmarks/dry_run_accuracy.py local [--set cmrc2018_zh_chunked] [--limit 20]

``local`` is the demo's job (the embedded model, the demo's judges, reasons on). ``demo`` plans
the demo's job and compares it with a finished ``make demo`` (its folder and its wall time: the
ledger's calls and tokens are read from its summary.md):

    python benchmarks/dry_run_accuracy.py demo --run-dir sweep_demo --seconds 701

Writes ``results/dry_run_accuracy.{json,md}`` (one section per run, keyed by its command).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _machine import machine_info

HERE = Path(__file__).parent
RESULTS = HERE / "results"
DEMO_METRICS = ("faithfulness", "completeness", "exact_match", "answer_f1")


def _plan(name: str, limit: int, ks: str, metrics: Sequence[str]) -> tuple[Any, Any, float]:
    """The sweep's options and its plan (made as the CLI makes it), and the plan's seconds."""
    from rag_judge.data.eval_sets import load_eval_set
    from rag_judge.jobs.sweep import SweepOptions
    from rag_judge.jobs.sweep.dry_run import dry_run_job
    from rag_judge.runtime.session import open_session
    from rag_judge.runtime.settings import load_settings

    options = SweepOptions.build(ks=ks, limit=limit, metrics=tuple(metrics))
    loaded = load_eval_set(name).limit(limit)
    started = time.perf_counter()
    plan = asyncio.run(dry_run_job(loaded, open_session(load_settings(), cache=False), options))
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
    from rag_judge.jobs.sweep import run_job

    with tempfile.TemporaryDirectory(prefix="dry_run_accuracy_") as cache:
        os.environ["RAG_JUDGE_CACHE_DIR"] = cache
        options, plan, plan_seconds = _plan(name, limit, ks, metrics)
        started = time.perf_counter()
        result = run_job(name, options=options)
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


LEDGER = re.compile(
    r"(?P<calls>[\d,]+) calls made.*?; (?P<prompt>[\d,]+) prompt \+ (?P<completion>[\d,]+) "
    r"completion tokens"
)
"""summary.md's ledger line per model (the CLI writes no machine-readable ledger)."""


def compare_demo(
    run_dir: Path, seconds: float, limit: int, metrics: Sequence[str]
) -> dict[str, Any]:
    """The demo's plan, made now, against a finished demo's ledger (its summary.md) and time."""
    name = "cmrc2018_zh_chunked"
    _, plan, plan_seconds = _plan(name, limit, "1-10", metrics)
    text = (run_dir / "summary.md").read_text(encoding="utf-8")
    found = [m.groupdict() for m in LEDGER.finditer(text)]
    if not found:
        raise SystemExit(f"{run_dir / 'summary.md'} has no ledger line")
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


def render(payload: dict[str, Any]) -> str:
    lines = [
        "# `sweep --dry-run` against the real run",
        "",
        "Written by `benchmarks/dry_run_accuracy.py`: the plan, against the same sweep run with "
        "a fresh response cache (`local`: back to back in one process; `demo`: a finished "
        "`make demo` from a fresh clone, planned right after it on the same machine).",
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
        for key in ("calls", "prompt_tokens", "completion_tokens", "minutes"):
            p, m, r = run["predicted"][key], run["measured"][key], run["ratio"][key]
            fmt = "{:,.1f}" if key == "minutes" else "{:,.0f}"
            lines.append(
                f"| {key.replace('_', ' ')} | {'' if p is None else fmt.format(p)} "
                f"| {fmt.format(m)} | {'' if r is None else f'{r:.2f}'} |"
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
    demo = commands.add_parser("demo", help="the plan against a finished make demo")
    demo.add_argument("--run-dir", type=Path, required=True)
    demo.add_argument("--seconds", type=float, required=True, help="the job's wall time")
    demo.add_argument("--limit", type=int, default=20)
    demo.add_argument("--metrics", default=",".join(DEMO_METRICS))
    args = parser.parse_args(argv)
    if args.command == "demo":
        run = compare_demo(args.run_dir, args.seconds, args.limit, args.metrics.split(","))
    else:
        run = measure_local(args.set, args.limit, args.ks, args.metrics.split(","))
    run["machine"] = machine_info("llama-cpp-python")
    path = RESULTS / "dry_run_accuracy.json"
    payload = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": {}}
    payload["runs"][run["command"]] = run
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (RESULTS / "dry_run_accuracy.md").write_text(render(payload), encoding="utf-8")
    print(render(payload))


if __name__ == "__main__":
    main()
