"""The embedded judge against human labels on whole sets: the scoring path, the generative
path and the single-call floor, side by side (``benchmarks/calibration_local.md``).

Three ways to judge faithfulness with the embedded model (``local/qwen2.5-coder-1.5b``):

* ``score``: ``rag-judge calibrate --run SET --judge-mode score`` (the default for local
  models: claims split without a model, verdicts from one-token probabilities);
* ``generate``: ``rag-judge calibrate --run SET --judge-mode generate`` (claims, verdicts and
  reasons written as JSON, what every earlier version did; ``--scores FILE`` takes a file from
  another checkout instead, e.g. one from before the scoring path existed);
* ``floor``: one P(yes) per row on the whole answer with the support prompt over the whole
  passages, nothing else: what any design must beat.

``run`` judges (resumable: every call goes through a response cache under ``--cache``) and
writes ``results/calibration_local/<path>_<set>/scores.jsonl``; ``report`` reads whatever
score files exist (no model call) and writes the markdown with every figure's bootstrap CI,
computed by ``rag_judge.calibration`` exactly as ``rag-judge calibrate`` would, and the same
figures as data to ``results/calibration_local.json`` (one record per set, split and path),
which the manual's quoted figures are checked against.

``rescore`` gives the scoring path of *this* release from the ``score`` files of the previous
one (``rescore_<set>``), without redoing what did not change: a claim asked with the same
prompt over the same passages keeps its recorded P(yes) (the same call), and its P(supported)
is recomputed with this release's coverage, exact-fact check and weights; a row whose answer
is now a fragment (asked with ``claims/answer``, a new prompt), or one with a claim whose
verdict would change (the contradiction probe then runs), is judged again by the model.
``--verify N`` judges N other rows again from scratch and reports the largest change of a
recorded P(yes), to show the recorded ones stand. WiCE's tuning half (the
rows ``fit_support.py`` fitted on) is reported apart from its held-out half, and both with the
whole set; BEGIN's 400 rows are disjoint from the tuning rows.

Usage::

    .venv/bin/python benchmarks/calibration_local.py run --path score --set wice_dev
    .venv/bin/python benchmarks/calibration_local.py run --path floor --set begin_dev
    .venv/bin/python benchmarks/calibration_local.py report
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from itertools import groupby
from pathlib import Path
from typing import Any

from _machine import machine_info
from fit_support import MEASURED_BEGIN, wice_half

from rag_judge.calibration import read_judge_scores
from rag_judge.calibration.report import CalibrationReport, calibrate
from rag_judge.data.calibration_sets import CalibrationSet, load_calibration_set
from rag_judge.jobs.calibrate.job import set_labels
from rag_judge.prompts.templates import load_prompt
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import load_settings

OUT = Path(__file__).parent / "results" / "calibration_local"
MARKDOWN = Path(__file__).parent / "calibration_local.md"
RESULTS = OUT.parent / "calibration_local.json"
MODEL = "local/qwen2.5-coder-1.5b"
PATHS = ("score", "rescore", "generate", "floor")
LABELS = {"score": "score (previous release)", "rescore": "score (this release)"}
SETS = {"wice_dev": None, "begin_dev": MEASURED_BEGIN}
"""Each set and its ``--limit`` (None: every row)."""
SPLITS = {"all": "all rows", "held_out": "held-out half (never tuned on)", "tune": "tuning half"}
"""Each split's id in the JSON and its title in the markdown; WiCE's halves from ``wice_half``."""
FIGURES = (
    "roc_auc(value)",
    "roc_auc(probability)",
    "balanced_accuracy",
    "negative_recall",
    "cohen_kappa",
    "expected_calibration_error(10 bins, probability)",
)


def folder(path: str, name: str) -> Path:
    return OUT / f"{path}_{name}"


def loaded(name: str) -> CalibrationSet:
    chosen = load_calibration_set(name)
    limit = SETS[name]
    return chosen.limit(limit) if limit is not None else chosen


def run_cli(path: str, name: str, cache: Path) -> None:
    """The user's command, in a child process with its own response cache."""
    rag_judge = Path(sys.executable).with_name("rag-judge")
    command = [str(rag_judge), "calibrate", "--run", name, "--judge-mode", path]
    if SETS[name] is not None:
        command += ["--limit", str(SETS[name])]
    command += ["--model", MODEL, "-o", str(folder(path, name))]
    env = os.environ | {"RAG_JUDGE_CACHE_DIR": str(cache / path)}
    marker = cache / path / f"{name}.started"
    resumed = marker.exists()
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    started = time.time()
    subprocess.run(command, check=True, env=env)
    _record_run(path, name, time.time() - started, resumed=resumed)


async def run_floor(name: str, cache: Path, first: int | None = None) -> None:
    """One P(yes) per row: the whole answer as one claim, the whole passages (``first``: only
    the first rows, e.g. those a stopped run left in the cache; the report says how many)."""
    chosen = loaded(name)
    if first is not None:
        from dataclasses import replace

        chosen = replace(chosen, samples=chosen.samples[:first])
    session = open_session(load_settings({"model": MODEL}), cache=cache / "floor.sqlite")
    out = folder("floor", name)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    lines = []
    for index, sample in enumerate(chosen.samples, start=1):
        prompt = load_prompt("claims/support", sample.language or "en")
        request = prompt.request(
            passages=list(sample.contexts or ()),
            question=sample.question or "",
            claim=sample.answer or "",
        )
        found = await session.client.yes_probability(request)
        result: dict[str, Any] = {"status": found.status, "value": found.p_yes}
        if found.status == "ok":
            verdict = "supported" if (found.p_yes or 0) >= 0.5 else "not_mentioned"
            result["claims"] = [
                {"claim": sample.answer, "verdict": verdict, "support_probability": found.p_yes}
            ]
        else:
            result |= {"value": None, "error": found.error}
        lines.append(json.dumps({"id": sample.id, "results": {"faithfulness": result}}))
        print(f"floor {name} {index}/{len(chosen.samples)}", flush=True)
    (out / "scores.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tally = session.ledger.models.get(MODEL)
    from_cache = 0 if tally is None else tally.cached
    _record_run("floor", name, time.time() - started, resumed=first is not None or from_cache > 0)


def _record_run(path: str, name: str, seconds: float, *, resumed: bool = False) -> None:
    """Machine and wall time; a run resumed from a partly filled cache has no per-row time."""
    record = folder(path, name) / "run.json"
    info = machine_info("llama-cpp-python") | {"seconds": round(seconds, 1), "path": path}
    info["resumed_from_cache"] = resumed
    record.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


def report_for(scores: Path, name: str, ids: set[str] | None) -> CalibrationReport:
    chosen = loaded(name)
    judge = read_judge_scores(scores, "faithfulness")
    labels = set_labels(chosen)
    if ids is not None:
        from dataclasses import replace

        judge = replace(judge, rows=tuple(r for r in judge.rows if r.id in ids))
        labels = replace(labels, labels=tuple(h for h in labels.labels if h.id in ids))
    return calibrate(judge, labels, metric="faithfulness", n_resamples=2000, seed=0)


def tables() -> list[dict[str, Any]]:
    """Every line of the markdown's tables as a record: per set, split and path, the rows
    scored of those labelled, each figure's estimate and CI, the machine and seconds per row
    (``calibration_local.json``, which the manual's figures are checked against)."""
    rows = []
    for name in SETS:
        chosen = loaded(name)
        ids = [s.id for s in chosen.samples]
        splits: dict[str, set[str] | None] = {"all": None}
        if name == "wice_dev":
            splits |= {
                half: {i for i in ids if wice_half(i) == half} for half in ("held_out", "tune")
            }
        for split, only in splits.items():
            for path in PATHS:
                if (folder(path, name) / "scores.jsonl").exists():
                    rows.append(_table_row(name, chosen, split, path, only))
    return rows


def _table_row(
    name: str, chosen: CalibrationSet, split: str, path: str, ids: set[str] | None
) -> dict[str, Any]:
    """One path on one split of a set: rows scored, labelled and in the split (labelled or
    not), the figures, machine and seconds per row; a path stopped early (fewer rows scored
    than labelled) carries the scoring path on exactly its rows, for a fair comparison."""
    scores = folder(path, name) / "scores.jsonl"
    report = report_for(scores, name, ids)
    labelled = sum(
        1
        for s in chosen.samples
        if chosen.labels.get(s.id) is not None and (ids is None or s.id in ids)
    )
    run = _run_info(path, name)
    resumed = bool(run.get("resumed_from_cache"))
    row: dict[str, Any] = {
        "set": name,
        "split": split,
        "path": path,
        "label": LABELS.get(path, path),
        "rows_scored": report.n,
        "rows_labelled": labelled,
        "rows_in_split": len(chosen.samples) if ids is None else len(ids),
        "unscored": report.unscored,
        **_figures(report),
        "machine": run.get("cpu_model"),
        "resumed_from_cache": resumed,
        "seconds_per_row": None
        if "seconds" not in run or resumed
        else run["seconds"] / max(1, len(chosen.samples)),
    }
    score_file = folder("score", name) / "scores.jsonl"
    if path != "score" and report.n < labelled and score_file.exists():
        done = {r.id for r in read_judge_scores(scores, "faithfulness").rows}
        same = report_for(score_file, name, done if ids is None else done & ids)
        row["score_on_same_rows"] = {"rows_scored": same.n, **_figures(same)}
    return row


def _figures(report: CalibrationReport) -> dict[str, dict[str, float | None] | None]:
    """Each of ``FIGURES``: estimate, low and high (None: the report has no such figure)."""
    found: dict[str, dict[str, float | None] | None] = {}
    for figure in FIGURES:
        try:
            e = report.estimate(figure)
        except KeyError:
            found[figure] = None
            continue
        found[figure] = {"estimate": e.estimate, "low": e.low, "high": e.high}
    return found


def _cell(figure: dict[str, float | None] | None) -> str:
    if figure is None or figure["estimate"] is None:
        return "—"
    if figure["low"] is None or figure["high"] is None:
        return f"{figure['estimate']:.3f}"
    return f"{figure['estimate']:.3f} [{figure['low']:.3f}, {figure['high']:.3f}]"


def results(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON record: how the figures were computed, and the tables' rows."""
    return {
        "written_by": "benchmarks/calibration_local.py report",
        "model": MODEL,
        "metric": "faithfulness",
        "supported_at": 0.5,
        "bootstrap": {"kind": "percentile", "confidence": 0.95, "resamples": 2000, "seed": 0},
        "splits": SPLITS,
        "rows": rows,
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["# The embedded judge against human labels, on whole sets", ""]
    lines += [
        "Written by `benchmarks/calibration_local.py report` from the score files in "
        "`results/calibration_local/`; every figure is `rag_judge.calibration`'s, with a "
        "percentile bootstrap 95% CI (2,000 resamples, seed 0). Faithfulness of "
        f"`{MODEL}`; supported iff value >= 0.5. A path with fewer rows than the set was "
        "stopped for time: its rows are the set's first ones in file order, and the scoring "
        "path on exactly those rows is the line beneath it. Per-row seconds only come from a "
        "run that started with an empty cache; `judge_speed_local.md` has the speed figures.",
        "",
    ]
    head = ["path", "rows scored", *FIGURES, "machine", "s per row"]
    for (name, split), group in groupby(rows, key=lambda r: (r["set"], r["split"])):
        lines += [f"## {name}, {SPLITS[split]}", ""]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in group:
            lines += _markdown_lines(row, len(head))
        lines.append("")
    return "\n".join(lines) + "\n"


def _markdown_lines(row: dict[str, Any], columns: int) -> list[str]:
    """One path's line of a table, its unscored rows, and the scoring path on its rows."""
    cells = [row["label"], f"{row['rows_scored']} of {row['rows_labelled']}"]
    cells += [_cell(row[f]) for f in FIGURES]
    per_row = (
        "— (resumed)"
        if row["resumed_from_cache"]
        else "—"
        if row["seconds_per_row"] is None
        else f"{row['seconds_per_row']:.1f}"
    )
    lines = ["| " + " | ".join([*cells, row["machine"] or "—", per_row]) + " |"]
    if row["unscored"]:
        lines.append(f"|  | unscored: {row['unscored']} |" + " |" * (columns - 2))
    if (same := row.get("score_on_same_rows")) is not None:
        cells = [
            f"score, on the {same['rows_scored']} {row['path']} rows",
            f"{same['rows_scored']}",
        ]
        cells += [_cell(same[f]) for f in FIGURES]
        lines.append("| " + " | ".join([*cells, "", ""]) + " |")
    return lines


async def rescore(name: str, verify: int) -> None:
    """This release's scoring path from the previous release's score file (module docstring)."""
    from rag_judge.jobs.score.run import aevaluate
    from rag_judge.judges.probes import SUPPORTED_AT, p_supported, support_signal
    from rag_judge.judges.segment import is_fragment

    chosen = loaded(name)
    samples = {s.id: s for s in chosen.samples}
    old = [json.loads(line) for line in (folder("score", name) / "scores.jsonl").open()]
    session = open_session(load_settings({"model": MODEL}), cache=False)
    started = time.time()
    kept: dict[str, Any] = {}
    again = []
    for record in old:
        result = record["results"]["faithfulness"]
        if _is_fragment_row(record, is_fragment):
            again.append(record["id"])  # asked differently now: claims/answer
        elif result["status"] != "ok":
            kept[record["id"]] = result
        else:
            redone = _rescored(result, record["contexts"], support_signal, p_supported)
            flipped = any(
                (new["support_probability"] >= SUPPORTED_AT) != (was["verdict"] == "supported")
                for new, was in zip(redone["claims"], result["claims"], strict=True)
            )
            if flipped:
                again.append(record["id"])  # the verdict's other probes run: judge it afresh
            else:
                kept[record["id"]] = redone
    if again:
        judged = await aevaluate(
            [samples[i] for i in again], ["faithfulness"], client=session.client, mode="score",
            reasons=False,
        )  # fmt: skip
        kept |= {
            s.sample.id: s.results["faithfulness"].model_dump(mode="json") for s in judged.samples
        }
    lines = [json.dumps({"id": r["id"], "results": {"faithfulness": kept[r["id"]]}}) for r in old]
    out = folder("rescore", name)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scores.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    info = {"judged_again": len(again), "rows": len(old)}
    if verify:
        info |= await _verify(old, samples, session, verify, again)
    _record_run("rescore", name, time.time() - started, resumed=True)
    record = folder("rescore", name) / "run.json"
    record.write_text(json.dumps(json.loads(record.read_text()) | info, indent=2) + "\n")
    print(json.dumps(info, indent=2))


def _rescored(
    result: dict[str, Any], contexts: list[str], support_signal: Any, p_supported: Any
) -> dict[str, Any]:
    """A recorded result with this release's signals and P(supported), from the same P(yes)."""
    signals = [
        support_signal(old["model"], claim["claim"], contexts, as_answer=False)
        for claim, old in zip(result["claims"], result["details"]["support"], strict=True)
    ]
    values = [p_supported(signal) for signal in signals]
    claims = [
        {**claim, "support_probability": value}
        for claim, value in zip(result["claims"], values, strict=True)
    ]
    details = {**result["details"], "support": signals}
    return {**result, "value": sum(values) / len(values), "claims": claims, "details": details}


def _is_fragment_row(record: dict[str, Any], is_fragment: Any) -> bool:
    result = record["results"]["faithfulness"]
    claims = [c["claim"] for c in result.get("claims", [])]
    return len(claims) == 1 and is_fragment(claims[0], record.get("question"))


async def _verify(
    old: list[dict[str, Any]], samples: dict[str, Any], session: Any, n: int, skip: list[str]
) -> dict[str, Any]:
    """Judge ``n`` rows (every ``len // n``-th that is not a fragment) from scratch: the largest
    change of a recorded P(yes)."""
    from rag_judge.jobs.score.run import aevaluate

    pool = [
        r for r in old if r["id"] not in skip and r["results"]["faithfulness"]["status"] == "ok"
    ]
    picked = pool[:: max(1, len(pool) // n)][:n]
    judged = await aevaluate(
        [samples[r["id"]] for r in picked], ["faithfulness"], client=session.client,
        mode="score", reasons=False,
    )  # fmt: skip
    changes = []
    for record, now in zip(picked, judged.samples, strict=True):
        before = [s["model"] for s in record["results"]["faithfulness"]["details"]["support"]]
        after = [s["model"] for s in now.results["faithfulness"].details.get("support", [])]
        if len(before) == len(after):
            changes += [abs(a - b) for a, b in zip(before, after, strict=True)]
        else:
            changes.append(1.0)  # other claims: report it as the largest change
    return {"verified_rows": len(picked), "largest_p_yes_change": max(changes, default=0.0)}


def _run_info(path: str, name: str) -> dict[str, Any]:
    record = folder(path, name) / "run.json"
    return json.loads(record.read_text()) if record.exists() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--path", choices=PATHS, required=True)
    run.add_argument("--set", choices=list(SETS), required=True, dest="name")
    run.add_argument("--cache", type=Path, default=Path(".cache/calibration_local"))
    run.add_argument("--scores", type=Path, help="generate: take this score file instead")
    run.add_argument("--first", type=int, help="floor: only the first N rows")
    sub.add_parser("report")
    again = sub.add_parser("rescore")
    again.add_argument("--set", choices=list(SETS), required=True, dest="name")
    again.add_argument("--verify", type=int, default=10, help="rows judged again from scratch")
    args = parser.parse_args()
    if args.command == "rescore":
        asyncio.run(rescore(args.name, args.verify))
        return
    if args.command == "report":
        rows = tables()
        RESULTS.write_text(json.dumps(results(rows), indent=2) + "\n", encoding="utf-8")
        MARKDOWN.write_text(markdown(rows), encoding="utf-8")
        print(MARKDOWN.read_text(encoding="utf-8"))
        return
    if args.scores is not None:
        target = folder(args.path, args.name)
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(args.scores, target / "scores.jsonl")
        return
    if args.path == "floor":
        asyncio.run(run_floor(args.name, args.cache, args.first))
    else:
        run_cli(args.path, args.name, args.cache)


if __name__ == "__main__":
    main()
