"""`calibrate --fit` on whole human-labelled sets: what fitting the embedded judge buys on rows
the fit never saw (5-fold cross-validation), and the ECE a perfectly calibrated judge would
show on as many rows.

For wice_dev and begin_dev with their human labels and a score file of the embedded judge
(faithfulness, scoring path), this runs the product's cross-validation
(:func:`rag_judge.jobs.calibrate.fit_profile.cross_validate_scores`, what ``calibrate --fit``
reports): once with the map chosen by inner CV (what a user gets), and once per candidate map
forced, to show what each idea buys. "Before" is the judge as it is: supported iff value >= 0.5, its
value read as the probability. The ECE floor: labels drawn from the fitted out-of-fold probabilities
themselves (so perfectly calibrated by construction), 2,000 draws; its median and 95% range.

    python benchmarks/calibration_fit.py [--wice SCORES] [--begin SCORES]

Writes benchmarks/results/calibration_fit.{json,md}. Pure CPU, no model call: seconds.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from _machine import machine_info

from rag_judge.calibration import read_judge_scores
from rag_judge.calibration.estimate import Estimate
from rag_judge.calibration.fit import CANDIDATES, CrossValidation
from rag_judge.data.calibration_sets import load_calibration_set
from rag_judge.jobs.calibrate.fit_profile import FitOptions, cross_validate_scores
from rag_judge.jobs.calibrate.job import set_labels

HERE = Path(__file__).parent
RESULTS = HERE / "results"
FRESH = RESULTS / "calibration_fit"
COMMITTED = RESULTS / "calibration_local"
METRIC = "faithfulness"
FLOOR_DRAWS = 2000


def default_scores(name: str) -> Path:
    """This release's score file when written, else the committed one of calibration_local."""
    fresh = FRESH / f"scores_{name}.jsonl"
    return fresh if fresh.is_file() else COMMITTED / f"score_{name}" / "scores.jsonl"


def figure(e: Estimate) -> dict[str, Any]:
    return {"estimate": e.estimate, "low": e.low, "high": e.high, "reason": e.reason}


def ece_floor(probabilities: np.ndarray[Any, Any], seed: int = 0) -> dict[str, float]:
    """ECE (10 bins) of labels drawn from ``probabilities`` themselves: a perfectly calibrated
    judge's ECE on this many rows, i.e. the noise floor of the figure."""
    rng = np.random.default_rng(seed)
    edges = np.linspace(0, 1, 11)
    bins = np.searchsorted(edges[1:-1], probabilities, side="left")
    values = []
    for _ in range(FLOOR_DRAWS):
        drawn = (rng.uniform(size=probabilities.size) < probabilities).astype(float)
        gap = np.bincount(bins, weights=probabilities, minlength=10) - np.bincount(
            bins, weights=drawn, minlength=10
        )
        values.append(float(np.sum(np.abs(gap))) / probabilities.size)
    low, median, high = np.quantile(values, [0.025, 0.5, 0.975])
    return {"median": float(median), "low": float(low), "high": float(high)}


def summarise(cv: CrossValidation) -> dict[str, Any]:
    return {
        "n": cv.n,
        "folds": cv.folds,
        "before": {k: figure(v) for k, v in cv.before.items()},
        "after": {k: figure(v) for k, v in cv.after.items()},
        "change": {k: figure(v) for k, v in cv.change.items()},
        "fold_maps": [c.map for c in cv.choices],
        "fold_thresholds": [round(c.threshold, 4) for c in cv.choices],
        "ece_floor": ece_floor(cv.out_of_fold),
    }


def run_set(name: str, scores: Path) -> dict[str, Any]:
    judge = read_judge_scores(scores, METRIC)
    labels = set_labels(load_calibration_set(name))
    options = FitOptions(metric=METRIC)
    started = time.perf_counter()
    joined, rows, chosen = cross_validate_scores(judge, labels, options)
    seconds = time.perf_counter() - started
    out: dict[str, Any] = {
        "scores": str(scores.relative_to(HERE.parent)),
        "joined": joined.describe(),
        "two_inputs": rows.two_inputs,
        "chosen_by_cv": summarise(chosen),
        "seconds_chosen_by_cv": round(seconds, 2),
        "forced": {},
    }
    for kind, features in CANDIDATES:
        if "min_probability" in features and not rows.two_inputs:
            continue
        label = f"{kind}({', '.join(features)})"
        _, _, forced = cross_validate_scores(judge, labels, options, [(kind, features)])
        out["forced"][label] = summarise(forced)
    _, _, searched = cross_validate_scores(judge, labels, options, threshold_rule="search")
    out["forced"]["chosen by CV, threshold searched (not the share supported)"] = summarise(
        searched
    )
    return out


NAMES = {
    "expected_calibration_error": "ECE (10 bins)",
    "brier_score": "Brier",
    "balanced_accuracy": "balanced accuracy",
    "cohen_kappa": "κ",
    "roc_auc": "ROC AUC",
}


def cell(f: dict[str, Any], signed: bool = False) -> str:
    if f["estimate"] is None:
        return f"— ({f['reason']})"
    fmt = "{:+.3f}" if signed else "{:.3f}"
    if f["low"] is None:
        return fmt.format(f["estimate"])
    return f"{fmt.format(f['estimate'])} [{fmt.format(f['low'])}, {fmt.format(f['high'])}]"


def markdown(data: dict[str, Any]) -> str:
    m = data["machine"]
    lines = [
        "# `calibrate --fit` on whole human-labelled sets (5-fold, out of fold)",
        "",
        f"{m['date_utc']} · {m['cpu_model']} · {m['logical_cores']} cores · no model call "
        "(the score files are the embedded judge's, faithfulness on the scoring path). "
        "Before: the judge as it is (supported iff value >= 0.5, the value read as P). After: "
        "each row's probability and verdict from the fit on the other four folds; the change "
        "is paired (same bootstrap resamples, 2,000, seed 0). The ECE floor is the ECE of a "
        "perfectly calibrated judge on as many rows (labels drawn from the fitted "
        "probabilities themselves): below it, ECE cannot be told from noise.",
        "",
    ]
    for name, found in data["sets"].items():
        chosen = found["chosen_by_cv"]
        floor = chosen["ece_floor"]
        lines += [
            f"## {name}: {chosen['n']} labelled rows",
            "",
            f"Score file `{found['scores']}`. {found['joined'].rstrip('.')}.",
            "",
            "| figure | before | after | change |",
            "|---|---|---|---|",
        ]
        for key, label in NAMES.items():
            lines.append(
                f"| {label} | {cell(chosen['before'][key])} | {cell(chosen['after'][key])} | "
                f"{cell(chosen['change'][key], True)} |"
            )
        lines += [
            "",
            f"Maps the folds chose: {', '.join(chosen['fold_maps'])}; thresholds "
            f"{', '.join(str(t) for t in chosen['fold_thresholds'])}. ECE floor at this n: "
            f"median {floor['median']:.3f} (95% of draws in [{floor['low']:.3f}, "
            f"{floor['high']:.3f}]).",
            "",
            "The ideas tried, each cross-validated the same way (each map forced; and the "
            "threshold searched on the fitted rows instead of set to their share supported):",
            "",
            "| map | ECE after | Brier after | balanced accuracy after | κ after | AUC after |",
            "|---|---|---|---|---|---|",
        ]
        for label, forced in found["forced"].items():
            a = forced["after"]
            lines.append(
                f"| {label} | {cell(a['expected_calibration_error'])} | "
                f"{cell(a['brier_score'])} | {cell(a['balanced_accuracy'])} | "
                f"{cell(a['cohen_kappa'])} | {cell(a['roc_auc'])} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wice", type=Path, default=default_scores("wice_dev"))
    parser.add_argument("--begin", type=Path, default=default_scores("begin_dev"))
    args = parser.parse_args()
    data = {
        "machine": machine_info(),
        "sets": {
            "wice_dev": run_set("wice_dev", args.wice.resolve()),
            "begin_dev": run_set("begin_dev", args.begin.resolve()),
        },
    }
    (RESULTS / "calibration_fit.json").write_text(json.dumps(data, indent=2) + "\n")
    text = markdown(data)
    (RESULTS / "calibration_fit.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
