"""The k-sweep plot: what the decision rests on, beside retrieval.

Three panels side by side:

1. retrieval vs k: the key retrieval measures' means with CI bands;
2. the decision: per k, the objective's paired difference to its highest rival (a dot) and the
   bounds of ``k - the best of the others`` that hold for every k at once (comparisons with the
   best), the margin as a band under zero: a k whose lower bound (minus its regret bound) lies in
   the band is confirmed within the margin;
3. refusals and cost per k: the share of answers that were refusals (bars) and the generator's
   prompt tokens (line, right axis).

Drawn with matplotlib's object API (no pyplot: no global backend or figure state, Agg renders
``savefig``) and saved without the software tag, so one sweep always gives the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pandas as pd

from rag_judge.jobs.sweep.decision.record import K_COST, Decision
from rag_judge.report.sweep_decision import standing_label

RETRIEVAL_PLOTTED = ("doc_recall", "doc_ndcg", "text_recall", "text_joint_recall")
"""The retrieval measures drawn (those present): recall and rank quality, by id and by text."""
FIGSIZE = (15.0, 4.6)
"""Inches; with :data:`DPI` the PNG is 1500 x 460 pixels."""
DPI = 100
STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v")
"""Line styles and markers cycle with colours, so lines that coincide stay distinguishable."""
STANDING_COLOURS = {
    "recommended": "#1b7837",
    "within margin": "#5aae61",
    "could be best": "#4a78c2",
    "still in": "#92c5de",
    "out": "#b2182b",
    "not recommended": "#888888",
}
"""Each k's marker in the decision panel, by where it stands."""


def sweep_png(
    summary: pd.DataFrame,
    decision: Decision,
    *,
    ks: Sequence[int],
    retrieval: Sequence[str],
    title: str = "",
    confidence: float = 0.95,
) -> bytes:
    """The three panels as PNG bytes.

    Args:
        summary: Per k and metric ``mean``, ``ci_low``, ``ci_high`` (``SweepResult.summary``).
        decision: The sweep's decision (the middle and right panels).
        ks: The swept cutoffs (the x ticks).
        retrieval: Retrieval metrics for the left panel.
        title: The figure's title.
        confidence: The retrieval CIs' level, for the axis label.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    left, middle, right = figure.subplots(1, 3)
    marked = decision.recommended_arm
    _retrieval_panel(left, summary, retrieval, ks, marked, f"mean, {confidence:.0%} CI band")
    _decision_panel(middle, decision, ks)
    _refusal_panel(right, decision, ks)
    figure.suptitle(f"{title or 'k-sweep'}: {decision.headline}")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _axis_ks(axes: Any, ks: Sequence[int]) -> None:
    axes.set_xticks(list(ks))
    axes.set_xlim(min(ks) - 0.6, max(ks) + 0.6)
    axes.set_xlabel("k (chunks given to the generator)", labelpad=2)
    axes.grid(alpha=0.3)


def _retrieval_panel(
    axes: Any,
    summary: pd.DataFrame,
    metrics: Sequence[str],
    ks: Sequence[int],
    marked: int | None,
    ylabel: str,
) -> None:
    """A line and a shaded CI band per retrieval measure (missing means leave gaps)."""
    for i, metric in enumerate(metrics):
        rows = summary[summary["metric"] == metric].sort_values("k")
        rows = rows[rows["mean"].notna() & rows["ci_low"].notna() & rows["ci_high"].notna()]
        x = rows["k"].to_numpy(dtype=float)
        mean, low, high = (rows[c].to_numpy(dtype=float) for c in ("mean", "ci_low", "ci_high"))
        color, style, marker = f"C{i % 10}", STYLES[i % len(STYLES)], MARKERS[i % len(MARKERS)]
        axes.plot(x, mean, style, marker=marker, markersize=4, color=color, label=metric)
        axes.fill_between(x, low, high, color=color, alpha=0.15, linewidth=0)
    if marked is not None:
        axes.axvline(marked, color="0.35", linestyle="--", linewidth=1.2, label=f"k={marked}")
    if not metrics:
        axes.text(0.5, 0.5, "no retrieval measure", ha="center", transform=axes.transAxes)
    _axis_ks(axes, ks)
    axes.set_ylim(-0.02, 1.02)
    axes.set_title("Retrieval vs k")
    axes.set_ylabel(ylabel)
    if metrics or marked is not None:
        axes.legend(loc="lower right", fontsize="small")


def _decision_panel(axes: Any, decision: Decision, ks: Sequence[int]) -> None:
    """Each k against the best of the others: its paired difference and bounds, and the margin."""
    found = decision.recommendation
    _axis_ks(axes, ks)
    if found is None or not found.standings:
        axes.set_title("The decision")
        axes.text(0.5, 0.5, "no k could be compared", ha="center", transform=axes.transAxes)
        return
    axes.axhspan(-found.margin, 0, color="#5aae61", alpha=0.15, linewidth=0,
                 label=f"margin ({found.margin:g})")  # fmt: skip
    axes.axhline(0, color="0.3", linewidth=0.8)
    seen: set[str] = set()
    for standing in found.standings:
        label = standing_label(standing, found)
        colour = STANDING_COLOURS[label]
        low = standing.difference - standing.difference_low
        high = standing.difference_high - standing.difference
        axes.errorbar(
            [standing.k], [standing.difference], yerr=[[low], [high]], fmt="o", color=colour,
            capsize=3, markersize=6, label=None if label in seen else label,
        )  # fmt: skip
        seen.add(label)
    axes.plot(
        [s.k for s in found.standings], [-s.regret_bound for s in found.standings], "v",
        markerfacecolor="none", markeredgecolor="0.2", markersize=7,
        label="worst case vs the best",
    )  # fmt: skip
    confidence = decision.confidence or found.confidence
    axes.set_title(
        f"The decision: {decision.objective.used}, k minus the best of the others\n"
        f"(paired; bounds hold together with {confidence:.0%} confidence, "
        f"{found.n_questions} questions)",
        fontsize="medium",
    )
    axes.set_ylabel("k − best of the others")
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize="small")


def _refusal_panel(axes: Any, decision: Decision, ks: Sequence[int]) -> None:
    """Refusal share per k (bars) and what each k costs (line, right axis)."""
    _axis_ks(axes, ks)
    shares = [decision.refusals.get(k, {}).get("refusal_rate") for k in ks]
    drawn = [(k, s) for k, s in zip(ks, shares, strict=True) if s is not None]
    if drawn:
        axes.bar([k for k, _ in drawn], [s for _, s in drawn], color="#d9a300", alpha=0.7,
                 width=0.6, label="refusals (share of answers)")  # fmt: skip
    axes.set_ylim(0, 1.02)
    axes.set_ylabel("share of answers")
    axes.set_title("Refusals and cost per k")
    found = decision.recommendation
    if found is not None and found.standings:
        cost = axes.twinx()
        unit = "k" if decision.cost_unit == K_COST else "generator prompt tokens"
        cost.plot([s.k for s in found.standings], [s.cost for s in found.standings], "-s",
                  color="0.25", markersize=4, label=unit)  # fmt: skip
        cost.set_ylabel(unit)
        cost.set_ylim(bottom=0)
        handles = axes.get_legend_handles_labels()[0] + cost.get_legend_handles_labels()[0]
        axes.legend(handles=handles, loc="upper center", fontsize="small")
    elif drawn:
        axes.legend(loc="upper right", fontsize="small")
