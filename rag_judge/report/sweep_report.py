"""A k-sweep's output files: the tables, the plot, one self-contained HTML page and a summary.

``write_sweep_report`` writes into one folder: ``per_question.parquet``/``.csv`` (one row per
question x k; missing values stay empty, never "nan"), ``summary.csv`` (per k and metric: mean,
bootstrap CI, questions scored; the refusal shares too), ``decision.json``, ``sweep.png``,
``report.html`` and ``summary.md``. The recommended k and the objective it is chosen by are the
sweep's decision (``result.decision``, made by the job:
:func:`rag_judge.jobs.sweep.decision.decide`); the report only renders it. Nothing depends on
the clock: the same sweep gives the same files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep.decision.decide import decide
from rag_judge.jobs.sweep.decision.objective import Objective, ObjectiveChoice
from rag_judge.jobs.sweep.decision.outcomes import objective_table, row_outcomes
from rag_judge.jobs.sweep.decision.record import Decision
from rag_judge.jobs.sweep.explain import SHOWN_WORST
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.summary import summarise
from rag_judge.report.sweep_decision import DecisionView, decision_view
from rag_judge.report.sweep_html import cost_totals, render_sweep_html
from rag_judge.report.sweep_models import models_sentence, self_judging_warning
from rag_judge.report.sweep_plot import RETRIEVAL_PLOTTED, sweep_png
from rag_judge.report.sweep_questions import QuestionView, question_view
from rag_judge.report.sweep_reading import read_sides
from rag_judge.report.tables import MISSING, markdown_text, spreadsheet_safe

FILES = {
    "per_question.parquet": "one row per question × k (values, statuses, answers, cost)",
    "per_question.csv": "the same rows as CSV (empty cell = not scored)",
    "summary.csv": "per k and metric: mean, 95% CI, questions scored (refusal shares too)",
    "decision.json": "the decision: recommended k (or the ks still in the running), per k its "
    "bounds against the best, refusals, failures and cost, and the sweep's looks",
    "ledger.json": "per model: calls made, replies from the cache, tokens, seconds, statuses "
    "and cost, as the client's ledger counted them",
    "sweep.png": "retrieval vs k; the decision: each k against the best of the others, "
    "the margin; refusals and cost per k",
    "report.html": "the full report (self-contained)",
    "summary.md": "this summary",
}


@dataclass(frozen=True)
class SweepReport:
    """The files a report wrote, and the best k it states."""

    out_dir: Path
    parquet_path: Path
    csv_path: Path
    summary_path: Path
    decision_path: Path
    ledger_path: Path
    plot_path: Path
    html_path: Path
    markdown_path: Path
    decision: Decision
    """What the report renders: the objective, the recommended k (or why none), per k figures."""

    @property
    def objective(self) -> ObjectiveChoice:
        """The objective k was chosen by, and why, when not the one asked for."""
        return self.decision.objective

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file written, in the order of :data:`FILES`."""
        return (
            self.parquet_path,
            self.csv_path,
            self.summary_path,
            self.decision_path,
            self.ledger_path,
            self.plot_path,
            self.html_path,
            self.markdown_path,
        )


def main_metrics(result: SweepResult) -> list[str]:
    """The metrics of the plot and the markdown table: key retrieval measures, then judges."""
    columns = set(result.per_question.columns)
    return [*(m for m in RETRIEVAL_PLOTTED if m in columns), *result.metrics, *result.calibrated]


def with_objective(
    result: SweepResult, summary: pd.DataFrame, objective: Objective | None, **bootstrap: int
) -> pd.DataFrame:
    """The summary plus a compound objective's rows (mean and CI per k), for display: as the
    decision counts it (every question at every k, a refusal valued), over its questions."""
    if objective is None or len(objective.parts) == 1:
        return summary
    table = objective_table(result.per_question, objective)
    frame = result.per_question[result.per_question["question_id"].isin(table.values.index)]
    frame = frame.assign(**{str(objective): row_outcomes(frame, objective)["value"]})
    extra = summarise(frame, [str(objective)], **bootstrap)
    return pd.concat([summary, extra], ignore_index=True)


def render_summary_markdown(
    result: SweepResult,
    summary: pd.DataFrame,
    decision: Decision,
    *,
    title: str = "",
    files: Sequence[str] = tuple(FILES),
    sides: Sequence[str] = (),
) -> str:
    """A short markdown summary: the decision and its table, per-k means, what was skipped.

    Args:
        result: The sweep.
        summary: Per k and metric means (:func:`with_objective` adds a compound objective).
        decision: The sweep's decision (see :func:`~rag_judge.jobs.sweep.decision.decide`).
        title: The heading (the eval set and what was swept).
        files: The report's files, listed at the end.
        sides: What fewer and more passages than the reference k did (:func:`read_sides`).
    """
    frame = result.per_question
    n = frame["question_id"].nunique()
    lines = [f"# {markdown_text(title or 'k-sweep')}", ""]
    lines += [
        f"{models_sentence(result)}, k = {', '.join(str(k) for k in result.ks)}, "
        f"{n} question{'s' * (n != 1)}.",
        "",
    ]
    if (warning := self_judging_warning(result)) is not None:
        lines += [f"> **Warning:** {markdown_text(warning)}", ""]
    if result.judge_mode_note:
        lines += [f"> {markdown_text(result.judge_mode_note)}.", ""]
    view = decision_view(decision)
    lines += [decision_line(decision), "", markdown_text(view.sentence), ""]
    if sides:
        lines += [f"- {markdown_text(sentence)}" for sentence in sides] + [""]
    if decision.objective.note:
        lines += [f"> {markdown_text(decision.objective.note)}", ""]
    lines += _decision_table(view)
    used = decision.objective.used
    columns = [str(used)] * (used is not None and len(used.parts) > 1) + main_metrics(result)
    lines += ["## Mean per k", "", _MEANS_NOTE, ""]
    lines += [*_markdown_table(summary, columns, view.marked), ""]
    lines += _question_sections(question_view(result, used))
    lines += ["## Not applicable", ""]
    lines += [f"- {m}: {markdown_text(why)}" for m, why in sorted(result.skipped.items())] or [
        "- none"
    ]
    if result.uncovered:
        ids = sorted(result.uncovered)
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        lines += [
            "",
            f"{len(ids)} questions left out of the text_* measures: {markdown_text(shown)}.",
        ]
    lines += ["", _cost_line(result, frame)]
    lines += ["", "## Files (in this folder)", ""]
    lines += [f"- `{name}`: {FILES[name]}" if name in FILES else f"- `{name}`" for name in files]
    return "\n".join(lines) + "\n"


_MEANS_NOTE = (
    "The objective's column counts every question the decision uses, a refusal valued; each "
    "judge's column is over the answers it could score (a refusal has no claim to check)."
)


def decision_line(decision: Decision) -> str:
    """The summary's first line: ``**Use k = 4** by `objective` (...)``."""
    found, used = decision.recommendation, decision.objective.used
    if used is None or found is None or not found.n_questions:
        return f"**{decision.headline}**: no objective could be compared across the ks."
    return (
        f"**{decision.headline}** by `{used}` (margin {found.margin:g}, "
        f"{decision.confidence or found.confidence:.0%} confidence, each of the "
        f"{len(found.standings)} ks compared with the best, "
        f"{found.n_questions} of {decision.n_swept} questions)."
    )


def _decision_table(view: DecisionView) -> list[str]:
    if not view.rows:
        return []
    head = tuple(f"`{h}`" if "*" in h else markdown_text(h) for h in view.head)
    lines = [
        "## The decision per k",
        "",
        _row(head),
        "|" + "---:|" * 4 + "---|" + "---:|" * (len(head) - 5),
    ]
    for row in view.rows:
        cells = [markdown_text(c) for c in row]
        if view.marked is not None and row[0] == str(view.marked):
            cells[0] = f"**{cells[0]}**"  # bold after escaping: the stars are markup here
        lines.append(_row(cells))
    return [*lines, ""]


def _question_sections(view: QuestionView) -> list[str]:
    """Cost per k, the answers that change with k, and the passages found but answered wrong."""
    lines: list[str] = []
    if view.cost_rows:
        head = tuple(markdown_text(c) for c in view.cost_head)
        lines += ["## Cost per k", "", _row(head), "|" + "---:|" * len(head)]
        lines += [_row(row) for row in view.cost_rows] + [""]
    lines += ["## Answers that change with k", "", markdown_text(view.changes_sentence), ""]
    if view.change_rows:
        head = ("question", "asked", "answer by k (reference match)", "answer text found at k")
        lines += [_row(head), "|---|---|---|---:|"]
        lines += [_row(tuple(markdown_text(c) for c in row)) for row in view.change_rows]
        if view.more_changes:
            lines += ["", f"… and {view.more_changes} more (per_question.csv has every answer)."]
        lines += [""]
    if view.wrong_rows:
        head = ("k", "answer text in the top k", "of them, answer matches no reference", "share")
        lines += ["## Passage found, answer wrong", "", _row(head), "|" + "---:|" * len(head)]
        lines += [_row(row) for row in view.wrong_rows] + [""]
    return lines


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cost_line(result: SweepResult, frame: pd.DataFrame) -> str:
    """The sweep's cost: exact per model from the client's ledger, else summed over the rows.

    Per model, so an embedder's requests are not added to the chat model's calls."""
    ledger = result.ledger
    if ledger is not None and ledger.models:
        lines = [f"- {ledger.describe(model)}" for model in ledger.models]
        return "\n".join(["Cost, per model (the client's ledger):", "", *lines])
    totals = cost_totals(frame)
    return (
        f"Cost: {totals['calls']} model calls, {totals['prompt_tokens']} prompt and "
        f"{totals['completion_tokens']} completion tokens (summed over the rows; a step shared "
        "by several judges is counted by each)."
    )


def _markdown_table(summary: pd.DataFrame, columns: Sequence[str], marked: int | None) -> list[str]:
    """``| k | metric ... |`` with the means to 3 decimals; the recommended k in bold."""
    means: dict[tuple[int, str], Any] = {
        (int(r["k"]), str(r["metric"])): r["mean"] for r in summary.to_dict("records")
    }
    ks = sorted(set(summary["k"].to_numpy(dtype=int).tolist()))
    head = ["k", *(f"`{c}`" if "*" in c else c for c in columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for k in ks:
        cells = [MISSING if pd.isna(v := means.get((k, c))) else f"{v:.3f}" for c in columns]
        label = f"**{k}**" if k == marked else str(k)
        lines.append("| " + " | ".join([label, *cells]) + " |")
    return lines


def ledger_json(result: SweepResult) -> dict[str, Any]:
    """The ledger's figures per model, machine-readable (summary.md says the same in words);
    a result made outside the job has no ledger, and says so rather than counting nothing."""
    if result.ledger is None:
        return {"models": {}, "note": "no ledger: the result was not made by the sweep job"}
    return {"models": result.ledger.summary()}


def write_sweep_report(
    result: SweepResult,
    out_dir: Path,
    *,
    objective: str | Objective | None = None,
    decision: Decision | None = None,
    title: str = "",
    worst: int = SHOWN_WORST,
    n_resamples: int = 2000,
    seed: int = 0,
) -> SweepReport:
    """Write the sweep's tables, decision, plot, HTML page and markdown summary into ``out_dir``.

    Args:
        result: The sweep; its own decision (``result.decision``, made by the job) is rendered.
        out_dir: The folder (created if missing); existing report files are replaced.
        objective: Decide anew by another objective than the sweep's (a metric or ``a*b``),
            with a stated fallback when the eval set cannot give it.
        decision: A decision to render instead of the result's.
        title: The heading of the page and summary (the eval set, the retriever ...).
        worst: Lowest-valued (question, k) rows shown per judge in the HTML page (an
            in-process sweep wrote reasons for :data:`~rag_judge.jobs.sweep.explain.SHOWN_WORST`).
        n_resamples: Bootstrap resamples of the CIs (and of a decision made here).
        seed: Their seed.

    Raises:
        InputError: an objective naming something that is no measure or judge, or both an
            objective and a decision.
    """
    if decision is not None and objective is not None:
        raise InputError("give an objective or a decision, not both", field="objective")
    if decision is None:
        decision = result.decision if objective is None else None
    if decision is None:  # a result made outside the job (sweep_questions), or another objective
        decision = decide(result, objective, n_resamples=n_resamples, seed=seed)
    used = decision.objective.used
    reference = decision.recommendation.reference_k if decision.recommendation else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in FILES}
    summary = result.summary(n_resamples=n_resamples, seed=seed)
    shown = with_objective(result, summary, used, n_resamples=n_resamples, seed=seed)
    sides = read_sides(shown, reference) if reference is not None else []
    frame = result.per_question
    frame.to_parquet(paths["per_question.parquet"], index=False)
    spreadsheet_safe(frame).to_csv(paths["per_question.csv"], index=False, lineterminator="\n")
    summary.to_csv(paths["summary.csv"], index=False, lineterminator="\n")
    paths["decision.json"].write_text(
        json.dumps(decision.to_json(), ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    paths["ledger.json"].write_text(
        json.dumps(ledger_json(result), ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    retrieval = [m for m in RETRIEVAL_PLOTTED if m in frame.columns]
    png = sweep_png(shown, decision, ks=result.ks, retrieval=retrieval, title=title)
    paths["sweep.png"].write_bytes(png)
    judges = [str(used)] * (used is not None and len(used.parts) > 1) + list(result.metrics)
    html = render_sweep_html(
        result,
        shown,
        decision=decision,
        png=png,
        title=title,
        worst=worst,
        judges=judges,
        files=[n for n in FILES if n != "report.html"],
        sides=sides,
    )
    paths["report.html"].write_text(html, encoding="utf-8", newline="\n")
    markdown = render_summary_markdown(result, shown, decision, title=title, sides=sides)
    paths["summary.md"].write_text(markdown, encoding="utf-8", newline="\n")
    return SweepReport(
        out_dir=out,
        parquet_path=paths["per_question.parquet"],
        csv_path=paths["per_question.csv"],
        summary_path=paths["summary.csv"],
        decision_path=paths["decision.json"],
        ledger_path=paths["ledger.json"],
        plot_path=paths["sweep.png"],
        html_path=paths["report.html"],
        markdown_path=paths["summary.md"],
        decision=decision,
    )
