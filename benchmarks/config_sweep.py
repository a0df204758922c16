"""Which configuration and k? The configuration sweep with elimination against the full grid's
argmax (what AutoRAG and its peers do), replayed on a real grid, truth from questions it never saw.

One grid (three retrievers, bm25, dense and hybrid, x k = 1..10, the embedded model, reference F1
as the objective: SQuAD 2.0's convention, a refusal on an unanswerable question scores 1) is swept
once with the product as a user would (``rag-judge sweep --grid retriever=bm25,dense,hybrid``),
resumable from the response cache across sittings. Each replay draws a random subset of n
questions and takes the truth from the **other** questions: the arm with the highest mean F1
there. A pick is within the margin when its F1 there is at most the margin below the truth's.

Compared on the same subsets, each a count with its 95% Wilson interval:

- **(a) argmax**: every question at every arm, the arm with the highest mean picked (no
  statement of how sure): n x arms answers;
- **(b) until decided**: this sweep ``--until-decided --max-questions n`` (a look every 10
  questions in a random order, O'Brien-Fleming spending over n, arms out dropped): its pick, or
  its lean when it stops undecided, and the answers it generated;
- **(c) one look**: this sweep's decision on all n at once (no elimination): its pick or lean.

The goal the issue set: (b) within the margin at least as often as (a), for at most 60% of (a)'s
answers, where configurations differ. Whether they differ here is measured too: each
configuration's best arm on every question of the grid, with the paired difference's interval.

Usage::

    python benchmarks/config_sweep.py sweep --limit 150      # resumable (the response cache)
    python benchmarks/config_sweep.py replay [--subsets 300]

``sweep`` writes ``results/config_sweep/<set>/`` (the product's report, and ``run.json`` with the
machine and its measured prompt speed); ``replay`` is pure CPU and writes
``results/config_sweep.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _machine import machine_info
from _rates import Rate, shown

from rag_judge.core.stats import paired_bootstrap_ci
from rag_judge.jobs.sweep.decision.decide import compared_arms
from rag_judge.jobs.sweep.decision.defaults import UNTIL_DECIDED_SPENDING
from rag_judge.jobs.sweep.decision.objective import Objective
from rag_judge.jobs.sweep.decision.recommend import Recommendation, recommend
from rag_judge.jobs.sweep.decision.sequential import replay_sequential

HERE = Path(__file__).parent
RESULTS = HERE / "results"
FOLDER = RESULTS / "config_sweep"
SET = "squad2_en_chunked"
GRID = "retriever=bm25,dense,hybrid"
OBJECTIVE = "answer_f1"
MARGIN = 0.05
ALPHA = 0.05
STEP = 10
RESAMPLES = 1000
"""Bootstrap resamples per look (the product uses 2,000; 1,000 keeps the replay within minutes)."""


@dataclass(frozen=True)
class Grid:
    """The swept grid as the decision reads it: per question x arm the objective's value."""

    values: pd.DataFrame
    """Questions x arm numbers."""
    costs: tuple[float, ...]
    labels: dict[int, str]
    """Arm number -> ``configuration at k=``."""


def run_sweep(limit: int) -> None:
    """The grid with the product's CLI into ``results/config_sweep/<set>`` (resumable)."""
    from rag_judge.backends.local.speed import measure_speed
    from rag_judge.runtime.session import open_session
    from rag_judge.runtime.settings import load_settings

    out = FOLDER / SET
    command = [
        str(Path(sys.executable).with_name("rag-judge")),
        "sweep", SET, "--grid", GRID, "--limit", str(limit), "--ks", "1-10",
        "--metrics", "exact_match", "--objective", OBJECTIVE, "-o", str(out),
    ]  # fmt: skip
    speed = measure_speed(open_session(load_settings({}), cache=False).generator.backend)
    started = time.perf_counter()
    subprocess.run(command, check=True)
    seconds = time.perf_counter() - started
    record = {
        "command": ["rag-judge", *command[1:-1], str(out.relative_to(HERE.parent))],
        "seconds_this_sitting": round(seconds, 1),
        "note": "answers from earlier sittings came from the response cache; "
        "see ledger.json for the calls this sitting made",
        "prefill_tokens_per_second": round(speed.prefill_per_second, 1),
        "decode_tokens_per_second": round(speed.decode_per_second, 1),
        "machine": machine_info("llama-cpp-python"),
    }
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def load_grid() -> Grid:
    """The swept grid's per-question table as the decision counts it (a refusal valued)."""
    frame = pd.read_parquet(FOLDER / SET / "per_question.parquet")
    labels = {
        int(a): f"{c} at k={int(k)}"
        for a, c, k in frame[["arm", "configuration", "k"]].drop_duplicates().itertuples(False)
    }
    arms_frame = frame.drop(columns=["k", "configuration"]).rename(columns={"arm": "k"})
    arms = compared_arms(arms_frame, Objective.parse(OBJECTIVE), sorted(labels))
    values = pd.DataFrame(arms.values, index=arms.table.values.index, columns=list(arms.ks))
    return Grid(values.dropna(), tuple(arms.costs), labels)


def replay_one(args: tuple[int, int, int]) -> list[dict[str, Any]]:
    """(a), (b) and (c) on ``count`` subsets of ``n`` questions from ``first``, seeded."""
    n, first, count = args
    grid = load_grid()
    arms = list(grid.values.columns)
    universe = list(grid.values.index)
    rows = []
    for draw in range(first, first + count):
        order = list(np.random.default_rng(draw * 7919 + n).permutation(universe))
        subset, others = order[:n], order[n:]
        y = grid.values.loc[subset].to_numpy(dtype=float)
        truth = grid.values.loc[others].mean()
        regret = {a: float(truth.max() - truth[a]) for a in arms}
        means = y.mean(axis=0)
        argmax = min(range(len(arms)), key=lambda i: (-round(means[i], 12), grid.costs[i]))
        run = replay_sequential(
            y, arms, margin=MARGIN, confidence=1 - ALPHA, step=STEP, max_questions=n,
            spending=UNTIL_DECIDED_SPENDING, horizon=n, costs=grid.costs,
            n_resamples=RESAMPLES, seed=draw,
        )  # fmt: skip
        once = recommend(
            y, arms, costs=grid.costs, margin=MARGIN, confidence=1 - ALPHA,
            n_resamples=RESAMPLES, seed=draw,
        )  # fmt: skip
        picks = {"argmax": arms[argmax], "until_decided": _pick(run.recommendation, arms)}
        picks["one_look"] = _pick(once, arms)
        rows.append(
            {
                "n": n,
                "regret": {way: regret[arm] for way, arm in picks.items()},
                "decided": {
                    "until_decided": run.recommendation.recommended_k is not None,
                    "one_look": once.recommended_k is not None,
                },
                "answers": {"argmax": n * len(arms), "until_decided": run.answers_used},
                "questions_used": run.questions_used,
            }
        )
    return rows


def _pick(found: Recommendation, arms: Sequence[int]) -> int:
    """The recommended arm, else the lean (the best by mean among those the rule could still
    recommend)."""
    if found.recommended_k is not None:
        return found.recommended_k
    return found.best_k_by_mean or arms[0]


def differences(grid: Grid) -> list[dict[str, Any]]:
    """Each configuration's best arm on every question, against the best configuration's."""
    means = grid.values.mean()
    by_configuration: dict[str, int] = {}
    for arm in grid.values.columns:
        name = grid.labels[arm].split(" at k=")[0]
        if name not in by_configuration or means[arm] > means[by_configuration[name]]:
            by_configuration[name] = arm
    best = max(by_configuration.values(), key=lambda a: means[a])
    rows = []
    for name, arm in by_configuration.items():
        ci = paired_bootstrap_ci(grid.values[arm].to_numpy(), grid.values[best].to_numpy())
        low, high = ci.low, ci.high
        rows.append(
            {
                "configuration": name,
                "best_arm": grid.labels[arm],
                "mean": round(float(means[arm]), 4),
                "minus_best": round(float(means[arm] - means[best]), 4),
                "ci_low": round(float(low), 4),
                "ci_high": round(float(high), 4),
            }
        )
    return rows


def replay(subsets: int) -> dict[str, Any]:
    grid = load_grid()
    total = len(grid.values)
    sizes = [n for n in (50, 100) if n <= total - 50] or [total // 2]
    chunks = [
        (n, first, min(25, subsets - first)) for n in sizes for first in range(0, subsets, 25)
    ]
    with ProcessPoolExecutor(max_workers=2) as pool:
        rows = [row for part in pool.map(replay_one, chunks) for row in part]
    summary = []
    for n in sizes:
        mine = [r for r in rows if r["n"] == n]
        within = {
            way: Rate(sum(r["regret"][way] <= MARGIN + 1e-12 for r in mine), len(mine)).as_json()
            for way in ("argmax", "until_decided", "one_look")
        }
        answers = {
            way: float(np.mean([r["answers"][way] for r in mine]))
            for way in ("argmax", "until_decided")
        }
        summary.append(
            {
                "n": n,
                "subsets": len(mine),
                "within_margin": within,
                "decided": {
                    way: Rate(sum(r["decided"][way] for r in mine), len(mine)).as_json()
                    for way in ("until_decided", "one_look")
                },
                "mean_regret": {
                    way: round(float(np.mean([r["regret"][way] for r in mine])), 4)
                    for way in ("argmax", "until_decided", "one_look")
                },
                "mean_answers": {k: round(v, 1) for k, v in answers.items()},
                "answers_share": round(answers["until_decided"] / answers["argmax"], 4),
                "median_questions_used": float(np.median([r["questions_used"] for r in mine])),
            }
        )
    return {
        "questions": total,
        "arms": len(grid.values.columns),
        "configurations": differences(grid),
        "sizes": summary,
    }


def render(payload: dict[str, Any]) -> str:
    machine = payload["machine"]
    lines = [
        "# Configuration sweep: elimination against the full grid's argmax",
        "",
        f"Machine: {machine['cpu_model']}, {machine['logical_cores']} cores; "
        f"{payload['seconds']} s of replay. Grid: `{GRID}` x k = 1..10 on "
        f"{payload['questions']} questions of {SET} "
        f"({payload['arms']} arms), objective {OBJECTIVE}, margin {MARGIN}; {payload['subsets']} "
        "subsets per size, truth from the other questions.",
        "",
        "## Do the configurations differ?",
        "",
        "Each configuration's best arm on every question, minus the best configuration's "
        "(paired bootstrap 95% interval):",
        "",
        "| configuration | best arm | mean | minus the best | 95% interval |",
        "|---|---|---:|---:|---|",
    ]
    for row in payload["configurations"]:
        lines.append(
            f"| {row['configuration']} | {row['best_arm']} | {row['mean']:.3f} "
            f"| {row['minus_best']:+.3f} | [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}] |"
        )
    lines += [
        "",
        "## Within the margin, and what it cost",
        "",
        "| n | way | within the margin | decided | mean regret | answers (mean) |",
        "|---:|---|---|---|---:|---:|",
    ]
    for size in payload["sizes"]:
        for way, label in (("argmax", "(a) argmax of the full grid"),
                           ("until_decided", "(b) until decided"),
                           ("one_look", "(c) one look, no elimination")):  # fmt: skip
            decided = shown(size["decided"][way]) if way in size["decided"] else ""
            answers = size["mean_answers"].get(way, size["mean_answers"]["argmax"])
            lines.append(
                f"| {size['n']} | {label} | {shown(size['within_margin'][way])} | {decided} "
                f"| {size['mean_regret'][way]:.4f} | {answers:,.0f} |"
            )
        lines.append(
            f"| {size['n']} | (b)'s answers / (a)'s | {size['answers_share']:.1%} "
            f"(median {size['median_questions_used']:.0f} questions) | | | |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser("sweep", help="run the grid with the product (resumable)")
    sweep.add_argument("--limit", type=int, default=150)
    again = commands.add_parser("replay", help="replay on subsets (no model call)")
    again.add_argument("--subsets", type=int, default=300)
    args = parser.parse_args(argv)
    if args.command == "sweep":
        run_sweep(args.limit)
        return
    started = time.perf_counter()
    payload = {"machine": machine_info(), "subsets": args.subsets, **replay(args.subsets)}
    payload["seconds"] = round(time.perf_counter() - started, 1)
    (RESULTS / "config_sweep.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / "config_sweep.md").write_text(render(payload), encoding="utf-8")
    print((RESULTS / "config_sweep.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
