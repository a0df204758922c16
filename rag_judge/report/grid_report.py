"""A configuration sweep's output files: the tables keyed by configuration, the decision over every
arm, the heat map, one self-contained HTML page and a summary.

``write_grid_report`` writes into one folder: ``per_question.parquet``/``.csv`` (one row per
question x configuration x k), ``summary.csv`` (per configuration, k and metric), ``decision.json``
(the recommended configuration and its k, every arm's bounds), ``ledger.json`` (the calls, and
those the response cache answered), ``grid.png``, ``report.html`` and ``summary.md``. The decision
is the job's (:func:`~rag_judge.jobs.grid.job.grid_job`); the report only renders it.
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd

from rag_judge.jobs.grid.result import ARM, CONFIGURATION, GridResult
from rag_judge.jobs.sweep.decision.outcomes import row_outcomes
from rag_judge.jobs.sweep.decision.record import Decision
from rag_judge.report.grid_plot import grid_png
from rag_judge.report.sweep_report import ledger_json
from rag_judge.report.tables import MISSING, markdown_text, spreadsheet_safe

FILES: Final = {
    "per_question.parquet": "one row per question × configuration × k (values, statuses, "
    "answers, cost)",
    "per_question.csv": "the same rows as CSV (empty cell = not scored)",
    "summary.csv": "per configuration, k and metric: mean, 95% CI, questions scored",
    "decision.json": "the decision: the recommended configuration and k (or the arms still in "
    "the running), per arm its bounds against the best, cost, and the sweep's looks",
    "ledger.json": "per model: calls made, replies from the cache, tokens, seconds, statuses",
    "grid.png": "the objective by configuration and k with the decision marked; retrieval per "
    "configuration",
    "report.html": "the full report (self-contained)",
    "summary.md": "this summary",
}
RETRIEVAL_SHOWN: Final = ("doc_recall", "text_recall", "text_hit_rate", "doc_hit_rate")
"""The retrieval measure shown per configuration: the first the sweep has."""


@dataclass(frozen=True)
class GridView:
    """What the report shows: per arm the objective's mean and where it stands."""

    configurations: tuple[str, ...]
    ks: tuple[int, ...]
    objective: str
    means: dict[tuple[str, int], float | None]
    standing: dict[tuple[str, int], str]
    """``recommended``, ``in`` (could still be recommended) or ``out``."""
    retrieval_name: str
    retrieval: dict[tuple[str, int], float | None]


@dataclass(frozen=True)
class GridReport:
    """The files a report wrote."""

    out_dir: Path
    paths: tuple[Path, ...]
    markdown_path: Path
    decision: Decision


def grid_view(result: GridResult) -> GridView:
    """Per arm the objective's mean (as the decision counts it: over its questions, a refusal
    valued; an arm out before the last look over the questions it was swept on) and standing."""
    decision = result.decision
    assert decision is not None  # the job decided
    arms, configurations = result.arms, tuple(c.name for c in result.configurations)
    used = decision.objective.used
    means: dict[tuple[str, int], float | None] = dict.fromkeys(
        ((a.configuration, a.k) for a in arms.values()), None
    )
    if used is not None:
        frame = result.per_question
        values = row_outcomes(frame, used)["value"].astype("Float64")
        by_arm = frame.assign(value=values.to_numpy()).groupby(ARM)["value"].mean()
        for number, mean in by_arm.items():
            arm = arms[int(str(number))]
            means[(arm.configuration, arm.k)] = None if pd.isna(mean) else float(mean)
    standing = {(a.configuration, a.k): "out" for a in arms.values()}
    found = decision.recommendation
    for s in () if found is None else found.standings:
        arm = arms[s.k]
        means[(arm.configuration, arm.k)] = s.mean
        if s.k == found.recommended_k:  # type: ignore[union-attr]
            standing[(arm.configuration, arm.k)] = "recommended"
        elif s.candidate and found.recommended_k is None:  # type: ignore[union-attr]
            standing[(arm.configuration, arm.k)] = "in"
    summary = result.summary()
    name = next((m for m in RETRIEVAL_SHOWN if m in set(summary["metric"])), "")
    rows = summary[summary["metric"] == name]
    retrieval = {
        (str(r[CONFIGURATION]), int(r["k"])): None if pd.isna(r["mean"]) else float(r["mean"])
        for r in rows.to_dict("records")
    }
    return GridView(
        configurations, result.ks, "" if used is None else str(used), means, standing, name,
        retrieval,
    )  # fmt: skip


def write_grid_report(result: GridResult, out_dir: Path, *, title: str = "") -> GridReport:
    """Write the configuration sweep's files into ``out_dir`` (created; report files replaced)."""
    decision = result.decision
    assert decision is not None  # the job decided
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in FILES}
    frame = result.per_question
    frame.to_parquet(paths["per_question.parquet"], index=False)
    spreadsheet_safe(frame).to_csv(paths["per_question.csv"], index=False, lineterminator="\n")
    result.summary().to_csv(paths["summary.csv"], index=False, lineterminator="\n")
    document = {**decision.to_json(), "grid": grid_json(result)}
    paths["decision.json"].write_text(
        json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    first = next(iter(result.results.values()))
    paths["ledger.json"].write_text(
        json.dumps(ledger_json(first), ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    view = grid_view(result)
    png = grid_png(
        view.means, view.standing, view.retrieval, configurations=view.configurations,
        ks=view.ks, objective=view.objective, retrieval_name=view.retrieval_name,
        title=f"{title or 'configuration sweep'}: {decision.headline}",
    )  # fmt: skip
    paths["grid.png"].write_bytes(png)
    markdown = render_grid_markdown(result, view, title=title)
    paths["summary.md"].write_text(markdown, encoding="utf-8", newline="\n")
    paths["report.html"].write_text(
        render_grid_html(result, view, png, title=title), encoding="utf-8", newline="\n"
    )
    return GridReport(out, tuple(paths.values()), paths["summary.md"], decision)


def grid_json(result: GridResult) -> dict[str, Any]:
    """The grid's own part of ``decision.json``: its axes, configurations, ks and what it
    shared."""
    return {
        "axes": {axis: list(values) for axis, values in result.grid.axes},
        "configurations": [c.name for c in result.configurations],
        "ks": list(result.ks),
        "arms": len(result.arms),
        "answers": _shared(result).get("answers", 0),
        "shared_answers": _shared(result).get("shared", 0),
        "until_decided": savings(result),
    }


def savings(result: GridResult) -> dict[str, float | int] | None:
    """What a run until decided did not generate against the full grid: answers, and minutes at
    this run's own pace (its seconds per answer generated; replies from the cache cost none, so
    a resumed run's pace understates a fresh one's). None for a plain grid."""
    record = None if result.decision is None else result.decision.sequential
    if record is None:
        return None
    saved = record.answers_fixed - record.answers_used
    pace = record.seconds / record.answers_used if record.answers_used else 0.0
    return {
        "answers_used": record.answers_used,
        "answers_full_grid": record.answers_fixed,
        "answers_saved": saved,
        "seconds_per_answer": round(pace, 3),
        "minutes_saved": round(saved * pace / 60, 1),
    }


def _shared(result: GridResult) -> dict[str, int]:
    shared = result.extra.get("shared_answers", {})
    return dict(shared) if isinstance(shared, dict) else {}


def heat_rows(view: GridView) -> tuple[list[str], list[list[str]]]:
    """The objective by configuration (rows) and k (columns); the recommended arm in bold, arms
    out marked."""
    head = ["configuration", *(f"k={k}" for k in view.ks)]
    rows = []
    for configuration in view.configurations:
        cells = [configuration]
        for k in view.ks:
            mean, where = view.means.get((configuration, k)), view.standing[(configuration, k)]
            text = MISSING if mean is None else f"{mean:.3f}"
            cells.append(
                f"**{text}**" if where == "recommended" else f"{text} ·" if where == "in" else text
            )
        rows.append(cells)
    return head, rows


def retrieval_rows(view: GridView) -> tuple[list[str], list[list[str]]]:
    """The retrieval measure by configuration and k."""
    head = ["configuration", *(f"k={k}" for k in view.ks)]
    rows = [[c, *(_cell(view.retrieval.get((c, k))) for k in view.ks)] for c in view.configurations]
    return head, rows


def _cell(value: float | None) -> str:
    return MISSING if value is None else f"{value:.3f}"


def _markdown_table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(markdown_text(h) for h in head) + " |"]
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for row in rows:
        first, *rest = row
        lines.append(f"| `{first}` | " + " | ".join(rest) + " |")
    return lines


def render_grid_markdown(result: GridResult, view: GridView, *, title: str = "") -> str:
    """The decision, the objective by configuration and k, retrieval per configuration, the
    grid's size and what it shared."""
    decision = result.decision
    assert decision is not None
    shared = _shared(result)
    lines = [f"# {markdown_text(title or 'Configuration sweep')}", ""]
    lines += [f"**{markdown_text(decision.headline)}**", "", markdown_text(decision.sentence), ""]
    n_conf, n_ks = len(result.configurations), len(result.ks)
    lines += [
        f"Grid: {markdown_text(str(result.grid))}: {n_conf} configurations × {n_ks} ks = "
        f"{n_conf * n_ks} arms, every one on the same questions.",
    ]
    if shared.get("answers"):
        lines.append(
            f"{shared['shared']:,} of {shared['answers']:,} answers put the same passages before "
            "the model as an arm swept before them, so the response cache gave their answer and "
            "judgements."
        )
    if (saved := savings(result)) is not None:
        lines.append(
            f"Until decided, it generated {saved['answers_used']:,} of the full grid's "
            f"{saved['answers_full_grid']:,} answers: {saved['answers_saved']:,} fewer, about "
            f"{saved['minutes_saved']:g} minutes at this run's pace "
            f"({saved['seconds_per_answer']:g} s per answer; replies from the cache cost none)."
        )
    lines += ["", f"## {view.objective or 'Objective'} by configuration and k", ""]
    lines.append(
        "Bold: the recommended arm; `·`: could still be recommended; the rest are out (another "
        "arm is shown better by more than the margin, or one that costs no more is shown better)."
    )
    lines += ["", *_markdown_table(*heat_rows(view)), ""]
    if view.retrieval_name:
        lines += [f"## Retrieval per configuration: {view.retrieval_name}", ""]
        lines += [*_markdown_table(*retrieval_rows(view)), ""]
    lines += ["## Files", ""]
    lines += [f"- `{name}`: {markdown_text(what)}" for name, what in FILES.items()]
    return "\n".join(lines) + "\n"


def render_grid_html(result: GridResult, view: GridView, png: bytes, *, title: str = "") -> str:
    """One self-contained page: the decision, the heat map, both tables."""
    decision = result.decision
    assert decision is not None
    heading = html.escape(title or "Configuration sweep")

    def table(head: list[str], rows: list[list[str]]) -> str:
        header = "".join(f"<th>{html.escape(h)}</th>" for h in head)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c.strip('*'))}</td>" if not c.startswith("**")
                             else f"<td><strong>{html.escape(c.strip('*'))}</strong></td>"
                             for c in row) + "</tr>"
            for row in rows
        )  # fmt: skip
        return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"

    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{heading}</title><style>{_STYLE}</style></head><body><main>",
        f"<h1>{heading}</h1>",
        f"<p class='headline'>{html.escape(decision.headline)}</p>",
        f"<p>{html.escape(decision.sentence)}</p>",
        f"<img alt='{html.escape(view.objective)} by configuration and k' "
        f"src='data:image/png;base64,{base64.b64encode(png).decode('ascii')}'>",
        f"<h2>{html.escape(view.objective or 'Objective')} by configuration and k</h2>",
        "<p>Bold: the recommended arm; · could still be recommended.</p>",
        table(*heat_rows(view)),
    ]
    if view.retrieval_name:
        parts += [
            f"<h2>Retrieval per configuration: {html.escape(view.retrieval_name)}</h2>",
            table(*retrieval_rows(view)),
        ]
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


_STYLE: Final = (
    "body{font-family:system-ui,sans-serif;margin:0;color:#222}"
    "main{max-width:1200px;margin:0 auto;padding:1rem}"
    "img{max-width:100%;height:auto}"
    ".headline{font-size:1.3rem;font-weight:600}"
    "table{border-collapse:collapse;margin:.5rem 0;display:block;overflow-x:auto}"
    "th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}"
    "td:first-child,th:first-child{text-align:left;font-family:monospace}"
)
