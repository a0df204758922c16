"""Does the decision keep its promise at every size? Simulated sweeps with known per-k means.

Two measurements, pure CPU, no model call:

- ``fixed``: one look at n questions. Per scenario (known per-k means), kind of value (0/1 as
  exact match, or continuous in (0, 1) as a judge's product), number of ks (2, 10) and n (3 to
  200): how often the rule recommends a k more than the margin below the best (promised: at most
  5%), how often its regret bounds fail for some k (the family's coverage), and how often it
  decides; comparisons with the best (the rule) beside all pairs (the former rule) on the same
  tables. ``raw`` rows apply the bounds at every n (no minimum), which is how the minimum number
  of questions is chosen.
- ``looks``: one sweep looked at again and again, as ``--until-decided`` (a look every 20
  questions) and as plain re-runs with a larger ``--limit`` (20, 50, 100, 200 questions) do,
  every look at the level its spending leaves: how often some look's promise fails (a
  recommended k beyond the margin, or the best k ruled out), in the flat scenario (every k
  equal) and with one k better.

Questions are correlated across ks as real ones are: a question's ease is shared. The value
of k for question i is ``1[a_k + sqrt(rho) z_i + sqrt(1 - rho) e_ik > 0]`` (0/1) or ``Phi`` of
that latent (continuous), with ``a_k`` set so that the mean is exactly the scenario's.

    python benchmarks/decision_simulation.py fixed [--runs 500] [--rho 0.7] [--scenarios ...]
    python benchmarks/decision_simulation.py looks [--runs 2000] [--kinds binary continuous]

Writes results/decision_simulation.{json,md}: the rows it ran replace the same rows of an earlier
run, the others stay (each row has its runs and seconds).
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
from _machine import machine_info
from _rates import Rate, shown

from rag_judge.core.best import compare_with_best
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_SPENDING,
    MIN_QUESTIONS,
    UNTIL_DECIDED_SPENDING,
)
from rag_judge.jobs.sweep.decision.looks import SweepLooks, correlations_of
from rag_judge.jobs.sweep.decision.recommend import recommend
from rag_judge.jobs.sweep.decision.sequential import replay_sequential

HERE = Path(__file__).parent
RESULTS = HERE / "results"
MARGIN = 0.05
RHO = 0.7
"""The latent correlation of one question's values across ks, moderate ..."""
REAL_RHO = 0.95
"""... and as in the two real sweeps: latent 0.95 gives 0/1 values correlated about 0.8 between
ks, as exact match is there (0.78 to 0.89 between ks; answer F1 0.71 to 0.86)."""
SIZES = (3, 5, 10, 20, 50, 100, 200)
SCENARIOS: dict[str, tuple[float, ...]] = {
    "flat, 2 ks": (0.5, 0.5),
    "one better by 0.12, 2 ks": (0.5, 0.62),
    "just beyond the margin, 2 ks": (0.5, 0.551),
    "flat, 10 ks": (0.5,) * 10,
    "one better by 0.12, 10 ks": (0.5, 0.5, 0.5, 0.62, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5),
    "just beyond the margin, 10 ks": (0.5,) * 9 + (0.551,),
    "plateau (CMRC-like), 10 ks": (0.40, 0.44, 0.48, 0.52, 0.53, 0.53, 0.52, 0.53, 0.54, 0.53),
}
KINDS = ("binary", "continuous")


def table(
    rng: np.random.Generator, means: Sequence[float], n: int, kind: str, rho: float = RHO
) -> np.ndarray:
    """n questions x len(means) ks with exactly these means (see the module docstring)."""
    inv = NormalDist().inv_cdf
    mu = np.asarray(means, dtype=float)
    latent_sd = 1.0
    shift = np.array([inv(p) for p in mu]) * (1.0 if kind == "binary" else np.sqrt(2.0))
    latent = (
        shift[None, :]
        + np.sqrt(rho) * rng.standard_normal((n, 1))
        + np.sqrt(1 - rho) * rng.standard_normal((n, mu.size))
    ) / latent_sd
    if kind == "binary":
        return (latent > 0).astype(float)
    cdf = np.vectorize(NormalDist().cdf)
    return np.asarray(cdf(latent), dtype=float)


def fixed_cell(args: tuple[str, str, int, int, int, float]) -> dict[str, Any]:
    """One scenario x kind x n: ``runs`` tables, each decided by both rules (and raw)."""
    scenario, kind, n, runs, resamples, rho = args
    means = np.asarray(SCENARIOS[scenario])
    regret = means.max() - means
    best = int(np.flatnonzero(regret == 0)[0])  # the cheapest of the best
    ks = list(range(1, means.size + 1))
    rng = np.random.default_rng(zlib.crc32(f"{scenario}|{kind}|{n}|{rho}".encode()))
    counts = dict.fromkeys(
        [f"{r}_{w}" for r in ("best", "raw", "all_pairs") for w in ("wrong", "decided")]
        + ["raw_bounds_fail", "raw_best_fail"],
        0,
    )
    started = time.perf_counter()
    for seed in range(runs):
        y = table(rng, means, n, kind, rho)
        bounds = compare_with_best(y, n_resamples=resamples, seed=seed)
        upper = bounds.upper  # [j, k]
        truth = means[:, None] - means[None, :]
        others = [j for j in range(means.size) if j != best]
        counts["raw_best_fail"] += bool(np.any(truth[best, others] >= upper[best, others]))
        counts["raw_bounds_fail"] += bool(np.any(regret > bounds.regret_bound + 1e-12))
        for rule, comparison, minimum in (
            ("best", "best", MIN_QUESTIONS),
            ("raw", "best", 1),
            ("all_pairs", "all_pairs", 1),
        ):
            found = recommend(
                y, ks, margin=MARGIN, n_resamples=resamples, seed=seed,
                comparison=comparison, min_questions=minimum,  # type: ignore[arg-type]
                bounds=bounds if comparison == "best" else None,
            )  # fmt: skip
            k = found.recommended_k
            counts[f"{rule}_decided"] += k is not None
            counts[f"{rule}_wrong"] += k is not None and regret[k - 1] > MARGIN + 1e-12
    return {
        "scenario": scenario,
        "kind": kind,
        "rho": rho,
        "n": n,
        "runs": runs,
        "seconds": round(time.perf_counter() - started, 1),
        **{name: Rate(hits, runs).as_json() for name, hits in counts.items()},
    }


def fixed(
    runs: int, resamples: int, rho: float, scenarios: Sequence[str] = tuple(SCENARIOS)
) -> list[dict[str, Any]]:
    cells = [(s, kind, n, runs, resamples, rho) for s in scenarios for kind in KINDS for n in SIZES]
    rows = []
    with ProcessPoolExecutor(max_workers=2) as pool:
        for row in pool.map(fixed_cell, cells):
            print({k: row[k] for k in ("scenario", "kind", "n", "seconds")}, flush=True)
            rows.append(row)
    return rows


LOOK_SCENARIOS = {"flat, 10 ks": 1.0, "one better by 0.12, 10 ks": 0.1, "flat, 2 ks": 0.1}
"""The scenarios looked at again and again, and the share of ``--runs`` each gets (the flat
ones are where the error is spent: every k is a best k)."""
LOOK_STEP = 20
RERUNS = (20, 50, 100, 200)
HORIZON = 300
"""Re-runs: the eval set's size, over which a plain sweep's test spends its error."""
UNTIL_MAX = 200
"""Until decided: the questions the run may use, over which its test spends its error."""


LOOK_CHUNK = 50
"""Runs per task: a cell's runs are split so that both cores share the largest cell."""


def looks_chunk(args: tuple[str, str, str, int, int, int]) -> dict[str, Any]:
    """Runs ``first`` .. ``first + runs - 1`` of one scenario x kind x way of looking, every
    look at its level: the counts, and the looks each run took."""
    scenario, kind, how, first, runs, resamples = args
    means = np.asarray(SCENARIOS[scenario])
    regret = means.max() - means
    best = int(np.flatnonzero(regret == 0)[0])  # the cheapest of the best
    ks = list(range(1, means.size + 1))
    rng = np.random.default_rng(zlib.crc32(f"{scenario}|{kind}|{how}|{first}".encode()))
    failed = any_out = decided = 0
    looks_taken: list[int] = []
    started = time.perf_counter()
    for seed in range(first, first + runs):
        y = table(rng, means, HORIZON, kind)
        looks = SweepLooks(HORIZON, 0.05, DEFAULT_SPENDING)  # a plain sweep's first run opens it
        wrong = out = settled = False
        taken = 0
        if how == "until decided":
            # ``--until-decided --max-questions 200`` opens its test over its own 200 questions
            looks = SweepLooks(UNTIL_MAX, 0.05, UNTIL_DECIDED_SPENDING)
            run = replay_sequential(
                y[:UNTIL_MAX], ks, margin=MARGIN, step=LOOK_STEP, looks=looks,
                n_resamples=resamples, seed=seed,
            )  # fmt: skip
            taken = len(run.looks)
            gone = {k for look in run.looks for k in look.eliminated}
            out = bool(gone)
            k = run.recommendation.recommended_k
            wrong = (k is not None and regret[k - 1] > MARGIN + 1e-12) or (best + 1) in gone
            settled = k is not None
        for size in RERUNS if how == "re-runs" else ():
            seen = y[:size]
            level = looks.level(size, correlations_of(seen))
            looks = looks.with_look(size, level)
            taken += 1
            found = recommend(seen, ks, margin=MARGIN, confidence=1 - level,
                              n_resamples=resamples, seed=seed)  # fmt: skip
            k = found.recommended_k
            wrong |= k is not None and regret[k - 1] > MARGIN + 1e-12
            if k is not None:
                settled = True
                break
        failed += wrong
        any_out += out
        decided += settled
        looks_taken.append(taken)
    return {
        "cell": (scenario, kind, how),
        "seconds": time.perf_counter() - started,
        "failed": failed,
        "any_out": any_out,
        "decided": decided,
        "looks_taken": looks_taken,
    }


def looks(runs: int, resamples: int, kinds: Sequence[str] = KINDS) -> list[dict[str, Any]]:
    """Every scenario x kind x way of looking, its runs in chunks over both cores."""
    cells = [
        (s, kind, how, max(1, round(runs * share)))
        for s, share in LOOK_SCENARIOS.items()
        for kind in kinds
        for how in ("until decided", "re-runs")
    ]
    tasks = [
        (s, kind, how, first, min(LOOK_CHUNK, n - first), resamples)
        for s, kind, how, n in cells
        for first in range(0, n, LOOK_CHUNK)
    ]
    done: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    with ProcessPoolExecutor(max_workers=2) as pool:
        for chunk in pool.map(looks_chunk, tasks):
            done.setdefault(chunk["cell"], []).append(chunk)
            finished = sum(len(c["looks_taken"]) for c in done[chunk["cell"]])
            print(chunk["cell"], finished, "runs", flush=True)
    rows = []
    for scenario, kind, how, n in cells:
        parts = done[(scenario, kind, how)]
        taken = [t for part in parts for t in part["looks_taken"]]
        rows.append(
            {
                "scenario": scenario,
                "kind": kind,
                "how": how,
                "runs": n,
                "seconds": round(sum(part["seconds"] for part in parts), 1),
                "error": Rate(sum(p["failed"] for p in parts), n).as_json(),
                "some_k_out": Rate(sum(p["any_out"] for p in parts), n).as_json(),
                "decided": Rate(sum(p["decided"] for p in parts), n).as_json(),
                "median_looks": float(np.median(taken)),
            }
        )
    return rows


def render(payload: dict[str, Any]) -> str:
    machine = payload["machine"]
    lines = [
        "# The decision in simulation: its promise at every size, and over many looks",
        "",
        f"Written by `benchmarks/decision_simulation.py` (no model call). Margin {MARGIN}, 95% "
        f"confidence; questions correlated across ks (latent rho {RHO}, and {REAL_RHO} as in "
        "the real sweeps). Machine: "
        f"{machine['cpu_model']}, {machine['logical_cores']} cores. Every rate: "
        "value [95% Wilson interval] (count).",
        "",
    ]
    if payload.get("fixed"):
        lines += [
            "## One look at n questions",
            "",
            f"`best`: the rule (comparisons with the best, nothing recommended below "
            f"{MIN_QUESTIONS} questions); `raw`: the same bounds at every n; `all pairs`: the "
            "former rule. *Beyond the margin*: a k more than the margin below the best was "
            "recommended (promised ≤ 5%). *Best's bounds fail*: the event the promise rests on "
            "failed, some comparison of the (cheapest) best k with another lies beyond its bound "
            "(promised ≤ 5%, at every n it is measured at; `raw`: without the minimum).",
            "",
            "| scenario | values | rho | n | beyond the margin (best) | best's bounds fail (raw) "
            "| beyond the margin (raw) | decided (best) | decided (all pairs) "
            "| beyond the margin (all pairs) |",
            "|---|---|---:|---:|---|---|---|---|---|---|",
        ]
        for r in payload["fixed"]:
            lines.append(
                f"| {r['scenario']} | {r['kind']} | {r.get('rho', RHO):g} | {r['n']} "
                f"| {shown(r['best_wrong'])} "
                f"| {shown(r['raw_best_fail'])} | {shown(r['raw_wrong'])} "
                f"| {shown(r['best_decided'], 2)} | {shown(r['all_pairs_decided'], 2)} "
                f"| {shown(r['all_pairs_wrong'])} |"
            )
        lines.append("")
    if payload.get("looks"):
        lines += [
            "## Many looks at one sweep",
            "",
            f"*Until decided*: a look every {LOOK_STEP} questions up to {UNTIL_MAX}, the test "
            f"spending its error over those {UNTIL_MAX} (`{UNTIL_DECIDED_SPENDING}`); *re-runs*: "
            f"plain sweeps of {', '.join(map(str, RERUNS))} questions of a set of {HORIZON}, "
            f"each a look of the same test (`{DEFAULT_SPENDING}` over the {HORIZON}), until one "
            "decides. *Error*: some look "
            "recommended a k more than the margin below the best, or ruled out the cheapest "
            "best k (promised ≤ 5% over all looks). *Some k out*: any k ruled out (in the flat "
            "scenarios every k is a best k; the promise covers the cheapest).",
            "",
            "| scenario | values | how | error | some k out | decided | median looks |",
            "|---|---|---|---|---|---|---:|",
        ]
        for r in payload["looks"]:
            lines.append(
                f"| {r['scenario']} | {r['kind']} | {r['how']} | {shown(r['error'])} "
                f"| {shown(r['some_k_out'])} | {shown(r['decided'], 2)} "
                f"| {r['median_looks']:.0f} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def _row_key(section: str, row: dict[str, Any]) -> tuple[str, Any]:
    """What a new row replaces: the same scenario at the same rho (fixed) or kind (looks)."""
    return row["scenario"], row["rho"] if section == "fixed" else row["kind"]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fixed_parser = commands.add_parser("fixed")
    fixed_parser.add_argument("--runs", type=int, default=500)
    fixed_parser.add_argument("--resamples", type=int, default=1000)
    fixed_parser.add_argument("--rho", type=float, default=RHO)
    fixed_parser.add_argument(
        "--scenarios", nargs="+", choices=list(SCENARIOS), default=list(SCENARIOS)
    )
    looks_parser = commands.add_parser("looks")
    looks_parser.add_argument("--runs", type=int, default=2000)
    looks_parser.add_argument("--resamples", type=int, default=500)
    looks_parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    args = parser.parse_args(argv)
    path = RESULTS / "decision_simulation.json"
    section = args.command
    if section == "fixed":
        fresh = fixed(args.runs, args.resamples, args.rho, args.scenarios)
    else:
        fresh = looks(args.runs, args.resamples, args.kinds)
    done = {_row_key(section, r) for r in fresh}
    # read at the end: another section may have been written meanwhile
    payload = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    payload["machine"] = machine_info()
    kept = [r for r in payload.get(section, []) if _row_key(section, r) not in done]
    payload[section] = kept + fresh
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (RESULTS / "decision_simulation.md").write_text(render(payload), encoding="utf-8")


if __name__ == "__main__":
    main()
