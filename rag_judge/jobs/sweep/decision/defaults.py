"""The decision's defaults, in one place: the CLI, the options, the rule and the docs read them.

Why these values: docs/concepts/statistics.md (margin and confidence, from
``benchmarks/decision_quality.py``) and docs/how-to/cost-control.md (the sequential run's step
and spending, from ``benchmarks/until_decided.py``).
"""

from __future__ import annotations

import math
from typing import Final, Literal

from rag_judge.core.errors import InputError

DEFAULT_MARGIN: Final = 0.05
"""How much worse than the best a recommended k may be, on the objective's 0..1 scale."""
DEFAULT_CONFIDENCE: Final = 0.95
"""Family-wise confidence of the decision's bounds (every k at once)."""
DEFAULT_RESAMPLES: Final = 2000
"""Bootstrap resamples of the questions behind the decision's bounds."""

Spending = Literal["pocock", "obrien_fleming"]
"""How a run until decided spends its error across looks."""
SPENDINGS: Final[tuple[Spending, ...]] = ("pocock", "obrien_fleming")
DEFAULT_SPENDING: Final[Spending] = "obrien_fleming"
DEFAULT_STEP: Final = 10
"""Questions added between two looks of a run until decided."""


def check_margin(margin: object) -> float:
    """The margin as a float, refused unless it is a number in [0, 1): the one place the rule
    on margins lives (the options, the CLI through them, and :func:`recommend` call it).

    Raises:
        InputError: anything else (a bool, NaN, a negative number, 1 or more).
    """
    number = (
        not isinstance(margin, bool)
        and isinstance(margin, int | float)
        and math.isfinite(float(margin))
    )
    if not (number and 0 <= float(margin) < 1):  # type: ignore[arg-type]
        raise InputError(f"must be a number in [0, 1), got {margin!r}", field="margin")
    return float(margin)  # type: ignore[arg-type]
