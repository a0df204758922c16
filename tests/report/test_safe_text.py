"""Data in reports stays data: no formulas in CSV, no raw HTML or broken tables in Markdown."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
from sweep_toy import RESAMPLES, toy_sweep

from rag_judge.report.sweep_report import write_sweep_report
from rag_judge.report.tables import markdown_text, spreadsheet_safe


def test_markdown_text_is_one_line_with_no_html_emphasis_or_table_break() -> None:
    assert markdown_text("a|b\nc *d*") == r"a\|b c \*d\*"
    assert markdown_text("<script>alert(1)</script> & co") == (
        "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"
    )


def test_spreadsheet_safe_prefixes_formulas_and_leaves_numbers() -> None:
    frame = pd.DataFrame({"id": ["=1+1", "+x", "-y", "@SUM(A1)", "ok"], "v": [-1.0, 2, 3, 4, 5]})
    safe = spreadsheet_safe(frame)
    assert list(safe["id"]) == ["'=1+1", "'+x", "'-y", "'@SUM(A1)", "ok"]
    assert list(safe["v"]) == [-1.0, 2, 3, 4, 5]
    assert next(iter(frame["id"])) == "=1+1"  # the frame itself is untouched


def test_a_sweep_report_keeps_hostile_ids_and_titles_inert(tmp_path: Path) -> None:
    result, _ = toy_sweep()
    hostile = '=HYPERLINK("http://x")|<b>q1</b>\nnext'
    frame = result.per_question.assign(
        question_id=result.per_question["question_id"].replace({"q1": hostile})
    )
    result = dataclasses.replace(result, per_question=frame, uncovered={hostile: "no chunk"})
    report = write_sweep_report(result, tmp_path, title="<i>set</i> k-sweep", n_resamples=RESAMPLES)
    csv_text = (tmp_path / "per_question.csv").read_text(encoding="utf-8")
    assert "\n'=HYPERLINK" in csv_text or ",'=HYPERLINK" in csv_text or "\"'=HYPERLINK" in csv_text
    markdown = report.markdown_path.read_text(encoding="utf-8")
    assert "<b>" not in markdown
    assert "<i>" not in markdown
    assert "&lt;i&gt;set&lt;/i&gt; k-sweep" in markdown.splitlines()[0]
