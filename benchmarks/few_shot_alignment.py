"""Few-shot alignment of the faithfulness judge, cross-validated against human labels.

Does showing the embedded judge a few rows where it disagreed with people, as worked examples,
make it agree with people more on rows it has not seen? On the bundled labelled sets
``wice_dev`` (236 rows) and ``begin_dev`` (the labelled rows of the 400 that
``calibration_local.py`` judges), with the default model on the default scoring path through
``rag_judge.evaluate`` (what a user gets with ``rag-judge score --few-shot``):

1. The labelled rows are cut into 5 folds, stratified by label (seed 0).
2. For each fold, ``choose_examples`` picks 2 examples per label from the *other* folds'
   disagreements between the judge's recorded result ("before": the committed
   ``results/calibration_local/rescore_<set>/scores.jsonl``, this release's judge) and the
   person; the fold's rows are then judged with those examples ("after").
3. ``report`` compares before and after on the same rows: ROC AUC (value, probability),
   balanced accuracy at 0.5, Cohen's κ, Brier, ECE with 95% bootstrap CIs, a paired bootstrap
   CI of the AUC difference, and prompt tokens and seconds per row.

``rescore`` judges the labelled rows again without examples ("before" on this machine; free
where another run already filled the default cache), and ``time-paired`` times the first rows
of fold 0 without, then with, the examples under the same conditions.

Resumable: each finished fold is a file, and every call goes through the default response
cache, so a re-run skips what was done; ``run --fold N`` judges one fold (the committed run
alternated the sets fold by fold, so a stop at a deadline leaves a stratified share of both).

Usage::

    .venv/bin/python benchmarks/few_shot_alignment.py run --set wice_dev
    .venv/bin/python benchmarks/few_shot_alignment.py run --set begin_dev
    .venv/bin/python benchmarks/few_shot_alignment.py rescore --set wice_dev
    .venv/bin/python benchmarks/few_shot_alignment.py time-paired --set wice_dev --rows 20
    .venv/bin/python benchmarks/few_shot_alignment.py report
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _machine import machine_info

import rag_judge
from rag_judge.calibration import (
    Estimate,
    Undefined,
    balanced_accuracy,
    bootstrap_estimate,
    brier_score,
    cohen_kappa,
    expected_calibration_error,
    human_labels_from_records,
    predict_supported,
    read_judge_scores,
    roc_auc,
)
from rag_judge.calibration.correlation import average_ranks
from rag_judge.calibration.few_shot import (
    choose_examples,
    few_shot_id,
    read_examples,
    write_examples,
)
from rag_judge.data.calibration_sets import CalibrationSet, load_calibration_set

HERE = Path(__file__).parent
OUT = HERE / "results" / "few_shot_alignment"
BEFORE = HERE / "results" / "calibration_local"
SETS = {"wice_dev": None, "begin_dev": 400}
"""Each set and the ``--limit`` its before file was judged with (None: every row)."""
FOLDS = 5
SEED = 0
PER_LABEL = 2
METRIC = "faithfulness"


def loaded(name: str) -> CalibrationSet:
    chosen = load_calibration_set(name)
    limit = SETS[name]
    return chosen.limit(limit) if limit is not None else chosen


def before_file(name: str) -> Path:
    return BEFORE / f"rescore_{name}" / "scores.jsonl"


def folds(chosen: CalibrationSet) -> list[list[str]]:
    """The labelled rows' ids in ``FOLDS`` folds, stratified by label: each label's ids,
    shuffled with ``SEED``, dealt round-robin."""
    dealt: list[list[str]] = [[] for _ in range(FOLDS)]
    at = 0
    for label in (0, 1):
        ids = sorted(s.id for s in chosen.samples if chosen.labels[s.id] == label)
        random.Random(SEED).shuffle(ids)
        for i in ids:
            dealt[at % FOLDS].append(i)
            at += 1
    return dealt


def labels_of(chosen: CalibrationSet) -> list[dict[str, Any]]:
    return [
        {"id": s.id, "label": chosen.labels[s.id]}
        for s in chosen.samples
        if chosen.labels[s.id] is not None
    ]


def run(name: str, only: int | None = None) -> None:
    """Judge every fold of ``name`` with its examples (``only``: just that fold)."""
    chosen = loaded(name)
    judge = read_judge_scores(before_file(name), METRIC)
    contexts = {s.id: list(s.contexts or ()) for s in chosen.samples}
    labels = human_labels_from_records(labels_of(chosen), "binary", source=f"{name} labels")
    by_id = {s.id: s for s in chosen.samples}
    out = OUT / name
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "machine.json").exists():  # the first start's machine, kept on resume
        info = machine_info("llama-cpp-python")
        (out / "machine.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    for index, ids in enumerate(folds(chosen)):
        done = out / f"fold{index}.jsonl"
        if only is not None and index != only:
            continue
        if done.exists():
            print(f"{name} fold {index}: done before", flush=True)
            continue
        examples = choose_examples(judge, labels, contexts, per_label=PER_LABEL, exclude_ids=ids)
        write_examples(out / f"fold{index}.examples.jsonl", examples)
        _judge_fold(name, index, [by_id[i] for i in ids], examples)


def _judge_fold(name: str, index: int, rows: list[Any], examples: Any) -> None:
    """Judge one fold's rows with its examples; write its results and per-row times."""
    out = OUT / name
    seconds: list[float] = []
    last = time.time()

    def tick(_: Any) -> None:
        nonlocal last
        now = time.time()
        seconds.append(round(now - last, 2))
        last = now
        print(f"{name} fold {index}: {len(seconds)}/{len(rows)} {seconds[-1]} s", flush=True)

    started = time.time()
    result = rag_judge.evaluate(rows, [METRIC], few_shot=examples, progress=tick)
    timing = {
        "fold": index,
        "rows": len(rows),
        "seconds": round(time.time() - started, 1),
        "seconds_per_row": seconds,
        "few_shot": few_shot_id(examples),
        "calls": result.ledger.summary(),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }
    (out / f"fold{index}.timing.json").write_text(
        json.dumps(timing, indent=2) + "\n", encoding="utf-8"
    )
    result.write_jsonl(out / f"fold{index}.jsonl")
    print(f"{name} fold {index}: {len(rows)} rows in {timing['seconds']} s", flush=True)


def time_paired(name: str, rows: int) -> None:
    """Seconds per row without and with examples under the same conditions: the first
    ``rows`` rows of fold 0, with no response cache, one loaded model (loading not timed),
    all of them without examples, then all of them with fold 0's examples (in blocks, as a
    run goes: consecutive rows share the examples' prefix)."""
    from rag_judge.runtime.session import open_session
    from rag_judge.runtime.settings import load_settings

    chosen = loaded(name)
    by_id = {s.id: s for s in chosen.samples}
    picked = [by_id[i] for i in folds(chosen)[0][:rows]]
    examples = read_examples(OUT / name / "fold0.examples.jsonl")
    session = open_session(load_settings({}), cache=False)
    rag_judge.evaluate(picked[:1], [METRIC], client=session.client, cache=False)  # load
    record: dict[str, Any] = machine_info("llama-cpp-python") | {"rows": len(picked)}
    for side, shots in (("before", ()), ("after", examples)):
        seconds: list[float] = []
        last = time.time()

        def tick(_: Any, seconds: list[float] = seconds, side: str = side) -> None:
            nonlocal last
            now = time.time()
            seconds.append(round(now - last, 2))
            last = now
            print(f"{name} {side}: {len(seconds)}/{len(picked)} {seconds[-1]} s", flush=True)

        last = time.time()
        result = rag_judge.evaluate(
            picked, [METRIC], client=session.client, cache=False, few_shot=shots, progress=tick
        )
        usage = [r["results"][METRIC].get("usage", {}) for r in result.to_records()]
        record[side] = {
            "values": {r["id"]: r["results"][METRIC]["value"] for r in result.to_records()},
            "seconds_per_row": seconds,
            "prompt_tokens": [u.get("prompt_tokens") for u in usage],
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        }
    out = OUT / name / "paired_timing.json"
    out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def _records(path: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            found[str(row["id"])] = row["results"][METRIC]
    return found


def _auc(h: np.ndarray, s: np.ndarray) -> float | Undefined:
    positives = int(np.count_nonzero(h))
    negatives = h.size - positives
    if positives == 0 or negatives == 0:
        return Undefined("one class")
    rank_sum = float(np.sum(average_ranks(s)[h == 1.0]))
    return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives)


def _cell(e: Estimate) -> dict[str, float | None]:
    return {"estimate": e.estimate, "low": e.low, "high": e.high}


def _figures(h: np.ndarray, value: np.ndarray, prob: np.ndarray | None) -> dict[str, Any]:
    judged = predict_supported(value, 0.5)
    boot = {"n_resamples": 2000, "seed": 0}
    figures = {
        "roc_auc(value)": _cell(roc_auc(h, value, **boot)),
        "roc_auc(probability)": _cell(roc_auc(h, prob, **boot)) if prob is not None else None,
        "balanced_accuracy": _cell(balanced_accuracy(h, judged, **boot)),
        "cohen_kappa": _cell(cohen_kappa(h, judged, **boot)),
    }
    p = value if prob is None else prob
    figures["brier_score"] = _cell(brier_score(h, p, **boot))
    figures["expected_calibration_error"] = _cell(expected_calibration_error(h, p, **boot).ece)
    return figures


def rescore(name: str) -> None:
    """The labelled rows judged again without examples, through the default cache (free for
    rows another run on this machine already judged): "before" from this machine's arithmetic,
    to set beside the committed file's (recorded on another CPU) and the after run."""
    chosen = loaded(name)
    by_id = {s.id: s for s in chosen.samples}
    rows = [by_id[i] for fold in folds(chosen) for i in fold]
    started = time.time()
    result = rag_judge.evaluate(rows, [METRIC])
    result.write_jsonl(OUT / name / "rescored.jsonl")
    record = {"seconds": round(time.time() - started, 1), "calls": result.ledger.summary()}
    (OUT / name / "rescored.run.json").write_text(json.dumps(record, indent=2) + "\n")


def _side(
    h: np.ndarray, found: dict[str, dict[str, Any]], both: list[str], judged: list[str]
) -> dict[str, Any]:
    value = np.array([found[i]["value"] for i in both], dtype=float)
    probs = [_probability(found[i]) for i in both]
    prob = None if any(p is None for p in probs) else np.array(probs, dtype=float)
    tokens = [found[i].get("usage", {}).get("prompt_tokens") for i in judged]
    tokens = [t for t in tokens if t is not None]
    return _figures(h, value, prob) | {
        "unscored": sum(1 for i in judged if found[i].get("value") is None),
        "prompt_tokens_per_row": {
            "mean": round(float(np.mean(tokens)), 1),
            "median": float(np.median(tokens)),
        },
    }


def _auc_difference(h: np.ndarray, first: np.ndarray, second: np.ndarray) -> Estimate:
    """Paired bootstrap (rows resampled together) of AUC(first) − AUC(second)."""

    def difference(idx: np.ndarray) -> float | Undefined:
        a, b = _auc(h[idx], first[idx]), _auc(h[idx], second[idx])
        if isinstance(a, Undefined) or isinstance(b, Undefined):
            return Undefined("one class")
        return a - b

    return bootstrap_estimate("roc_auc_difference", difference, h.size, seed=0)


def compare(name: str) -> dict[str, Any] | None:
    """Before against after on the rows both scored, for one set (None: no fold judged)."""
    out = OUT / name
    fold_files = sorted(out.glob("fold[0-9].jsonl"))
    if not fold_files:
        return None
    chosen = loaded(name)
    after: dict[str, dict[str, Any]] = {}
    for path in fold_files:
        after |= _records(path)
    sources = {"before": _records(before_file(name)), "after": after}
    if (out / "rescored.jsonl").exists():
        sources["rescored"] = _records(out / "rescored.jsonl")
    judged = list(after)
    both = [i for i in judged if all(f[i].get("value") is not None for f in sources.values())]
    h = np.array([float(chosen.labels[i]) for i in both])
    values = {k: np.array([f[i]["value"] for i in both], dtype=float) for k, f in sources.items()}
    differences = {"after - before": _cell(_auc_difference(h, values["after"], values["before"]))}
    if "rescored" in values:
        differences["after - rescored"] = _cell(
            _auc_difference(h, values["after"], values["rescored"])
        )
        differences["rescored - before"] = _cell(
            _auc_difference(h, values["rescored"], values["before"])
        )
    timings = [json.loads(p.read_text()) for p in sorted(out.glob("fold[0-9].timing.json"))]
    paired_file = out / "paired_timing.json"
    paired = json.loads(paired_file.read_text()) if paired_file.exists() else None
    return {
        "set": name,
        "labelled_rows": sum(len(f) for f in folds(chosen)),
        "rows_judged_after": len(after),
        "rows_compared": len(both),
        "folds_done": [int(p.stem[4:]) for p in fold_files],
        "examples": {
            p.name: few_shot_id(read_examples(p)) for p in sorted(out.glob("fold*.examples.jsonl"))
        },
        **{k: _side(h, f, both, judged) for k, f in sources.items()},
        "roc_auc_difference(value)": differences,
        "seconds_per_row": {
            "after (the cross-validated run)": _seconds(
                [s for t in timings for s in _timed(t["seconds_per_row"])]
            ),
            **(
                {}
                if paired is None
                else {
                    f"{side} (paired timing, {paired['rows']} rows of fold 0, no cache)": (
                        _seconds(paired[side]["seconds_per_row"])
                    )
                    for side in ("before", "after")
                }
            ),
        },
        "drift": None if paired is None else _drift(sources["before"], paired["before"]["values"]),
        "paired_timing_machine": None
        if paired is None
        else {k: paired[k] for k in ("cpu_model", "date_utc", "load_average_at_start")}
        | {
            f"load_average_at_end_{k}": paired[k]["load_average_at_end"]
            for k in ("before", "after")
        },
        "machine": json.loads((out / "machine.json").read_text()),
        "load_average_at_fold_ends": [t["load_average_at_end"] for t in timings],
        "calls": [t["calls"] for t in timings],
    }


def _drift(before: dict[str, dict[str, Any]], fresh: dict[str, float | None]) -> dict[str, Any]:
    """How far the committed before file is from the same judge run afresh here (the paired
    timing's rows without examples): the largest change of a value, and verdict flips."""
    pairs = [
        (before[i]["value"], v)
        for i, v in fresh.items()
        if v is not None and before[i].get("value") is not None
    ]
    return {
        "rows": len(pairs),
        "largest_change": round(max((abs(a - b) for a, b in pairs), default=0.0), 4),
        "flips_at_0.5": sum((a >= 0.5) != (b >= 0.5) for a, b in pairs),
    }


def _timed(seconds: list[float]) -> list[float]:
    """A fold's per-row seconds without the rows answered from the cache (a resumed run:
    under a second) and the first row judged (it loads the model)."""
    judged = [s for s in seconds if s >= 1.0]
    return judged[1:]


def _probability(result: dict[str, Any]) -> float | None:
    probs = [c.get("support_probability") for c in result.get("claims") or []]
    if not probs or any(p is None for p in probs):
        return None
    return float(np.mean(probs))


def _seconds(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "rows": len(values),
        "median": float(np.median(values)),
        "mean": round(float(np.mean(values)), 2),
        "p90": round(float(np.quantile(values, 0.9)), 2),
    }


def write_report() -> None:
    found = [c for c in map(compare, SETS) if c is not None]
    OUT.parent.joinpath("few_shot_alignment.json").write_text(
        json.dumps(found, indent=2) + "\n", encoding="utf-8"
    )
    OUT.parent.joinpath("few_shot_alignment.md").write_text(markdown(found), encoding="utf-8")


def _fmt(cell: dict[str, float | None] | None) -> str:
    if cell is None or cell["estimate"] is None:
        return "—"
    if cell["low"] is None or cell["high"] is None:
        return f"{cell['estimate']:.3f}"
    return f"{cell['estimate']:.3f} [{cell['low']:.3f}, {cell['high']:.3f}]"


FIGURES = (
    "roc_auc(value)",
    "roc_auc(probability)",
    "balanced_accuracy",
    "cohen_kappa",
    "brier_score",
    "expected_calibration_error",
)


COLUMNS = {
    "before": "before (committed file)",
    "rescored": "before (re-scored here)",
    "after": "after (with examples)",
}


def markdown(found: list[dict[str, Any]]) -> str:
    lines = [
        "# Few-shot alignment of the faithfulness judge, cross-validated",
        "",
        "Written by `benchmarks/few_shot_alignment.py report`. Default model and scoring path "
        "through `rag_judge.evaluate`; the labelled rows in 5 folds stratified by label (seed "
        f"0); for each fold, {PER_LABEL} worked examples per label chosen by `choose_examples` "
        "from the *other* folds' disagreements between the recorded judge "
        "(`calibration_local/rescore_<set>/scores.jsonl`, this release's judge, recorded on an "
        "Intel Xeon) and the person, then the fold judged with them (after). "
        "'Re-scored here' is the same judge without examples on this machine, where it ran. "
        "95% percentile bootstrap CIs (2,000 resamples, seed 0); supported iff value >= 0.5; "
        "Brier and ECE (10 bins) on P(supported), lower is better. The cross-validated run's "
        "seconds per row leave out rows answered from the cache and each fold run's first row "
        "(it loads the model); it shared the 2 cores with other jobs (the load averages). "
        "The paired timing judges the first rows of fold 0 without, then with, fold 0's "
        "examples, with no cache and one loaded model: the two under the same conditions.",
        "",
    ]
    for c in found:
        m = c["machine"]
        sides = [k for k in COLUMNS if k in c]
        lines += [
            f"## {c['set']}",
            "",
            f"{c['rows_compared']} rows compared (scored on every side) of "
            f"{c['labelled_rows']} labelled; folds judged: {c['folds_done']} of {FOLDS}. "
            f"CPU {m['cpu_model']}, {m['usable_cores']} cores, llama-cpp-python "
            f"{m['llama_cpp_python']}, started {m['date_utc']}, load average at the start "
            f"{m['load_average_at_start']}, at each fold's end {c['load_average_at_fold_ends']}.",
            "",
            "| figure | " + " | ".join(COLUMNS[k] for k in sides) + " |",
            "|---|" + "---:|" * len(sides),
        ]
        for name in FIGURES:
            lines.append(f"| {name} | " + " | ".join(_fmt(c[k][name]) for k in sides) + " |")
        lines.append("| unscored rows | " + " | ".join(str(c[k]["unscored"]) for k in sides) + " |")
        tokens = [c[k]["prompt_tokens_per_row"] for k in sides]
        lines.append(
            "| prompt tokens per row, mean (median) | "
            + " | ".join(f"{t['mean']:.0f} ({t['median']:.0f})" for t in tokens)
            + " |"
        )
        lines += ["", "Paired bootstrap of the ROC AUC (value) difference:", ""]
        for label, cell in c["roc_auc_difference(value)"].items():
            lines.append(f"- {label}: {_fmt(cell)}")
        lines += ["", "Seconds per row, median (mean, p90; rows timed):", ""]
        for label, cell in c["seconds_per_row"].items():
            lines.append(f"- {label}: {_secs(cell)}")
        if (t := c["paired_timing_machine"]) is not None:
            lines.append(f"- paired timing machine: {t}")
        if (d := c["drift"]) is not None:
            lines += [
                "",
                f"The committed before file against the judge run afresh here on {d['rows']} "
                f"rows (the paired timing's, without examples): largest change of a value "
                f"{d['largest_change']}, {d['flips_at_0.5']} verdicts flipped at 0.5.",
            ]
        lines.append("")
    return "\n".join(lines) + "\n"


def _secs(cell: dict[str, float] | None) -> str:
    if cell is None:
        return "—"
    return f"{cell['median']:.1f} ({cell['mean']:.1f}, {cell['p90']:.1f}; {cell['rows']})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="judge every fold with its examples (resumable)")
    go.add_argument("--set", choices=tuple(SETS), required=True)
    go.add_argument("--fold", type=int, choices=range(FOLDS), help="only this fold")
    again = sub.add_parser("rescore", help="the labelled rows again without examples (cached)")
    again.add_argument("--set", choices=tuple(SETS), required=True)
    timing = sub.add_parser("time-paired", help="seconds per row without, then with examples")
    timing.add_argument("--set", choices=tuple(SETS), required=True)
    timing.add_argument("--rows", type=int, default=20)
    sub.add_parser("report", help="write results/few_shot_alignment.{md,json}")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.set, args.fold)
    elif args.command == "rescore":
        rescore(args.set)
    elif args.command == "time-paired":
        time_paired(args.set, args.rows)
    else:
        write_report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
