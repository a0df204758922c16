"""Past one process: Ray workers against one process, and the batch path's stages.

Three measurements, each side by side in the same run (``benchmarks/results/scale_out.md``):

1. **Ray against one process on a server with 200 ms latency** (the fake OpenAI server in its
   own process, replying like a judge): ``faithfulness`` in generate mode (claims, then one
   verification) on ``--rows`` rows, one process at concurrency 32 against 2 Ray workers at 16
   each on a local cluster started beforehand (``ray.init(num_cpus=2)``). Rows per second, and
   Ray's overhead per row: (Ray's wall time - one process's) / rows, the cost of slicing,
   shipping rows and results, and each task opening its own session.
2. **The embedded model**: the same 20 WiCE rows (scoring path) in one process with 2 threads
   against 2 Ray workers with 1 thread each (``threads`` setting), model loads included.
3. **The batch path** on the fake Batch API (``tests/support/fake_batch_server.py``): the default
   judges on 20 rows: stages, requests per stage, and a re-run that submits nothing.

Usage::

    .venv/bin/python benchmarks/scale_out.py [--rows 400] [--skip-local]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import machine_info

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

from rag_judge.core.types import RagSample  # noqa: E402
from rag_judge.data.calibration_sets import load_calibration_set  # noqa: E402
from rag_judge.jobs.score.job import ScoreRun, score_job  # noqa: E402
from rag_judge.jobs.score.options import ScoreOptions  # noqa: E402
from rag_judge.jobs.score.result import EvaluationResult  # noqa: E402
from rag_judge.jobs.score.run import aevaluate  # noqa: E402
from rag_judge.runtime.executors import Batch, OnRay  # noqa: E402
from rag_judge.runtime.executors.on_ray import RayTarget  # noqa: E402
from rag_judge.runtime.session import open_session  # noqa: E402
from rag_judge.runtime.settings import Settings, load_settings  # noqa: E402

OUT = Path(__file__).parent / "results"


def evaluate_on_ray(
    samples: list[RagSample],
    metrics: list[str],
    *,
    settings: Settings,
    target: RayTarget,
    mode: Any = None,
    cache: bool = True,
) -> EvaluationResult:
    """The score job over Ray, as ``rag-judge score --executor ray`` runs it."""
    session = open_session(settings, cache=cache)
    options = ScoreOptions(metrics=tuple(metrics), mode=mode)
    return asyncio.run(score_job(samples, session, options, executor=OnRay(target))).result


async def aevaluate_batched(
    samples: list[RagSample],
    metrics: list[str] | None,
    *,
    settings: Settings,
    state_path: Path,
    poll_seconds: float,
) -> ScoreRun:
    """The score job through the Batch API, as ``rag-judge score --batch`` runs it."""
    options = ScoreOptions(metrics=tuple(metrics)) if metrics else ScoreOptions()
    executor = Batch(state_path, poll_seconds=poll_seconds)
    return await score_job(samples, open_session(settings), options, executor=executor)


LATENCY = 0.2
REPEATS = 3


def rows(n: int) -> list[RagSample]:
    return [
        RagSample(
            id=f"r{i}",
            question=f"When was building {i} built?",
            contexts=(f"Building {i} was built in {1800 + i % 200}.",),
            answer=f"It was built in {1800 + i % 200}.",
            reference=f"{1800 + i % 200}.",
        )
        for i in range(n)
    ]


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "tests" / "support" / "fake_openai_server.py"),
            "--judge",
            "--latency",
            str(latency),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    port = server.stdout.readline().split()[1]
    return server, f"http://127.0.0.1:{port}/v1"


def server_settings(base_url: str, concurrency: int, cache: Path) -> Any:
    chosen = {
        "model": "openai-compatible/m",
        "base_url": base_url,
        "concurrency": concurrency,
        "cache_dir": cache,
    }
    return load_settings(chosen, env={})


def ray_against_one_process(n: int) -> dict[str, Any]:
    import ray

    server, base_url = start_server(LATENCY)
    samples = rows(n)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    runs: dict[str, list[float]] = {"one process x 32": [], "2 Ray workers x 16": []}
    try:
        # Warm the workers (imports, first session) so each timed run pays only its own work.
        with tempfile.TemporaryDirectory() as warm:
            evaluate_on_ray(
                samples[:8],
                ["faithfulness"],
                settings=server_settings(base_url, 16, Path(warm)),
                target=RayTarget(None, 2),
                mode="generate",
                cache=False,
            )
        for _ in range(REPEATS):
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                asyncio.run(
                    aevaluate(
                        samples,
                        ["faithfulness"],
                        settings=server_settings(base_url, 32, Path(tmp)),
                        mode="generate",
                        cache=False,
                    )
                )
                runs["one process x 32"].append(time.perf_counter() - started)
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                evaluate_on_ray(
                    samples,
                    ["faithfulness"],
                    settings=server_settings(base_url, 16, Path(tmp)),
                    target=RayTarget(None, 2),
                    mode="generate",
                    cache=False,
                )
                runs["2 Ray workers x 16"].append(time.perf_counter() - started)
    finally:
        ray.shutdown()
        server.terminate()
    medians = {name: statistics.median(times) for name, times in runs.items()}
    local, distributed = medians["one process x 32"], medians["2 Ray workers x 16"]
    return {
        "rows": n,
        "calls": 2 * n,
        "latency_s": LATENCY,
        "seconds": runs,
        "rows_per_second": {name: n / t for name, t in medians.items()},
        "ideal_rows_per_second": 32 / (2 * LATENCY),
        "ray_overhead_ms_per_row": 1000 * (distributed - local) / n,
    }


CONTROL_ROWS = 5
"""Rows judged again in one process with 1 thread: Ray's values must be exactly these."""


def embedded_model(n: int = 20) -> dict[str, Any]:
    import ray

    samples = list(load_calibration_set("wice_dev").samples[:n])
    out: dict[str, Any] = {"rows": n, "seconds": {}}
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({"cache_dir": Path(tmp) / "a", "threads": 2}, env={})
        started = time.perf_counter()
        one = asyncio.run(aevaluate(samples, ["faithfulness"], settings=settings, cache=False))
        out["seconds"]["one process, 2 threads"] = time.perf_counter() - started
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            settings = load_settings({"cache_dir": Path(tmp) / "b", "threads": 1}, env={})
            started = time.perf_counter()
            two = evaluate_on_ray(
                samples, ["faithfulness"], settings=settings, target=RayTarget(None, 2), cache=False
            )
            out["seconds"]["2 Ray workers, 1 thread each"] = time.perf_counter() - started
        finally:
            ray.shutdown()
        # The control: one process with 1 thread, as each worker had, on the first rows.
        settings = load_settings({"cache_dir": Path(tmp) / "c", "threads": 1}, env={})
        control = asyncio.run(
            aevaluate(samples[:CONTROL_ROWS], ["faithfulness"], settings=settings, cache=False)
        )
    out["control_same_as_ray"] = [s.results["faithfulness"].value for s in control.samples] == [
        s.results["faithfulness"].value for s in two.samples[:CONTROL_ROWS]
    ]
    here = [s.results["faithfulness"].value for s in one.samples]
    there = [s.results["faithfulness"].value for s in two.samples]
    out["same_values"] = here == there
    # llama.cpp sums in another order with another thread count: how far apart, and does any
    # row change side of the 0.5 threshold?
    pairs = [(a, b) for a, b in zip(here, there, strict=True) if a is not None and b is not None]
    out["rows_differing"] = sum(a != b for a, b in pairs)
    out["max_abs_difference"] = max((abs(a - b) for a, b in pairs), default=0.0)
    out["verdicts_flipped"] = sum((a >= 0.5) != (b >= 0.5) for a, b in pairs)
    out["unscored"] = [here.count(None), there.count(None)]
    return out


def batch_path(n: int = 20) -> dict[str, Any]:
    from fake_batch_server import FakeBatchServer
    from fake_openai_server import judge_reply

    from rag_judge.runtime.executors.batched import state_path_for

    server = FakeBatchServer().start()
    server.chat.respond = judge_reply
    server.polls_before_done = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings = load_settings(
                {
                    "model": "openai-compatible/m",
                    "base_url": server.base_url,
                    "cache_dir": Path(tmp),
                },
                env={},
            )
            state = state_path_for(Path(tmp) / "out.jsonl")
            first = asyncio.run(
                aevaluate_batched(
                    rows(n), None, settings=settings, state_path=state, poll_seconds=0.01
                )
            )
            submitted = len(server.submitted)
            again = asyncio.run(
                aevaluate_batched(
                    rows(n), None, settings=settings, state_path=state, poll_seconds=0.01
                )
            )
    finally:
        server.stop()
    return {
        "rows": n,
        "metrics": first.result.metrics,
        "stages": [
            {"requests": s.requests, "answered": s.answered, "sent_live": s.sent_live}
            for s in first.stages
        ],
        "requests": sum(s.requests for s in first.stages),
        "rerun_stages": len(again.stages),
        "rerun_new_batches": len(server.submitted) - submitted,
        "live_calls": server.live_calls,
        "all_ok": all(r.status == "ok" for s in first.result.samples for r in s.results.values()),
    }


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    a = result["ray_vs_one_process"]
    lines = [
        "# Past one process: Ray workers and the batch path",
        "",
        f"{m['cpu_model']}, {m['usable_cores']} cores, {m['memory_gb']} GB, Python {m['python']}, "
        f"ray {m['ray']}; load average at start {m['load_average_at_start']}; {m['date_utc']}.",
        "",
        f"## Ray against one process (fake server, {a['latency_s'] * 1000:.0f} ms a call, "
        f"{a['rows']} rows, {a['calls']} calls; median of {REPEATS})",
        "",
        "| how | rows/s | seconds (each run) |",
        "|---|---:|---|",
    ]
    for name, times in a["seconds"].items():
        each = ", ".join(f"{t:.2f}" for t in times)
        lines.append(f"| {name} | {a['rows_per_second'][name]:.1f} | {each} |")
    lines += [
        "",
        f"Ideal at 32 calls in flight: {a['ideal_rows_per_second']:.0f} rows/s. Ray's overhead: "
        f"{a['ray_overhead_ms_per_row']:.2f} ms per row (goal: under 5 ms).",
        "",
    ]
    if "embedded_model" in result:
        e = result["embedded_model"]
        lines += [
            f"## The embedded model ({e['rows']} WiCE rows, scoring path, model loads included)",
            "",
            "| how | seconds |",
            "|---|---:|",
        ]
        lines += [f"| {k} | {v:.1f} |" for k, v in e["seconds"].items()]
        same = e["same_values"]
        why = (
            "The control, one process with 1 thread on the first "
            f"{CONTROL_ROWS} rows, gives exactly Ray's values: "
        )
        if e["control_same_as_ray"]:
            why += (
                "True, so the difference is the number of threads (llama.cpp adds up in "
                "another order with another number of threads)."
            )
        else:
            why += (
                "False, so the thread count alone does not explain it: one process and a worker "
                "also differ in what the model has read before (its cache of earlier prompts), "
                "and this run does not separate the two."
            )
        lines += [
            "",
            f"Same values both ways: {same} ({e['rows_differing']} of {e['rows']} rows differ, "
            f"by at most {e['max_abs_difference']:.2g}; verdicts at 0.5 flipped: "
            f"{e['verdicts_flipped']}). {why}"
            if not same
            else "Same values both ways: True.",
            "",
        ]
    b = result["batch_path"]
    lines += [
        f"## The batch path (fake Batch API, default judges {', '.join(b['metrics'])}, "
        f"{b['rows']} rows)",
        "",
        "| stage | requests | answered by the batch | sent live |",
        "|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {i + 1} | {s['requests']} | {s['answered']} | {s['sent_live']} |"
        for i, s in enumerate(b["stages"])
    ]
    lines += [
        "",
        f"{b['requests']} requests in {len(b['stages'])} stages, every result ok: {b['all_ok']}; "
        f"a re-run made {b['rerun_stages']} stages and submitted {b['rerun_new_batches']} batches.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--skip-local", action="store_true", help="skip the embedded-model part")
    parser.add_argument(
        "--render", action="store_true", help="rewrite scale_out.md from scale_out.json, no run"
    )
    args = parser.parse_args()
    if args.render:
        saved = json.loads((OUT / "scale_out.json").read_text(encoding="utf-8"))
        (OUT / "scale_out.md").write_text(markdown(saved), encoding="utf-8")
        return
    result: dict[str, Any] = {"machine": machine_info("ray", "llama-cpp-python")}
    result["ray_vs_one_process"] = ray_against_one_process(args.rows)
    if not args.skip_local:
        result["embedded_model"] = embedded_model()
    result["batch_path"] = batch_path()
    OUT.mkdir(exist_ok=True)
    (OUT / "scale_out.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (OUT / "scale_out.md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))


if __name__ == "__main__":
    main()
