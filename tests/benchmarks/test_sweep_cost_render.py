"""benchmarks/sweep_cost.py's comparison: wall times only between runs on the same CPU model.

A plan resumed across sessions may continue on another machine; calls and tokens compare
across machines, seconds do not. These tests pin what the markdown says in each case.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def sweep_cost() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module("sweep_cost")
    finally:
        sys.path.remove(str(BENCHMARKS))


def run(plan: str, cpu: str, rows: list[tuple[str, int, float, str | None]]) -> dict[str, Any]:
    """A recorded run: cumulative rows of (question, calls, wall s, row's cpu or None)."""
    per_question, calls, wall = [], 0, 0.0
    for question, own_calls, own_wall, row_cpu in rows:
        calls, wall = calls + own_calls, wall + own_wall
        row = {"question": question, "calls": calls, "prompt_tokens": 10 * calls}
        row |= {"completion_tokens": calls, "wall_s": wall}
        if row_cpu is not None:
            row["cpu"] = row_cpu
        per_question.append(row)
    machine = {"cpu_model": cpu, "load_average_at_start": [0.1, 0.1, 0.1]}
    return {
        "plan": plan,
        "eval_set": "toy",
        "questions": ["q1", "q2", "q3"],
        "ks": [1, 2],
        "machine": machine,
        "per_question": per_question,
    }


def test_wall_times_compare_only_on_one_cpu(sweep_cost: ModuleType) -> None:
    planned = run("planned", "EPYC", [("q1", 10, 100.0, None), ("q2", 10, 100.0, "Xeon")])
    naive = run("naive", "EPYC", [("q1", 20, 300.0, None), ("q2", 30, 150.0, None)])
    text = sweep_cost.render({"runs": [planned, naive]})
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines()}
    # q1: both on the EPYC (the old rows name no CPU: the run's machine counts).
    assert "| q1 | EPYC | 10 | 20 |" in rows["q1"]
    assert rows["q1"].endswith("| 3.00x |")
    # q2: planned resumed on a Xeon, naive on the EPYC: calls compare, seconds do not.
    assert "| q2 | Xeon / EPYC | 10 | 30 |" in rows["q2"]
    assert rows["q2"].endswith("| - |")
    assert rows["**all 2**"].startswith("| **all 2** |  | 20 | 50 |")
    assert rows["**all 2**"].endswith("| - |")
    same = rows["**1 on one CPU each**"]
    assert same.endswith("| 100.0 | 300.0 | 3.00x |")


def test_no_comparison_without_both_plans(sweep_cost: ModuleType) -> None:
    planned = run("planned", "EPYC", [("q1", 10, 100.0, None)])
    text = sweep_cost.render({"runs": [planned]})
    assert "Both plans" not in text
    assert "stopped after 1 of 3 questions" in text


def test_a_run_of_only_the_questions_asked_is_not_called_stopped(
    sweep_cost: ModuleType,
) -> None:
    planned = run("planned", "Xeon", [("q2", 10, 100.0, "Xeon")])
    planned["asked"] = ["q2"]
    text = sweep_cost.render({"runs": [planned]})
    assert "asked for q2 only (`--questions`), not all 3 questions" in text
    assert "stopped" not in text


def test_the_comparison_is_in_the_results_file(sweep_cost: ModuleType, tmp_path: Path) -> None:
    """The JSON holds the markdown's side-by-side figures, totals on one CPU included, so the
    manual's ratio is checked against the file; --rewrite writes it from the runs alone."""
    planned = run("planned", "EPYC", [("q1", 10, 100.0, None), ("q2", 10, 50.0, None)])
    naive = run("naive", "EPYC", [("q1", 20, 300.0, None), ("q2", 30, 150.0, "Xeon")])
    path = tmp_path / "sweep_cost.json"
    path.write_text(json.dumps({"runs": [planned, naive]}), encoding="utf-8")
    sweep_cost.rewrite(path)
    both = json.loads(path.read_text(encoding="utf-8"))["comparison"]
    assert [q["naive_over_planned"] for q in both["questions"]] == [3.0, None]
    assert both["questions"][1]["cpu"] is None  # planned on the EPYC, naive on a Xeon
    assert both["all"]["planned"]["calls"] == 20
    assert both["all"]["naive"]["wall_s"] == 450.0
    # Only q1 ran on one CPU: 300 s against 100 s.
    assert both["same_cpu"] == {
        "questions": 1,
        "planned": {"wall_s": 100.0},
        "naive": {"wall_s": 300.0},
        "naive_over_planned": 3.0,
    }
    assert "| **1 on one CPU each** | | | | | | 100.0 | 300.0 | 3.00x |" in (
        path.with_suffix(".md").read_text(encoding="utf-8")
    )
