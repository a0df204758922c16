"""--repeats: every row judged N times at a sampling temperature with one seed per repeat; the
summary's interval becomes two-level and the judge's spread is reported; compare-scores uses
the repeats on both sides."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.jobs.compare_scores.comparison import compare_scores
from rag_judge.jobs.compare_scores.files import score_records
from rag_judge.jobs.score.run import REPEAT_TEMPERATURE, aevaluate
from rag_judge.report.score_compare import render_markdown
from rag_judge.report.tables import judge_summary_table

ROWS = [
    {"id": f"r{i}", "question": f"Q{i}?", "contexts": [f"Fact {i}."], "answer": f"Fact {i}."}
    for i in range(12)
]


def noisy_judge(request: ChatRequest) -> str:
    """Claims are the answer; the verdict depends on the seed for odd rows (judge noise)."""
    user = request.messages[-1].content
    if (request.prompt_id or "").startswith("claims/extract"):
        return json.dumps({"claims": [user.split("Text:")[-1].strip()]})
    row = int(user.split("Fact ")[1].split(".")[0])
    supported = row % 2 == 0 or (request.seed or 0) % 2 == 0
    verdict = "supported" if supported else "not_mentioned"
    return json.dumps(
        {"verdicts": [{"claim": 1, "reason": "r", "verdict": verdict, "passages": [1]}]}
    )


def judge(repeats: int) -> tuple[object, ScriptedBackend]:
    backend = ScriptedBackend(respond=noisy_judge)
    result = asyncio.run(
        aevaluate(ROWS, ["faithfulness"], client=ModelClient(backend), cache=False, repeats=repeats)
    )
    return result, backend


def test_each_repeat_is_sampled_with_its_own_seed_and_recorded() -> None:
    result, backend = judge(3)
    sent = {(r.seed, r.temperature) for r in backend.requests}
    assert sent == {(i, REPEAT_TEMPERATURE) for i in range(3)}
    record = result.to_records()[1]  # type: ignore[attr-defined]
    assert [r["value"] for r in record["repeats"]["faithfulness"]] == [1.0, 0.0, 1.0]
    (summary,) = result.summary()  # type: ignore[attr-defined]
    # Even rows always 1; odd rows 2/3 → mean (1 + 2/3) / 2.
    assert summary.mean == pytest.approx(5 / 6)
    assert summary.judge_sd is not None
    assert 0.3 < summary.judge_sd < 0.5  # pooled SD: only the odd rows vary
    header, rows = judge_summary_table([summary])
    assert header[3] == "judge sd"
    assert rows[0][3] == f"{summary.judge_sd:.3f}"


def test_one_repeat_is_the_plain_greedy_run() -> None:
    result, backend = judge(1)
    assert {(r.seed, r.temperature) for r in backend.requests} == {(None, 0.0)}
    assert "repeats" not in result.to_records()[0]  # type: ignore[attr-defined]
    (summary,) = result.summary()  # type: ignore[attr-defined]
    assert summary.judge_sd is None
    assert "judge sd" not in judge_summary_table([summary])[0]


def test_compare_scores_uses_the_repeats_of_both_files(tmp_path: Path) -> None:
    base, _ = judge(3)
    new, _ = judge(3)
    comparison = compare_scores(
        score_records(base.to_records(), "base"),  # type: ignore[attr-defined]
        score_records(new.to_records(), "new"),  # type: ignore[attr-defined]
    )
    found = comparison.metric("faithfulness")
    assert found.difference is not None
    assert "two-level" in found.difference.method
    assert found.difference.estimate == pytest.approx(0.0)
    assert found.new_spread is not None
    assert found.new_spread.sd > 0.3
    assert found.base_mean == pytest.approx(5 / 6)
    text = render_markdown(comparison)
    assert "The judge's own run-to-run spread (pooled SD of the repeats): faithfulness BASE" in text
