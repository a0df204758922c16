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
- **(c) one look**: this sweep's decision on all n at once (no elimination): its pick or lean;
- **(d) until decided, Pocock spending**: (b) with the spending that gives early looks more of
  the error, the lever measured for grids (the product's default is O'Brien-Fleming).

The goal the issue set: (b) within the margin at least as often as (a), for at most 60% of (a)'s
answers, where configurations differ. Whether they differ here is measured too: each
configuration's best arm on every question of the grid, with the paired difference's interval.

A second, smaller grid crosses two passage sizes (the set's own passages, and the documents
re-cut to windows of whole sentences of at most 120 characters, no overlap: about one
sentence each, a third of the set's passages) with k, on the hybrid retriever (``--grid chunks``).

Usage::

    python benchmarks/config_sweep.py warm --limit 150       # the cache, in rounds of 50
    python benchmarks/config_sweep.py sweep --limit 150      # resumable (the response cache)
    python benchmarks/config_sweep.py replay [--subsets 300]
    python benchmarks/config_sweep.py sweep --grid chunks --limit 50
    python benchmarks/config_sweep.py replay --grid chunks

``sweep`` writes ``results/config_sweep/<set>[_chunks]/`` (the product's report, and
``run.json`` with the machine and its measured prompt speed); ``replay`` is pure CPU and writes
``results/config_sweep[_chunks].{json,md}``.
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
from datetime import UTC, datetime
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


@dataclass(frozen=True)
class GridSpec:
    """One swept grid: the product's options that make it, where it goes, what it is called."""

    options: tuple[str, ...]
    folder: str
    """Under ``results/config_sweep/``."""
    results: str
    """The replay's files: ``results/<results>.{json,md}``."""
    label: str


GRIDS = {
    "retrievers": GridSpec(
        ("--grid", "retriever=bm25,dense,hybrid"), SET, "config_sweep",
        "`retriever=bm25,dense,hybrid`",
    ),
    "chunks": GridSpec(
        ("--grid", "chunk=set,120/0", "--retriever", "hybrid"), f"{SET}_chunks",
        "config_sweep_chunks", "`chunk=set,120/0` (hybrid retriever)",
    ),
}  # fmt: skip
"""The retrievers on 150+ questions; passage sizes (the set's, and 120-character re-cuts) on a
smaller set of questions, as the issue allows."""
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


RETRIEVERS = ("bm25", "dense", "hybrid")


def warm(limit: int, step: int, scratch: Path) -> None:
    """Fill the response cache for the retrievers' grid in rounds of ``step`` questions (each
    retriever's plain k-sweep, then the next), so that a complete grid exists at every stop;
    each round's minutes go into the grid's ``run.json`` (``sittings.rounds``). A round whose
    answers are all cached takes seconds and is not recorded again."""
    for questions in range(step, limit + 1, step):
        for retriever in RETRIEVERS:
            command = [
                str(Path(sys.executable).with_name("rag-judge")), "sweep", SET,
                "--retriever", retriever, "--limit", str(questions), "--ks", "1-10",
                "--metrics", "exact_match", "--objective", OBJECTIVE,
                "-o", str(scratch / retriever),
            ]  # fmt: skip
            started = datetime.now(UTC)
            subprocess.run(command, check=True)
            record_round(retriever, questions, step, started, datetime.now(UTC))


def record_round(
    retriever: str, questions: int, step: int, started: datetime, done: datetime
) -> None:
    """One round of :func:`warm` in the grid's ``run.json`` (kept across the grid's runs)."""
    path = FOLDER / SET / "run.json"
    record = json.loads(path.read_text()) if path.exists() else {}
    rounds = record.setdefault("sittings", {"how": WARM_HOW}).setdefault("rounds", [])
    minutes = round((done - started).total_seconds() / 60, 1)
    if minutes < 1 and any(
        r["retriever"] == retriever and r["questions"] == questions for r in rounds
    ):
        return  # answered from the cache: the round that paid for it is recorded
    rounds.append(
        {
            "retriever": retriever, "questions": questions, "new_questions": step,
            "date": started.date().isoformat(), "started": started.strftime("%H:%M:%S"),
            "done": done.strftime("%H:%M:%S"), "minutes": minutes,
        }
    )  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


WARM_HOW = (
    "each retriever's plain k-sweep (`rag-judge sweep squad2_en_chunked --retriever R --limit N "
    "--metrics exact_match --objective answer_f1`) into the same response cache, 50 new "
    "questions a round (`config_sweep.py warm`); the grid's run then read every answer from "
    "that cache."
)


def run_sweep(spec: GridSpec, limit: int) -> None:
    """The grid with the product's CLI into ``results/config_sweep/<folder>`` (resumable)."""
    from rag_judge.backends.local.speed import measure_speed
    from rag_judge.runtime.session import open_session
    from rag_judge.runtime.settings import load_settings

    out = FOLDER / spec.folder
    command = [
        str(Path(sys.executable).with_name("rag-judge")),
        "sweep", SET, *spec.options, "--limit", str(limit), "--ks", "1-10",
        "--metrics", "exact_match", "--objective", OBJECTIVE, "-o", str(out),
    ]  # fmt: skip
    speed = measure_speed(open_session(load_settings({}), cache=False).generator.backend)
    started = time.perf_counter()
    subprocess.run(command, check=True)
    seconds = time.perf_counter() - started
    earlier = json.loads(run_json.read_text()) if (run_json := out / "run.json").exists() else {}
    record = {
        "command": ["rag-judge", *command[1:-1], str(out.relative_to(HERE.parent))],
        "seconds_this_sitting": round(seconds, 1),
        "note": "answers from earlier sittings came from the response cache; "
        "see ledger.json for the calls this sitting made",
        "prefill_tokens_per_second": round(speed.prefill_per_second, 1),
        "decode_tokens_per_second": round(speed.decode_per_second, 1),
        "machine": machine_info("llama-cpp-python"),
    }
    if "sittings" in earlier:  # the rounds that filled the cache, written down as they ran
        record["sittings"] = earlier["sittings"]
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def load_grid(spec: GridSpec) -> Grid:
    """The swept grid's per-question table as the decision counts it (a refusal valued)."""
    frame = pd.read_parquet(FOLDER / spec.folder / "per_question.parquet")
    labels = {
        int(a): f"{c} at k={int(k)}"
        for a, c, k in frame[["arm", "configuration", "k"]].drop_duplicates().itertuples(False)
    }
    arms_frame = frame.drop(columns=["k", "configuration"]).rename(columns={"arm": "k"})
    arms = compared_arms(arms_frame, Objective.parse(OBJECTIVE), sorted(labels))
    values = pd.DataFrame(arms.values, index=arms.table.values.index, columns=list(arms.ks))
    return Grid(values.dropna(), tuple(arms.costs), labels)


def replay_one(args: tuple[str, int, int, int]) -> list[dict[str, Any]]:
    """(a), (b), (c) and (d) on ``count`` subsets of ``n`` questions from ``first``, seeded."""
    name, n, first, count = args
    grid = load_grid(GRIDS[name])
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
        pocock = replay_sequential(
            y, arms, margin=MARGIN, confidence=1 - ALPHA, step=STEP, max_questions=n,
            spending="pocock", horizon=n, costs=grid.costs, n_resamples=RESAMPLES, seed=draw,
        )  # fmt: skip
        once = recommend(
            y, arms, costs=grid.costs, margin=MARGIN, confidence=1 - ALPHA,
            n_resamples=RESAMPLES, seed=draw,
        )  # fmt: skip
        picks = {"argmax": arms[argmax], "until_decided": _pick(run.recommendation, arms)}
        picks["one_look"] = _pick(once, arms)
        picks["pocock"] = _pick(pocock.recommendation, arms)
        rows.append(
            {
                "n": n,
                "regret": {way: regret[arm] for way, arm in picks.items()},
                "decided": {
                    "until_decided": run.recommendation.recommended_k is not None,
                    "one_look": once.recommended_k is not None,
                    "pocock": pocock.recommendation.recommended_k is not None,
                },
                "answers": {
                    "argmax": n * len(arms),
                    "until_decided": run.answers_used,
                    "pocock": pocock.answers_used,
                },
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


WAYS = ("argmax", "until_decided", "one_look", "pocock")
"""(a), (b), (c), and (d): (b) with Pocock spending, the lever that spends more at early looks."""
SEQUENTIAL = ("until_decided", "pocock")


def replay(name: str, subsets: int) -> dict[str, Any]:
    grid = load_grid(GRIDS[name])
    total = len(grid.values)
    sizes = [n for n in (50, 100) if n <= total - 50] or [total // 2]
    chunks = [
        (name, n, first, min(25, subsets - first)) for n in sizes for first in range(0, subsets, 25)
    ]
    with ProcessPoolExecutor(max_workers=2) as pool:
        rows = [row for part in pool.map(replay_one, chunks) for row in part]
    summary = []
    for n in sizes:
        mine = [r for r in rows if r["n"] == n]
        within = {
            way: Rate(sum(r["regret"][way] <= MARGIN + 1e-12 for r in mine), len(mine)).as_json()
            for way in WAYS
        }
        answers = {
            way: float(np.mean([r["answers"][way] for r in mine]))
            for way in ("argmax", *SEQUENTIAL)
        }
        summary.append(
            {
                "n": n,
                "subsets": len(mine),
                "within_margin": within,
                "decided": {
                    way: Rate(sum(r["decided"][way] for r in mine), len(mine)).as_json()
                    for way in ("until_decided", "one_look", "pocock")
                },
                "mean_regret": {
                    way: round(float(np.mean([r["regret"][way] for r in mine])), 4) for way in WAYS
                },
                "mean_answers": {k: round(v, 1) for k, v in answers.items()},
                "answers_share": round(answers["until_decided"] / answers["argmax"], 4),
                "pocock_answers_share": round(answers["pocock"] / answers["argmax"], 4),
                "median_questions_used": float(np.median([r["questions_used"] for r in mine])),
            }
        )
    return {
        "grid": name,
        "options": list(GRIDS[name].options),
        "questions": total,
        "arms": len(grid.values.columns),
        "configurations": differences(grid),
        "sizes": summary,
    }


def render(payload: dict[str, Any]) -> str:
    machine = payload["machine"]
    spec = GRIDS[payload["grid"]]
    lines = [
        "# Configuration sweep: elimination against the full grid's argmax",
        "",
        f"Machine: {machine['cpu_model']}, {machine['logical_cores']} cores; "
        f"{payload['seconds']} s of replay. Grid: {spec.label} x k = 1..10 on "
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
                           ("one_look", "(c) one look, no elimination"),
                           ("pocock", "(d) until decided, Pocock spending")):  # fmt: skip
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
        lines.append(
            f"| {size['n']} | (d)'s answers / (a)'s | {size['pocock_answers_share']:.1%} | | | |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser("sweep", help="run the grid with the product (resumable)")
    sweep.add_argument("--limit", type=int, default=150)
    warming = commands.add_parser("warm", help="fill the cache in rounds, retriever by retriever")
    warming.add_argument("--limit", type=int, default=150)
    warming.add_argument("--step", type=int, default=50)
    warming.add_argument("--scratch", type=Path, default=Path("config_sweep_rounds"))
    again = commands.add_parser("replay", help="replay on subsets (no model call)")
    again.add_argument("--subsets", type=int, default=300)
    for command in (sweep, again):
        command.add_argument("--grid", choices=sorted(GRIDS), default="retrievers")
    args = parser.parse_args(argv)
    if args.command == "warm":
        warm(args.limit, args.step, args.scratch)
        return
    spec = GRIDS[args.grid]
    if args.command == "sweep":
        run_sweep(spec, args.limit)
        return
    started = time.perf_counter()
    payload = {
        "machine": machine_info(),
        "subsets": args.subsets,
        **replay(args.grid, args.subsets),
    }
    payload["seconds"] = round(time.perf_counter() - started, 1)
    (RESULTS / f"{spec.results}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / f"{spec.results}.md").write_text(render(payload), encoding="utf-8")
    print((RESULTS / f"{spec.results}.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
