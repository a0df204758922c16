"""The per-question view of a sweep (answers that change with k, passages found but answered
wrong) and its cost per k, from the per-question table alone, and in the summary."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sweep_toy import toy_sweep

from rag_judge.jobs.sweep.by_question import (
    AnswerRun,
    answer_changes,
    cost_by_k,
    found_but_wrong,
)
from rag_judge.report.sweep_report import write_sweep_report


def table(rows: list[tuple[str, int, str | None, float | None, float, int | None]]) -> pd.DataFrame:
    """(question, k, answer, F1 = exact match, text hit, generator prompt tokens) per row."""
    names = ["question_id", "k", "answer", "answer_f1", "text_hit_rate", "answer_prompt_tokens"]
    frame = pd.DataFrame(rows, columns=names)
    frame["exact_match"] = frame["answer_f1"]
    return frame.astype(
        {
            "answer_f1": "Float64",
            "exact_match": "Float64",
            "text_hit_rate": "Float64",
            "answer_prompt_tokens": "Int64",
        }
    )


FRAME = table(
    [
        ("q1", 1, "巴黎", 1.0, 1.0, 100),
        ("q1", 2, "巴黎", 1.0, 1.0, 200),
        ("q1", 3, "巴黎", 1.0, 1.0, 300),
        ("q2", 1, "不知道。", 0.0, 0.0, 120),
        ("q2", 2, "不知道。", 0.0, 1.0, 220),
        ("q2", 3, "东京", 1.0, 1.0, 320),
        ("q3", 3, "大阪", 0.0, 1.0, 310),  # listed first at k = 3: sorted by k within a question
        ("q3", 1, "京都", 1.0, 1.0, 110),
        ("q3", 2, "京都", 1.0, 1.0, 210),
    ]
)


def test_answer_changes_lists_runs_of_ks_with_their_reference_match() -> None:
    changes = answer_changes(FRAME)
    assert [c.question_id for c in changes] == ["q2", "q3"]  # q1 never changes
    q2, q3 = changes
    assert q2.runs == (AnswerRun(1, 2, "不知道。", 0.0), AnswerRun(3, 3, "东京", 1.0))
    assert [r.ks for r in q2.runs] == ["1-2", "3"]
    assert (q2.found_at, q2.direction) == (2, "better")  # found at k = 2, right only at 3
    assert (q3.found_at, q3.direction) == (1, "worse")


def test_found_but_wrong_counts_per_k_the_generators_misses() -> None:
    wrong = found_but_wrong(FRAME)
    assert wrong[["k", "found", "wrong"]].to_numpy().tolist() == [[1, 2, 0], [2, 3, 1], [3, 3, 1]]
    assert wrong.loc[1, "question_ids"] == ("q2",)
    assert wrong.loc[2, "question_ids"] == ("q3",)
    assert found_but_wrong(FRAME.drop(columns="exact_match")).empty  # no reference match


def test_cost_by_k_puts_prompt_tokens_beside_quality_per_thousand_tokens() -> None:
    cost = cost_by_k(FRAME, "answer_f1")
    assert cost["prompt_tokens"].tolist() == [110.0, 210.0, 310.0]
    assert cost["objective"].tolist() == pytest.approx([2 / 3, 2 / 3, 2 / 3])
    per_1k = [2 / 3 / 0.11, 2 / 3 / 0.21, 2 / 3 / 0.31]
    assert cost["per_1k_tokens"].tolist() == pytest.approx(per_1k)
    external = FRAME.assign(answer_prompt_tokens=pd.array([None] * len(FRAME), dtype="Int64"))
    assert cost_by_k(external, "answer_f1").empty  # the user's RAG answered: cost unknown


def test_the_summary_shows_cost_per_k_and_the_answers_that_change(tmp_path: Path) -> None:
    result, _ = toy_sweep()
    assert result.per_question["answer_prompt_tokens"].notna().all()
    report = write_sweep_report(result, tmp_path, n_resamples=200)
    summary = report.markdown_path.read_text(encoding="utf-8")
    assert "## Cost per k" in summary
    assert "## Answers that change with k" in summary
    changes = answer_changes(result.per_question)
    assert f"{len(changes)} of 2 questions get a different answer at some k" in summary
    html = report.html_path.read_text(encoding="utf-8")
    assert "<h2>Cost per k</h2>" in html
    assert "<h2>Answers that change with k</h2>" in html
