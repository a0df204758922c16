"""`sweep --until-decided`: does elimination keep the best k, and what does it save?

Two measurements of the product's sequential rule
(:func:`rag_judge.jobs.sweep.decision.sequential.replay_sequential`, the function the job's
looks are):

- ``simulate``: seeded runs with known per-k means (questions correlated across ks through a
  per-question ease, as real questions are), for each spending function and step, over a
  horizon of the run's own 400 questions: how often a truly best k is eliminated, how often the
  recommended k is more than the margin below the best (the rule's stated error is 5%), how
  often it settles, and the share of answers saved against a fixed sweep of the same maximum;
- ``replay``: each spending function on the large sweeps of ``decision_quality.py`` (their
  per-question tables by reference F1, questions in random orders), spending over the sweep's
  questions as ``--until-decided --max-questions <the sweep's>`` does: questions and answers
  used against a fixed sweep of every question, and P(regret <= margin) by reference F1 over
  the sweep.

    python benchmarks/until_decided.py simulate [--runs 200] [--steps 20]
    python benchmarks/until_decided.py replay [--orders 100]

Writes results/until_decided.{json,md} (the section it ran). Pure CPU, no model call.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _machine import machine_info

from rag_judge.jobs.sweep.decision.decide import compared_arms
from rag_judge.jobs.sweep.decision.defaults import SPENDINGS
from rag_judge.jobs.sweep.decision.objective import Objective
from rag_judge.jobs.sweep.decision.sequential import replay_sequential

HERE = Path(__file__).parent
RESULTS = HERE / "results"
KS = tuple(range(1, 11))
MARGIN = 0.05
SCENARIOS = {
    # per-k means of a 0/1 outcome, shaped like the CMRC sweep's (a plateau from k = 4)
    "plateau": (0.40, 0.44, 0.48, 0.52, 0.53, 0.53, 0.52, 0.53, 0.54, 0.53),
    # one k clearly best, the far ends clearly worse
    "peaked": (0.25, 0.35, 0.45, 0.60, 0.50, 0.45, 0.42, 0.40, 0.38, 0.36),
    # no difference at all: every k is within the margin; the cheapest should be named
    "flat": (0.50,) * 10,
}


def simulated_table(rng: np.random.Generator, means: Sequence[float], n: int) -> np.ndarray:
    """0/1 outcomes with the given per-k means, correlated across ks: a question's ease u is
    shared, and k answers it when its own draw falls under a threshold shifted by u."""
    targets = np.asarray(means)
    ease = rng.uniform(size=(n, 1))
    own = rng.uniform(size=(n, len(targets)))
    # P(0.5 own + 0.5 ease < t) = target: solve t for the triangular sum on [0, 1]
    thresholds = np.where(targets <= 0.5, np.sqrt(targets / 2), 1 - np.sqrt((1 - targets) / 2))
    return (0.5 * own + 0.5 * ease < thresholds).astype(float)


def simulate(
    runs: int, steps: Sequence[int] = (20,), max_questions: int = 400
) -> list[dict[str, Any]]:
    rows = []
    for name, means in SCENARIOS.items():
        best = max(means)
        for spending in SPENDINGS:
            for step in steps:
                rng = np.random.default_rng(0)
                eliminated_best = wrong = settled = 0
                saved, used = [], []
                for seed in range(runs):
                    table = simulated_table(rng, means, max_questions)
                    run = replay_sequential(
                        table, KS, margin=MARGIN, step=step, spending=spending,
                        n_resamples=500, seed=seed,
                    )  # fmt: skip
                    out = {k for look in run.looks for k in look.eliminated}
                    eliminated_best += any(means[k - 1] == best for k in out)
                    k = run.recommendation.recommended_k
                    settled += k is not None
                    wrong += k is not None and best - means[k - 1] > MARGIN
                    saved.append(1 - run.answers_used / (max_questions * len(KS)))
                    used.append(run.questions_used)
                rows.append(
                    {
                        "scenario": name,
                        "spending": spending,
                        "step": step,
                        "runs": runs,
                        "max_questions": max_questions,
                        "p_best_eliminated": eliminated_best / runs,
                        "p_recommended_beyond_margin": wrong / runs,
                        "p_settled": settled / runs,
                        "answers_saved": float(np.mean(saved)),
                        "median_questions_used": float(np.median(used)),
                    }
                )
                print(rows[-1], flush=True)
    return rows


def replay(orders: int) -> list[dict[str, Any]]:
    """The sequential rule on the large sweeps, questions in random orders, each spending."""
    import decision_quality as dq

    rows = []
    for name in dq.SETS:
        sweep = dq.load_sweep(name)
        objective = "answer_f1"
        arms = compared_arms(sweep.frame, Objective.parse(objective), KS)
        table = pd.DataFrame(arms.values, index=arms.table.values.index, columns=list(KS))
        table = table.dropna()
        truth = sweep.truth.loc[table.index].mean(axis=0).reindex(KS)
        regret = {k: float(truth.max() - truth[k]) for k in KS}
        rng = np.random.default_rng(0)
        for spending in SPENDINGS:
            picks, used, answers, settled = [], [], [], 0
            for seed in range(orders):
                order = rng.permutation(len(table))
                values = table.to_numpy(dtype=float)[order]
                run = replay_sequential(
                    values, KS, margin=MARGIN, step=10, spending=spending, costs=arms.costs,
                    horizon=len(values), n_resamples=500, seed=seed,
                )  # fmt: skip
                found = run.recommendation
                picks.append(found.recommended_k or found.best_k_by_mean or KS[0])
                settled += found.recommended_k is not None
                used.append(run.questions_used)
                answers.append(run.answers_used)
            rows.append(
                {
                    "set": name,
                    "objective": objective,
                    "spending": spending,
                    "orders": orders,
                    "questions": len(table),
                    "horizon": len(table),
                    "median_questions_used": float(np.median(used)),
                    "mean_answers_used": float(np.mean(answers)),
                    "answers_fixed": len(table) * len(KS),
                    "p_settled": settled / orders,
                    "p_regret_within_margin": float(np.mean([regret[k] <= MARGIN for k in picks])),
                }
            )
            print(rows[-1], flush=True)
    return rows


def render(payload: dict[str, Any]) -> str:
    lines = [
        "# `sweep --until-decided`: what elimination keeps and saves",
        "",
        f"Written by `benchmarks/until_decided.py` (no model call); margin {MARGIN}, 95% "
        f"overall. Machine: {payload['machine']['cpu_model']}.",
        "",
    ]
    if payload.get("simulate"):
        lines += [
            "## Simulation: known per-k means, questions correlated across ks",
            "",
            "| scenario | spending | step | runs | best k eliminated | recommended beyond the "
            "margin | settled | answers saved | median questions |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in payload["simulate"]:
            lines.append(
                f"| {r['scenario']} | {r['spending']} | {r['step']} | {r['runs']} "
                f"| {r['p_best_eliminated']:.3f} | {r['p_recommended_beyond_margin']:.3f} "
                f"| {r['p_settled']:.2f} | {r['answers_saved']:.0%} "
                f"| {r['median_questions_used']:.0f} of {r['max_questions']} |"
            )
        lines.append("")
    if payload.get("replay"):
        lines += [
            "## Replay on the large sweeps (questions in random orders)",
            "",
            "| set | spending | questions used (median) | answers used | answers, fixed sweep "
            "| settled | P(regret ≤ margin) |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for r in payload["replay"]:
            lines.append(
                f"| {r['set']} | {r['spending']} | {r['median_questions_used']:.0f} of "
                f"{r['questions']} | {r['mean_answers_used']:,.0f} | {r['answers_fixed']:,} "
                f"| {r['p_settled']:.2f} | {r['p_regret_within_margin']:.2f} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    simulating = commands.add_parser("simulate")
    simulating.add_argument("--runs", type=int, default=200)
    simulating.add_argument("--steps", type=int, nargs="+", default=[20])
    commands.add_parser("replay").add_argument("--orders", type=int, default=100)
    args = parser.parse_args(argv)
    path = RESULTS / "until_decided.json"
    payload = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    payload["machine"] = machine_info()
    if args.command == "simulate":
        payload["simulate"] = simulate(args.runs, args.steps)
    else:
        payload["replay"] = replay(args.orders)
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (RESULTS / "until_decided.md").write_text(render(payload), encoding="utf-8")


if __name__ == "__main__":
    main()
