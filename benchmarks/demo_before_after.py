"""`make demo`'s job before and after, on the same questions, in one run: wall time, calls, tokens.

*before* is the demo's command at an earlier commit (checked out with ``git worktree`` into a
temporary folder and imported from there), *after* the command of this checkout's Makefile.
Each runs as ``rag-judge sweep`` does from the shell, in its own process, with a fresh response
cache and the weights already assembled, one after the other on this machine, over the first
``--limit`` questions. Calls and tokens come from the per-question table the sweep wrote
(every model call, the embedder's requests not included); wall time is the whole process's.

Usage::

    .venv/bin/python benchmarks/demo_before_after.py --before 1daa9f6 --limit 3

With ``--same-command`` *before* runs today's command at the earlier commit (a change of the
code alone, not of the demo's arguments; ``--before HEAD`` with ``--after-extra "--generator
local/qwen2.5-coder-0.5b"`` compares a choice of the demo's instead); ``--name`` writes
``demo_before_after_<name>.*`` and says what changed; ``--keep DIR`` keeps *after*'s output
folder (for ``dry_run_accuracy.py demo``)::

    .venv/bin/python benchmarks/demo_before_after.py --before df913b5 --same-command --limit 20 \
        --name reasons --what "reasons after the sweep, for the shown rows" --keep sweep_after
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
from _machine import machine_info

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
BEFORE = ["cmrc2018_zh", "--ks", "1-10"]
"""The demo's arguments before this issue: whole paragraphs, the default judges."""
AFTER = [
    "cmrc2018_zh_chunked",
    "--ks",
    "1-10",
    "--metrics",
    re.search(r"^DEMO_METRICS \?= (\S+)", (ROOT / "Makefile").read_text(), re.M)[1],  # type: ignore[index]
]
"""The demo's arguments now (the Makefile's ``demo`` target)."""


def run(label: str, source: Path, arguments: list[str], limit: int, work: Path) -> dict[str, Any]:
    """One demo command in its own process; its wall time and what the sweep table counts."""
    out, cache = work / f"{label}_out", work / f"{label}_cache"
    command = [sys.executable, "-c", "from rag_judge.cli import main; main()", "sweep", *arguments]
    command += ["--limit", str(limit), "-o", str(out)]
    environment = os.environ | {"PYTHONPATH": str(source), "RAG_JUDGE_CACHE_DIR": str(cache)}
    started = time.perf_counter()
    subprocess.run(command, env=environment, check=True, capture_output=True, cwd=source)
    wall = time.perf_counter() - started
    frame = pd.read_parquet(out / "per_question.parquet")
    questions = int(frame["question_id"].nunique())
    return {
        "label": label,
        "arguments": arguments,
        "questions": questions,
        "wall_s": round(wall, 1),
        "per_question_s": round(wall / questions, 1),
        "calls": int(frame["calls"].sum()),
        "prompt_tokens": int(frame["prompt_tokens"].sum()),
        "completion_tokens": int(frame["completion_tokens"].sum()),
        **{  # the answers' quality against CMRC's references, over every (question, k)
            measure: round(float(frame[measure].astype(float).mean()), 3)
            for measure in ("exact_match", "answer_f1")
            if measure in frame.columns
        },
    }


ISSUE_26 = (
    "whole CMRC paragraphs, generator prompt v1, answers then judges, the default judges. "
    "After: this commit, `cmrc2018_zh_chunked`, generator prompt v2 (the judges' prefix), "
    "each answer judged on the passages just read, the demo's judges."
)
"""What changed in the first comparison (issue 26)."""


def markdown(found: dict[str, Any]) -> str:
    before, after = found["before"], found["after"]
    what = found.get("what") or ISSUE_26
    lines = [
        f"# `make demo`'s job before and after, same questions: {found.get('name') or 'issue 26'}",
        "",
        "Written by `benchmarks/demo_before_after.py`; fresh response cache per run, weights "
        f"already assembled, one process each, back to back on {found['machine']['cpu_model']} "
        f"({found['machine']['logical_cores']} cores). Before: commit `{found['before_commit']}`, "
        f"{what}",
        "",
        "| run | questions | wall s | s per question | calls | prompt tok | completion tok "
        "| exact match | F1 |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in (before, after):
        lines.append(
            f"| {row['label']}: `sweep {' '.join(row['arguments'])}` | {row['questions']} "
            f"| {row['wall_s']} | {row['per_question_s']} | {row['calls']} "
            f"| {row['prompt_tokens']:,} | {row['completion_tokens']:,} "
            f"| {row.get('exact_match', '')} | {row.get('answer_f1', '')} |"
        )
    speedup = before["per_question_s"] / after["per_question_s"]
    lines += ["", f"Speed-up per question: **{speedup:.2f}x**.", ""]
    machine = ", ".join(f"{k}={v}" for k, v in found["machine"].items())
    return "\n".join([*lines, f"Machine: {machine}", ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="the commit of the earlier demo")
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--same-command", action="store_true", help="before runs today's command")
    parser.add_argument("--name", default="", help="suffix of the result files")
    parser.add_argument("--what", default="", help="what changed, for the page")
    parser.add_argument("--keep", type=Path, help="copy after's output folder here")
    parser.add_argument(
        "--after-extra", default="", help="arguments added to after's command (a model choice)"
    )
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True, capture_output=True,
        text=True,
    ).stdout.strip()  # fmt: skip
    found: dict[str, Any] = {"machine": machine_info(), "before_commit": commit}
    found |= {"name": args.name, "what": args.what}
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        old = work / "before_source"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(old), args.before],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            before = AFTER if args.same_command else BEFORE
            found["before"] = run("before", old, before, args.limit, work)
            found["after"] = run("after", ROOT, AFTER + args.after_extra.split(), args.limit, work)
            if args.keep is not None:
                shutil.copytree(work / "after_out", args.keep, dirs_exist_ok=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT)
    RESULTS.mkdir(exist_ok=True)
    stem = "demo_before_after" + (f"_{args.name}" if args.name else "")
    (RESULTS / f"{stem}.json").write_text(json.dumps(found, indent=2) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown(found))
    print(markdown(found))


if __name__ == "__main__":
    main()
