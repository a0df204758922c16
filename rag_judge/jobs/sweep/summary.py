"""Per-k aggregates with bootstrap CIs, and the best k with paired tests against its neighbours.

Every mean is over the questions scored at that k (missing values are left out, never zeroed);
a comparison of two ks pairs the questions scored at both. An objective is a metric column or
a product of columns (``faithfulness*completeness``: an answer must be both grounded and
complete), computed per question before averaging.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.core.stats import (
    ConfidenceInterval,
    bootstrap_mean_ci,
    paired_bootstrap_ci,
    paired_randomization_test,
)

SUMMARY_COLUMNS = ("k", "metric", "mean", "ci_low", "ci_high", "n_scored", "n_questions")


@dataclass(frozen=True)
class NeighbourTest:
    """The best k against one neighbouring k, over the questions scored at both."""

    k: int
    """The neighbour."""
    difference: ConfidenceInterval
    """Mean of (best k - neighbour) per question, with its paired bootstrap CI."""
    p_value: float
    """Two-sided paired randomization test of a zero mean difference."""
    significant: bool
    """The CI lies above 0 and p < alpha."""


@dataclass(frozen=True)
class BestK:
    """The k with the highest mean objective, and whether it beats its neighbours."""

    objective: str
    k: int
    mean: float
    n_scored: int
    neighbours: tuple[NeighbourTest, ...]
    """Tests against the adjacent ks of the sweep (one at either end)."""
    sentence: str
    """The finding in one plain sentence."""

    @property
    def significant(self) -> bool:
        """True when it is significantly better than every neighbour."""
        return bool(self.neighbours) and all(t.significant for t in self.neighbours)


def objective_values(frame: pd.DataFrame, objective: str) -> pd.Series:
    """Per-row values of a metric column or a ``*``-product of columns (NA if any is NA).

    Raises:
        InputError: a name that is not a numeric column of the frame.
    """
    names = [n.strip() for n in objective.split("*")]
    unknown = [n for n in names if n not in frame.columns or frame[n].dtype != "Float64"]
    if unknown or not names:
        raise InputError(f"unknown metric {unknown[0]!r} in {objective!r}", field="objective")
    values = frame[names[0]].copy()
    for name in names[1:]:
        values = values * frame[name]
    return values


def summarise(
    frame: pd.DataFrame,
    metrics: Sequence[str],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per (k, metric): mean, bootstrap CI, questions scored and questions in all."""
    rows = []
    for k, group in frame.groupby("k", sort=True):
        for metric in metrics:
            scored = group[metric].dropna().to_numpy(dtype=float)
            ci = (
                bootstrap_mean_ci(scored, confidence=confidence, n_resamples=n_resamples, seed=seed)
                if len(scored)
                else None
            )
            rows.append(
                {
                    "k": k,
                    "metric": metric,
                    "mean": None if ci is None else ci.estimate,
                    "ci_low": None if ci is None else ci.low,
                    "ci_high": None if ci is None else ci.high,
                    "n_scored": len(scored),
                    "n_questions": len(group),
                }
            )
    out = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    return out.astype(dict.fromkeys(("mean", "ci_low", "ci_high"), "Float64"))


def best_k(
    frame: pd.DataFrame,
    objective: str,
    *,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> BestK:
    """The k with the highest mean objective (ties: the smallest k, the cheaper prompt).

    Raises:
        InputError: an unknown objective, or no k with a scored question.
    """
    table = frame.assign(_objective=objective_values(frame, objective))
    wide = table.pivot(index="question_id", columns="k", values="_objective")
    means = wide.mean(skipna=True).dropna()
    if means.empty:
        raise InputError(f"no question has a value of {objective!r}", field="objective")
    best = int(means.index[int(means.to_numpy(dtype=float).argmax())])
    ks = [int(k) for k in wide.columns]
    at = ks.index(best)
    tests = tuple(
        test
        for other in ks[max(at - 1, 0) : at + 2]
        if other != best and (test := _compare(wide, best, other, alpha, n_resamples, seed))
    )
    found = BestK(objective, best, float(means[best]), int(wide[best].notna().sum()), (), "")
    return replace(found, neighbours=tests, sentence=_sentence(found, tests))


def _compare(
    wide: pd.DataFrame, best: int, other: int, alpha: float, n_resamples: int, seed: int
) -> NeighbourTest | None:
    pairs = wide[[best, other]].dropna().to_numpy(dtype=float)
    if not len(pairs):
        return None
    a, b = pairs[:, 0], pairs[:, 1]
    difference = paired_bootstrap_ci(a, b, n_resamples=n_resamples, seed=seed)
    p_value = paired_randomization_test(a, b, seed=seed).p_value
    return NeighbourTest(other, difference, p_value, difference.low > 0 and p_value < alpha)


def _sentence(found: BestK, tests: Sequence[NeighbourTest]) -> str:
    head = (
        f"k={found.k} has the highest mean {found.objective} "
        f"({found.mean:.3f} over {found.n_scored} question{'s' * (found.n_scored != 1)})"
    )
    parts = [
        f"{'significantly' if t.significant else 'not significantly'} better than k={t.k} "
        f"({t.difference.estimate:+.3f}, {t.difference.confidence:.0%} CI "
        f"[{t.difference.low:+.3f}, {t.difference.high:+.3f}], p={t.p_value:.3f})"
        for t in tests
    ]
    if not parts:
        return f"{head}; the sweep has no other k to compare it with."
    verdict = (
        "so it is significantly better than its neighbours"
        if all(t.significant for t in tests)
        else "so the data do not single it out from its neighbours"
    )
    return f"{head}: it is {' and '.join(parts)}, {verdict}."
