"""The two sides of the best k, stated from the sweep's means and only from what it measured."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pytest
from sweep_toy import RESAMPLES, toy_sweep

from rag_judge.jobs.sweep import SweepResult
from rag_judge.report.sweep_reading import read_sides
from rag_judge.report.sweep_report import write_sweep_report


def summary(means: Mapping[int, Mapping[str, float | None]]) -> pd.DataFrame:
    rows = [(k, metric, value) for k, row in means.items() for metric, value in row.items()]
    return pd.DataFrame(rows, columns=["k", "metric", "mean"])


MIDDLE: dict[int, dict[str, float | None]] = {
    1: {"doc_hit_rate": 0.5, "doc_precision": 0.5, "context_recall": 0.4, "faithfulness": 0.9},
    4: {"doc_hit_rate": 0.75, "doc_precision": 0.25, "context_recall": 0.8, "faithfulness": 0.95},
    8: {"doc_hit_rate": 1.0, "doc_precision": 0.125, "context_recall": 0.9, "faithfulness": 0.7},
}


def test_a_best_k_in_the_middle_gets_both_sides() -> None:
    small, large = read_sides(summary(MIDDLE), 4)
    assert small == (
        "Fewer passages (k=1): a relevant passage was among them for 50% of the questions "
        "(75% at k=4); context recall 0.40 (0.80 at k=4)."
    )
    assert large == (
        "More passages (k=8): 0.12 of them were relevant (0.25 at k=4), so about 7.0 of the 8 "
        "held no answer; faithfulness 0.70 (0.95 at k=4); context recall 0.90 (0.80 at k=4)."
    )


def test_text_relevance_is_preferred_to_document_ids() -> None:
    means = {k: {**row, "text_hit_rate": 1.0} for k, row in MIDDLE.items()}
    small, _ = read_sides(summary(means), 4)
    assert "for 100% of the questions (100% at k=4)" in small


@pytest.mark.parametrize(("best", "starts"), [(1, ["More"]), (8, ["Fewer"])])
def test_a_best_k_at_an_end_has_one_side(best: int, starts: list[str]) -> None:
    sentences = read_sides(summary(MIDDLE), best)
    assert [s.split(" ")[0] for s in sentences] == starts


def test_unmeasured_means_make_no_clause_and_nothing_measured_makes_no_sentence() -> None:
    gaps: dict[int, dict[str, float | None]] = {
        1: {"doc_hit_rate": None, "completeness": 0.2},
        3: {"doc_hit_rate": 0.9, "completeness": None},
        5: {"faithfulness": 0.8},
    }
    assert read_sides(summary(gaps), 3) == []  # no measure is known at both ends of a side
    assert read_sides(summary({}), 3) == []


def test_the_report_carries_the_sides(tmp_path: Path) -> None:
    toy: SweepResult = toy_sweep()[0]
    report = write_sweep_report(toy, tmp_path, n_resamples=RESAMPLES)
    found = report.decision.recommendation
    assert found is not None
    assert found.reference_k == 2  # undecided: the sides are read against the best by mean
    markdown = report.markdown_path.read_text(encoding="utf-8")
    html = report.html_path.read_text(encoding="utf-8")
    (line,) = [x for x in markdown.splitlines() if x.startswith("- More passages (k=4)")]
    assert "completeness 1.00 (1.00 at k=2)" in line
    assert "- Fewer passages (k=1)" in markdown
    assert "More passages (k=4)" in html
