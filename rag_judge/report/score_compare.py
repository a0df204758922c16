"""A score comparison as Markdown, CSV, JSON and one self-contained HTML page.

Every figure the comparison holds is shown: per metric the paired means, NEW − BASE with its CI
and p, the pass/fail flips, every row that could not be paired with its statuses, and the rows
that changed most with their claims and verdicts side by side.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_judge.calibration.judge_scores import ClaimScore
from rag_judge.core.nested_bootstrap import Spread
from rag_judge.jobs.compare_scores.comparison import MetricComparison, RowChange, ScoreComparison
from rag_judge.jobs.compare_scores.gate import Check
from rag_judge.report.tables import MISSING, markdown_text
from rag_judge.runtime.atomic import write_lines

TEMPLATE = "score_compare.html.j2"
COMPARISON_FILES = ("comparison.md", "comparison.csv", "comparison.json", "comparison.html")
"""What ``compare-scores -o FOLDER`` writes there, in ComparisonFiles' order."""
LISTED = 8
"""Unpaired row ids named per metric and reason in the Markdown (all in the JSON and HTML)."""
CSV_COLUMNS = (
    "metric",
    "n_paired",
    "base_mean",
    "new_mean",
    "difference",
    "ci_low",
    "ci_high",
    "p_randomization",
    "threshold",
    "fixed",
    "broken",
    "p_mcnemar",
    "n_unpaired",
)


@dataclass(frozen=True)
class ComparisonFiles:
    """Where :func:`write_comparison` put each format."""

    markdown: Path
    csv: Path
    json: Path
    html: Path


def _f(value: float | None, sign: bool = False) -> str:
    if value is None:
        return MISSING
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _code(text: str) -> str:
    """A row id as Markdown code: one line, no backtick to close the span early."""
    return "`" + " ".join(str(text).replace("`", "'").split()) + "`"


def _p(value: float | None) -> str:
    return MISSING if value is None else ("<0.001" if value < 0.001 else f"{value:.3f}")


def metric_cells(found: MetricComparison) -> list[str]:
    """The summary row of one metric, as text cells (Markdown and HTML share them)."""
    ci = found.difference
    change = MISSING if ci is None else f"{ci.estimate:+.3f} [{ci.low:+.3f}, {ci.high:+.3f}]"
    flips = MISSING if found.mcnemar is None else f"{found.fixed} / {found.broken}"
    return [
        found.metric,
        str(found.n_paired),
        _f(found.base_mean),
        _f(found.new_mean),
        change,
        _p(None if found.randomization is None else found.randomization.p_value),
        flips,
        _p(None if found.mcnemar is None else found.mcnemar.p_value),
    ]


def spread_sentence(found: MetricComparison) -> str:
    """``faithfulness BASE 0.031, NEW 0.052``: the judge's spread on each side."""

    def sd(spread: Spread | None) -> str:
        return MISSING if spread is None else f"{spread.sd:.3f}"

    return f"{found.metric} BASE {sd(found.base_spread)}, NEW {sd(found.new_spread)}"


def header(comparison: ScoreComparison) -> list[str]:
    """Column names of the per-metric table."""
    level = f"{comparison.confidence:.0%}"
    threshold = comparison.metrics[0].threshold if comparison.metrics else 0.5
    return [
        "metric",
        "paired rows",
        "BASE",
        "NEW",
        f"NEW − BASE [{level} CI]",
        "p (randomization)",
        f"fixed / broken at {threshold:g}",
        "p (McNemar)",
    ]


def unpaired_reason(base: str | None, new: str | None) -> str:
    """Why a row was not compared, in words."""
    if base is None:
        return f"only in NEW ({new})"
    if new is None:
        return f"only in BASE ({base})"
    return f"BASE {base}, NEW {new}"


def claim_pairs(change: RowChange) -> list[tuple[str, str, str]]:
    """(claim, BASE verdict, NEW verdict) for every claim either side judged."""

    def verdict(claim: ClaimScore | None) -> str:
        if claim is None:
            return MISSING
        label = claim.verdict or "no verdict"
        p = claim.support_probability
        return label if p is None else f"{label} ({p:.2f})"

    before = {c.claim: c for c in change.base_claims}
    after = {c.claim: c for c in change.new_claims}
    claims = list(dict.fromkeys([*before, *after]))
    return [(c, verdict(before.get(c)), verdict(after.get(c))) for c in claims]


def compared(change: RowChange) -> tuple[str, list[tuple[str, str, str]]]:
    """What to show side by side for a changed row: its claims with their verdicts, or, for a
    metric with none (exact match, F1), the two answers."""
    pairs = claim_pairs(change)
    if pairs or not (change.base_answer or change.new_answer):
        return "claim", pairs
    return "text", [("answer", change.base_answer, change.new_answer)]


def render_markdown(comparison: ScoreComparison, checks: list[Check] | None = None) -> str:
    """The comparison as Markdown."""
    paired = max((m.n_paired for m in comparison.metrics), default=0)
    lines = [
        "# Score comparison",
        "",
        f"BASE {_code(comparison.base)}, NEW {_code(comparison.new)}: "
        f"{len(comparison.only_base)} rows only in BASE, {len(comparison.only_new)} only in NEW; "
        f"up to {paired} rows scored in both and compared pairwise.",
        "",
    ]
    columns = header(comparison)
    lines += ["| " + " | ".join(columns) + " |", "|---" + "|---:" * (len(columns) - 1) + "|"]
    lines += [
        "| " + " | ".join([markdown_text(m.metric), *metric_cells(m)[1:]]) + " |"
        for m in comparison.metrics
    ]
    lines.append("")
    spreads = [spread_sentence(m) for m in comparison.metrics if m.base_spread or m.new_spread]
    if spreads:
        lines += [
            "Judged with repeats: means over each row's repeats, and NEW − BASE's interval is a "
            "two-level bootstrap (rows, then repeats). The judge's own run-to-run spread "
            "(pooled SD of the repeats): " + "; ".join(spreads) + ".",
            "",
        ]
    if checks:
        lines += ["## Gate", ""]
        lines += [
            f"- **{'pass' if c.passed else 'FAIL'}** {markdown_text(c.name)}: "
            f"{markdown_text(c.message)}"
            for c in checks
        ]
        lines.append("")
    lines += ["## Not compared", ""]
    listed = False
    for found in comparison.metrics:
        by_reason: dict[str, list[str]] = {}
        for row in found.unpaired:
            by_reason.setdefault(unpaired_reason(row.base_status, row.new_status), []).append(
                row.id
            )
        for reason, ids in by_reason.items():
            shown = ", ".join(_code(i) for i in ids[:LISTED])
            more = (
                f" and {len(ids) - LISTED} more (all in comparison.json)"
                if len(ids) > LISTED
                else ""
            )
            count = f"{len(ids)} rows, " if len(ids) > 1 else ""
            lines.append(f"- {markdown_text(found.metric)}: {count}{reason}: {shown}{more}")
            listed = True
    if not listed:
        lines.append("- none: every row was scored in both files")
    lines += ["", "## Rows that changed most", ""]
    for found in comparison.metrics:
        if not found.changed:
            continue
        lines += [f"### {markdown_text(found.metric)}", ""]
        for change in found.changed:
            question = f": {markdown_text(change.question)}" if change.question else ""
            moved = f"{change.base:.3f} → {change.new:.3f} ({change.change:+.3f})"
            what, pairs = compared(change)
            lines += [
                f"**{_code(change.id)}** {moved}{question}",
                "",
                f"| {what} | BASE | NEW |",
                "|---|---|---|",
                *("| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in pairs),
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


def to_csv(comparison: ScoreComparison) -> str:
    """One row per metric, every figure as a number (empty when there is none)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for m in comparison.metrics:
        ci = m.difference
        writer.writerow(
            [
                m.metric,
                m.n_paired,
                *("" if v is None else f"{v:.6f}" for v in (m.base_mean, m.new_mean)),
                *(
                    "" if ci is None else f"{v:.6f}"
                    for v in ((ci.estimate, ci.low, ci.high) if ci else (None, None, None))
                ),
                "" if m.randomization is None else f"{m.randomization.p_value:.6g}",
                m.threshold,
                "" if m.mcnemar is None else m.fixed,
                "" if m.mcnemar is None else m.broken,
                "" if m.mcnemar is None else f"{m.mcnemar.p_value:.6g}",
                len(m.unpaired),
            ]
        )
    return out.getvalue()


def to_json(comparison: ScoreComparison, checks: list[Check] | None = None) -> dict[str, Any]:
    """Everything, JSON-safe (no NaN: missing figures are null)."""

    def metric(m: MetricComparison) -> dict[str, Any]:
        ci = m.difference
        return {
            "metric": m.metric,
            "n_paired": m.n_paired,
            "base_mean": m.base_mean,
            "new_mean": m.new_mean,
            "difference": None
            if ci is None
            else {"estimate": ci.estimate, "low": ci.low, "high": ci.high, "method": ci.method},
            "p_randomization": None if m.randomization is None else m.randomization.p_value,
            "threshold": m.threshold,
            "fixed": m.fixed,
            "broken": m.broken,
            "p_mcnemar": None if m.mcnemar is None else m.mcnemar.p_value,
            "base_judge_sd": None if m.base_spread is None else m.base_spread.sd,
            "new_judge_sd": None if m.new_spread is None else m.new_spread.sd,
            "base_all": {
                "mean": m.base_all.mean,
                "n_scored": m.base_all.n_scored,
                "n": m.base_all.n,
            },
            "new_all": {"mean": m.new_all.mean, "n_scored": m.new_all.n_scored, "n": m.new_all.n},
            "unpaired": [
                {"id": u.id, "base_status": u.base_status, "new_status": u.new_status}
                for u in m.unpaired
            ],
            "changed": [
                {
                    "id": c.id,
                    "question": c.question,
                    "base": c.base,
                    "new": c.new,
                    "claims": [{"claim": a, "base": b, "new": n} for a, b, n in claim_pairs(c)],
                    "answers": {"base": c.base_answer, "new": c.new_answer},
                }
                for c in m.changed
            ],
        }

    return {
        "base": comparison.base,
        "new": comparison.new,
        "confidence": comparison.confidence,
        "only_base": list(comparison.only_base),
        "only_new": list(comparison.only_new),
        "metrics": [metric(m) for m in comparison.metrics],
        "gate": [{"check": c.name, "passed": c.passed, "message": c.message} for c in checks or []],
    }


def render_html(comparison: ScoreComparison, checks: list[Check] | None = None) -> str:
    """One self-contained page (no script, no external link), every text escaped."""
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("rag_judge.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    unpaired = [
        (m.metric, u.id, unpaired_reason(u.base_status, u.new_status))
        for m in comparison.metrics
        for u in m.unpaired
    ]
    changed = [(m.metric, c, *compared(c)) for m in comparison.metrics for c in m.changed]
    return environment.get_template(TEMPLATE).render(
        comparison=comparison,
        header=header(comparison),
        rows=[metric_cells(m) for m in comparison.metrics],
        checks=checks or [],
        unpaired=unpaired,
        changed=changed,
    )


def write_comparison(
    comparison: ScoreComparison, out_dir: Path, checks: list[Check] | None = None
) -> ComparisonFiles:
    """comparison.md, comparison.csv, comparison.json and comparison.html in ``out_dir``."""
    files = ComparisonFiles(*(out_dir / name for name in COMPARISON_FILES))
    write_lines(files.markdown, render_markdown(comparison, checks).splitlines())
    write_lines(files.csv, to_csv(comparison).splitlines())
    text = json.dumps(to_json(comparison, checks), ensure_ascii=False, indent=1, allow_nan=False)
    write_lines(files.json, text.splitlines())
    write_lines(files.html, render_html(comparison, checks).splitlines())
    return files
