"""benchmarks/judge_cost.py's summary: the wall times of the samples with the llama server's
timings are totalled apart, so the manual's per-sample seconds are checked against the file."""

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
def judge_cost() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module("judge_cost")
    finally:
        sys.path.remove(str(BENCHMARKS))


def record(sample: str, metric: str, wall_s: float, *, timed: bool) -> dict[str, Any]:
    """One rag_judge (sample, metric) record, with server timings when ``timed``."""
    found: dict[str, Any] = {"tool": "rag_judge", "sample_id": sample, "metric": metric}
    found |= {"value": 1.0, "status": "ok", "wall_s": wall_s, "calls": 1, "samples_sha256": "x"}
    if metric == "context_recall":
        found["by_k"] = {"1": 0.0, "2": 1.0, "3": 1.0}
    if timed:
        found |= {"server_timed_requests": 1, "server_total_ms": 1000.0}
    return found


def test_server_timed_samples_are_totalled_apart(judge_cost: ModuleType, tmp_path: Path) -> None:
    metrics = ("faithfulness", "answer_relevancy", "context_recall")
    # s1 ran before the timings were recorded (and slowly); s2 and s3 with them.
    records = [record("s1", m, 100.0, timed=False) for m in metrics]
    records += [
        record(s, m, wall, timed=True) for s, wall in (("s2", 2.0), ("s3", 4.0)) for m in metrics
    ]
    out = tmp_path / "judge_cost.json"
    parameters = {"samples": 3, "samples_sha256": "x", "model": "m"}
    report = {"status": "finished", "parameters": parameters}
    report |= {"machine": {}, "sides": {}, "notes": [], "summary": {}}
    out.write_text(json.dumps(report), encoding="utf-8")
    out.with_suffix(".records.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
    )
    judge_cost.rewrite_summary(out)
    summary = json.loads(out.read_text(encoding="utf-8"))["summary"]["rag_judge"]
    assert summary["all_three"]["wall_s_per_sample"] == 106.0  # (300 + 6 + 12) / 3
    timed = summary["server_timed"]
    assert timed["samples"] == 2
    assert timed["all_three"]["wall_s_per_sample"] == 9.0  # (6 + 12) / 2
    assert timed["context_recall_all_k"]["wall_s_per_sample"] == 3.0
    assert summary["faithfulness"]["server_time_per_sample"]["wall_s"] == 3.0
    table = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| rag_judge | all three, server-timed samples | 2 | 3.00 |" in table
