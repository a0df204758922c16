"""The k-sweep plot: retrieval and judge means vs k, each with its CI band, the best k marked.

Drawn with matplotlib's object API (no pyplot: no global backend or figure state, Agg renders
``savefig``) and saved without the software tag, so one sweep always gives the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pandas as pd

from rag_judge.jobs.sweep.summary import BestK

RETRIEVAL_PLOTTED = ("doc_recall", "doc_ndcg", "text_recall", "text_joint_recall")
"""The retrieval measures drawn (those present): recall and rank quality, by id and by text."""
FIGSIZE = (12.0, 4.5)
"""Inches; with :data:`DPI` the PNG is 1200 x 450 pixels."""
DPI = 100
STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v")
"""Line styles and markers cycle with colours, so lines that coincide stay distinguishable."""


def sweep_png(
    summary: pd.DataFrame,
    *,
    ks: Sequence[int],
    retrieval: Sequence[str],
    judges: Sequence[str],
    best: BestK | None = None,
    title: str = "",
    confidence: float = 0.95,
) -> bytes:
    """Two panels side by side, retrieval and judges, as PNG bytes.

    Args:
        summary: Per k and metric ``mean``, ``ci_low``, ``ci_high`` (``SweepResult.summary``).
        ks: The swept cutoffs (the x ticks).
        retrieval: Retrieval metrics for the left panel.
        judges: Judge metrics (and a compound objective) for the right panel.
        best: The best k, drawn as a dashed vertical line on both panels.
        title: The figure's title.
        confidence: The CIs' level, for the axis label.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    band = f"mean, {confidence:.0%} CI band"
    _panel(left, summary, retrieval, ks, best, "Retrieval vs k", band)
    _panel(right, summary, judges, ks, best, "Generation (LLM judges) vs k", "")
    figure.suptitle(title or "k-sweep")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _panel(
    axes: Any,
    summary: pd.DataFrame,
    metrics: Sequence[str],
    ks: Sequence[int],
    best: BestK | None,
    heading: str,
    ylabel: str,
) -> None:
    """One panel: a line and a shaded CI band per metric (missing means leave gaps)."""
    for i, metric in enumerate(metrics):
        rows = summary[summary["metric"] == metric].sort_values("k")
        rows = rows[rows["mean"].notna() & rows["ci_low"].notna() & rows["ci_high"].notna()]
        x = rows["k"].to_numpy(dtype=float)  # a k with no scored question is left out
        mean, low, high = (rows[c].to_numpy(dtype=float) for c in ("mean", "ci_low", "ci_high"))
        color, style, marker = f"C{i % 10}", STYLES[i % len(STYLES)], MARKERS[i % len(MARKERS)]
        axes.plot(x, mean, style, marker=marker, markersize=4, color=color, label=metric)
        axes.fill_between(x, low, high, color=color, alpha=0.15, linewidth=0)
    if best is not None:
        axes.axvline(best.k, color="0.35", linestyle="--", linewidth=1.2, label=f"best k={best.k}")
    if not metrics:
        axes.text(0.5, 0.5, "nothing measured", ha="center", transform=axes.transAxes)
    axes.set_xticks(list(ks))
    axes.set_xlim(min(ks) - 0.5, max(ks) + 0.5)
    axes.set_ylim(-0.02, 1.02)
    axes.set_title(heading)
    axes.set_xlabel("k (chunks given to the generator)")
    axes.set_ylabel(ylabel)
    axes.grid(alpha=0.3)
    if metrics or best is not None:
        axes.legend(loc="best", fontsize="small")
