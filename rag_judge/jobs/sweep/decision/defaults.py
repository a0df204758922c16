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
MIN_QUESTIONS: Final = 10
"""Below this many questions the rule recommends nothing: the bounds would not keep their
promise (measured by simulation: docs/concepts/statistics.md)."""
MAX_FAILURE_SHARE: Final = 0.05
"""A k whose calls failed on more than this share of the questions the other ks answered is not
recommended: its failures may be the hard questions (below it, it is judged on what it answered,
and flagged)."""
MIN_ANSWER_SHARE: Final = 0.5
"""A k is recommended only if it answers (does not refuse) at least this share of the answerable
questions that the k answering most of them answers."""
ALL_REFUSED: Final = "it refused every answerable question, as every k did"
"""Why no k is eligible when every k refused every answerable question."""
PLAN_PROBABILITY: Final = 0.8
""""About N questions would settle it" names the N at which the rule settles with this chance."""

Spending = Literal["front", "pocock", "obrien_fleming"]
"""How a sweep's test spends its error across looks (jobs/sweep/decision/sequential.py)."""
SPENDINGS: Final[tuple[Spending, ...]] = ("front", "pocock", "obrien_fleming")
DEFAULT_SPENDING: Final[Spending] = "front"
"""How a plain sweep's new test spends its error over the eval set's size: most of it at the
first look, as most sweeps are looked at once or twice, and some left for a re-run."""
UNTIL_DECIDED_SPENDING: Final[Spending] = "obrien_fleming"
"""How a run until decided's new test spends its error over the questions it may use: almost
nothing at its first looks, nearly all by its last (its looks come every few questions)."""
FRONT_POWER: Final = 0.1
"""``front`` spending: ``alpha * t ** FRONT_POWER`` of the error by information fraction t."""
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
