"""The k-sweep's HTML report: one self-contained page (inline CSS, the plot as a data URI).

The page is a Jinja2 template with autoescaping on, filled from plain view values built here,
so every question, answer, claim and reason is escaped and the template only loops. Nothing in
it depends on the clock, so the same sweep gives the same page.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rag_judge.core.types import ClaimVerdict
from rag_judge.jobs.sweep.decision.columns import COST_COLUMNS
from rag_judge.jobs.sweep.decision.record import Decision
from rag_judge.jobs.sweep.decision.refusals import REFUSAL_MEASURES
from rag_judge.jobs.sweep.explain import SHOWN_WORST, worst_rows
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.judges import JUDGES
from rag_judge.report.sweep_decision import REFUSAL_HEADS, decision_view
from rag_judge.report.sweep_models import generator_name, self_judging_warning
from rag_judge.report.sweep_questions import question_view
from rag_judge.report.tables import MISSING

TEMPLATE = "sweep_report.html.j2"
MAX_STATUS_ROWS = 20
"""Unscored rows listed per metric; the rest are counted (all are in per_question.csv)."""


@dataclass(frozen=True)
class Cell:
    """One metric at one k: the mean, then its CI and how many questions were scored (shown
    on a second, smaller line, so a table of ten metrics fits a laptop's width)."""

    mean: str
    detail: str


@dataclass(frozen=True)
class GridRow:
    """One k of a summary table."""

    k: int
    best: bool
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class ClaimRow:
    """One claim of a judgement, as shown."""

    claim: str
    verdict: str
    reason: str
    chunks: str
    probability: str


@dataclass(frozen=True)
class Case:
    """One (question, k) row of a judge, with what the judge found."""

    question_id: str
    k: int
    question: str
    answer: str
    value: str
    status: str
    error: str
    claims: tuple[ClaimRow, ...]


@dataclass(frozen=True)
class StatusIssues:
    """A status column's rows that are not ``ok``: counts per status and the first few rows."""

    metric: str
    counts: tuple[tuple[str, int], ...]
    rows: tuple[tuple[str, int, str, str], ...]
    """(question id, k, status, error)."""
    more: int


def _interval(low: Any, high: Any) -> str:
    return "" if pd.isna(low) or pd.isna(high) else f"[{low:.3f}, {high:.3f}]"


def table_groups(
    retrieval: Sequence[str], judges: Sequence[str], refusals: Sequence[str] = ()
) -> list[tuple[str, list[str]]]:
    """The summary tables: retrieval by document id, by answer text (and any other retrieval
    column), the judges, then the refusal shares; empty groups left out."""
    by_id = [c for c in retrieval if c.startswith("doc_")]
    by_text = [c for c in retrieval if c.startswith("text_")]
    other = [c for c in retrieval if c not in by_id and c not in by_text]
    groups = [
        ("Retrieval by document id", by_id),
        ("Retrieval by answer text", by_text),
        ("Retrieval", other),
        ("Generation", list(judges)),
        ("Refusals", list(refusals)),
    ]
    return [(name, columns) for name, columns in groups if columns]


def summary_grid(
    summary: pd.DataFrame, metrics: Sequence[str], marked: int | None
) -> tuple[GridRow, ...]:
    """One row per k, one cell per metric, from a summary frame (``SweepResult.summary``)."""
    cells = {(int(r["k"]), str(r["metric"])): r for r in summary.to_dict("records")}
    return tuple(
        GridRow(
            k,
            k == marked,
            tuple(
                Cell(
                    MISSING if pd.isna(row["mean"]) else f"{row['mean']:.3f}",
                    " · ".join(
                        part
                        for part in (
                            _interval(row["ci_low"], row["ci_high"]),
                            f"n={row['n_scored']}/{row['n_questions']}",
                        )
                        if part
                    ),
                )
                if (row := cells.get((k, m))) is not None
                else Cell(MISSING, "")
                for m in metrics
            ),
        )
        for k in sorted(set(summary["k"].to_numpy(dtype=int).tolist()))
    )


def worst_cases(result: SweepResult, metric: str, count: int) -> tuple[Case, ...]:
    """The ``count`` scored rows with the lowest value (highest when lower is better)."""
    rows = worst_rows(result.per_question, metric, count)
    return tuple(_case(result, metric, row) for row in rows.to_dict("records"))


def _case(result: SweepResult, metric: str, row: Mapping[Any, Any]) -> Case:
    qid, k = str(row["question_id"]), int(row["k"])
    judged = result.judgements.get((qid, k), {}).get(metric)
    ranked = result.retrieved.get(qid, ())
    return Case(
        question_id=qid,
        k=k,
        question=result.questions.get(qid, ""),
        answer=_text(row["answer"]),
        value=f"{row[metric]:.3f}",
        status=_text(row[f"{metric}_status"]),
        error=(judged.error or "") if judged is not None else "",
        claims=tuple(
            _claim(claim, metric, ranked, k) for claim in (judged.claims if judged else ())
        ),
    )


def _claim(claim: ClaimVerdict, metric: str, ranked: Sequence[str], k: int) -> ClaimRow:
    return ClaimRow(
        claim=claim.claim,
        verdict=claim.verdict or "no verdict",
        reason=claim.reason,
        chunks=", ".join(_cited(n, metric, ranked, k) for n in claim.chunks),
        probability=MISSING
        if claim.support_probability is None
        else f"{claim.support_probability:.3f}",
    )


def _cited(number: int, metric: str, ranked: Sequence[str], k: int) -> str:
    """What a 1-based passage number of a verdict points to: the answer, or a ranked chunk."""
    cites = JUDGES[metric].cites if metric in JUDGES else None
    if cites == "answer":
        return "the answer"
    if cites == "contexts" and 1 <= number <= len(ranked):
        beyond = f", beyond k={k}" if number > k else ""
        return f"{ranked[number - 1]} (rank {number}{beyond})"
    return f"passage {number}"


def status_issues(result: SweepResult) -> tuple[StatusIssues, ...]:
    """Per judge (and the generator), the rows that are not ``ok``; none when all are."""
    frame = result.per_question
    columns = [(m, f"{m}_status") for m in result.metrics]
    columns.append(("generation", "generation_status"))
    found = []
    for metric, column in columns:
        bad = frame[frame[column].notna() & (frame[column] != "ok")]
        if bad.empty:
            continue
        counts = Counter(str(s) for s in bad[column])
        rows = tuple(
            (str(r["question_id"]), int(r["k"]), str(r[column]), _error(result, metric, r))
            for r in bad.head(MAX_STATUS_ROWS).to_dict("records")
        )
        more = len(bad) - len(rows)
        found.append(StatusIssues(metric, tuple(sorted(counts.items())), rows, more))
    return tuple(found)


def _error(result: SweepResult, metric: str, row: Mapping[Any, Any]) -> str:
    judged = result.judgements.get((str(row["question_id"]), int(row["k"])), {}).get(metric)
    return (judged.error or "") if judged is not None else ""


def cost_totals(frame: pd.DataFrame) -> dict[str, int]:
    """Calls and tokens summed over the per-question rows (shared steps counted per judge)."""
    return {c: int(frame[c].sum()) for c in COST_COLUMNS if c in frame.columns}


def ledger_rows(result: SweepResult) -> tuple[tuple[str, ...], ...]:
    """Per model from the client's ledger: calls, cached, tokens and cost (exact totals)."""
    if result.ledger is None:
        return ()
    rows = []
    for model, tally in sorted(result.ledger.summary().items()):
        cost = tally["cost_usd"]
        rows.append(
            (
                model,
                str(tally["calls"]),
                str(tally["cached"]),
                str(tally["prompt_tokens"]),
                str(tally["completion_tokens"]),
                "unknown" if cost is None else f"${cost:.4f}",
            )
        )
    return tuple(rows)


def render_sweep_html(
    result: SweepResult,
    summary: pd.DataFrame,
    *,
    decision: Decision,
    png: bytes,
    title: str = "",
    worst: int = SHOWN_WORST,
    retrieval: Sequence[str] = (),
    judges: Sequence[str] = (),
    files: Sequence[str] = (),
    sides: Sequence[str] = (),
) -> str:
    """The report page.

    Args:
        result: The sweep.
        summary: Per k and metric means and CIs (may include a compound objective's rows).
        decision: The sweep's decision (the first section and the highlighted k).
        png: The plot, embedded as a data URI.
        title: The heading (the eval set and what was swept).
        worst: Lowest-valued rows shown per judge.
        retrieval: Retrieval columns of the first summary table (default: every one).
        judges: Columns of the second table (default: the judges that ran).
        files: The report's other files, listed at the end.
        sides: What fewer and more passages than the reference k did, one sentence each.
    """
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("rag_judge.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    frame = result.per_question
    retrieval = list(retrieval) or [c for c in result.value_columns if c not in result.metrics]
    judges = list(judges) or list(result.metrics)
    view = decision_view(decision)
    refusals = [m for m in REFUSAL_MEASURES if (summary["metric"] == m).any()]
    return environment.get_template(TEMPLATE).render(
        title=title or "k-sweep report",
        model=result.model or "unknown",
        generator=generator_name(result),
        self_judging=self_judging_warning(result),
        ks=", ".join(str(k) for k in result.ks),
        n_questions=int(frame["question_id"].nunique()),
        n_rows=len(frame),
        decision=view,
        excluded=decision.excluded_sentence(),
        sides=list(sides),
        objective_note=decision.objective.note,
        png=base64.b64encode(png).decode("ascii"),
        tables=[
            (
                name,
                [REFUSAL_HEADS.get(c, c) for c in columns],
                summary_grid(summary, columns, view.marked),
            )
            for name, columns in table_groups(retrieval, judges, refusals)
        ],
        skipped=sorted(result.skipped.items()),
        uncovered=[
            (q, result.questions.get(q, ""), why) for q, why in sorted(result.uncovered.items())
        ],
        totals=cost_totals(frame),
        ledger=ledger_rows(result),
        issues=status_issues(result),
        worst=worst,
        cases=[(m, worst_cases(result, m, worst)) for m in result.metrics],
        files=list(files),
        view=question_view(result, decision.objective.used),
    )


def _text(value: Any) -> str:
    return "" if value is None or pd.isna(value) else str(value)
