"""Speed and memory of rag_judge's retrieval metrics against pytrec_eval and ranx.

One synthetic, seeded workload (default 10,000 queries x 1,000 ranked documents, graded
qrels 0-3) is scored by all three tools from the same in-memory Python dicts:

* rag_judge: ``evaluate(qrels, run, measures)`` -> EvalResult (per-query arrays);
* pytrec_eval: ``RelevanceEvaluator(qrels, measures)`` + ``.evaluate(run)`` -> per-query dict;
* ranx: ``Qrels(qrels)`` + ``Run(run)`` + ``evaluate(..., return_mean=False)`` -> per-query
  arrays; numba JIT compilation (a first call on a tiny input) is reported apart from the warm
  run, and a genuinely cold full-size call is timed in a fresh process with an empty numba cache.

Peak memory is measured per tool in a fresh child process of this script (``--only TOOL``):
the child builds the same workload, then reports the extra peak RSS of one tool call (VmHWM
reset through /proc/self/clear_refs, so C and numba allocations count) and its
``resource.getrusage`` maxrss.

Usage::

    .venv/bin/python benchmarks/retrieval_speed.py            # full size, 20-30 min on 2 cores
    .venv/bin/python benchmarks/retrieval_speed.py --quick    # 1,000 x 100, ~5 min (mostly JIT)
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _machine import machine_info, version

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
PerQuery = dict[str, dict[str, float]]  # measure -> {qid: value}

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUT = HERE / "results" / "retrieval_speed.json"
ID_SPACE = 10_000_000  # doc ids "d0000000" .. "d9999999" (fixed width, see make_workload)
TOLERANCE = 1e-9

#: rag_judge name -> (pytrec_eval output key, ranx metric name)
MEASURES: dict[str, tuple[str, str]] = {
    "map": ("map", "map"),
    "mrr": ("recip_rank", "mrr"),
    "rprec": ("Rprec", "r-precision"),
    "ndcg": ("ndcg", "ndcg"),
    "ndcg@10": ("ndcg_cut_10", "ndcg@10"),
    "precision@5": ("P_5", "precision@5"),
    "precision@10": ("P_10", "precision@10"),
    "recall@100": ("recall_100", "recall@100"),
    "recall@1000": ("recall_1000", "recall@1000"),
    "hit_rate@1": ("success_1", "hit_rate@1"),
    "hit_rate@5": ("success_5", "hit_rate@5"),
    "hit_rate@10": ("success_10", "hit_rate@10"),
    "map@100": ("map_cut_100", "map@100"),
}
#: What pytrec_eval is asked for (trec_eval's "measure.cutoffs" request syntax).
PYTREC_REQUEST = frozenset(
    {
        "map",
        "recip_rank",
        "Rprec",
        "ndcg",
        "ndcg_cut.10",
        "P.5,10",
        "recall.100,1000",
        "success.1,5,10",
        "map_cut.100",
    }
)
TOOLS = ("rag_judge", "pytrec_eval", "ranx")
#: Child processes: one per tool, plus ranx straight into the full workload (no tiny warm-up).
CHILDREN = (*TOOLS, "ranx_cold")


# --------------------------------------------------------------------------- workload
@dataclass
class Workload:
    """Qrels and run as plain Python dicts (str ids, int grades, float scores)."""

    qrels: Qrels
    run: Run
    stats: dict[str, float] = field(default_factory=dict)


def make_workload(n_queries: int, depth: int, seed: int) -> Workload:
    """Build a deterministic qrels/run pair that looks like a real dense/BM25 run.

    Per query: ``depth`` distinct retrieved documents with float scores rounded to 3 decimals
    (so some scores tie), and 50-200 judged documents, 30-90% of them (at most depth/2) among
    the retrieved ones, placed preferentially near the top; grades 0-3, relevant grades more
    likely near the top. 1% of the queries have only grade-0 judgements (no relevant document),
    as happens in real qrels. The run dicts are in shuffled order, so every tool has to sort.
    """
    rng = np.random.default_rng(seed)
    rank_weight = 1.0 / np.sqrt(np.arange(depth, dtype=np.float64) + 5.0)
    rank_weight /= rank_weight.sum()
    qrels: Qrels = {}
    run: Run = {}
    judged_total = relevant_total = judged_in_run_total = tied_docs = no_relevant = 0
    for q in range(n_queries):
        qid = f"q{q:05d}"
        n_judged = int(rng.integers(50, 201))
        in_run = min(round(float(rng.uniform(0.3, 0.9)) * n_judged), depth // 2)
        n_out = n_judged - in_run
        docs = _distinct_ids(rng, depth + n_out)
        retrieved, outside = docs[:depth], docs[depth:]
        # Scores: sorted descending so that position = rank (up to ties), rounded -> ties.
        scores = np.round(np.sort(rng.gamma(2.0, 2.0, size=depth))[::-1], 3)
        tied_docs += depth - len(np.unique(scores)) + _tie_groups(scores)
        # Judged retrieved documents, biased to the top; relevance more likely near the top.
        positions = rng.choice(depth, size=in_run, replace=False, p=rank_weight)
        p_relevant = 0.8 - 0.6 * positions / depth
        relevant = rng.random(in_run) < p_relevant
        grades_in = np.where(relevant, rng.choice([1, 2, 3], size=in_run, p=[0.5, 0.3, 0.2]), 0)
        grades_out = rng.choice([0, 1, 2, 3], size=n_out, p=[0.45, 0.3, 0.15, 0.1])
        if rng.random() < 0.01:
            grades_in[:] = 0
            grades_out[:] = 0
        judged: dict[str, int] = dict(
            zip([retrieved[p] for p in positions.tolist()], grades_in.tolist(), strict=True)
        )
        judged.update(zip(outside, grades_out.tolist(), strict=True))
        order = rng.permutation(depth).tolist()
        score_list = scores.tolist()
        run[qid] = {retrieved[i]: score_list[i] for i in order}
        qrels[qid] = judged
        n_rel = int((grades_in > 0).sum() + (grades_out > 0).sum())
        judged_total += n_judged
        relevant_total += n_rel
        judged_in_run_total += in_run
        no_relevant += n_rel == 0
    stats = {
        "queries": n_queries,
        "depth": depth,
        "run_entries": n_queries * depth,
        "judged_per_query_mean": judged_total / n_queries,
        "relevant_per_query_mean": relevant_total / n_queries,
        "judged_in_run_per_query_mean": judged_in_run_total / n_queries,
        "tied_doc_fraction": tied_docs / (n_queries * depth),
        "queries_without_relevant": no_relevant,
    }
    return Workload(qrels, run, stats)


def _distinct_ids(rng: np.random.Generator, n: int) -> list[str]:
    """n distinct doc ids from the id space, in random order."""
    while True:
        drawn = dict.fromkeys(rng.integers(0, ID_SPACE, size=n + 16).tolist())
        if len(drawn) >= n:
            return [f"d{x:07d}" for x in list(drawn)[:n]]


def _tie_groups(sorted_scores: np.ndarray) -> int:
    """Number of distinct score values shared by two or more documents."""
    _, counts = np.unique(sorted_scores, return_counts=True)
    return int((counts > 1).sum())


def tiny_workload(seed: int) -> Workload:
    """Same shapes and id widths as the real workload (numba specialises on them)."""
    return make_workload(20, 40, seed + 1)


def trec_ordered_run(run: Run) -> Run:
    """The same rankings with tie-free scores: rank by score desc, then doc id desc."""
    out: Run = {}
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)
        out[qid] = {doc: float(len(ranked) - i) for i, (doc, _) in enumerate(ranked)}
    return out


# --------------------------------------------------------------------------- tools
def run_rag_judge(qrels: Qrels, run: Run) -> Any:
    from rag_judge.retrieval import evaluate

    return evaluate(qrels, run, list(MEASURES))


def run_pytrec_eval(qrels: Qrels, run: Run) -> dict[str, dict[str, float]]:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_REQUEST))
    result: dict[str, dict[str, float]] = evaluator.evaluate(run)
    return result


def run_ranx(qrels: Qrels, run: Run, threads: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """Qrels/Run construction + evaluate; returns (sorted query ids, metric -> values)."""
    import ranx

    ranx_qrels = ranx.Qrels(qrels)
    ranx_run = ranx.Run(run)
    values = ranx.evaluate(
        ranx_qrels,
        ranx_run,
        [ranx_name for _, ranx_name in MEASURES.values()],
        return_mean=False,
        save_results_in_run=False,
        threads=threads,
    )
    return list(ranx_run.get_query_ids()), values


def numba_threads() -> int:
    import numba

    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


def per_query_rag_judge(result: Any) -> PerQuery:
    qids: tuple[str, ...] = result.query_ids
    return {name: dict(zip(qids, result.values[name].tolist(), strict=True)) for name in MEASURES}


def per_query_pytrec(result: Mapping[str, Mapping[str, float]]) -> PerQuery:
    return {
        name: {qid: float(row[trec]) for qid, row in result.items()}
        for name, (trec, _) in MEASURES.items()
    }


def per_query_ranx(result: tuple[list[str], dict[str, np.ndarray]]) -> PerQuery:
    qids, values = result
    return {
        name: dict(zip(qids, np.asarray(values[rx]).tolist(), strict=True))
        for name, (_, rx) in MEASURES.items()
    }


def means(per_query: PerQuery) -> dict[str, float]:
    return {name: math.fsum(v.values()) / len(v) for name, v in per_query.items()}


def compare(reference: PerQuery, other: PerQuery) -> dict[str, dict[str, Any]]:
    """Per measure: aggregate difference, max per-query difference, queries differing."""
    ref_mean, other_mean = means(reference), means(other)
    out: dict[str, dict[str, Any]] = {}
    for name, ref in reference.items():
        theirs = other[name]
        if set(ref) != set(theirs):
            out[name] = {"error": "different query sets"}
            continue
        diffs = [abs(ref[q] - theirs[q]) for q in ref]
        out[name] = {
            "reference_mean": ref_mean[name],
            "other_mean": other_mean[name],
            "aggregate_abs_diff": abs(ref_mean[name] - other_mean[name]),
            "max_per_query_abs_diff": max(diffs),
            "queries_differing": sum(d > TOLERANCE for d in diffs),
        }
    return out


def agrees(comparison: Mapping[str, Mapping[str, Any]]) -> bool:
    return all(
        "error" not in c
        and c["aggregate_abs_diff"] <= TOLERANCE
        and c["max_per_query_abs_diff"] <= TOLERANCE
        for c in comparison.values()
    )


# --------------------------------------------------------------------------- timing
def timed(fn: Callable[[], Any], repeat: int) -> tuple[dict[str, Any], Any]:
    """Run fn ``repeat`` times after a gc.collect(); return timings and the last output."""
    stats, outs = timed_interleaved({"fn": fn}, repeat)
    return stats["fn"], outs["fn"]


def timed_interleaved(
    fns: Mapping[str, Callable[[], Any]], repeat: int
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Time several functions in turn, round after round (A B A B ...), so that a change in
    machine load hits them alike. Records the 1-minute load average before each run."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    loads: dict[str, list[float]] = {name: [] for name in fns}
    outs: dict[str, Any] = dict.fromkeys(fns)
    for _ in range(repeat):
        for name, fn in fns.items():
            outs[name] = None
            gc.collect()
            loads[name].append(round(os.getloadavg()[0], 2))
            start = time.perf_counter()
            outs[name] = fn()
            times[name].append(time.perf_counter() - start)
    stats = {
        name: {
            "median_s": statistics.median(t),
            "min_s": min(t),
            "all_s": t,
            "loadavg_1min_before": loads[name],
        }
        for name, t in times.items()
    }
    return stats, outs


def once(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


# --------------------------------------------------------------------------- memory
def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    """Reset VmHWM (peak RSS) to the current RSS; Linux >= 4.0, own process."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _measure_call(fn: Callable[[], Any]) -> dict[str, Any]:
    """Seconds and extra peak RSS (MiB above the RSS just before) of one call."""
    gc.collect()
    load = round(os.getloadavg()[0], 2)
    base_kb = _status_kb("VmRSS") or 0
    exact = _reset_peak_rss()
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    # Without clear_refs, fall back to the process high-water mark (an overestimate).
    peak_kb = (_status_kb("VmHWM") or 0) if exact else int(_maxrss_mb() * 1024)
    del out
    return {
        "seconds": seconds,
        "peak_extra_mb": (peak_kb - base_kb) / 1024,
        "peak_exact": exact,
        "loadavg_1min_before": load,
        "_peak_kb": peak_kb,
    }


def child_main(tool: str, args: argparse.Namespace) -> None:
    """``--only TOOL``: build the workload, time one call and measure its peak memory."""
    workload = make_workload(args.queries, args.depth, args.seed)
    qrels, run = workload.qrels, workload.run
    gc.collect()
    rss_before_import = _status_kb("VmRSS") or 0
    start = time.perf_counter()
    if tool == "rag_judge":
        import rag_judge.retrieval  # noqa: F401
    elif tool == "pytrec_eval":
        import pytrec_eval  # noqa: F401
    else:
        import ranx  # noqa: F401
    import_s = time.perf_counter() - start
    gc.collect()
    # VmHWM is reset before each call, so keep the process-wide peak ourselves.
    process_peak_kb = _status_kb("VmHWM") or 0
    report: dict[str, Any] = {
        "tool": tool,
        "import_s": import_s,
        "import_extra_mb": ((_status_kb("VmRSS") or 0) - rss_before_import) / 1024,
        "rss_with_workload_mb": rss_before_import / 1024,
    }
    calls: list[tuple[str, Callable[[], Any]]] = []
    if tool == "rag_judge":
        report["rag_judge_source"] = rag_judge_digest()
        calls.append(("call", lambda: run_rag_judge(qrels, run)))
    elif tool == "pytrec_eval":
        calls.append(("call", lambda: run_pytrec_eval(qrels, run)))
    else:
        threads = numba_threads()
        report["threads"] = threads
        if tool == "ranx":
            # Compile on a tiny input first, so that "call" measures the warm full-size call
            # (the compiler's memory is then part of the baseline, not of the call).
            tiny = tiny_workload(args.seed)
            report["jit_tiny_s"], _ = once(lambda: run_ranx(tiny.qrels, tiny.run, threads))
            gc.collect()
            process_peak_kb = max(process_peak_kb, _status_kb("VmHWM") or 0)
            calls.append(("call", lambda: run_ranx(qrels, run, threads)))
        else:
            # Fresh process + empty NUMBA_CACHE_DIR: this first call compiles everything.
            calls.append(("cold_call", lambda: run_ranx(qrels, run, threads)))
    for key, fn in calls:
        report[key] = _measure_call(fn)
        process_peak_kb = max(process_peak_kb, report[key].pop("_peak_kb"))
    report["process_peak_rss_mb"] = process_peak_kb / 1024
    # Linux keeps the parent's high-water mark across fork+exec in ru_maxrss, so this is
    # only meaningful because the parent starts the children while it is still small.
    report["getrusage_maxrss_mb"] = _maxrss_mb()
    print(json.dumps(report))


def run_child(tool: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(REPO)}
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--only",
            tool,
            "--queries",
            str(args.queries),
            "--depth",
            str(args.depth),
            "--seed",
            str(args.seed),
        ]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"tool": tool, "error": proc.stderr[-2000:]}
    report: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return report


# --------------------------------------------------------------------------- machine
def rag_judge_digest() -> str:
    """Short hash of rag_judge's source as imported (its version string changes rarely)."""
    import rag_judge

    root = Path(rag_judge.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _machine() -> dict[str, Any]:
    import rag_judge

    info = machine_info("pytrec-eval-terrier", "ranx", "numba")
    info["numpy"] = np.__version__
    info["rag_judge"] = getattr(rag_judge, "__version__", None) or version("rag-judge")
    return info


# --------------------------------------------------------------------------- report
@dataclass
class Row:
    tool: str
    timed: str
    median_s: float | None
    min_s: float | None
    peak_extra_mb: float | None = None
    process_peak_mb: float | None = None


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown(report: Mapping[str, Any], rows: Sequence[Row]) -> str:
    wl, m = report["workload"], report["machine"]
    pytrec_median = report["timings"]["pytrec_eval"]["median_s"]
    lines = [
        "# Retrieval-metric speed: rag_judge vs pytrec_eval vs ranx",
        "",
        f"Workload: {wl['queries']:,} queries x {wl['depth']:,} ranked docs "
        f"({wl['run_entries']:,} run entries), {wl['judged_per_query_mean']:.0f} judged docs "
        f"per query on average ({wl['judged_in_run_per_query_mean']:.0f} of them retrieved, "
        f"{wl['relevant_per_query_mean']:.0f} relevant), "
        f"{100 * wl['tied_doc_fraction']:.1f}% of retrieved docs share their score, "
        f"seed {report['settings']['seed']}; {len(MEASURES)} measures "
        f"({', '.join(MEASURES)}).",
        "",
        f"Machine: {m['cpu_model']}, {m['usable_cores']} usable cores, {m['memory_gb']} GB RAM; "
        f"Python {m['python']}, numpy {m['numpy']}, pytrec_eval-terrier "
        f"{m['pytrec_eval_terrier']}, ranx {m['ranx']} (numba {m['numba']}), rag_judge "
        f"{m['rag_judge']} (source sha256 {m['rag_judge_source_sha256_12']}); "
        f"{m['date_utc']}. Repeats: {report['settings']['repeat']} "
        "(median and min).",
        "",
        *(
            [
                f"**Note:** rag_judge's source changed during the run: its memory child "
                f"imported {m['rag_judge_source_in_memory_child']}, the timed runs "
                f"{m['rag_judge_source_sha256_12']}.",
                "",
            ]
            if "rag_judge_source_in_memory_child" in m
            else []
        ),
        "| tool | timed span | median s | min s | pytrec_eval ÷ tool | peak extra RSS MiB "
        "| child peak RSS MiB |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        ratio = pytrec_median / row.median_s if row.median_s else None
        lines.append(
            f"| {row.tool} | {row.timed} | {_fmt(row.median_s)} | {_fmt(row.min_s)} "
            f"| {_fmt(ratio, 2)} | {_fmt(row.peak_extra_mb, 0)} | {_fmt(row.process_peak_mb, 0)} |"
        )
    ratio = report["pytrec_over_rag_judge"]
    verdict = "faster" if ratio > 1 else "slower"
    lines += [
        "",
        f"**pytrec_eval_time / rag_judge_time = {ratio:.2f}** (rag_judge is {verdict} than "
        "pytrec_eval; >1 means rag_judge is faster), from the medians; from the minimums "
        f"{report['pytrec_over_rag_judge_min']:.2f}. rag_judge and pytrec_eval runs are "
        "interleaved (A B A B ...).",
        "",
        _load_note(report),
        "",
        "Peak extra RSS: extra peak resident memory of one call in a fresh child process "
        "(`--only TOOL`), above the RSS with the workload built and the library imported. "
        "Child peak RSS: peak resident memory of that whole child process (workload dicts, "
        "library import, the call; `getrusage_maxrss_mb` in the JSON agrees). The ranx warm "
        "child compiles on a tiny input first, so the compiler's memory is in its baseline; "
        "the ranx cold row (its own child) includes it. See benchmarks/README.md for what "
        "each span includes and how ranx's numbers differ.",
        "",
        "Agreement: rag_judge vs pytrec_eval "
        + ("**agree**" if report["checks"]["rag_judge_vs_pytrec_eval_agree"] else "**DIFFER**")
        + f" on every aggregate and per-query value (tolerance {TOLERANCE:g}).",
        "",
        "ranx vs pytrec_eval (aggregate abs diff; queries differing by > 1e-9), on the tied "
        "run and on the same rankings with tie-free scores:",
        "",
        "| measure | tied run: agg diff | tied run: queries | tie-free: agg diff "
        "| tie-free: queries |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    tied = report["checks"]["ranx_vs_pytrec_eval"]
    free = report["checks"].get("ranx_vs_pytrec_eval_tie_free", {})
    for name in MEASURES:
        a, b = tied.get(name, {}), free.get(name, {})
        lines.append(
            f"| {name} | {a.get('aggregate_abs_diff', float('nan')):.2e} "
            f"| {a.get('queries_differing', '—')} "
            f"| {b.get('aggregate_abs_diff', float('nan')):.2e} "
            f"| {b.get('queries_differing', '—')} |"
        )
    lines.append("")
    return "\n".join(lines)


def _load_note(report: Mapping[str, Any]) -> str:
    loads = [x for t in report["timings"].values() for x in t.get("loadavg_1min_before", [])]
    cores = report["machine"].get("usable_cores") or 1
    if not loads:
        return ""
    note = (
        f"Machine load: 1-minute load average {min(loads):.1f}-{max(loads):.1f} before the "
        f"timed runs, on {cores} usable cores."
    )
    if max(loads) > 0.75 * cores:
        note += (
            " **Other processes were using the CPU during the run**, so absolute times are "
            "inflated and noisy; the interleaved ratio and the minimums are the fairer numbers."
        )
    return note


# --------------------------------------------------------------------------- main
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per tool (default 3)")
    parser.add_argument("--seed", type=int, default=20_240_601)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON path (.md beside)")
    parser.add_argument("--quick", action="store_true", help="1,000 x 100 smoke run")
    parser.add_argument("--no-memory", action="store_true", help="skip the child processes")
    parser.add_argument("--only", choices=CHILDREN, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.queries, args.depth = 1_000, 100
    if args.queries < 10 or args.depth < 10 or args.repeat < 1:
        parser.error("need --queries >= 10, --depth >= 10 and --repeat >= 1")
    return args


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.only:
        child_main(args.only, args)
        return 0
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        # An empty numba cache (set before numba is imported) makes the JIT timing real and
        # keeps compiled artefacts out of the shared venv.
        os.environ["NUMBA_CACHE_DIR"] = cache
        return bench(args)


def in_process(args: argparse.Namespace) -> dict[str, Any]:
    """Build the workload once; time every tool on it in this process; check agreement."""
    log(f"building workload {args.queries} x {args.depth} ...")
    build_s, workload = once(lambda: make_workload(args.queries, args.depth, args.seed))
    qrels, run = workload.qrels, workload.run
    log(f"  {build_s:.1f}s; {workload.stats}")
    timings: dict[str, Any] = {}
    # Import everything up front so that no timed call pays for an import.
    import pytrec_eval  # noqa: F401
    import ranx  # noqa: F401

    import rag_judge.retrieval  # noqa: F401

    digest = rag_judge_digest()
    log(f"rag_judge and pytrec_eval, interleaved ... (rag_judge source {digest})")
    pair, outs = timed_interleaved(
        {
            "rag_judge": lambda: run_rag_judge(qrels, run),
            "pytrec_eval": lambda: run_pytrec_eval(qrels, run),
        },
        args.repeat,
    )
    timings.update(pair)
    rag_result, pytrec_result = outs["rag_judge"], outs["pytrec_eval"]
    del outs
    timings["rag_judge_per_query_dict"], _ = timed(rag_result.per_query, args.repeat)
    log(f"  rag_judge {timings['rag_judge']}")
    log(f"  pytrec_eval {timings['pytrec_eval']}")

    log("ranx: JIT on a tiny input, then warm runs ...")
    tiny = tiny_workload(args.seed)
    threads = numba_threads()
    jit_s, _ = once(lambda: run_ranx(tiny.qrels, tiny.run, threads))
    timings["ranx_jit_tiny"] = {"median_s": jit_s, "min_s": jit_s, "all_s": [jit_s]}
    timings["ranx_warm"], ranx_result = timed(lambda: run_ranx(qrels, run, threads), args.repeat)
    timings["ranx_warm_1_thread"], _ = timed(lambda: run_ranx(qrels, run, 1), args.repeat)
    log(f"  jit {jit_s:.2f}s; warm {timings['ranx_warm']}")

    log("checking agreement ...")
    pytrec_pq = per_query_pytrec(pytrec_result)
    rag_pq = per_query_rag_judge(rag_result)
    ranx_pq = per_query_ranx(ranx_result)
    rag_vs_pytrec = compare(pytrec_pq, rag_pq)
    ranx_vs_pytrec = compare(pytrec_pq, ranx_pq)
    # Same rankings with tie-free scores: shows which ranx differences come from tie order.
    tie_free = trec_ordered_run(run)
    ranx_tie_free = compare(
        per_query_pytrec(run_pytrec_eval(qrels, tie_free)),
        per_query_ranx(run_ranx(qrels, tie_free, threads)),
    )
    for name, c in rag_vs_pytrec.items():
        if "error" in c or c["aggregate_abs_diff"] > TOLERANCE or c["queries_differing"]:
            log(f"  MISMATCH rag_judge vs pytrec_eval on {name}: {c}")
    for name, c in ranx_vs_pytrec.items():
        if "error" in c or c["aggregate_abs_diff"] > TOLERANCE or c["queries_differing"]:
            log(
                f"  ranx differs on {name}: {c} "
                f"(tie-free run: {ranx_tie_free[name].get('queries_differing')} queries)"
            )
    return {
        "rag_judge_source": digest,
        "workload": {"build_s": build_s, **workload.stats},
        "threads": threads,
        "timings": timings,
        "checks": {
            "tolerance": TOLERANCE,
            "rag_judge_vs_pytrec_eval_agree": agrees(rag_vs_pytrec),
            "rag_judge_vs_pytrec_eval": rag_vs_pytrec,
            "rag_judge_aggregate": means(rag_pq),
            "pytrec_eval_aggregate": means(pytrec_pq),
            "ranx_aggregate": means(ranx_pq),
            "ranx_vs_pytrec_eval": ranx_vs_pytrec,
            "ranx_vs_pytrec_eval_tie_free": ranx_tie_free,
        },
    }


def bench(args: argparse.Namespace) -> int:
    machine = _machine()
    memory: dict[str, Any] = {}
    if not args.no_memory:
        # Children first, while this process is small (see getrusage_maxrss_mb).
        for tool in CHILDREN:
            log(f"fresh child process for {tool} (memory; cold ranx) ...")
            memory[tool] = run_child(tool, args)
            log(f"  {memory[tool]}")
    measured = in_process(args)
    timings, checks, threads = measured["timings"], measured["checks"], measured["threads"]
    machine["rag_judge_source_sha256_12"] = measured["rag_judge_source"]
    child_digest = memory.get("rag_judge", {}).get("rag_judge_source")
    if child_digest not in (None, measured["rag_judge_source"]):
        machine["rag_judge_source_in_memory_child"] = child_digest
        log(f"WARNING: rag_judge source changed between the child ({child_digest}) and now")
    report: dict[str, Any] = {
        "machine": machine,
        "settings": {
            "queries": args.queries,
            "depth": args.depth,
            "repeat": args.repeat,
            "seed": args.seed,
            "numba_threads": threads,
            "measures": {k: {"pytrec_eval": v[0], "ranx": v[1]} for k, v in MEASURES.items()},
        },
        "workload": measured["workload"],
        "timings": timings,
        "pytrec_over_rag_judge": (
            timings["pytrec_eval"]["median_s"] / timings["rag_judge"]["median_s"]
        ),
        "pytrec_over_rag_judge_min": (
            timings["pytrec_eval"]["min_s"] / timings["rag_judge"]["min_s"]
        ),
        "memory": memory,
        "checks": checks,
    }
    rows = table_rows(timings, memory, threads)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    md = markdown(report, rows)
    args.out.with_suffix(".md").write_text(md)
    print(md)
    log(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0 if checks["rag_judge_vs_pytrec_eval_agree"] else 1


def table_rows(timings: Mapping[str, Any], memory: Mapping[str, Any], threads: int) -> list[Row]:
    def mem(tool: str, key: str = "call") -> tuple[float | None, float | None]:
        child = memory.get(tool, {})
        if key not in child:
            return None, None
        return child[key]["peak_extra_mb"], child.get("process_peak_rss_mb")

    def row(tool: str, span: str, key: str, mem_of: tuple[float | None, float | None]) -> Row:
        t = timings[key]
        return Row(tool, span, t["median_s"], t["min_s"], *mem_of)

    rows = [
        row(
            "rag_judge",
            "`evaluate()` dicts -> EvalResult (per-query arrays)",
            "rag_judge",
            mem("rag_judge"),
        ),
        row(
            "rag_judge (extra)",
            "`EvalResult.per_query()` -> dict of dicts",
            "rag_judge_per_query_dict",
            (None, None),
        ),
        row(
            "pytrec_eval",
            "`RelevanceEvaluator(qrels)` + `.evaluate(run)` -> dict of dicts",
            "pytrec_eval",
            mem("pytrec_eval"),
        ),
        row(
            f"ranx warm ({threads} threads)",
            "`Qrels()` + `Run()` + `evaluate(return_mean=False)` -> arrays",
            "ranx_warm",
            mem("ranx"),
        ),
        row("ranx warm (1 thread)", "same, `threads=1`", "ranx_warm_1_thread", (None, None)),
        row(
            "ranx JIT",
            "first call on a tiny input (numba compilation)",
            "ranx_jit_tiny",
            (None, None),
        ),
    ]
    cold = memory.get("ranx_cold", {})
    if "cold_call" in cold:
        rows.append(
            Row(
                f"ranx cold ({threads} threads)",
                "first full-size call, fresh process, empty numba cache (JIT + run)",
                cold["cold_call"]["seconds"],
                cold["cold_call"]["seconds"],
                cold["cold_call"]["peak_extra_mb"],
                cold.get("process_peak_rss_mb"),
            )
        )
    for tool in ("rag_judge", "pytrec_eval"):
        call = memory.get(tool, {}).get("call")
        if call:
            rows.append(
                Row(
                    f"{tool} (fresh process)",
                    "one call in the memory child",
                    call["seconds"],
                    call["seconds"],
                    None,
                    None,
                )
            )
    return rows


if __name__ == "__main__":
    sys.exit(main())
