"""A calibration report's files: figures as CSV, a markdown summary, the plot, an HTML page.

:func:`write_calibration_report` writes into one folder ``metrics.csv`` (every figure with its
interval, method and, when undefined, the reason; empty cell = none), ``summary.md`` (the
figures with their intervals, the threshold and confusion matrix, what was not scored and
why, a one-line reading), ``reliability.png`` (binary labels), ``disagreements.jsonl`` (the
rows where judge and human differ most, with the judge's claims and reasons) and a
self-contained ``report.html`` (inline CSS, the plot as a data URI, every text escaped by
Jinja2's autoescaping, no link to anything outside the page). Nothing depends on the clock.
"""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_judge.calibration.estimate import Estimate
from rag_judge.calibration.report import CalibrationReport
from rag_judge.report.calibration_plot import reliability_png
from rag_judge.report.tables import MISSING, markdown_text

TEMPLATE = "calibration_report.html.j2"
FILES = {
    "metrics.csv": "every figure: name, estimate, low, high, n, method, reason",
    "summary.md": "this summary",
    "reliability.png": "reliability diagram (binary labels)",
    "disagreements.jsonl": "the worst disagreements with the judge's claims and reasons",
    "report.html": "the full report (self-contained)",
}
CSV_COLUMNS = ("name", "estimate", "low", "high", "n", "method", "reason")
Rows = list[list[str]]
_HEADLINE_FIGURES = ("balanced_accuracy", "cohen_kappa", "negative_recall", "negative_precision")


@dataclass(frozen=True)
class CalibrationFiles:
    """The files a calibration report wrote."""

    out_dir: Path
    paths: dict[str, Path]
    """File name → path, in the order of :data:`FILES` (``reliability.png`` when drawn)."""


def format_estimate(estimate: Estimate) -> tuple[str, str]:
    """``("0.750", "[0.500, 0.900]")``; a dash for what is missing."""
    if estimate.estimate is None:
        return MISSING, MISSING
    if estimate.low is None or estimate.high is None:
        return f"{estimate.estimate:.3f}", MISSING
    return f"{estimate.estimate:.3f}", f"[{estimate.low:.3f}, {estimate.high:.3f}]"


def figure_table(report: CalibrationReport) -> tuple[list[str], Rows]:
    """Header and rows (figure, estimate, CI, n, note) of every estimate, to print or render."""
    header = ["figure", "estimate", f"{round(report.confidence * 100)}% CI", "n", "note"]
    rows = []
    for e in report.estimates:
        point, interval = format_estimate(e)
        note = e.reason or ""
        if e.undefined_resamples and not note:
            note = f"undefined in {e.undefined_resamples} resamples (left out)"
        rows.append([e.name, point, interval, str(e.n), note])
    return header, rows


def headline(report: CalibrationReport) -> str:
    """One or two sentences reading the main figures, with their intervals."""
    level = f"{round(report.confidence * 100)}% CI"
    unit = _unit(report)
    if report.kind == "pairwise":
        return (
            f"On {report.n} compared pairs the judge's scores order the pair as humans do "
            f"{_short(report.estimates[0])} of the time (concordance, {level})."
        )
    if report.kind == "binary" and report.threshold is not None:
        tag = "" if report.threshold.selection is None else "[held_out]"
        balanced, kappa, recall, precision = (
            report.estimate(f"{name}{tag}")
            for name in (
                "balanced_accuracy",
                "cohen_kappa",
                "negative_recall",
                "negative_precision",
            )
        )
        where = "held-out " if tag else ""
        return (
            f"At threshold {report.threshold.threshold:.4g} on {balanced.n} {where}{unit}: "
            f"balanced accuracy {_short(balanced)}, κ {_short(kappa)}; the judge catches "
            f"{_short(recall)} of the unsupported {unit} (recall) and is right "
            f"{_short(precision)} of the times it flags one (precision). Its value ranks "
            f"supported above unsupported with AUC {_short(report.estimate('roc_auc(value)'))} "
            f"({level})."
        )
    if report.kind == "ordinal":
        return (
            f"On {report.n} {unit}: Spearman ρ {_short(report.estimate('spearman'))} between "
            "the judge's value and the human rating; quadratic-weighted κ "
            f"{_short(report.estimate('cohen_kappa(weights=quadratic)'))} after mapping onto "
            f"the scale ({level})."
        )
    return (
        f"On {report.n} {unit}: Pearson r {_short(report.estimate('pearson'))}, Spearman ρ "
        f"{_short(report.estimate('spearman'))} ({level})."
    )


def summary_lines(report: CalibrationReport) -> list[str]:
    """What to print below the figure table: the reading, threshold, confusion, coverage,
    mean human label and notes, one per line."""
    lines = [f"Reading: {headline(report)}"]
    if report.threshold is not None:
        lines.append(f"Threshold: {report.threshold.describe()}")
    if (c := report.confusion) is not None:
        lines.append(
            f"Confusion at {c.threshold:.4g} (human/judge): 0/0 caught {c.caught}, 0/1 missed "
            f"{c.missed}, 1/0 false alarm {c.false_alarm}, 1/1 passed {c.passed}"
        )
    lines.append(f"Compared: {report.coverage}")
    lines.append(f"Labelled but not scored: {_counts(report.unscored)}")
    lines.append(f"Judge output by status: {_counts(report.judge_statuses)}")
    if (p := report.ppi) is not None:
        lines.append(
            f"Mean human label: PPI {_ci(p.ppi.estimate, p.ppi.low, p.ppi.high)}, labelled "
            f"rows only {_ci(p.classical.estimate, p.classical.low, p.classical.high)}"
        )
    lines += [f"Note: {note}" for note in report.notes]
    return lines


def render_summary_markdown(
    report: CalibrationReport, *, title: str = "", files: Sequence[str] = ()
) -> str:
    """The markdown summary: reading, figures, threshold, confusion, coverage, notes, worst."""
    lines = [f"# {markdown_text(title or _title(report))}", ""]
    lines += [
        f"Scores `{shown(report.scores_source)}`, labels `{shown(report.labels_source)}`: "
        f"{report.n} "
        f"{_unit(report)} compared. Intervals: "
        f"{round(report.confidence * 100)}% percentile bootstrap ({report.n_resamples} "
        f"resamples, seed {report.seed}).",
        "",
        f"**Reading:** {markdown_text(headline(report))}",
        "",
        "## Figures",
        "",
        *_table(*figure_table(report)),
        "",
    ]
    if report.threshold is not None:
        lines += ["## Threshold", "", markdown_text(report.threshold.describe()), ""]
    if (c := report.confusion) is not None:
        lines += [
            f"## Confusion matrix at {c.threshold:.4g} ({c.n} rows)",
            "",
            *_table(
                ["human \\ judge", "unsupported (0)", "supported (1)"],
                [
                    ["unsupported (0)", f"{c.caught} (caught)", f"{c.missed} (missed)"],
                    ["supported (1)", f"{c.false_alarm} (false alarm)", f"{c.passed} (passed)"],
                ],
            ),
            "",
        ]
    lines += ["## What was compared, and what was not", "", markdown_text(report.coverage), ""]
    lines.append(f"- Labelled but not scored: {_counts(report.unscored)}")
    lines.append(f"- Judge output by status: {_counts(report.judge_statuses)}")
    lines.append("")
    if report.ppi is not None:
        p = report.ppi
        lines += [
            "## Mean human label",
            "",
            f"- PPI: {_ci(p.ppi.estimate, p.ppi.low, p.ppi.high)} ({p.n_labelled} labelled + "
            f"{p.n_unlabelled} unlabelled rows; rectifier {p.rectifier:+.3f})",
            f"- Labelled rows only: {_ci(p.classical.estimate, p.classical.low, p.classical.high)}",
            "",
        ]
    if report.notes:
        lines += ["## Notes", "", *(f"- {markdown_text(note)}" for note in report.notes), ""]
    lines += ["## Worst disagreements", ""]
    if report.disagreements:
        lines += _table(
            ["id", "human", "judge", "gap", "value", "P(supported)"],
            [
                [
                    d.id if d.claim is None else f"{d.id}#{d.claim}",
                    f"{d.human:g}",
                    f"{d.judge:.3g}",
                    f"{d.gap:.3f}",
                    f"{d.value:.3f}",
                    MISSING if d.probability is None else f"{d.probability:.3f}",
                ]
                for d in report.disagreements
            ],
        )
    else:
        lines.append("None: the judge matches every label." if report.kind != "pairwise" else "-")
    if files:
        lines += ["", "## Files (in this folder)", ""]
        lines += [f"- `{name}`: {FILES.get(name, '')}" for name in files]
    return "\n".join(lines) + "\n"


def shown(source: str) -> str:
    """A source path as a reader can reuse it: relative to the working directory when inside
    it (a report must not carry the machine's absolute paths), else as given.

    >>> shown("pairwise preferences")
    'pairwise preferences'
    >>> shown(str(Path.cwd() / "eval_sets" / "begin_dev" / "labels.jsonl"))
    'eval_sets/begin_dev/labels.jsonl'
    """
    path = Path(source)
    if not path.is_absolute():
        return source
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return source


def render_calibration_html(
    report: CalibrationReport, *, png: bytes | None, title: str = "", files: Sequence[str] = ()
) -> str:
    """The report page: the markdown summary's content, the plot, and every disagreement's
    question, answer and claims (with verdicts, reasons and probabilities)."""
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("rag_judge.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    header, rows = figure_table(report)
    return environment.get_template(TEMPLATE).render(
        title=title or _title(report),
        report=report,
        sources=(shown(report.scores_source), shown(report.labels_source)),
        headline=headline(report),
        unit=_unit(report),
        header=header,
        rows=rows,
        unscored=_counts(report.unscored),
        statuses=_counts(report.judge_statuses),
        png=None if png is None else base64.b64encode(png).decode("ascii"),
        missing=MISSING,
        files=list(files),
        describe={k: v for k, v in FILES.items() if k in files},
    )


def metrics_csv(report: CalibrationReport) -> str:
    """CSV of :meth:`CalibrationReport.figures`, every digit; an empty cell is None."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for figure in report.figures():
        writer.writerow(["" if figure[c] is None else figure[c] for c in CSV_COLUMNS])
    return buffer.getvalue()


def write_calibration_report(
    report: CalibrationReport, out_dir: str | Path, *, title: str = ""
) -> CalibrationFiles:
    """Write the report's files into ``out_dir`` (created if missing; old files replaced).

    ``reliability.png`` is drawn for binary labels only (a reliability diagram needs a
    supported/unsupported truth); for other kinds it is not written and not listed.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png = None
    if report.reliability is not None:
        png = reliability_png(
            report.reliability,
            on=report.reliability_on or "value",
            metric=report.metric,
            title=title or _title(report),
        )
    names = [n for n in FILES if n != "reliability.png" or png is not None]
    paths = {name: out / name for name in names}
    (out / "reliability.png").unlink(missing_ok=True)
    if png is not None:
        paths["reliability.png"].write_bytes(png)
    _write(paths["metrics.csv"], metrics_csv(report))
    _write(
        paths["disagreements.jsonl"],
        "".join(
            json.dumps(d.to_record(), ensure_ascii=False, allow_nan=False) + "\n"
            for d in report.disagreements
        ),
    )
    others = [n for n in names if n != "report.html"]
    _write(paths["summary.md"], render_summary_markdown(report, title=title, files=names))
    _write(
        paths["report.html"], render_calibration_html(report, png=png, title=title, files=others)
    )
    return CalibrationFiles(out, paths)


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", newline="\n")


def _title(report: CalibrationReport) -> str:
    labels = "pairwise preferences" if report.kind == "pairwise" else f"{report.kind} labels"
    return f"Calibration of {report.metric} against human {labels}"


def _unit(report: CalibrationReport) -> str:
    if report.kind == "pairwise":
        return "pairs"
    return "claims" if report.level == "claim" else "rows"


def _short(estimate: Estimate) -> str:
    point, interval = format_estimate(estimate)
    if estimate.estimate is None:
        return f"undefined ({estimate.reason})"
    return point if interval == MISSING else f"{point} {interval}"


def _ci(estimate: float, low: float, high: float) -> str:
    return f"{estimate:.3f} [{low:.3f}, {high:.3f}]"


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{status} {n}" for status, n in counts.items()) or "none"


def _table(header: Sequence[str], rows: Rows) -> list[str]:
    """A markdown table: the first column and a "note" column left-aligned, numbers right."""
    align = ["---" if i == 0 or h == "note" else "---:" for i, h in enumerate(header)]
    lines = [
        "| " + " | ".join(markdown_text(h) for h in header) + " |",
        "|" + "|".join(align) + "|",
    ]
    lines += ["| " + " | ".join(markdown_text(c) for c in row) + " |" for row in rows]
    return lines
