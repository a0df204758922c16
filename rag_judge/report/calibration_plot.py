"""The reliability diagram of a judge: predicted P(supported) against how often humans agree.

Top panel: one point per non-empty bin at (mean predicted, share labelled supported), joined
by a line, with the bin's row count written beside it, and the diagonal of perfect
calibration; the title gives the expected calibration error with its interval. Bottom panel:
the rows per bin, so a reader sees which points rest on one row. Drawn with matplotlib's object
API (no pyplot) and saved without the software tag, so the same report gives the same bytes.
"""

from __future__ import annotations

import io

from rag_judge.calibration.probability import CalibrationError

FIGSIZE = (6.5, 6.5)
"""Inches; with :data:`DPI` the PNG is 650 x 650 pixels."""
DPI = 100


def reliability_png(error: CalibrationError, *, on: str, metric: str, title: str = "") -> bytes:
    """The reliability diagram as PNG bytes.

    Args:
        error: The expected calibration error and its bins
            (:func:`~rag_judge.calibration.expected_calibration_error`).
        on: What was binned: ``probability`` (the judge's P(supported)) or ``value``.
        metric: The judge metric, for the axis label.
        title: A first title line (e.g. the data set); the ECE line follows it.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    top.plot([0, 1], [0, 1], linestyle="--", color="0.5", linewidth=1, label="perfect calibration")
    shown = [b for b in error.bins if b.count]
    x = [b.mean_predicted for b in shown]
    y = [b.observed_frequency for b in shown]
    top.plot(x, y, "-o", color="C0", markersize=6, label=f"{metric} ({on})")
    for b in shown:
        top.annotate(
            f"n={b.count}",
            (b.mean_predicted, b.observed_frequency),
            textcoords="offset points",
            xytext=(6, -12),
            fontsize="small",
            color="0.25",
        )
    top.set_xlim(-0.02, 1.02)
    top.set_ylim(-0.05, 1.08)
    top.set_ylabel("share labelled supported by humans")
    top.grid(alpha=0.3)
    top.legend(loc="best", fontsize="small")
    width = 1.0 / error.n_bins
    centres = [b.low + width / 2 for b in error.bins]
    counts = [b.count for b in error.bins]
    bars = bottom.bar(centres, counts, width=width * 0.9, color="C0", alpha=0.6)
    bottom.bar_label(bars, labels=[str(c) if c else "" for c in counts], fontsize="small")
    bottom.set_ylim(0, max(counts) * 1.3 + 0.5)
    bottom.set_xlabel(f"judge's predicted P(supported): {on}, {error.n_bins} equal-width bins")
    bottom.set_ylabel("rows")
    bottom.grid(alpha=0.3, axis="y")
    ece = error.ece
    if ece.estimate is None:
        line = f"ECE undefined ({ece.reason})"
    elif ece.low is None or ece.high is None:
        line = f"ECE {ece.estimate:.3f} (n={ece.n})"
    else:
        level = f"{round(ece.confidence * 100)}% CI"
        line = f"ECE {ece.estimate:.3f} [{ece.low:.3f}, {ece.high:.3f}] ({level}, n={ece.n})"
    top.set_title(f"{title}\n{line}" if title else line)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
