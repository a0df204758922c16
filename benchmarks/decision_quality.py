"""How often does a sweep's decision pick well? The rule replayed on two large real sweeps, its
truth taken from questions it never saw.

Two large sweeps (300 CMRC 2018 and 270 SQuAD 2.0 questions, k = 1..10, the embedded model, the
judges the default objective needs and the reference matches) were run once with the product, as
a user would. Each replay draws a random subset of n questions for the rule (n = 50, 100, 150)
and takes the truth from the **other** questions of the sweep: the k with the highest mean
reference F1 there (a refusal on a question the set marks unanswerable is the right answer: F1
1, SQuAD 2.0's convention; an answer there scores 0). A pick is within the margin when its F1 on
those other questions is at most the margin below the truth's. Every figure is a count with its
95% Wilson interval.

Measured, each at margin 0.05 unless named:

- **decisions**: per objective (the judges' product, completeness, answer F1, exact match) and
  comparison (each k with the best, the rule; every pair both ways, the former rule), on the same
  subsets: the share decided, P(within the margin | decided), P(within the margin) of the pick or
  lean over every subset, and the mean regret. The rule runs as a user's first look does, at the
  level its spending gives a first look of n questions of the whole eval set (3,219 CMRC and
  1,406 SQuAD questions);
- **margins**: the share decided by the default objective at margins 0.02, 0.05 and 0.1;
- **plans**: where a subset is undecided and the plan names N questions the sweep has, the
  subset plus N - n more of the sweep's other questions, decided as the test's second look: how
  often N settles it (the plan aims at 80%);
- **until decided**: the sweep's questions in random orders, a look every 10 questions, up to
  all of them, as ``--until-decided --max-questions <the sweep's>`` runs (its test spends the
  error over those questions, O'Brien-Fleming), comparisons with the best beside all pairs at the
  same per-look levels: how many questions each needs to settle (median, quartiles), and how
  often it settles.

Usage::

    python benchmarks/decision_quality.py sweep --set cmrc2018_zh_chunked --limit 300
    python benchmarks/decision_quality.py sweep --set squad2_en_chunked --limit 300
    python benchmarks/decision_quality.py replay [--subsets 300] [--orders 100]

``sweep`` runs ``rag-judge sweep`` into ``results/decision_quality/<set>/`` (resumable). ``replay``
is pure CPU and writes ``results/decision_quality.{json,md}``. ``redecide --set <set>`` decides the
recorded sweep by this release's rule (no model call) into ``<set>/decided_now/``: summary.md,
decision.json and sweep.png.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _machine import machine_info
from _rates import Rate, shown

from rag_judge.core.simultaneous import pairwise_intervals
from rag_judge.data.eval_sets import load_eval_set
from rag_judge.jobs.sweep.decision.decide import compared_arms, decide_table
from rag_judge.jobs.sweep.decision.defaults import UNTIL_DECIDED_SPENDING
from rag_judge.jobs.sweep.decision.looks import SweepLooks, correlations_of, spent
from rag_judge.jobs.sweep.decision.objective import Objective, ObjectiveChoice, default_objective
from rag_judge.jobs.sweep.decision.outcomes import objective_table, with_refusals
from rag_judge.jobs.sweep.decision.recommend import Recommendation, recommend
from rag_judge.jobs.sweep.decision.sequential import replay_sequential

HERE = Path(__file__).parent
RESULTS = HERE / "results"
FOLDER = RESULTS / "decision_quality"
SETS = ("cmrc2018_zh_chunked", "squad2_en_chunked")
METRICS = "faithfulness,completeness,exact_match,answer_f1"
OBJECTIVES = ("faithfulness*completeness", "completeness", "answer_f1", "exact_match")
TRUTH = "answer_f1"
KS = tuple(range(1, 11))
SIZES = (50, 100, 150)
MARGIN = 0.05
MARGINS = (0.02, 0.05, 0.1)
ALPHA = 0.05


@dataclass(frozen=True)
class Sweep:
    """One large sweep, as the replay needs it."""

    name: str
    frame: pd.DataFrame
    truth: pd.DataFrame
    """Per question x k: reference F1 as the decision counts it (refusals valued)."""
    horizon: int
    """The eval set's questions: a first look's spending is of n over these."""


def run_sweep(name: str, limit: int) -> None:
    """The large sweep with the product's CLI, into ``results/decision_quality/<name>``."""
    out = FOLDER / name
    command = [
        str(Path(sys.executable).with_name("rag-judge")),
        "sweep",
        name,
        "--limit",
        str(limit),
        "--ks",
        "1-10",
        "--metrics",
        METRICS,
        "--no-reasons",
        "-o",
        str(out),
    ]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    seconds = time.perf_counter() - started
    machine = machine_info("llama-cpp-python")
    record = {"command": command[1:], "seconds": round(seconds, 1), "machine": machine}
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def load_sweep(name: str) -> Sweep:
    """A large sweep's per-question table and its reference F1 as the decision counts it."""
    frame = with_refusals(pd.read_parquet(FOLDER / name / "per_question.parquet"))
    truth = objective_table(frame, Objective.parse(TRUTH)).values
    return Sweep(name, frame, truth, len(load_eval_set(name).queries))


def first_level(n: int, horizon: int) -> float:
    """The level a sweep's first look at ``n`` of ``horizon`` questions has (default spending)."""
    return spent(n / horizon, ALPHA, "front")


def decide_subset(
    sweep: Sweep,
    ids: Sequence[str],
    objective: str,
    comparison: str,
    *,
    margin: float = MARGIN,
    level: float | None = None,
    seed: int = 0,
) -> tuple[Recommendation, np.ndarray, list[float], list[bool]]:
    """The rule on the questions ``ids``, as the product decides: the objective's table (a
    refusal valued, a failure missing), each k's cost and eligibility."""
    frame = sweep.frame[sweep.frame["question_id"].isin(ids)]
    arms = compared_arms(frame, Objective.parse(objective), KS)
    values = arms.values
    if comparison == "all_pairs":
        values = values[~np.isnan(values).any(axis=1)]
    found = recommend(
        values,
        arms.ks,
        costs=arms.costs,
        eligible=arms.eligible,
        why_not=arms.why_not,
        margin=margin,
        confidence=1 - (level or first_level(len(ids), sweep.horizon)),
        n_resamples=1000,
        seed=seed,
        comparison=comparison,  # type: ignore[arg-type]
    )
    return found, values, list(arms.costs), list(arms.eligible)


def pick_of(found: Recommendation) -> tuple[int, bool]:
    """The rule's k (recommended, else its lean), and whether it decided."""
    if found.recommended_k is not None:
        return found.recommended_k, True
    return found.best_k_by_mean or KS[0], False


def truth_regret(sweep: Sweep, others: Sequence[str]) -> dict[int, float]:
    """Per k, how far its F1 on ``others`` is below the best k's there."""
    means = sweep.truth.loc[[q for q in others if q in sweep.truth.index], list(KS)].mean()
    return {k: float(means.max() - means[k]) for k in KS}


def splits(sweep: Sweep, n: int, subsets: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """``subsets`` random (subset of n, the other questions) pairs, seeded."""
    universe = list(sweep.truth.index)
    rng = np.random.default_rng(seed + n)
    out = []
    for _ in range(subsets):
        order = list(rng.permutation(universe))
        out.append((order[:n], order[n:]))
    return out


def decisions(args: tuple[str, int, int]) -> list[dict[str, Any]]:
    """Every objective and comparison on the same subsets of one size."""
    name, n, subsets = args
    sweep = load_sweep(name)
    rows = []
    draws = splits(sweep, n, subsets, 0)
    for objective in OBJECTIVES:
        for comparison in ("best", "all_pairs"):
            decided = within_decided = within = 0
            regrets = []
            for seed, (ids, others) in enumerate(draws):
                found, *_ = decide_subset(sweep, ids, objective, comparison, seed=seed)
                k, ok = pick_of(found)
                regret = truth_regret(sweep, others)[k]
                decided += ok
                within_decided += ok and regret <= MARGIN + 1e-12
                within += regret <= MARGIN + 1e-12
                regrets.append(regret)
            rows.append(
                {
                    "set": name,
                    "n": n,
                    "objective": objective,
                    "comparison": comparison,
                    "decided": Rate(decided, subsets).as_json(),
                    "within_when_decided": Rate(within_decided, decided).as_json(),
                    "within": Rate(within, subsets).as_json(),
                    "mean_regret": round(float(np.mean(regrets)), 4),
                }
            )
            print({k: rows[-1][k] for k in ("set", "n", "objective", "comparison")}, flush=True)
    return rows


def margins(args: tuple[str, str, int, int]) -> list[dict[str, Any]]:
    """The default objective's decided share per margin, one size."""
    name, objective, n, subsets = args
    sweep = load_sweep(name)
    rows = []
    for margin in MARGINS:
        decided = within = 0
        for seed, (ids, others) in enumerate(splits(sweep, n, subsets, 0)):
            found, *_ = decide_subset(sweep, ids, objective, "best", margin=margin, seed=seed)
            k, ok = pick_of(found)
            decided += ok
            within += ok and truth_regret(sweep, others)[k] <= margin + 1e-12
        rows.append(
            {
                "set": name,
                "n": n,
                "objective": objective,
                "margin": margin,
                "decided": Rate(decided, subsets).as_json(),
                "within_when_decided": Rate(within, decided).as_json(),
            }
        )
    return rows


def plans(args: tuple[str, str, int, int]) -> dict[str, Any]:
    """Undecided subsets' plans (the product's own: ``decide_table`` as a first look of the
    sweep's test), checked on the sweep's other questions as the test's second look."""
    name, objective, n, subsets = args
    sweep = load_sweep(name)
    chosen = Objective.parse(objective)
    pool = len(sweep.truth)
    checked = settled = beyond = undecided = 0
    asked = []
    rng = np.random.default_rng(7)
    for seed, (ids, others) in enumerate(splits(sweep, n, subsets, 0)):
        frame = sweep.frame[sweep.frame["question_id"].isin(ids)]
        looks = SweepLooks(sweep.horizon, ALPHA, "front")
        first = decide_table(
            frame, ObjectiveChoice(chosen, chosen), KS, margin=MARGIN, looks=looks, seed=seed
        )
        found = first.recommendation
        if found is None or found.recommended_k is not None or found.too_few:
            continue
        undecided += 1
        if found.questions_needed is None:
            continue
        asked.append(found.questions_needed)
        if found.questions_needed > pool:
            beyond += 1
            continue
        more = list(rng.permutation(others))[: found.questions_needed - n]
        wider = sweep.frame[sweep.frame["question_id"].isin([*ids, *more])]
        second = decide_table(
            wider,
            ObjectiveChoice(chosen, chosen),
            KS,
            margin=MARGIN,
            looks=first.looks,
            seed=seed,
            plan=False,
        )
        checked += 1
        settled += second.recommended_k is not None
    return {
        "set": name,
        "n": n,
        "objective": objective,
        "subsets": subsets,
        "undecided": undecided,
        "planned": len(asked),
        "median_asked": float(np.median(asked)) if asked else None,
        "asked_beyond_the_sweep": beyond,
        "settled_at_the_plan": Rate(settled, checked).as_json(),
    }


def until_decided(args: tuple[str, str, str, int]) -> dict[str, Any]:
    """A run until decided over the sweep's questions in random orders."""
    name, objective, comparison, orders = args
    sweep = load_sweep(name)
    frame = sweep.frame
    arms = compared_arms(frame, Objective.parse(objective), KS)
    table = pd.DataFrame(arms.values, index=arms.table.values.index, columns=list(arms.ks))
    complete = table.dropna()
    rng = np.random.default_rng(11)
    used, answers, settled = [], [], 0
    for seed in range(orders):
        order = complete.index[rng.permutation(len(complete))]
        values = complete.loc[order].to_numpy(dtype=float)
        run = (
            replay_sequential(
                values,
                KS,
                margin=MARGIN,
                step=10,
                horizon=len(values),
                spending=UNTIL_DECIDED_SPENDING,
                costs=arms.costs,
                n_resamples=500,
                seed=seed,
            )
            if comparison == "best"
            else _all_pairs_run(values, len(values), arms.costs, seed)
        )
        ok = run[0] if isinstance(run, tuple) else run.recommendation.recommended_k is not None
        count = run[1] if isinstance(run, tuple) else run.questions_used
        answers.append(run[2] if isinstance(run, tuple) else run.answers_used)
        settled += ok
        used.append(count if ok else len(values))
    quartiles = np.percentile(used, [25, 50, 75]).tolist()
    return {
        "set": name,
        "objective": objective,
        "comparison": comparison,
        "orders": orders,
        "questions": len(complete),
        "settled": Rate(settled, orders).as_json(),
        "questions_used_quartiles": [round(q, 1) for q in quartiles],
        "mean_answers_used": round(float(np.mean(answers)), 1),
        "answers_fixed": len(complete) * len(KS),
    }


def _all_pairs_run(
    values: np.ndarray, horizon: int, costs: Sequence[float], seed: int
) -> tuple[bool, int, int]:
    """The former rule until decided: all pairs both ways, at the same looks' levels; a k out
    when another beats it by more than the margin or a cheaper one beats it at all."""
    looks = SweepLooks(horizon, ALPHA, UNTIL_DECIDED_SPENDING)
    active = list(range(len(KS)))
    cost = np.asarray(costs)
    used = answers = 0
    while used < len(values):
        answers += min(10, len(values) - used) * len(active)
        used = min(used + 10, len(values))
        seen = values[:used][:, active]
        level = looks.level(used, correlations_of(seen))
        if level <= 0:  # the look adds nothing the spending allows: skipped, as the product does
            continue
        looks = looks.with_look(used, level)
        found = recommend(
            seen,
            [KS[i] for i in active],
            costs=cost[active].tolist(),
            margin=MARGIN,
            confidence=1 - level,
            n_resamples=500,
            seed=seed,
            comparison="all_pairs",
        )
        if found.recommended_k is not None:
            return True, used, answers
        if len(active) > 1:
            pairs = pairwise_intervals(seen, confidence=1 - level, n_resamples=500, seed=seed)
            cheaper = cost[active][:, None] <= cost[active][None, :]
            np.fill_diagonal(cheaper, False)
            out = np.any(pairs.low > MARGIN + 1e-12, axis=0) | np.any(
                (pairs.low > 1e-12) & cheaper, axis=0
            )
            active = [i for i, gone in zip(active, out, strict=True) if not gone]
    return False, used, answers


STAGES = ("until_decided", "decisions", "margins", "plans")


def replay(
    subsets: int, orders: int, only: Sequence[str] = STAGES, plan_subsets: int | None = None
) -> dict[str, Any]:
    """Every measurement of the module docstring, two processes at a time. Each finished stage
    is kept in ``results/decision_quality.partial.json`` (for these subsets and orders), so an
    interrupted replay goes on from the stage it was in."""
    default = {"cmrc2018_zh_chunked": "answer_f1", "squad2_en_chunked": "answer_f1"}
    partial = RESULTS / "decision_quality.partial.json"
    key = f"{subsets}/{orders}"
    kept = json.loads(partial.read_text(encoding="utf-8")) if partial.is_file() else {}
    done: dict[str, Any] = kept.get(key, {})
    stages = {
        "until_decided": (
            until_decided,
            [(s, default[s], c, orders) for s in SETS for c in ("best", "all_pairs")],
        ),
        "decisions": (decisions, [(s, n, subsets) for s in SETS for n in SIZES]),
        "margins": (
            margins,
            [
                (s, o, n, subsets)
                for s in SETS
                for o in (*OBJECTIVES[:1], "answer_f1")
                for n in (100, 150)
            ],
        ),
        "plans": (
            plans,
            [(s, default[s], n, plan_subsets or subsets) for s in SETS for n in SIZES],
        ),
    }
    with ProcessPoolExecutor(max_workers=2) as pool:
        for name, (work, cells) in stages.items():
            if name in done or name not in only:
                continue
            found = list(pool.map(work, cells))
            done[name] = [r for rows in found for r in (rows if isinstance(rows, list) else [rows])]
            partial.write_text(json.dumps({key: done}, indent=2) + "\n", encoding="utf-8")
            print(f"stage {name} done", flush=True)
    partial.unlink()
    return {**done, "sets": {s: _describe(load_sweep(s)) for s in SETS}}


def _describe(sweep: Sweep) -> dict[str, Any]:
    """Each k's F1 and objective over the whole sweep (the table in the report)."""
    means = sweep.truth.mean()
    objective = objective_table(sweep.frame, Objective.parse(OBJECTIVES[0])).values.mean()
    return {
        "questions": len(sweep.truth),
        "horizon": sweep.horizon,
        "f1": {str(k): round(float(means[k]), 4) for k in KS},
        "judges": {str(k): round(float(objective[k]), 4) for k in KS},
    }


def render(payload: dict[str, Any]) -> str:
    """The markdown report."""
    machine = payload["machine"]
    lines = [
        "# Decision quality: the rule replayed on two large sweeps, truth out of sample",
        "",
        f"Written by `benchmarks/decision_quality.py replay` ({payload['subsets']} random "
        f"subsets per size, {payload['orders']} orders until decided; no model call). Sweeps: "
        f"the embedded model, `--metrics {METRICS} --no-reasons`, k = 1..10 "
        "(`results/decision_quality/<set>/run.json`). Replay machine: "
        f"{machine['cpu_model']}, {machine['logical_cores']} cores. Truth: the k with the highest "
        "reference F1 on the questions the subset did not use; within the margin: the pick's F1 "
        "there at most 0.05 below it. Every rate: value [95% Wilson interval] (count).",
        "",
    ]
    for name, about in payload["sets"].items():
        lines += [
            f"**{name}**: {about['questions']} questions swept (of {about['horizon']} in the "
            "set). F1 per k: "
            + ", ".join(f"{k}: {v:.3f}" for k, v in about["f1"].items())
            + "; faithfulness*completeness per k: "
            + ", ".join(f"{k}: {v:.3f}" for k, v in about["judges"].items())
            + ".",
            "",
        ]
    lines += [
        "## Decisions per objective: each k with the best (the rule) beside all pairs",
        "",
        "| set | n | objective | comparison | decided | within the margin when decided "
        "| pick or lean within the margin | mean regret (F1) |",
        "|---|---:|---|---|---|---|---|---:|",
    ]
    for r in payload["decisions"]:
        lines.append(
            f"| {r['set']} | {r['n']} | `{r['objective']}` | {r['comparison']} "
            f"| {shown(r['decided'], 2)} | {shown(r['within_when_decided'], 2)} "
            f"| {shown(r['within'], 2)} | {r['mean_regret']:.3f} |"
        )
    lines += [
        "",
        "## The decided share per margin (comparisons with the best)",
        "",
        "| set | n | objective | margin | decided | within its margin when decided |",
        "|---|---:|---|---:|---|---|",
    ]
    for r in payload["margins"]:
        lines.append(
            f"| {r['set']} | {r['n']} | `{r['objective']}` | {r['margin']:g} "
            f"| {shown(r['decided'], 2)} | {shown(r['within_when_decided'], 2)} |"
        )
    lines += [
        "",
        '## "About N questions would settle it", checked as a second look',
        "",
        "| set | n | objective | subsets | undecided | planned | median N | N beyond the sweep "
        "| settled at N |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in payload["plans"]:
        median = "" if r["median_asked"] is None else f"{r['median_asked']:,.0f}"
        lines.append(
            f"| {r['set']} | {r['n']} | `{r['objective']}` | {r.get('subsets', '')} "
            f"| {r['undecided']} | {r['planned']} "
            f"| {median} | {r['asked_beyond_the_sweep']} "
            f"| {shown(r['settled_at_the_plan'], 2)} |"
        )
    lines += [
        "",
        "## Until decided: questions to settle (a look every 10), the sweep's questions in "
        "random orders",
        "",
        "| set | objective | comparison | settled | questions used (25%, median, 75%; "
        "unsettled runs count all) | answers generated and judged (mean; a fixed sweep of every "
        "question) |",
        "|---|---|---|---|---|---|",
    ]
    for r in payload["until_decided"]:
        q = r["questions_used_quartiles"]
        lines.append(
            f"| {r['set']} | `{r['objective']}` | {r['comparison']} "
            f"| {shown(r['settled'], 2)} | {q[0]:.0f}, **{q[1]:.0f}**, {q[2]:.0f} of "
            f"{r['questions']} | {r['mean_answers_used']:,.0f} of {r['answers_fixed']:,} |"
        )
    return "\n".join(lines) + "\n"


def redecide(name: str) -> None:
    """The large sweep's recorded per-question table decided by this release's rule, as a sweep
    of all of it would decide on a first look (default objective, margin, confidence), with its
    report: ``results/decision_quality/<name>/decided_now/`` (the sweep itself is not re-run:
    the decision uses no model call)."""
    from rag_judge.jobs.sweep.job import decided
    from rag_judge.jobs.sweep.options import SweepOptions
    from rag_judge.jobs.sweep.result import SweepResult
    from rag_judge.report.sweep_report import write_sweep_report

    frame = pd.read_parquet(FOLDER / name / "per_question.parquet")
    eval_set = load_eval_set(name)
    model = "local/qwen2.5-coder-1.5b"
    result = SweepResult(
        per_question=frame, ks=KS, metrics=tuple(METRICS.split(",")), model=model, generator=model
    )
    options = SweepOptions.build(ks="1-10", metrics=METRICS, reasons=False)
    objective = default_objective(eval_set.reference_kind)
    options = replace(options, objective=objective)
    looks = SweepLooks(len(eval_set.queries), ALPHA)
    result = decided(result, options, looks, horizon=len(eval_set.queries))
    out = FOLDER / name / "decided_now"
    write_sweep_report(result, out, title=f"{name} k-sweep")
    for extra in (
        "per_question.parquet",
        "per_question.csv",
        "report.html",
        "summary.csv",
        "ledger.json",
    ):
        (out / extra).unlink(missing_ok=True)
    print(result.decision.headline if result.decision else "no decision")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser("sweep", help="run the large sweep with the product")
    sweep.add_argument("--set", choices=SETS, required=True)
    sweep.add_argument("--limit", type=int, default=300)
    now = commands.add_parser("redecide", help="decide a large sweep by this release's rule")
    now.add_argument("--set", choices=SETS, required=True)
    again = commands.add_parser("replay", help="replay the rule on subsets (no model call)")
    again.add_argument("--subsets", type=int, default=300)
    again.add_argument("--orders", type=int, default=100)
    again.add_argument(
        "--only", nargs="+", choices=STAGES, default=list(STAGES),
        help="run these stages and keep the others from the last results",
    )  # fmt: skip
    again.add_argument("--plan-subsets", type=int, help="subsets per size for the plans")
    args = parser.parse_args(argv)
    if args.command == "sweep":
        run_sweep(args.set, args.limit)
        return
    if args.command == "redecide":
        redecide(args.set)
        return
    started = time.perf_counter()
    last = RESULTS / "decision_quality.json"
    kept = json.loads(last.read_text(encoding="utf-8")) if set(args.only) != set(STAGES) else {}
    payload = {
        **kept,
        "machine": machine_info(),
        "subsets": args.subsets,
        "orders": args.orders,
        **replay(args.subsets, args.orders, args.only, args.plan_subsets),
    }
    payload["seconds"] = round(time.perf_counter() - started, 1)
    (RESULTS / "decision_quality.json").write_text(
        json.dumps(payload, indent=2) + "\n", encoding="utf-8"
    )
    (RESULTS / "decision_quality.md").write_text(render(payload), encoding="utf-8")
    print((RESULTS / "decision_quality.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
