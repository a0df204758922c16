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

Elimination (a run until decided stops generating and judging a k) rests on the same bounds: a k
is out when another is shown better by more than the margin, or a k that costs no more is shown
better at all; on the event the bounds hold, the best k is never out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rag_judge.core.best import compare_with_best, comparison_correlations
from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SPENDING,
    DEFAULT_STEP,
    FRONT_POWER,
    SPENDINGS,
    Spending,
)
from rag_judge.jobs.sweep.decision.recommend import Recommendation, recommend

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
    """Every look of one sweep's decision, across its runs: the error budget they share."""

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


@dataclass(frozen=True)
class Look:
    """One look of a run until decided: how many questions, which ks went out, whether the rule
    settled."""

    n_questions: int
    """Questions judged at every k still in before this look."""
    alpha: float
    """The look's own level (:meth:`SweepLooks.level`); its bounds' confidence is
    ``1 - alpha``."""
    active: tuple[int, ...]
    """The ks compared at this look."""
    eliminated: tuple[int, ...]
    """The ks out after this look (shown worse than another by more than the margin, or than a
    k that costs no more)."""
    recommended_k: int | None
    """The k the rule named at this look (the sweep stops), else None."""


def take_look(
    table: ArrayLike,
    ks: Sequence[int],
    *,
    alpha: float,
    margin: float,
    costs: Sequence[float] | None = None,
    eligible: Sequence[bool] | None = None,
    why_not: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[Look, Recommendation]:
    """One look at ``table`` (questions x ``ks``, the ks still in) at level ``alpha``: the ks it
    rules out and what the decision's rule says.

    Raises:
        InputError: a level outside (0, 1).
    """
    y = np.asarray(table, dtype=np.float64)
    chosen = [int(k) for k in ks]
    if not 0 < alpha < 1:
        raise InputError(f"must be in (0, 1), got {alpha!r}", field="alpha")
    bounds = None
    out: tuple[int, ...] = ()
    if y.shape[0] and len(chosen) > 1:
        bounds = compare_with_best(y, confidence=1 - alpha, n_resamples=n_resamples, seed=seed)
        shown = bounds.difference - bounds.critical * bounds.se  # [j, k]: mu_j - mu_k above
        np.fill_diagonal(shown, -np.inf)
        cost = np.asarray(costs if costs is not None else chosen, dtype=float)
        cheaper = cost[:, None] <= cost[None, :]  # [j, k]: j costs no more than k
        beaten = bounds.shortfall_low > margin + 1e-12
        dominated = np.any((shown > 1e-12) & cheaper, axis=0)
        out = tuple(k for k, b, d in zip(chosen, beaten, dominated, strict=True) if b or d)
    found = recommend(
        y, chosen, costs=costs, eligible=eligible, why_not=why_not, margin=margin,
        confidence=1 - alpha, n_resamples=n_resamples, seed=seed, bounds=bounds,
    )  # fmt: skip
    look = Look(
        n_questions=int(y.shape[0]),
        alpha=float(alpha),
        active=tuple(chosen),
        eliminated=out,
        recommended_k=found.recommended_k,
    )
    return look, found


def correlations_of(table: ArrayLike) -> list[NDArray[np.float64]]:
    """Per k, its comparisons' correlation matrix over ``table`` (what :func:`look_level`
    needs)."""
    y = np.asarray(table, dtype=np.float64)
    return comparison_correlations(np.nan_to_num(y), ~np.isnan(y))


StopReason = Literal["settled", "budget", "max_questions"]


@dataclass(frozen=True)
class SequentialRun:
    """What a sequential decision did over a table of questions in order."""

    looks: tuple[Look, ...]
    stop: StopReason
    recommendation: Recommendation
    """The last look's (recommended k, or undecided with the lean)."""
    questions_used: int
    answers_used: int
    """(question, k) answers generated and judged: what the run cost, in k-answers."""
    record: SweepLooks
    """The sweep's looks, with this run's."""


def replay_sequential(
    table: ArrayLike,
    ks: Sequence[int],
    *,
    margin: float,
    confidence: float = DEFAULT_CONFIDENCE,
    step: int = DEFAULT_STEP,
    max_questions: int | None = None,
    spending: Spending = DEFAULT_SPENDING,
    horizon: int | None = None,
    looks: SweepLooks | None = None,
    costs: Sequence[float] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> SequentialRun:
    """The sequential rule over a complete table whose rows are questions in the order a sweep
    would ask them (no model: a simulation, or a replay of a finished sweep). A question is
    judged at the ks still in when its batch comes; the run stops when a look settles or
    ``max_questions`` (default: every row) are used. The looks continue ``looks`` (default: a
    new one of ``horizon`` questions, default every row)."""
    y = np.asarray(table, dtype=np.float64)
    chosen = [int(k) for k in ks]
    total = min(max_questions or y.shape[0], y.shape[0])
    if step < 1 or total < 1:
        raise InputError("needs a step >= 1 and at least one question", field="step")
    record = looks or SweepLooks(horizon or y.shape[0], 1 - confidence, spending)
    active = list(range(len(chosen)))
    taken: list[Look] = []
    answers = used = 0
    found: Recommendation | None = None
    while used < total:
        batch = min(step, total - used)
        answers += batch * len(active)
        used += batch
        seen = y[:used, active]
        level = record.level(used, correlations_of(seen))
        if level <= 0:
            continue
        record = record.with_look(used, level)
        look, found = take_look(
            seen,
            [chosen[i] for i in active],
            alpha=level,
            margin=margin,
            costs=None if costs is None else [costs[i] for i in active],
            n_resamples=n_resamples,
            seed=seed + len(taken),
        )
        taken.append(look)
        if look.recommended_k is not None:
            return SequentialRun(tuple(taken), "settled", found, used, answers, record)
        active = [i for i in active if chosen[i] not in look.eliminated]
    if found is None:
        raise InputError("no look could be taken: every question was looked at before")
    return SequentialRun(tuple(taken), "max_questions", found, used, answers, record)


@dataclass(frozen=True)
class SequentialRecord:
    """What a sweep ``--until-decided`` did: its looks, why it stopped, what it used."""

    looks: tuple[Look, ...]
    stop: StopReason
    questions_used: int
    max_questions: int
    answers_used: int
    """(question, k) answers generated and judged."""
    answers_fixed: int
    """What a fixed sweep of ``max_questions`` at every k would have generated and judged."""
    spending: Spending
    confidence: float
    """Overall: every elimination and the final decision hold together with this confidence."""
    budget: str = ""
    """The budget, as given ("" when none)."""
    seconds: float = 0.0
    """Wall time this run spent (answers from the cache cost none)."""
    tokens: int = 0
    """Prompt and completion tokens this run's model calls spent."""

    def eliminated_at(self) -> dict[int, int]:
        """Each k that went out, and after how many questions."""
        return {k: look.n_questions for look in self.looks for k in look.eliminated}

    def as_json(self) -> dict[str, object]:
        """The record as ``decision.json`` holds it."""
        return {
            "stop": self.stop,
            "questions_used": self.questions_used,
            "max_questions": self.max_questions,
            "answers_used": self.answers_used,
            "answers_fixed": self.answers_fixed,
            "spending": self.spending,
            "confidence": self.confidence,
            "budget": self.budget,
            "seconds": round(self.seconds, 1),
            "tokens": self.tokens,
            "eliminated_at": {str(k): n for k, n in self.eliminated_at().items()},
            "looks": [
                {
                    "n_questions": look.n_questions,
                    "alpha": look.alpha,
                    "active": list(look.active),
                    "eliminated": list(look.eliminated),
                    "recommended_k": look.recommended_k,
                }
                for look in self.looks
            ],
        }

    def sentence(self) -> str:
        """What the run did, in words."""
        why = {
            "settled": "the rule settled",
            "budget": f"its budget ({self.budget}) was spent, or would be by the next batch",
            "max_questions": "it had used every question it was allowed",
        }[self.stop]
        gone = self.eliminated_at()
        out = (
            "; ".join(f"k={k} went out after {n} questions" for k, n in sorted(gone.items()))
            if gone
            else "no k went out"
        )
        saved = 1 - self.answers_used / self.answers_fixed if self.answers_fixed else 0.0
        return (
            f"Until decided: {self.questions_used} of at most {self.max_questions} questions in "
            f"{len(self.looks)} looks, stopped because {why}; {out}. It generated and judged "
            f"{self.answers_used:,} answers, {saved:.0%} fewer than a fixed sweep of "
            f"{self.max_questions} questions at every k. The error is spent across the looks "
            f"({self.spending.replace('_', '-')} spending), so every elimination and this "
            f"decision hold together with {self.confidence:.0%} confidence."
        )
