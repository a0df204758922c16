"""Plain tables (header + rows of strings) rendered as rich tables or CSV."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Sequence

import pandas as pd
from rich.table import Table
from rich.text import Text

from rag_judge.jobs.score.result import MetricSummary
from rag_judge.retrieval.compare import RunComparison
from rag_judge.retrieval.result import SUMMED_FAMILIES, EvalResult

Rows = list[list[str]]
MISSING = "—"
"""What a table cell shows for a value that is not there (never "nan", never 0)."""


def format_value(value: float, *, count: bool = False, exact: bool = False) -> str:
    """Four decimals as trec_eval prints them (``exact``: every digit); counts as integers."""
    if count:
        return f"{value:.0f}"
    return repr(value) if exact else f"{value:.4f}"


def eval_result_table(
    result: EvalResult, *, per_query: bool, exact: bool = False
) -> tuple[list[str], Rows]:
    """Header and rows: one row per query when asked, then the ``all`` row of aggregates."""
    counts = [m.family in SUMMED_FAMILIES for m in result.measures]
    header = ["query_id", *result.names]
    rows: Rows = []

    def cells(values: Sequence[float]) -> list[str]:
        return [format_value(v, count=c, exact=exact) for v, c in zip(values, counts, strict=True)]

    if per_query:
        columns = [result.values[name].tolist() for name in result.names]
        for row, qid in enumerate(result.query_ids):
            rows.append([qid, *cells([column[row] for column in columns])])
    aggregate = result.aggregate()
    rows.append(["all", *cells([aggregate[name] for name in result.names])])
    return header, rows


def comparison_table(comparison: RunComparison) -> tuple[list[str], Rows]:
    """One row per measure: means, B - A with its CI, and p-values."""
    header = ["measure", "A", "B", "B - A", "95% CI", "p rand.", "p McNemar", "n"]
    rows: Rows = []
    for row in comparison.rows:
        ci = row.difference
        level = f"{round(ci.confidence * 100):d}% CI"
        header[4] = level
        rows.append(
            [
                row.measure.name,
                f"{row.mean_a:.4f}",
                f"{row.mean_b:.4f}",
                f"{ci.estimate:+.4f}",
                f"[{ci.low:+.4f}, {ci.high:+.4f}]",
                f"{row.randomization.p_value:.4f}",
                f"{row.mcnemar.p_value:.4f}" if row.mcnemar else "-",
                str(ci.n),
            ]
        )
    return header, rows


def to_rich(header: Sequence[str], rows: Rows, *, title: str | None = None) -> Table:
    """A rich table with numeric columns right-aligned; every cell and the title shown as
    text, never read as console markup (an id such as ``[/bold]`` is data)."""
    table = Table(title=None if title is None else Text(title), show_lines=False)
    for i, name in enumerate(header):
        table.add_column(Text(name), justify="left" if i == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def markdown_text(text: str) -> str:
    """Data made safe in Markdown (a table cell, a line of prose): one line, no emphasis from
    ``*``, no table break from ``|``, and no raw HTML (``<``, ``>`` and ``&`` as entities)."""
    escaped = html.escape(str(text), quote=False).replace("*", r"\*").replace("|", r"\|")
    return " ".join(escaped.split())


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells cannot run as spreadsheet formulas: a cell that starts with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (OWASP's advice
    for CSV files opened in Excel or LibreOffice). Numbers are left alone."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(
                lambda v: "'" + v if isinstance(v, str) and v[:1] in _FORMULA_STARTS else v
            )
    return out


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def to_csv(header: Sequence[str], rows: Rows) -> str:
    """CSV text with a header line."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def judge_summary_table(summaries: Sequence[MetricSummary]) -> tuple[list[str], Rows]:
    """One row per judge: mean with its 95% CI, how many rows were scored, and why not."""
    repeated = any(s.judge_sd is not None for s in summaries)
    header = ["metric", "mean", "95% CI", "n_scored", "n", "statuses"]
    if repeated:  # the CI is then two-level (rows, then repeats); the judge's spread beside it
        header.insert(3, "judge sd")
    rows: Rows = []
    for s in summaries:
        mean = MISSING if s.mean is None else f"{s.mean:.3f}"
        ci = (
            MISSING
            if s.ci_low is None or s.ci_high is None
            else f"[{s.ci_low:.3f}, {s.ci_high:.3f}]"
        )
        statuses = ", ".join(f"{k} {v}" for k, v in s.statuses.items())
        row = [s.metric, mean, ci, str(s.n_scored), str(s.n), statuses]
        if repeated:
            row.insert(3, MISSING if s.judge_sd is None else f"{s.judge_sd:.3f}")
        rows.append(row)
    return header, rows
