"""A judge added to ``judges`` alone is scheduled by the sweep, scored per k and reported.

Two throwaway judges are registered the way a new judge would be (a :class:`Judge` record in
``JUDGES``), with no other edit: one per k that reads the passages, one per question with a
value for every k. The sweep must order, run and tabulate them; the report must show their
columns, label and cited chunks: everything it knows about a judge comes from its record.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_toy import RESAMPLES, TOY, column, toy_sweep

from rag_judge.core.types import JudgeResult
from rag_judge.jobs.sweep.plan import plan_sweep
from rag_judge.judges import JUDGES, Judge, SampleWork
from rag_judge.judges.scoring import recall_by_k
from rag_judge.report.sweep_reading import read_sides
from rag_judge.report.sweep_report import write_sweep_report


async def _any_support(work: SampleWork) -> JudgeResult:
    """1 when the passages support at least one of the answer's claims, else 0."""
    grid = await work.answer_vs_contexts()
    if not grid.ok or grid.value is None:
        return JudgeResult(metric="any_support", status=grid.status, error=grid.error)
    if not grid.value:
        return JudgeResult(metric="any_support", status="no_claims")
    value = float(any(v.verdict == "supported" for v in grid.value))
    return JudgeResult(metric="any_support", value=value, claims=tuple(grid.value))


async def _reference_found(work: SampleWork) -> JudgeResult:
    """Per k: 1 when every reference claim is supported within the top k (one pass)."""
    grid = await work.reference_vs_contexts()
    if not grid.ok or not grid.value:
        return JudgeResult(metric="reference_found", status="no_claims")
    k_max = len(work.sample.contexts or ())
    by_k = {k: float(v == 1.0) for k, v in recall_by_k(grid.value, k_max).items()}
    return JudgeResult(
        metric="reference_found", value=by_k[k_max], by_k=by_k, claims=tuple(grid.value)
    )


ANY_SUPPORT = Judge(
    name="any_support",
    label="any support",
    needs=("answer", "contexts"),
    run=_any_support,
    description="Whether the passages support any claim of the answer.",
    cites="contexts",
    moved_by="noise",
)
REFERENCE_FOUND = Judge(
    name="reference_found",
    label="reference found",
    needs=("contexts", "reference"),
    run=_reference_found,
    description="Whether the top k support every claim of the reference.",
    scope="per_question",
    cites="contexts",
    moved_by="missing_passages",
)
METRICS = ("faithfulness", "any_support", "reference_found")


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(JUDGES, ANY_SUPPORT.name, ANY_SUPPORT)
    monkeypatch.setitem(JUDGES, REFERENCE_FOUND.name, REFERENCE_FOUND)


@pytest.mark.usefixtures("registered")
def test_the_plan_reads_the_judges_records() -> None:
    plan = plan_sweep(TOY, [1, 2], METRICS, has_embedder=False)
    assert plan.per_k == ("faithfulness", "any_support")
    assert plan.once == ("reference_found",)  # per question, read per k from by_k


@pytest.mark.usefixtures("registered")
def test_the_sweep_runs_and_tabulates_them(tmp_path: Path) -> None:
    result, backend = toy_sweep(metrics=METRICS)
    assert result.metrics == METRICS
    # q1's ranking is d2#0, d1#0, ...: its answer is "I do not know." until Paris is in the
    # top k (k >= 2); the reference claim "Paris" is found from k = 2 on.
    assert column(result, "q1", "any_support") == [None, 1.0, 1.0, 1.0]
    assert column(result, "q1", "any_support_status") == ["no_claims", "ok", "ok", "ok"]
    assert column(result, "q1", "reference_found") == [0.0, 1.0, 1.0, 1.0]
    assert column(result, "q2", "reference_found") == [1.0, 1.0, 1.0, 1.0]
    # One verification of the reference over the top K per question, as context recall does.
    verify = [r for r in backend.requests if (r.prompt_id or "").startswith("claims/verify")]
    assert sum("Paris" in r.messages[-1].content.split("Claims")[-1] for r in verify) >= 1
    alone, _ = toy_sweep(metrics=METRICS[1:])  # no built-in judge at all
    report = write_sweep_report(alone, tmp_path, objective="reference_found", n_resamples=RESAMPLES)
    found = report.decision.recommendation
    assert found is not None
    assert (str(report.objective.used), found.best_k_by_mean) == ("reference_found", 2)
    markdown = report.markdown_path.read_text(encoding="utf-8")
    assert "| any_support | reference_found |" in markdown
    html = report.html_path.read_text(encoding="utf-8")
    assert "any_support" in html
    # Its verdicts cite ranked chunks, as its record says: q1's reference is in rank 2 only.
    assert "d1#0 (rank 2, beyond k=1)" in html


@pytest.mark.usefixtures("registered")
def test_the_report_prose_names_them_by_label() -> None:
    result, _ = toy_sweep(metrics=METRICS)
    summary = result.summary(n_resamples=RESAMPLES)
    fewer, more = read_sides(summary, 2)
    assert "reference found 0.50 (1.00 at k=2)" in fewer  # moved by missing passages
    assert "any support 1.00 (1.00 at k=2)" in more  # moved by noise
