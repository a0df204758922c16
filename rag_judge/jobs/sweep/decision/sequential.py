"""Deciding sooner: looks at the decision after each batch of questions, dropping the ks that
are confidently out, until the decision's rule settles.

A sweep ``--until-decided`` adds questions in batches. After each batch (a look) every k still
in is compared on the questions judged at all of them, with the decision's simultaneous
intervals (:func:`~rag_judge.core.simultaneous.pairwise_intervals`), at the confidence that
look may spend:

- a k is **out** when some other k is better by more than the margin with that confidence (it
  could be neither the best nor within the margin of it), or when a k that costs no more is
  better at all (it could be the best of nothing and never the cheapest within the margin); an
  out k is no longer generated or judged;
- the sweep **settles** when the decision's rule (:func:`~rag_judge.jobs.sweep.recommend.recommend`)
  names a k among those still in.

Looking many times is many chances to be wrong, so the error is spent across looks by an
alpha-spending function of the information fraction t = questions so far / the most questions
the run may use (Lan and DeMets 1983): by look i the run may have been wrong with probability at
most ``spend(t_i)``. The looks share their questions, so a difference's z-statistic moves as a
Brownian motion in t (corr(Z_i, Z_j) = sqrt(t_i / t_j)); :func:`nominal_alphas` turns the
spending into each look's nominal level under that law, as group-sequential designs do, rather
than charging every look its increment (the union bound, which leaves the last look only a
small share and almost never settles: docs/how-to/cost-control.md, measured). Within a look
the max-t intervals cover every k at once. Two spending functions: ``pocock``
(``alpha * ln(1 + (e - 1) t)``: spends evenly, so plainly bad ks go early) and
``obrien_fleming`` (``2 - 2 Phi(z_(alpha/2) / sqrt t)``:
almost nothing early, nearly all at the end). The default is O'Brien-Fleming-type: with these
boundaries Pocock-type, spending early where 10-20 questions make the bootstrap's tails too thin,
eliminated a k in 6-7% of flat simulated runs (O'Brien-Fleming-type 3-4%, under the 5%
promised; docs/how-to/cost-control.md, measured); unspent error (a run stopped by its budget)
is simply not used, which only makes the statements safer.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.core.errors import InputError
from rag_judge.core.simultaneous import pairwise_intervals
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_SPENDING,
    DEFAULT_STEP,
    SPENDINGS,
    Spending,
)
from rag_judge.jobs.sweep.decision.recommend import Recommendation, recommend


def spent(fraction: float, alpha: float, spending: Spending = DEFAULT_SPENDING) -> float:
    """The error spent by information fraction ``fraction`` (0..1) of a total ``alpha``.

    >>> round(spent(1.0, 0.05, "pocock"), 6), round(spent(1.0, 0.05, "obrien_fleming"), 6)
    (0.05, 0.05)
    >>> spent(0.1, 0.05, "obrien_fleming") < spent(0.1, 0.05, "pocock")
    True
    """
    t = min(max(fraction, 0.0), 1.0)
    if t == 0:
        return 0.0
    if spending == "pocock":
        return alpha * math.log(1 + (math.e - 1) * t)
    if spending == "obrien_fleming":
        z = NormalDist().inv_cdf(1 - alpha / 2)
        return 2 - 2 * NormalDist().cdf(z / math.sqrt(t))
    raise InputError(f"must be one of {', '.join(SPENDINGS)}, got {spending!r}", field="spending")


BOUNDARY_PATHS = 400_000
"""Simulated paths behind :func:`nominal_alphas` (seeded: a resumed run gets the same levels)."""


@functools.lru_cache(maxsize=64)
def _nominal_alphas(
    fractions: tuple[float, ...], alpha: float, spending: Spending
) -> tuple[float, ...]:
    rng = np.random.default_rng(20_260_101)
    walk = np.zeros(BOUNDARY_PATHS)
    alive = np.ones(BOUNDARY_PATHS, dtype=bool)
    levels: list[float] = []
    before = 0.0
    for t in fractions:
        walk += rng.standard_normal(BOUNDARY_PATHS) * math.sqrt(t - before)
        z = np.abs(walk) / math.sqrt(t)
        crossing = round(
            (spent(t, alpha, spending) - spent(before, alpha, spending)) * BOUNDARY_PATHS
        )
        live = np.sort(z[alive])[::-1]
        if crossing <= 0 or live.size == 0:
            critical = math.inf
        elif crossing >= live.size:
            critical = float(live[-1])
        else:
            critical = float(live[crossing - 1] + live[crossing]) / 2
        levels.append(2 * (1 - NormalDist().cdf(critical)) if math.isfinite(critical) else 0.0)
        alive &= z <= critical
        before = t
    return tuple(levels)


def nominal_alphas(
    fractions: Sequence[float], alpha: float, spending: Spending = DEFAULT_SPENDING
) -> tuple[float, ...]:
    """Each look's nominal two-sided level, for looks at information ``fractions`` (increasing,
    in (0, 1]), such that a statistic moving as Brownian motion in information has crossed some
    look's bound by look i with probability ``spent(t_i)``: the Lan-DeMets boundaries, from the
    looks' joint normal law (simulated, seeded). Each level is at least the spending's
    increment, which is what the union bound would give.

    Two looks, half way and at the end: the second may use 0.028, not just the 0.019 left.

    >>> [round(level, 3) for level in nominal_alphas([0.5, 1.0], 0.05, "pocock")]
    [0.031, 0.028]
    """
    ts = tuple(round(float(t), 9) for t in fractions)
    if any(b <= a for a, b in zip((0.0, *ts), ts, strict=False)) or (ts and ts[-1] > 1):
        raise InputError(f"must increase within (0, 1], got {list(fractions)!r}", field="fractions")
    levels = _nominal_alphas(ts, float(alpha), spending)
    steps = np.diff([0.0, *(spent(t, alpha, spending) for t in ts)])
    return tuple(max(level, float(step), 1e-12) for level, step in zip(levels, steps, strict=True))


@dataclass(frozen=True)
class Look:
    """One look: how many questions, which ks went out, whether the rule settled."""

    n_questions: int
    """Questions judged at every k still in before this look."""
    alpha: float
    """The look's nominal level (:func:`nominal_alphas`); its intervals' confidence is
    ``1 - alpha``."""
    active: tuple[int, ...]
    """The ks compared at this look."""
    eliminated: tuple[int, ...]
    """The ks out after this look (confidently worse than another by more than the margin, or
    than a k that costs no more)."""
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
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[Look, Recommendation]:
    """One look at ``table`` (questions x ``ks``, every k still in, the same questions) at error
    ``alpha``: the ks it rules out and what the decision's rule says."""
    y = np.asarray(table, dtype=np.float64)
    chosen = [int(k) for k in ks]
    if not 0 < alpha < 1:
        raise InputError(f"must be in (0, 1), got {alpha!r}", field="alpha")
    found = recommend(
        y, chosen, costs=costs, eligible=eligible, margin=margin,
        confidence=1 - alpha, n_resamples=n_resamples, seed=seed,
    )  # fmt: skip
    out: tuple[int, ...] = ()
    if y.shape[0] and len(chosen) > 1:
        intervals = pairwise_intervals(y, confidence=1 - alpha, n_resamples=n_resamples, seed=seed)
        beaten = np.any(intervals.low > margin + 1e-12, axis=0)  # [j, k]: j beats k by > margin
        cost = np.asarray(costs if costs is not None else chosen, dtype=float)
        cheaper = cost[:, None] <= cost[None, :]  # [j, k]: j costs no more than k
        np.fill_diagonal(cheaper, False)
        dominated = np.any((intervals.low > 1e-12) & cheaper, axis=0)
        out = tuple(k for k, b, d in zip(chosen, beaten, dominated, strict=True) if b or d)
    look = Look(
        n_questions=int(y.shape[0]),
        alpha=float(alpha),
        active=tuple(chosen),
        eliminated=out,
        recommended_k=found.recommended_k,
    )
    return look, found


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


def replay_sequential(
    table: ArrayLike,
    ks: Sequence[int],
    *,
    margin: float,
    confidence: float = DEFAULT_CONFIDENCE,
    step: int = DEFAULT_STEP,
    max_questions: int | None = None,
    spending: Spending = DEFAULT_SPENDING,
    costs: Sequence[float] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> SequentialRun:
    """The sequential rule over a complete table whose rows are questions in the order a sweep
    would ask them (no model: a simulation, or a replay of a finished sweep). A question is
    judged at the ks still in when its batch comes; the run stops when a look settles or
    ``max_questions`` (default: every row) are used."""
    y = np.asarray(table, dtype=np.float64)
    chosen = [int(k) for k in ks]
    total = min(max_questions or y.shape[0], y.shape[0])
    if step < 1 or total < 1:
        raise InputError("needs a step >= 1 and at least one question", field="step")
    alpha = 1 - confidence
    active = list(range(len(chosen)))
    looks: list[Look] = []
    fractions: list[float] = []
    answers = used = 0
    found: Recommendation | None = None
    while used < total:
        batch = min(step, total - used)
        answers += batch * len(active)
        used += batch
        fractions.append(used / total)
        look, found = take_look(
            y[:used, active],
            [chosen[i] for i in active],
            alpha=nominal_alphas(fractions, alpha, spending)[-1],
            margin=margin,
            costs=None if costs is None else [costs[i] for i in active],
            n_resamples=n_resamples,
            seed=seed + len(looks),
        )
        looks.append(look)
        if look.recommended_k is not None:
            return SequentialRun(tuple(looks), "settled", found, used, answers)
        active = [i for i in active if chosen[i] not in look.eliminated]
    assert found is not None  # at least one look ran
    return SequentialRun(tuple(looks), "max_questions", found, used, answers)


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
