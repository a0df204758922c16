"""Fit the scoring path's P(supported): the model's P(yes) combined with lexical coverage.

The scoring path (``mode="score"``) asks the embedded model one yes/no question per claim. Its
P(yes) ranks claims, but a 1.5B model misses the detail a passage lacks (a date, a qualifier:
WiCE's "partially supported"); the share of the claim's content words the passages contain
catches most of those. This script runs the faithfulness judge in score mode, exactly as a user
would (``rag_judge.evaluate(..., mode="score")``, reasons off: they change no value), on the
**tuning rows only**, and fits ``P(supported) = sigmoid(a + b * logit(P(yes)) + c * coverage)``
by logistic regression on the rows with one claim, then compares the ways to aggregate claims
(mean, min, product) on all tuning rows. The weights it prints go into
``rag_judge/judges/scoring.py:SUPPORT_WEIGHTS``; the held-out figures come from
``calibration_local.py``.

Tuning rows, disjoint from every row the quality figures are measured on:

* WiCE dev, the half whose id hashes even (sha256) -- the other half is reported apart as
  untouched by tuning (the whole set is reported too, as the issue asks);
* BEGIN dev, labelled rows outside the 400 that ``rag-judge calibrate --run begin_dev --limit
  400`` judges, balanced over the labels.

``--no-decompose`` judges the WiCE tuning rows again with no sentence decomposed (every long
sentence one claim) and reports the AUCs with the shipped weights beside the run with it
(``results/fit_support_no_decompose.json``): what decomposition is worth.

Usage::

    .venv/bin/python benchmarks/fit_support.py [--begin 200] [--cache FILE] [--no-decompose]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from _machine import machine_info
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict

from rag_judge.core.types import RagSample
from rag_judge.data.calibration_sets import CalibrationSet, load_calibration_set
from rag_judge.jobs.score.run import aevaluate
from rag_judge.judges import segment
from rag_judge.judges.scoring import support_probability
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import load_settings

RESULTS = Path(__file__).parent / "results"
MEASURED_BEGIN = 400
"""``calibrate --run begin_dev --limit 400``: the BEGIN rows the quality figures use."""


def wice_half(sample_id: str) -> str:
    """``tune`` or ``held_out``: WiCE rows split by the parity of their id's sha256."""
    return (
        "tune" if int(hashlib.sha256(sample_id.encode()).hexdigest(), 16) % 2 == 0 else "held_out"
    )


def tuning_rows(n_begin: int) -> list[tuple[str, RagSample, int]]:
    """(set, sample, label) for every tuning row: WiCE's tuning half, then BEGIN's balanced."""
    wice = load_calibration_set("wice_dev")
    begin = load_calibration_set("begin_dev")
    rows = [("wice_dev", s, _label(wice, s)) for s in wice.samples if wice_half(s.id) == "tune"]
    measured = {s.id for s in begin.limit(MEASURED_BEGIN).samples}
    pool = [s for s in begin.samples if s.id not in measured and begin.labels[s.id] is not None]

    def by_hash(label: int) -> list[RagSample]:
        chosen = [s for s in pool if begin.labels[s.id] == label]
        return sorted(chosen, key=lambda s: hashlib.sha256(s.id.encode()).hexdigest())

    positive, negative = by_hash(1), by_hash(0)
    mixed = [s for pair in zip(positive, negative, strict=False) for s in pair]
    rows += [("begin_dev", s, _label(begin, s)) for s in mixed[:n_begin]]
    return rows


def _label(calibration_set: CalibrationSet, sample: RagSample) -> int:
    label = calibration_set.labels[sample.id]
    if not isinstance(label, int):
        raise ValueError(f"{sample.id}: no binary label")
    return label


async def judge(rows: list[tuple[str, RagSample, int]], cache: Path) -> list[dict[str, Any]]:
    """Faithfulness in score mode on every row, with each claim's P(yes) and coverage."""
    session = open_session(load_settings({"model": "local/qwen2.5-coder-1.5b"}), cache=cache)
    records = []
    for index, (name, sample, label) in enumerate(rows, start=1):
        started = time.perf_counter()
        result = await aevaluate(
            [sample], ["faithfulness"], client=session.client, mode="score", reasons=False
        )
        judged = result.samples[0].results["faithfulness"]
        records.append(
            {
                "set": name,
                "id": sample.id,
                "label": label,
                "status": judged.status,
                "support": judged.details.get("support", []),
                "seconds": round(time.perf_counter() - started, 2),
            }
        )
        print(f"{index}/{len(rows)} {name} {sample.id} {judged.status}", flush=True)
    return records


def features(signal: dict[str, float]) -> list[float]:
    p = min(max(signal["model"], 1e-6), 1 - 1e-6)
    return [math.log(p / (1 - p)), signal["coverage"]]


def aggregate(values: list[float], how: str) -> float:
    if how == "min":
        return min(values)
    if how == "product":
        return math.prod(values)
    return statistics.fmean(values)


def fit(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Logistic weights on single-claim rows; AUCs of each signal and aggregate."""
    scored = [r for r in records if r["status"] == "ok" and r["support"]]
    single = [r for r in scored if len(r["support"]) == 1]
    x = np.array([features(r["support"][0]) for r in single])
    y = np.array([r["label"] for r in single])
    model = LogisticRegression(C=1.0).fit(x, y)
    weights = (float(model.intercept_[0]), float(model.coef_[0][0]), float(model.coef_[0][1]))
    held = cross_val_predict(LogisticRegression(C=1.0), x, y, cv=5, method="predict_proba")[:, 1]
    out: dict[str, Any] = {
        "weights": weights,
        "rows": len(records),
        "scored": len(scored),
        "single_claim_rows": len(single),
        "single_claim_auc": {
            "model P(yes)": roc_auc_score(y, x[:, 0]),
            "coverage": roc_auc_score(y, x[:, 1]),
            "combined (5-fold CV)": roc_auc_score(y, held),
        },
    }

    def combined(signal: dict[str, float]) -> float:
        z = weights[0] + weights[1] * features(signal)[0] + weights[2] * features(signal)[1]
        return 1 / (1 + math.exp(-z))

    per_set: dict[str, Any] = {}
    for name in sorted({r["set"] for r in scored}):
        rows = [r for r in scored if r["set"] == name]
        labels = [r["label"] for r in rows]
        per_set[name] = {
            how: roc_auc_score(
                labels, [aggregate([combined(s) for s in r["support"]], how) for r in rows]
            )
            for how in ("mean", "min", "product")
        } | {
            "model P(yes), mean": roc_auc_score(
                labels, [statistics.fmean(s["model"] for s in r["support"]) for r in rows]
            ),
            "rows": len(rows),
            "multi-claim rows": sum(len(r["support"]) > 1 for r in rows),
        }
    out["aggregate_auc"] = per_set
    return out


def shipped_auc(records: list[dict[str, Any]]) -> float:
    """AUC of the judge's value as shipped (mean of the weighted P(supported))."""
    scored = [r for r in records if r["status"] == "ok" and r["support"]]
    values = [
        statistics.fmean(support_probability(s["model"], s["coverage"]) for s in r["support"])
        for r in scored
    ]
    return float(roc_auc_score([r["label"] for r in scored], values))


def ablate(cache: Path) -> None:
    """WiCE's tuning rows with and without decomposing long sentences."""
    rows = [r for r in tuning_rows(0) if r[0] == "wice_dev"]
    with_it = asyncio.run(judge(rows, cache))
    segment.LONG_WORDS = segment.LONG_CHARS = 10**9  # no sentence is long: none is decomposed
    without = asyncio.run(judge(rows, cache))
    report = {
        "rows": len(rows),
        "decomposed_rows": sum(len(r["support"]) > 1 for r in with_it),
        "auc_with_decomposition": shipped_auc(with_it),
        "auc_without": shipped_auc(without),
        "machine": machine_info(),
    }
    (RESULTS / "fit_support_no_decompose.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--begin", type=int, default=200, help="BEGIN tuning rows (balanced).")
    parser.add_argument("--cache", type=Path, default=Path(".cache/fit_support.sqlite"))
    parser.add_argument("--no-decompose", action="store_true")
    args = parser.parse_args()
    if args.no_decompose:
        ablate(args.cache)
        return
    rows = tuning_rows(args.begin)
    records = asyncio.run(judge(rows, args.cache))
    report = fit(records) | {"machine": machine_info()}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fit_support.records.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    (RESULTS / "fit_support.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "machine"}, indent=2))


if __name__ == "__main__":
    main()
