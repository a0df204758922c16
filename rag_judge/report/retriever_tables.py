"""Tables of a retriever comparison: to print (rich, CSV, markdown) and to write to a folder.

Display tables are a header and rows of strings (as in :mod:`rag_judge.report.tables`):
means with their interval as ``mean [low, high]`` to 3 decimals, ``n/a`` where a measure does
not apply (text measures without reference answers; McNemar on non-binary values) and ``—``
where nothing was left to score. The files written by :func:`write_comparison` keep every digit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd
from rich.table import Table
from rich.text import Text

from rag_judge.jobs.compare_retrievers.comparison import DEPTH, MEASURES, RetrieverComparison
from rag_judge.report.tables import MISSING, Rows, markdown_text, spreadsheet_safe, to_csv

NOT_APPLICABLE: Final = "n/a"
LABELS: Final = {"id": "by document id (qrels)", "text": "by answer text"}
"""How each relevance is named in titles (text adds its coverage threshold)."""
_SHOWN_IDS: Final = 5
_TEXT_COLUMNS: Final = frozenset({"retriever", "by", "measure", "type", "reason", "questions"})


@dataclass(frozen=True)
class DisplayTable:
    """One titled table of strings."""

    title: str
    header: list[str]
    rows: Rows


def main_table(comparison: RetrieverComparison, relevance: str | None = None) -> DisplayTable:
    """Rows: retrievers; columns: the six measures by id, then by text (or one relevance)."""
    relevances = ("id", "text") if relevance is None else (relevance,)
    summary = {
        (r["retriever"], r["relevance"], r["measure"]): r
        for r in comparison.summary.to_dict("records")
    }
    header = ["retriever"]
    for r in relevances:
        header += [f"{m} ({r})" if relevance is None else m for m in MEASURES]
    rows = [
        [name, *(_mean_ci(summary[name, r, m]) for r in relevances for m in MEASURES)]
        for name in comparison.retrievers
    ]
    level = f"{round(comparison.confidence * 100)}% CI"
    notes = "; ".join(f"{_label(comparison, r)}{_n_note(comparison, r)}" for r in relevances)
    title = f"{comparison.eval_set}: mean [{level}] over the top {DEPTH} chunks, {notes}"
    return DisplayTable(title, header, rows)


def paired_table(comparison: RetrieverComparison) -> DisplayTable:
    """Each retriever minus the baseline: means, difference with CI, p-values, n."""
    level = f"{round(comparison.confidence * 100)}% CI"
    header = ["retriever", "by", "measure", "baseline", "mean", "diff", level]
    header += ["p rand.", "p McNemar", "n"]
    rows: Rows = [
        [
            str(r.retriever),
            str(r.relevance),
            str(r.measure),
            f"{r.mean_baseline:.3f}",
            f"{r.mean:.3f}",
            _signed(r.difference),
            f"[{_signed(r.ci_low)}, {_signed(r.ci_high)}]",
            _p(r.p_randomization),
            _p(r.p_mcnemar) if bool(r.binary) else NOT_APPLICABLE,
            str(r.n),
        ]
        for r in comparison.paired.itertuples(index=False)
    ]
    title = f"paired with the baseline '{comparison.baseline}' on the same questions"
    return DisplayTable(title, header, rows)


def by_type_table(comparison: RetrieverComparison, relevance: str) -> DisplayTable:
    """Mean of each measure per question type and retriever, with n, for one relevance."""
    frame = comparison.by_type[comparison.by_type["relevance"] == relevance]
    rows: Rows = [
        [str(r["type"]), str(r["retriever"]), str(r["n"]), *(_value(r[m]) for m in MEASURES)]
        for _, r in frame.iterrows()
    ]
    title = f"mean per question type, {_label(comparison, relevance)}"
    if relevance == "text" and comparison.text_not_applicable is not None:
        title += f": not applicable ({comparison.text_not_applicable})"
    return DisplayTable(title, ["type", "retriever", "n", *MEASURES], rows)


def excluded_table(comparison: RetrieverComparison) -> DisplayTable:
    """Questions left out, by relevance and reason: how many, and the first few ids."""
    rows: Rows = []
    frame = comparison.excluded
    for relevance in ("id", "text"):
        if relevance == "text" and comparison.text_not_applicable is not None:
            why = f"not applicable: {comparison.text_not_applicable}"
            rows.append([relevance, why, str(comparison.n_questions), "all"])
            continue
        part = frame[frame["relevance"] == relevance]
        for reason, group in part.groupby("reason", sort=False):
            ids = list(group["query_id"])
            shown = ", ".join(ids[:_SHOWN_IDS])
            if len(ids) > _SHOWN_IDS:
                shown += f", … ({len(ids) - _SHOWN_IDS} more)"
            rows.append([relevance, str(reason), str(len(ids)), shown])
        if part.empty:
            rows.append([relevance, "none excluded", "0", ""])
    title = f"questions excluded (of {comparison.n_questions})"
    return DisplayTable(title, ["by", "reason", "n", "questions"], rows)


def display_tables(comparison: RetrieverComparison, *, split_main: bool) -> list[DisplayTable]:
    """Every table in print order.

    ``split_main`` gives the main table as a by-id and a by-text table (narrower, for a
    terminal), leaving out the by-text one when text measures do not apply (the excluded
    table says why).
    """
    tables = [main_table(comparison, "id") if split_main else main_table(comparison)]
    if split_main and comparison.text_not_applicable is None:
        tables.append(main_table(comparison, "text"))
    if len(comparison.retrievers) > 1:
        tables.append(paired_table(comparison))
    tables += [by_type_table(comparison, "id")]
    if comparison.text_not_applicable is None:
        tables.append(by_type_table(comparison, "text"))
    return [*tables, excluded_table(comparison)]


def to_rich_table(table: DisplayTable) -> Table:
    """A rich table: names and reasons left-aligned, numbers right-aligned."""
    rich = Table(title=Text(table.title))
    for name in table.header:
        left = name in _TEXT_COLUMNS
        wrap = name in ("reason", "questions")
        rich.add_column(Text(name), justify="left" if left else "right", no_wrap=not wrap)
    for row in table.rows:
        rich.add_row(*(Text(cell) for cell in row))  # data, never console markup
    return rich


def to_markdown(header: Sequence[str], rows: Rows) -> str:
    """A GitHub-flavoured markdown table; ``|`` in cells escaped."""
    lines = ["| " + " | ".join(markdown_text(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    lines += ["| " + " | ".join(markdown_text(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def comparison_markdown(comparison: RetrieverComparison) -> str:
    """Every table under a heading, then why by-id and by-text differ."""
    parts = [f"# Retriever comparison: {markdown_text(comparison.eval_set)}\n"]
    for table in display_tables(comparison, split_main=False):
        parts.append(f"## {markdown_text(table.title)}\n\n{to_markdown(table.header, table.rows)}")
    parts.append(f"## By id and by text\n\n{comparison.note}\n")
    return "\n".join(parts)


def comparison_csv(comparison: RetrieverComparison) -> str:
    """Every display table as CSV, each after a ``# title`` line, separated by a blank line."""
    tables = display_tables(comparison, split_main=False)
    return "\n".join(f"# {t.title}\n{to_csv(t.header, t.rows)}" for t in tables)


FILES: Final = {
    "main_table.csv": "the main table as printed (mean [low, high])",
    "summary.csv": "mean, ci_low, ci_high, n, status per retriever, relevance and measure",
    "paired.csv": "each retriever minus the baseline: difference, CI, p-values",
    "by_type.csv": "mean per retriever, relevance and question type, with n",
    "per_query.csv": "every value per retriever, relevance and question",
    "excluded.csv": "questions left out, with the reason and detail",
    "comparison.md": "all tables in markdown, and why by id and by text differ",
}


def write_comparison(comparison: RetrieverComparison, out_dir: Path) -> list[Path]:
    """Write the CSVs (every digit; empty cell = not available) and the markdown summary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    main = main_table(comparison)
    frames = {
        "main_table.csv": pd.DataFrame(main.rows, columns=main.header),
        "summary.csv": comparison.summary,
        "paired.csv": comparison.paired,
        "by_type.csv": comparison.by_type,
        "per_query.csv": comparison.per_query,
        "excluded.csv": comparison.excluded,
    }
    written = []
    for name, frame in frames.items():
        spreadsheet_safe(frame).to_csv(out_dir / name, index=False)
        written.append(out_dir / name)
    (out_dir / "comparison.md").write_text(comparison_markdown(comparison), encoding="utf-8")
    return [*written, out_dir / "comparison.md"]


def _label(comparison: RetrieverComparison, relevance: str) -> str:
    if relevance == "text" and comparison.text_not_applicable is None:
        return f"{LABELS[relevance]} (coverage >= {comparison.threshold:g})"
    return LABELS[relevance]


def _mean_ci(row: Any) -> str:
    if row["status"] == "not applicable":
        return NOT_APPLICABLE
    if pd.isna(row["mean"]):
        return MISSING
    return f"{row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def _n_note(comparison: RetrieverComparison, relevance: str) -> str:
    if relevance == "text" and comparison.text_not_applicable is not None:
        return f": not applicable ({comparison.text_not_applicable})"
    rows = comparison.summary[comparison.summary["relevance"] == relevance]
    n = int(rows["n"].max()) if len(rows) else 0
    return f", {n} of {comparison.n_questions} questions"


def _value(value: Any) -> str:
    return MISSING if value is None or pd.isna(value) else f"{value:.3f}"


def _signed(value: Any) -> str:
    """``+0.012``; a difference that rounds to zero prints as ``+0.000``, never ``-0.000``."""
    return f"{round(float(value), 3) + 0.0:+.3f}"


def _p(value: Any) -> str:
    if value is None or pd.isna(value):
        return MISSING
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"
