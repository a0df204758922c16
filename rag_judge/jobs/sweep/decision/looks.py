"""One test, however often you look: the error a sweep's decision may spend, look by look.

A sweep is looked at more than once: every batch of a run ``--until-decided``, and every re-run
with more questions (a larger ``--limit``, a raised ``--max-questions``). Each look is a chance to
be wrong, so the looks of one sweep share one error budget, recorded with the sweep
(:class:`SweepLooks`, kept beside the response cache) and spent by an alpha-spending function of
the information fraction ``t = n / N`` (Lan and DeMets 1983): ``n`` the questions looked at, ``N``
the most there can ever be (the eval set's). By look i the sweep may have been wrong with
probability at most ``spent(t_i)``, and never more than ``alpha`` however many looks follow.

Each look's own level comes from the looks' joint law, for the statistic the decision really
uses: the largest of each k's one-sided comparisons with the best
(:func:`~rag_judge.core.best.compare_with_best`), whose z-values move as a Brownian motion in
``t`` with the comparisons' measured correlation (:func:`look_level`, simulated, seeded). A look
at no more questions than an earlier one adds no information and may spend nothing new.

Three spending functions: ``front`` (``alpha * t ** 0.1``, the default: a sweep's first look
keeps most of the error, as most sweeps are looked at once or twice, and a re-run still has
some), ``pocock`` (``alpha * ln(1 + (e - 1) t)``) and ``obrien_fleming``
(``2 - 2 Phi(z_(alpha/2) / sqrt t)``, almost nothing early); docs/concepts/statistics.md has
what each costs, measured.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rag_judge.core.best import comparison_correlations
from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_SPENDING,
    FRONT_POWER,
    SPENDINGS,
    Spending,
)

BOUNDARY_PATHS = 20_000
"""Simulated paths behind :func:`look_level` (seeded: a resumed run gets the same levels)."""
_SEED = 20_260_101


def spent(fraction: float, alpha: float, spending: Spending = DEFAULT_SPENDING) -> float:
    """The error spent by information fraction ``fraction`` (0..1) of a total ``alpha``.

    >>> [round(spent(1.0, 0.05, s), 6) for s in ("front", "pocock", "obrien_fleming")]
    [0.05, 0.05, 0.05]
    >>> spent(0.1, 0.05, "obrien_fleming") < spent(0.1, 0.05, "pocock") < spent(0.1, 0.05)
    True
    """
    t = min(max(fraction, 0.0), 1.0)
    if t == 0:
        return 0.0
    if spending == "front":
        return float(alpha * t**FRONT_POWER)
    if spending == "pocock":
        return alpha * math.log(1 + (math.e - 1) * t)
    if spending == "obrien_fleming":
        z = NormalDist().inv_cdf(1 - alpha / 2)
        return 2 - 2 * NormalDist().cdf(z / math.sqrt(t))
    raise InputError(f"must be one of {', '.join(SPENDINGS)}, got {spending!r}", field="spending")


def look_level(
    previous: Sequence[tuple[float, float]],
    fraction: float,
    alpha: float,
    spending: Spending,
    correlations: Sequence[NDArray[np.float64]],
) -> float:
    """The level of a look at information ``fraction``, after looks at ``previous`` (fraction,
    level) pairs in the order taken, such that the largest one-sided comparison with the best
    has crossed some look's bound with probability at most ``spent(fraction)``, whichever k is
    the best (``correlations``: per k, its comparisons' correlation matrix). 0 when the look
    adds no information. The first look's level is its spending.

    Two looks, half way and at the end, of one comparison: the second may use about 0.030 (the
    joint normal law gives 0.0297), not just the 0.019 the spending adds.

    >>> one = [np.eye(1)]
    >>> first = spent(0.5, 0.05, "pocock")
    >>> round(first, 3), round(look_level([(0.5, first)], 1.0, 0.05, "pocock", one), 2)
    (0.031, 0.03)
    """
    before = max((t for t, _ in previous), default=0.0)
    if fraction <= before + 1e-12:
        return 0.0
    target = spent(fraction, alpha, spending)
    if not previous:
        return target
    fractions = [t for t, _ in previous] + [fraction]
    levels = [a for _, a in previous]
    roots = [_root(corr) for corr in correlations if corr.size]
    if not roots:
        return target
    return _levels_for(_binding(roots, target), fractions, levels, target)


BINDING = 2
"""How many ks, taken as the best, the look's level is simulated for: those whose largest
comparison has the widest single-look law (the least correlated), which bind the level."""


def _binding(roots: Sequence[NDArray[np.float64]], level: float) -> list[NDArray[np.float64]]:
    """The :data:`BINDING` roots whose largest comparison's ``1 - level`` quantile is largest."""
    if len(roots) <= BINDING:
        return list(roots)
    rng = np.random.default_rng(_SEED)
    draws = rng.standard_normal((BOUNDARY_PATHS, max(r.shape[0] for r in roots)))
    widest = [
        float(np.quantile((draws[:, : r.shape[0]] @ r.T).max(axis=1), 1 - level)) for r in roots
    ]
    order = np.argsort(widest)[::-1][:BINDING]
    return [roots[i] for i in order]


def _root(corr: NDArray[np.float64]) -> NDArray[np.float64]:
    """A square root of a correlation matrix (eigen, clipped: a measured one may be singular)."""
    values, vectors = np.linalg.eigh((corr + corr.T) / 2)
    return np.asarray(vectors * np.sqrt(np.clip(values, 0.0, None)), dtype=np.float64)


def _levels_for(
    roots: Sequence[NDArray[np.float64]],
    fractions: Sequence[float],
    levels: Sequence[float],
    target: float,
) -> float:
    """:func:`look_level`'s last level, the smallest over the ks taken as the best (each its
    comparisons' correlation root); the paths' normal draws are shared by every k."""
    rng = np.random.default_rng(_SEED)
    width = max(root.shape[0] for root in roots)
    walks = [np.zeros((BOUNDARY_PATHS, root.shape[0])) for root in roots]
    singles: list[NDArray[np.float64]] = []
    crossed = [np.zeros(BOUNDARY_PATHS, dtype=bool) for _ in roots]
    largest: list[NDArray[np.float64]] = []
    before = 0.0
    for i, t in enumerate(fractions):
        step = rng.standard_normal((BOUNDARY_PATHS, width)) * math.sqrt(t - before)
        largest = []
        for c, root in enumerate(roots):
            walks[c] += step[:, : root.shape[0]] @ root.T
            largest.append(walks[c].max(axis=1) / math.sqrt(t))
            if i == 0:
                singles.append(np.sort(largest[c]))  # each look's statistic has this law alone
            if i < len(levels):
                crossed[c] |= largest[c] > _quantile(singles[c], levels[i])
        before = t
    found = []
    for c in range(len(roots)):
        extra = round((target - crossed[c].mean()) * BOUNDARY_PATHS)
        if extra <= 0:
            return 0.0
        alive = np.sort(largest[c][~crossed[c]])[::-1]
        if extra >= alive.size:
            found.append(1.0 - 1e-9)
            continue
        bound = float(alive[extra - 1] + alive[extra]) / 2
        found.append(float((singles[c] > bound).mean()))
    return min(found)


def _quantile(sorted_values: NDArray[np.float64], level: float) -> float:
    """The value exceeded by a share ``level`` of ``sorted_values`` (inf for level 0)."""
    if level <= 0:
        return math.inf
    index = min(max(round((1 - level) * sorted_values.size), 0), sorted_values.size - 1)
    return float(sorted_values[index])


@dataclass(frozen=True)
class LookTaken:
    """One look of a sweep's test: how many questions, at what level, the error spent by then."""

    n_questions: int
    alpha: float
    """The look's own level: its bounds held at confidence ``1 - alpha``."""
    spent: float
    """The error the test had spent by this look (``spent(n / horizon)``)."""


@dataclass(frozen=True)
class SweepLooks:
    """Every look of one sweep's decision, across its runs: the error budget they share.

    A first look at 100 of a set's 3,219 questions, then a second at 250:

    >>> looks = SweepLooks(3219, 0.05, "front")
    >>> first = looks.level(100, [np.eye(9)])
    >>> looks = looks.with_look(100, first)
    >>> second = looks.level(250, [np.eye(9)])
    >>> round(first, 4), 0 < second < first, looks.level(100, [np.eye(9)]) == first
    (0.0353, True, True)
    """

    horizon: int
    """The most questions the sweep can ever look at (the eval set's)."""
    alpha: float
    """The test's error, ``1 - confidence``: every look together errs at most this often."""
    spending: Spending = DEFAULT_SPENDING
    taken: tuple[LookTaken, ...] = ()
    """The looks so far, in the order taken."""

    def __post_init__(self) -> None:
        if self.horizon < 1:
            raise InputError(f"must be at least 1, got {self.horizon!r}", field="horizon")

    @property
    def confidence(self) -> float:
        """The confidence every look holds at together."""
        return 1 - self.alpha

    def recorded(self, n: int) -> LookTaken | None:
        """The look at exactly ``n`` questions, if one was taken (a re-run of the same look)."""
        return next((look for look in self.taken if look.n_questions == n), None)

    def level(self, n: int, correlations: Sequence[NDArray[np.float64]]) -> float:
        """The level a look at ``n`` questions gets: a recorded look's own (the same data looked
        at again spends nothing new), else a new look's (0 when it adds no information)."""
        found = self.recorded(n)
        if found is not None:
            return found.alpha
        previous = [(look.n_questions / self.horizon, look.alpha) for look in self.taken]
        return look_level(previous, self._fraction(n), self.alpha, self.spending, correlations)

    def with_look(self, n: int, level: float) -> SweepLooks:
        """The record with a look at ``n`` questions at ``level`` (unchanged if recorded)."""
        if self.recorded(n) is not None or level <= 0:
            return self
        look = LookTaken(n, level, spent(self._fraction(n), self.alpha, self.spending))
        return replace(self, taken=(*self.taken, look))

    def _fraction(self, n: int) -> float:
        return min(n / self.horizon, 1.0)

    def as_json(self) -> dict[str, Any]:
        """The record as ``decision.json`` and the record file hold it."""
        return {
            "horizon": self.horizon,
            "alpha": self.alpha,
            "spending": self.spending,
            "taken": [
                {"n_questions": x.n_questions, "alpha": x.alpha, "spent": x.spent}
                for x in self.taken
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SweepLooks:
        """A record as :meth:`as_json` wrote it.

        Raises:
            InputError: a record that is not one (a damaged file).
        """
        try:
            taken = tuple(
                LookTaken(int(x["n_questions"]), float(x["alpha"]), float(x["spent"]))
                for x in data["taken"]
            )
            spending = str(data["spending"])
            if spending not in SPENDINGS:
                raise ValueError(spending)
            return cls(int(data["horizon"]), float(data["alpha"]), spending, taken)
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f"not a record of looks ({error!r})", field="record") from None


def correlations_of(table: ArrayLike) -> list[NDArray[np.float64]]:
    """Per k, its comparisons' correlation matrix over ``table`` (what :func:`look_level`
    needs)."""
    y = np.asarray(table, dtype=np.float64)
    return comparison_correlations(np.nan_to_num(y), ~np.isnan(y))
