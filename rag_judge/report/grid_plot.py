"""A configuration sweep's picture: the objective as a configuration x k heat map with the decision
marked, and retrieval per configuration beside it."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

DPI = 100
OUT_HATCH = "///"


def grid_png(
    means: Mapping[tuple[str, int], float | None],
    standing: Mapping[tuple[str, int], str],
    retrieval: Mapping[tuple[str, int], float | None],
    *,
    configurations: Sequence[str],
    ks: Sequence[int],
    objective: str,
    retrieval_name: str,
    title: str,
) -> bytes:
    """The two panels as PNG bytes.

    Args:
        means: The objective's mean per (configuration, k) (None: not swept).
        standing: Per arm, ``recommended``, ``in`` (could still be recommended) or ``out``.
        retrieval: A retrieval measure's mean per (configuration, k) (None: not measured).
        configurations: The rows, in grid order.
        ks: The columns.
        objective: The objective's name (the colour bar's label).
        retrieval_name: The retrieval measure's name.
        title: The figure's title (the decision's headline).
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    rows = len(configurations)
    height = max(3.2, 1.2 + 0.42 * rows)
    figure = Figure(figsize=(15.0, height), dpi=DPI, layout="constrained")
    heat, lines = figure.subplots(1, 2, width_ratios=(3, 2))
    cells = [[means.get((c, k)) for k in ks] for c in configurations]
    values = _masked(cells)
    present = [v for row in cells for v in row if v is not None]
    low, high = (min(present), max(present)) if present else (0.0, 1.0)
    image = heat.imshow(values, cmap="viridis", aspect="auto", vmin=low, vmax=high)
    figure.colorbar(image, ax=heat, label=f"mean {objective}", shrink=0.9)
    for i, configuration in enumerate(configurations):
        for j, k in enumerate(ks):
            value = cells[i][j]
            where = standing.get((configuration, k), "")
            text = "—" if value is None else f"{value:.3f}"
            heat.text(j, i, text, ha="center", va="center", fontsize=8, color=_ink(image, value))
            if where == "out":
                heat.add_patch(
                    Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch=OUT_HATCH,
                              edgecolor="0.85", linewidth=0)
                )  # fmt: skip
            elif where == "recommended":
                heat.add_patch(
                    Rectangle((j - 0.48, i - 0.48), 0.96, 0.96, fill=False, edgecolor="#d7301f",
                              linewidth=3)
                )  # fmt: skip
    heat.set_xticks(range(len(ks)), [str(k) for k in ks])
    heat.set_yticks(range(rows), list(configurations))
    heat.set_xlabel("k (passages given to the generator)")
    heat.set_title(f"{objective} by configuration and k (red box: recommended; hatched: out)")
    _retrieval_lines(lines, retrieval, configurations, ks, retrieval_name)
    figure.suptitle(title)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _retrieval_lines(
    axes: Any,
    retrieval: Mapping[tuple[str, int], float | None],
    configurations: Sequence[str],
    ks: Sequence[int],
    name: str,
) -> None:
    """One line per configuration (gaps where a value is missing)."""
    drawn = False
    for i, configuration in enumerate(configurations):
        y = _masked([[retrieval.get((configuration, k)) for k in ks]])[0]
        if y.count():
            drawn = True
            axes.plot(list(ks), y, marker="os^Dv"[i % 5], markersize=4, color=f"C{i % 10}",
                      linestyle=("-", "--", "-.", ":")[i % 4], label=configuration)  # fmt: skip
    axes.set_xticks(list(ks))
    axes.set_xlabel("k")
    axes.set_ylim(-0.02, 1.02)
    axes.grid(alpha=0.3)
    axes.set_title(f"Retrieval per configuration: {name}" if name else "Retrieval")
    if drawn:
        axes.legend(loc="lower right", fontsize="small")
    else:
        axes.text(0.5, 0.5, "no retrieval measure", ha="center", transform=axes.transAxes)


def _masked(rows: Sequence[Sequence[float | None]]) -> np.ma.MaskedArray:
    """Values with the missing ones masked: drawn as gaps, never as a number."""
    return np.ma.masked_array(
        [[0.0 if v is None else float(v) for v in row] for row in rows],
        mask=[[v is None for v in row] for row in rows],
    )


def _ink(image: Any, value: float | None) -> str:
    """Black on light cells, white on dark ones (grey for a cell with no value)."""
    if value is None:
        return "0.3"
    red, green, blue, _ = image.cmap(image.norm(value))
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"
