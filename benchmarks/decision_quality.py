"""How often does a sweep's decision pick well? Replay decision rules on subsets of a large sweep.

A large sweep (several hundred questions, k = 1..10, the judges the default objective needs,
with reference answers) is run once with the product, as a user would. The k that is best by
reference F1 over all of its questions is taken as the truth (a refusal on a question the set
marks unanswerable is the right answer: F1 1, SQuAD 2.0's convention; an answer there scores 0).
Then every rule is replayed on many random subsets of 20, 50 and 100 of those questions, from
the same per-question table (no model call), and scored by its regret: the truth's F1 minus the
F1 (over all questions) of the k the rule picked. Exact match is reported beside it.

Rules (objective ``faithfulness*completeness`` unless named):

- ``old``: the previous release's rule, the highest mean over the questions scored at each k
  (a refusal has no faithfulness, so it leaves that k's mean);
- ``argmax``: the highest mean with every question counted, a refusal valued (0, or 1 on an
  unanswerable question);
- ``smoothed``: the same, after averaging each k's mean with its neighbours' (quality moves
  smoothly with k: borrow strength across ks);
- ``new``: the product's decision (:func:`rag_judge.jobs.sweep.decision.recommend.recommend`): the
  cheapest k confirmed within the margin of the best, with simultaneous intervals; when it says
  "undecided", the pick is its best k by mean (what the summary names as the lean), and the
  share it decided is reported with its accuracy when it did;
- ``new_smoothed``: ``new`` on per-question values averaged over neighbouring ks;
- ``argmax_f1``: the highest mean reference F1 (every question counted): what a user with
  reference answers could use instead of the judges.

Usage::

    python benchmarks/decision_quality.py sweep --set cmrc2018_zh_chunked --limit 300
    python benchmarks/decision_quality.py sweep --set squad2_en_chunked --limit 300
    python benchmarks/decision_quality.py replay [--subsets 500]

``sweep`` runs ``rag-judge sweep`` into ``results/decision_quality/<set>/`` (resumable: an
interrupted sweep continues from the response cache). ``replay`` is pure CPU (minutes) and writes
``results/decision_quality.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _machine import machine_info

from rag_judge.jobs.sweep.decision.columns import ANSWER_TOKENS, ANSWERABLE, REFUSED
from rag_judge.jobs.sweep.decision.objective import Objective
from rag_judge.jobs.sweep.decision.outcomes import objective_table, with_refusals
from rag_judge.jobs.sweep.decision.recommend import recommend

HERE = Path(__file__).parent
RESULTS = HERE / "results"
FOLDER = RESULTS / "decision_quality"
SETS = ("cmrc2018_zh_chunked", "squad2_en_chunked")
OBJECTIVE = "faithfulness*completeness"
TRUTH = "answer_f1"
METRICS = "faithfulness,completeness,exact_match,answer_f1"
KS = tuple(range(1, 11))
SIZES = (20, 50, 100)
MARGINS = (0.02, 0.05, 0.1)
"""The new rules' margins tried; regret is scored at 0.02 and 0.05 for every rule."""
SCORED = (0.02, 0.05)
RULES = ("old", "argmax", "smoothed", "new", "new_smoothed", "argmax_f1")
Pick = tuple[int, bool | None, int | None]
"""A rule's k, whether it decided (None: the rule always names one), questions it asks for."""


@dataclass(frozen=True)
class Sweep:
    """One large sweep, as the replay needs it."""

    name: str
    frame: pd.DataFrame
    truth: pd.DataFrame
    """Per question (rows) x k: reference F1 as the decision counts it (refusals valued)."""
    exact: pd.DataFrame
    """The same for exact match."""
    objective: pd.DataFrame
    """Per question x k: the objective as the decision counts it (questions with values)."""
    raw: pd.DataFrame
    """Per question x k: the raw product of the judges (refusals missing), the old rule's."""
    tokens: pd.DataFrame
    refused: pd.DataFrame
    answerable: pd.Series


def run_sweep(name: str, limit: int) -> None:
    """The large sweep with the product's CLI, into ``results/decision_quality/<name>``."""
    out = FOLDER / name
    command = [
        str(Path(sys.executable).with_name("rag-judge")),
        "sweep", name, "--limit", str(limit), "--ks", "1-10", "--metrics", METRICS,
        "--no-reasons", "-o", str(out),
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True)
    seconds = time.perf_counter() - started
    machine = machine_info("llama-cpp-python")
    record = {"command": command[1:], "seconds": round(seconds, 1), "machine": machine}
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def load_sweep(name: str) -> Sweep:
    """A large sweep's per-question table and the tables the replay reads."""
    frame = with_refusals(pd.read_parquet(FOLDER / name / "per_question.parquet"))
    truth = objective_table(frame, Objective.parse(TRUTH)).values
    exact = objective_table(frame, Objective.parse("exact_match")).values
    objective = objective_table(frame, Objective.parse(OBJECTIVE)).values
    product = frame["faithfulness"] * frame["completeness"]
    raw = frame.assign(_raw=product).pivot(index="question_id", columns="k", values="_raw")
    tokens = frame.pivot(index="question_id", columns="k", values=ANSWER_TOKENS).astype(float)
    refused = frame.pivot(index="question_id", columns="k", values=REFUSED)
    answerable = frame.groupby("question_id")[ANSWERABLE].first().fillna(True).astype(bool)
    return Sweep(name, frame, truth, exact, objective, raw, tokens, refused, answerable)


def smooth(means: np.ndarray) -> np.ndarray:
    """Each k's value averaged with its neighbours' (the ends with their one neighbour)."""
    padded = np.pad(means, [(0, 0)] * (means.ndim - 1) + [(1, 1)], mode="edge")
    return (padded[..., :-2] + padded[..., 1:-1] + padded[..., 2:]) / 3


def argmax(means: np.ndarray) -> int:
    """The first (smallest, cheapest) k of the highest mean."""
    return KS[int(np.flatnonzero(means >= means.max() - 1e-12)[0])]


def make_rules(sweep: Sweep, margin: float) -> dict[str, Callable[[list[str]], Pick]]:
    """Each rule as a function of a subset's question ids."""

    def old(ids: list[str]) -> Pick:
        means = sweep.raw.loc[ids].astype(float).mean(skipna=True)
        means = means.reindex(KS)
        return argmax(means.fillna(-1.0).to_numpy()), None, None

    def counted(ids: list[str]) -> np.ndarray:
        kept = [q for q in ids if q in sweep.objective.index]
        return sweep.objective.loc[kept, list(KS)].to_numpy(dtype=float)

    def every(ids: list[str]) -> Pick:
        return argmax(counted(ids).mean(axis=0)), None, None

    def smoothed(ids: list[str]) -> Pick:
        return argmax(smooth(counted(ids).mean(axis=0))), None, None

    def decided(ids: list[str], *, borrow: bool) -> Pick:
        table = counted(ids)
        kept = [q for q in ids if q in sweep.objective.index]
        answerable = [q for q in kept if sweep.answerable[q]]
        refused_all = (
            sweep.refused.loc[answerable, list(KS)].fillna(False).astype(bool).all(axis=0)
            if answerable
            else pd.Series(False, index=list(KS))
        )
        found = recommend(
            smooth(table) if borrow else table,
            KS,
            costs=sweep.tokens.loc[kept, list(KS)].mean(axis=0).tolist(),
            eligible=(~refused_all).tolist(),
            margin=margin,
            n_resamples=1000,
            seed=len(ids),
        )
        if found.recommended_k is not None:
            return found.recommended_k, True, None
        return found.best_k_by_mean or KS[0], False, found.questions_needed

    def by_f1(ids: list[str]) -> Pick:
        kept = [q for q in ids if q in sweep.truth.index]
        means = sweep.truth.loc[kept, list(KS)].to_numpy(dtype=float).mean(axis=0)
        return argmax(means), None, None

    return {
        "old": old,
        "argmax": every,
        "smoothed": smoothed,
        "new": lambda ids: decided(ids, borrow=False),
        "new_smoothed": lambda ids: decided(ids, borrow=True),
        "argmax_f1": by_f1,
    }


def replay(sweep: Sweep, subsets: int, seed: int = 0) -> dict[str, Any]:
    """Every rule on ``subsets`` random subsets per size and margin, scored against the truth."""
    truth_f1 = sweep.truth.mean(axis=0).reindex(KS)
    truth_em = sweep.exact.reindex(sweep.truth.index).mean(axis=0).reindex(KS)
    best = argmax(truth_f1.to_numpy())
    regret_f1 = {k: float(truth_f1.max() - truth_f1[k]) for k in KS}
    regret_em = {k: float(truth_em[best] - truth_em[k]) for k in KS}
    universe = list(sweep.truth.index)
    rng = np.random.default_rng(seed)
    orders = [list(rng.permutation(universe)) for _ in range(subsets)]
    draws = {n: [order[:n] for order in orders] for n in SIZES}
    rows = []
    for n in SIZES:
        for margin in MARGINS:
            rules = make_rules(sweep, margin)
            for name in RULES:
                has_margin = name.startswith("new")
                if margin != MARGINS[0] and not has_margin:
                    continue  # the margin changes only the new rules
                picks = [rules[name](ids) for ids in draws[n]]
                shown = margin if has_margin else None
                rows.append(_score(name, shown, n, picks, regret_f1, regret_em))
                if name == "new":
                    rows[-1].update(_needed_kept(rules[name], orders, picks, len(universe)))
    per_k = {
        k: {
            "f1": float(truth_f1[k]),
            "exact_match": float(truth_em[k]),
            "objective": float(sweep.objective[k].mean()),
            "refusal_rate": float(sweep.refused[k].astype(float).mean()),
            "prompt_tokens": float(sweep.tokens[k].mean()),
        }
        for k in KS
    }
    return {
        "set": sweep.name,
        "truth_stability": truth_stability(sweep.truth[list(KS)].to_numpy(dtype=float)),
        "questions": len(universe),
        "questions_with_objective": len(sweep.objective),
        "unanswerable": int((~sweep.answerable.reindex(universe)).sum()),
        "truth_k": best,
        "per_k": per_k,
        "rows": rows,
    }


def _needed_kept(
    rule: Callable[[list[str]], Pick], orders: list[list[str]], picks: Sequence[Pick], total: int
) -> dict[str, Any]:
    """Is "about N questions would settle it" kept? Where a subset was undecided and asked for
    N questions the sweep has, the rule on the first N of the same order: the share decided
    (80% is what the estimate aims at)."""
    asked = [(order, q) for order, (_, ok, q) in zip(orders, picks, strict=True)
             if ok is False and q is not None and q <= total]  # fmt: skip
    settled = [rule(order[:q])[1] is True for order, q in asked]
    return {
        "needed_checked": len(asked),
        "needed_asked_beyond_sweep": sum(
            1 for _, ok, q in picks if ok is False and q is not None and q > total
        ),
        "p_decided_at_needed": float(np.mean(settled)) if settled else None,
    }


def truth_stability(table: np.ndarray, resamples: int = 2000, seed: int = 0) -> dict[str, float]:
    """How sure the oracle itself is: over bootstrap resamples of its questions, the share in
    which each k has the highest mean F1 (ks that never do are left out)."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(table), size=(resamples, len(table)))
    means = table[rows].mean(axis=1)
    best = means.argmax(axis=1)
    return {str(KS[i]): float(np.mean(best == i)) for i in range(len(KS)) if np.any(best == i)}


def _score(
    name: str,
    margin: float | None,
    n: int,
    picks: Sequence[Pick],
    regret_f1: dict[int, float],
    regret_em: dict[int, float],
) -> dict[str, Any]:
    regrets = np.array([regret_f1[k] for k, _, _ in picks])
    row: dict[str, Any] = {
        "rule": name,
        "margin": margin,
        "n": n,
        **{f"p_regret_within_{m}": float(np.mean(regrets <= m + 1e-12)) for m in SCORED},
        "mean_regret_f1": float(regrets.mean()),
        "mean_regret_em": float(np.mean([regret_em[k] for k, _, _ in picks])),
        "picks": {str(k): sum(p == k for p, _, _ in picks) for k in KS},
    }
    if margin is not None:
        row["p_regret_within_margin"] = float(np.mean(regrets <= margin + 1e-12))
    decided = [(k, ok) for k, ok, _ in picks if ok is not None]
    if decided and margin is not None:
        hits = [regret_f1[k] <= margin + 1e-12 for k, ok in decided if ok]
        needed = [q for _, ok, q in picks if ok is False and q is not None]
        row["share_decided"] = float(np.mean([ok for _, ok in decided]))
        row["p_regret_within_margin_when_decided"] = float(np.mean(hits)) if hits else None
        row["median_questions_needed"] = float(np.median(needed)) if needed else None
    return row


def render(results: list[dict[str, Any]], machine: dict[str, Any], subsets: int) -> str:
    """The markdown report."""
    lines = [
        "# Decision quality: how often each rule's k is within the margin of the best",
        "",
        f"Written by `benchmarks/decision_quality.py replay` ({subsets} random subsets per "
        f"size, no model call). Sweeps: the embedded model, `--metrics {METRICS} --no-reasons`, "
        "k = 1..10 (`results/decision_quality/<set>/run.json` has each sweep's command, time "
        f"and CPU). Replay machine: {machine['cpu_model']}, {machine['logical_cores']} cores.",
        "",
        "Truth: the k with the highest mean reference F1 over every question of the sweep (a "
        "refusal of an unanswerable question scores 1, any answer there 0). Regret: the "
        "truth's F1 minus the picked k's F1, both over every question.",
        "",
    ]
    for result in results:
        lines += _set_section(result)
    return "\n".join(lines) + "\n"


def _set_section(result: dict[str, Any]) -> list[str]:
    lines = [
        f"## {result['set']}: {result['questions']} questions"
        + (f" ({result['unanswerable']} unanswerable)" if result["unanswerable"] else ""),
        "",
        f"The truth is k = {result['truth_k']}. The oracle is itself a sample: over 2,000 "
        "bootstrap resamples of its questions, the k with the highest F1 is "
        + ", ".join(
            f"k = {k} in {share:.0%}"
            for k, share in sorted(result["truth_stability"].items(), key=lambda kv: -kv[1])
        )
        + f". Over every question ({result['questions_with_objective']} have the objective at "
        "every k):",
        "",
        "| k | F1 | exact match | faithfulness*completeness (refusals counted) | refusals "
        "| generator prompt tokens |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for k, row in result["per_k"].items():
        mark = f"**{k}**" if int(k) == result["truth_k"] else str(k)
        lines.append(
            f"| {mark} | {row['f1']:.3f} | {row['exact_match']:.3f} | {row['objective']:.3f} "
            f"| {row['refusal_rate']:.2f} | {row['prompt_tokens']:,.0f} |"
        )
    lines += ["", "| questions | rule | margin | P(regret ≤ 0.02) | P(regret ≤ 0.05) | "
              "P(regret ≤ its margin) | mean regret (F1) | EM below the truth's k | decided "
              "| P(regret ≤ margin) when decided | median questions asked for | decided at "
              "the questions asked for |",
              "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for row in result["rows"]:
        decided = row.get("share_decided")
        when = row.get("p_regret_within_margin_when_decided")
        needed = row.get("median_questions_needed")
        margin = "" if row["margin"] is None else f"{row['margin']:g}"
        lines.append(
            f"| {row['n']} | {row['rule']} | {margin} "
            f"| {row['p_regret_within_0.02']:.2f} | {row['p_regret_within_0.05']:.2f} "
            f"| {'' if row['margin'] is None else format(row['p_regret_within_margin'], '.2f')} "
            f"| {row['mean_regret_f1']:.3f} | {row['mean_regret_em']:+.3f} "
            f"| {'' if decided is None else f'{decided:.2f}'} "
            f"| {'' if when is None else f'{when:.2f}'} "
            f"| {'' if needed is None else f'{needed:,.0f}'} "
            f"| {_kept(row)} |"
        )
    return [*lines, ""]


def _kept(row: dict[str, Any]) -> str:
    """The share decided at the questions asked for, over the subsets this sweep could check."""
    if row.get("p_decided_at_needed") is None:
        return ""
    return f"{row['p_decided_at_needed']:.2f} of {row['needed_checked']}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser("sweep", help="run the large sweep with the product")
    sweep.add_argument("--set", choices=SETS, required=True)
    sweep.add_argument("--limit", type=int, default=300)
    again = commands.add_parser("replay", help="replay the rules on subsets (no model call)")
    again.add_argument("--subsets", type=int, default=500)
    again.add_argument("--sets", nargs="*", default=list(SETS))
    args = parser.parse_args(argv)
    if args.command == "sweep":
        run_sweep(args.set, args.limit)
        return
    machine = machine_info()
    results = [replay(load_sweep(name), args.subsets) for name in args.sets]
    payload = {"machine": machine, "subsets": args.subsets, "results": results}
    (RESULTS / "decision_quality.json").write_text(
        json.dumps(payload, indent=2) + "\n", encoding="utf-8"
    )
    (RESULTS / "decision_quality.md").write_text(
        render(results, machine, args.subsets), encoding="utf-8"
    )
    print((RESULTS / "decision_quality.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
