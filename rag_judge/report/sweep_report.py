"""A k-sweep's output files: the tables, the plot, one self-contained HTML page and a summary.

``write_sweep_report`` writes into one folder: ``per_question.parquet``/``.csv`` (one row per
question x k; missing values stay empty, never "nan"), ``summary.csv`` (per k and metric: mean,
bootstrap CI, questions scored), ``sweep.png``, ``report.html`` and ``summary.md``. The best k
and the objective it is chosen by are the sweep's decision
(:func:`rag_judge.jobs.sweep.objective.decide`: the one asked for, else a stated fallback when
the eval set cannot give it); the report only renders it. Nothing depends on the clock: the
same sweep gives the same files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep.objective import Decision, Objective, decide
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.summary import BestK, objective_values, summarise
from rag_judge.report.sweep_html import cost_totals, render_sweep_html
from rag_judge.report.sweep_models import models_sentence, self_judging_warning
from rag_judge.report.sweep_plot import RETRIEVAL_PLOTTED, sweep_png
from rag_judge.report.sweep_questions import QuestionView, question_view
from rag_judge.report.sweep_reading import read_sides
from rag_judge.report.tables import MISSING, markdown_text, spreadsheet_safe

FILES = {
    "per_question.parquet": "one row per question × k (values, statuses, answers, cost)",
    "per_question.csv": "the same rows as CSV (empty cell = not scored)",
    "summary.csv": "per k and metric: mean, 95% CI, questions scored",
    "sweep.png": "retrieval and judge means vs k with CI bands",
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
    plot_path: Path
    html_path: Path
    markdown_path: Path
    objective: Objective
    """The objective the best k was chosen by, and why, when not the one asked for."""
    best: BestK | None
    """The best k by ``objective.used``; None when no objective could be computed."""

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file written, in the order of :data:`FILES`."""
        return (
            self.parquet_path,
            self.csv_path,
            self.summary_path,
            self.plot_path,
            self.html_path,
            self.markdown_path,
        )


def main_metrics(result: SweepResult) -> list[str]:
    """The metrics of the plot and the markdown table: key retrieval measures, then judges."""
    columns = set(result.per_question.columns)
    return [*(m for m in RETRIEVAL_PLOTTED if m in columns), *result.metrics, *result.calibrated]


def with_objective(
    result: SweepResult, summary: pd.DataFrame, objective: str | None, **bootstrap: int
) -> pd.DataFrame:
    """The summary plus a compound objective's rows (mean and CI per k), for display."""
    if objective is None or "*" not in objective:
        return summary
    frame = result.per_question.assign(
        **{objective: objective_values(result.per_question, objective)}
    )
    extra = summarise(frame, [objective], **bootstrap)
    return pd.concat([summary, extra], ignore_index=True)


def render_summary_markdown(
    result: SweepResult,
    summary: pd.DataFrame,
    objective: Objective,
    best: BestK | None,
    *,
    title: str = "",
    files: Sequence[str] = tuple(FILES),
    sides: Sequence[str] = (),
) -> str:
    """A short markdown summary: the best k and its test, per-k means, what was skipped, files.

    Args:
        result: The sweep.
        summary: Per k and metric means (:func:`with_objective` adds a compound objective).
        objective: The objective chosen (see :func:`~rag_judge.jobs.sweep.objective.decide`).
        best: The best k by it, or None.
        title: The heading (the eval set and what was swept).
        files: The report's files, listed at the end.
        sides: What fewer and more passages than the best k did (:func:`read_sides`).
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
    if best is not None:
        significance = "significantly" if best.significant else "not significantly"
        lines += [
            f"**Best k: {best.k}** by `{best.objective}` ({significance} better than its "
            "neighbours).",
            "",
            markdown_text(best.sentence),
            "",
        ]
    if sides:
        lines += [f"- {markdown_text(sentence)}" for sentence in sides] + [""]
    if objective.note:
        lines += [f"> {markdown_text(objective.note)}", ""]
    columns = [c for c in [objective.used] if c and "*" in c] + main_metrics(result)
    lines += ["## Mean per k", "", *_markdown_table(summary, columns, best), ""]
    lines += _question_sections(question_view(result, objective.used))
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


def _markdown_table(summary: pd.DataFrame, columns: Sequence[str], best: BestK | None) -> list[str]:
    """``| k | metric ... |`` with the means to 3 decimals; the best k in bold."""
    means: dict[tuple[int, str], Any] = {
        (int(r["k"]), str(r["metric"])): r["mean"] for r in summary.to_dict("records")
    }
    ks = sorted(set(summary["k"].to_numpy(dtype=int).tolist()))
    head = ["k", *(f"`{c}`" if "*" in c else c for c in columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for k in ks:
        cells = [MISSING if pd.isna(v := means.get((k, c))) else f"{v:.3f}" for c in columns]
        label = f"**{k}**" if best is not None and k == best.k else str(k)
        lines.append("| " + " | ".join([label, *cells]) + " |")
    return lines


def write_sweep_report(
    result: SweepResult,
    out_dir: Path,
    *,
    objective: str | None = None,
    decision: Decision | None = None,
    title: str = "",
    worst: int = 5,
    n_resamples: int = 2000,
    seed: int = 0,
) -> SweepReport:
    """Write the sweep's tables, plot, HTML page and markdown summary into ``out_dir``.

    Args:
        result: The sweep.
        out_dir: The folder (created if missing); existing report files are replaced.
        objective: Another objective to choose k by than the sweep's own (a metric or
            ``a*b``), with a stated fallback when the eval set cannot give it.
        decision: The sweep's decision, when the caller already has it
            (:func:`~rag_judge.jobs.sweep.objective.decide`); the report then renders it and
            decides nothing itself.
        title: The heading of the page and summary (the eval set, the retriever ...).
        worst: Lowest-valued (question, k) rows shown per judge in the HTML page.
        n_resamples: Bootstrap resamples of the CIs and the best-k tests.
        seed: Their seed.

    Raises:
        InputError: an objective naming something that is no measure or judge.
    """
    if decision is not None and objective is not None:
        raise InputError("give an objective or a decision, not both", field="objective")
    if decision is None:
        decision = decide(result, objective, n_resamples=n_resamples, seed=seed)
    chosen, best = decision.objective, decision.best
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in FILES}
    summary = result.summary(n_resamples=n_resamples, seed=seed)
    shown = with_objective(result, summary, chosen.used, n_resamples=n_resamples, seed=seed)
    sides = read_sides(shown, best.k) if best is not None else []
    frame = result.per_question
    frame.to_parquet(paths["per_question.parquet"], index=False)
    spreadsheet_safe(frame).to_csv(paths["per_question.csv"], index=False, lineterminator="\n")
    summary.to_csv(paths["summary.csv"], index=False, lineterminator="\n")
    retrieval = [m for m in RETRIEVAL_PLOTTED if m in frame.columns]
    judges = [c for c in [chosen.used] if c and "*" in c] + list(result.metrics)
    png = sweep_png(shown, ks=result.ks, retrieval=retrieval, judges=judges, best=best, title=title)
    paths["sweep.png"].write_bytes(png)
    html = render_sweep_html(
        result,
        shown,
        best=best,
        objective_note=chosen.note,
        png=png,
        title=title,
        worst=worst,
        judges=judges,
        files=[n for n in FILES if n != "report.html"],
        sides=sides,
        objective=chosen.used,
    )
    paths["report.html"].write_text(html, encoding="utf-8", newline="\n")
    markdown = render_summary_markdown(result, shown, chosen, best, title=title, sides=sides)
    paths["summary.md"].write_text(markdown, encoding="utf-8", newline="\n")
    return SweepReport(
        out_dir=out,
        parquet_path=paths["per_question.parquet"],
        csv_path=paths["per_question.csv"],
        summary_path=paths["summary.csv"],
        plot_path=paths["sweep.png"],
        html_path=paths["report.html"],
        markdown_path=paths["summary.md"],
        objective=chosen,
        best=best,
    )
