"""A calibration profile's cross-validated figures as a table (terminal, Markdown)."""

from __future__ import annotations

from rag_judge.calibration.profile import CalibrationProfile, Figure
from rag_judge.report.tables import MISSING, Rows

FIGURE_NAMES = {
    "expected_calibration_error": "ECE (10 bins, lower is better)",
    "brier_score": "Brier score (lower is better)",
    "balanced_accuracy": "balanced accuracy",
    "cohen_kappa": "Cohen's κ",
    "roc_auc": "ROC AUC",
}
"""How each figure is named in a table."""


def figure_text(figure: Figure, *, signed: bool = False) -> str:
    """``0.0585 [0.0473, 0.1230]``; the reason when undefined."""
    if figure.estimate is None:
        return f"{MISSING} ({figure.reason})"
    point = f"{figure.estimate:+.4f}" if signed else f"{figure.estimate:.4f}"
    if figure.low is None or figure.high is None:
        return point
    fmt = "{:+.4f}" if signed else "{:.4f}"
    return f"{point} [{fmt.format(figure.low)}, {fmt.format(figure.high)}]"


def fit_table(profile: CalibrationProfile) -> tuple[list[str], Rows]:
    """One row per figure: before (the raw judge at 0.5), after (out of fold), the change."""
    cv = profile.cross_validation
    header = ["figure", "before", f"after ({cv.folds}-fold, out of fold)", "change (paired)"]
    rows: Rows = [
        [
            FIGURE_NAMES.get(name, name),
            figure_text(cv.before[name]),
            figure_text(cv.after[name]),
            figure_text(cv.change[name], signed=True),
        ]
        for name in cv.before
    ]
    return header, rows


def fit_lines(profile: CalibrationProfile) -> list[str]:
    """What was fitted, on what, in a few sentences."""
    labels, judge = profile.labels, profile.judge
    origin = (
        f"silver labels (the verdicts of {labels.silver_model})"
        if labels.source == "silver"
        else "human labels"
    )
    strategy = (labels.sampling or {}).get("strategy")
    sampled = f", rows chosen {strategy}" if strategy else ""
    maps = ", ".join(profile.cross_validation.fold_maps)
    return [
        f"Fitted {judge.metric} of {judge.model} ({judge.mode} path) on {labels.n} rows of "
        f"{origin} ({labels.supported} supported){sampled}.",
        f"Map: {profile.map['kind']}({', '.join(profile.map['features'])}); supported iff the "
        f"calibrated probability >= {profile.threshold:.4f} (the threshold for "
        f"{profile.objective}).",
        f"The folds chose: {maps}.",
        *profile.notes,
    ]


def fit_markdown(profile: CalibrationProfile) -> str:
    """The fit's lines and table as Markdown."""
    header, rows = fit_table(profile)
    lines = [*fit_lines(profile), ""]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
