"""Label, fit, apply on wice_dev, end to end as a user would, and measured on rows never seen.

1. ``rag-judge label`` serves a random sample of 40 rows of the embedded judge's wice_dev score
   file; headless Chromium labels each with the keyboard (``s``/``n``), the label being WiCE's
   own human label of that row (the annotator is the WiCE crowd, played by a script).
2. ``rag-judge calibrate --fit`` learns the profile from those 40 labels (5-fold CV figures).
3. ``rag-judge score --calibration`` judges the whole set with the profile (from the cache).
4. On the 196 rows that were not labelled, the raw judge (value >= 0.5) against the calibrated
   one (the profile's probability and verdict): ECE, Brier, balanced accuracy and κ with 95%
   bootstrap CIs, and the paired change.

    python benchmarks/label_fit_apply.py [--scores SCORES] [-o OUT]

Needs Debian's chromium and playwright (the dev extra). Writes OUT (default
benchmarks/results/label_fit_apply/): labels.jsonl, profile.json, calibrated.jsonl,
summary.md, run.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _machine import machine_info
from calibration_fit import cell, figure

from rag_judge.calibration import (
    balanced_accuracy,
    brier_score,
    cohen_kappa,
    expected_calibration_error,
)
from rag_judge.calibration.estimate import BootstrapOptions
from rag_judge.calibration.fit import paired_change

HERE = Path(__file__).parent
ROOT = HERE.parent
RUN = "import sys; from rag_judge.cli import main; sys.exit(main())"
METRIC = "faithfulness"
SAMPLE = 40
WAIT = 120.0


def cli(*args: str) -> str:
    """Run ``rag-judge ARGS`` as a user would; its stdout (stderr passed through)."""
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, check=False
    )
    sys.stderr.write(done.stderr[-2000:])
    if done.returncode != 0:
        raise SystemExit(f"rag-judge {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def human_labels() -> dict[str, int]:
    path = ROOT / "eval_sets" / "wice_dev" / "labels.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {str(r["id"]): int(r["label"]) for r in rows}


def label_in_browser(scores: Path, labels: Path, truth: dict[str, int]) -> float:
    """Label the sample through the page with the keyboard; seconds it took."""
    from playwright.sync_api import expect, sync_playwright

    server = subprocess.Popen(
        [sys.executable, "-c", RUN, "label", str(scores), "-o", str(labels),
         "--sample", str(SAMPLE), "--strategy", "random", "--seed", "0",
         "--annotator", "wice-crowd", "--no-browser"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert server.stderr is not None
    url = None
    for line in server.stderr:
        if found := re.search(r"label at (http://127\.0\.0\.1:\d+/\S+/)", line):
            url = found.group(1)
            break
    assert url is not None, "the labelling server never said its address"
    started = time.perf_counter()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(url)
            row_id = page.locator("#row-id")
            for done in range(SAMPLE):
                expect(page.locator("#progress")).to_contain_text(
                    f"{done} of {SAMPLE} labelled", timeout=WAIT * 1000
                )
                shown = row_id.text_content() or ""
                page.keyboard.press("s" if truth[shown] == 1 else "n")
            expect(page.locator("#progress")).to_contain_text(
                f"{SAMPLE} of {SAMPLE} labelled", timeout=WAIT * 1000
            )
            browser.close()
    finally:
        server.kill()
        server.wait()
    return time.perf_counter() - started


def held_out(calibrated: Path, labelled: set[str], truth: dict[str, int]) -> dict[str, Any]:
    """Raw against calibrated on the rows that were not labelled."""
    rows = [json.loads(line) for line in calibrated.read_text(encoding="utf-8").splitlines()]
    kept = [
        r for r in rows
        if str(r["id"]) not in labelled and r["results"][METRIC]["value"] is not None
        and r.get("calibrated", {}).get(METRIC, {}).get("probability") is not None
    ]  # fmt: skip
    h = np.array([truth[str(r["id"])] for r in kept], dtype=float)
    raw_p = np.array([r["results"][METRIC]["value"] for r in kept], dtype=float)
    raw_v = (raw_p >= 0.5).astype(float)
    cal_p = np.array([r["calibrated"][METRIC]["probability"] for r in kept], dtype=float)
    cal_v = np.array([float(r["calibrated"][METRIC]["supported"]) for r in kept])
    figures = {}
    for name, before, after in (
        ("expected_calibration_error", expected_calibration_error(h, raw_p).ece,
         expected_calibration_error(h, cal_p).ece),
        ("brier_score", brier_score(h, raw_p), brier_score(h, cal_p)),
        ("balanced_accuracy", balanced_accuracy(h, raw_v), balanced_accuracy(h, cal_v)),
        ("cohen_kappa", cohen_kappa(h, raw_v, categories=(0.0, 1.0)),
         cohen_kappa(h, cal_v, categories=(0.0, 1.0))),
    ):  # fmt: skip
        options = BootstrapOptions(confidence=0.95, n_resamples=2000, seed=0)
        paired = paired_change(name, h, (raw_p, raw_v), (cal_p, cal_v), options)
        figures[name] = {"before": figure(before), "after": figure(after), "change": figure(paired)}
    return {"n": int(h.size), "supported": int(h.sum()), "figures": figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--scores",
        type=Path,
        default=HERE / "results" / "calibration_fit" / "scores_wice_dev.jsonl",
    )
    parser.add_argument("-o", "--output", type=Path, default=HERE / "results" / "label_fit_apply")
    args = parser.parse_args()
    # Paths as a user in the repository would type them (they are recorded in the files).
    args.scores = Path(os.path.relpath(args.scores.resolve(), ROOT))
    out = Path(os.path.relpath(args.output.resolve(), ROOT))
    os.chdir(ROOT)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("labels.jsonl", "profile.json", "calibrated.jsonl"):
        (out / name).unlink(missing_ok=True)
    truth = human_labels()
    run: dict[str, Any] = {"machine": machine_info("llama-cpp-python")}
    run["label_seconds"] = round(label_in_browser(args.scores, out / "labels.jsonl", truth), 1)
    log = [json.loads(line) for line in (out / "labels.jsonl").read_text().splitlines()]
    labelled = {str(e["id"]) for e in log if "label" in e}
    fitted = cli(
        "calibrate", "--fit", "--scores", str(args.scores), "--labels",
        str(out / "labels.jsonl"), "-o", str(out / "profile.json"),
    )  # fmt: skip
    started = time.perf_counter()
    scored = cli(
        "score", "eval_sets/wice_dev/samples.jsonl", "--metrics", METRIC,
        "--calibration", str(out / "profile.json"), "-o", str(out / "calibrated.jsonl"),
    )  # fmt: skip
    run["score_seconds"] = round(time.perf_counter() - started, 1)
    run["held_out"] = held_out(out / "calibrated.jsonl", labelled, truth)
    (out / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    m = run["machine"]
    lines = [
        "# Label, fit, apply on wice_dev",
        "",
        f"{m['date_utc']} · {m['cpu_model']} · {m['logical_cores']} cores. 40 rows labelled "
        f"in headless Chromium with the keyboard ({run['label_seconds']} s; each label is "
        "WiCE's own human label of the row), the profile fitted on them, the whole set scored "
        f"with it ({run['score_seconds']} s, from the response cache).",
        "",
        "## `rag-judge calibrate --fit` (its output)",
        "",
        "```",
        fitted.rstrip(),
        "```",
        "",
        "## `rag-judge score --calibration` (its summary)",
        "",
        "```",
        scored.rstrip(),
        "```",
        "",
        f"## On the {run['held_out']['n']} rows nobody labelled "
        f"({run['held_out']['supported']} supported)",
        "",
        "| figure | raw judge (value >= 0.5) | with the profile | change (paired) |",
        "|---|---|---|---|",
    ]
    for name, f in run["held_out"]["figures"].items():
        lines.append(
            f"| {name} | {cell(f['before'])} | {cell(f['after'])} | {cell(f['change'], True)} |"
        )
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
