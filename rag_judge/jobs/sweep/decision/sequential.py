"""Deciding sooner: a run ``--until-decided`` looks after every batch of questions, drops the ks
that are out, and stops when the rule settles.

Each look is one more of the sweep's looks (:class:`~rag_judge.jobs.sweep.decision.looks.
SweepLooks`), at the level they leave it. Elimination rests on the same bounds as the decision:
a k is out when another is shown better by more than the margin, or a k that costs no more is
shown better at all; on the event the bounds hold, the best k is never out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.core.best import compare_with_best
from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep.decision.arms import ArmNames
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SPENDING,
    DEFAULT_STEP,
    Spending,
)
from rag_judge.jobs.sweep.decision.looks import SweepLooks, correlations_of
from rag_judge.jobs.sweep.decision.recommend import Recommendation, recommend


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
        shown = -bounds.upper.T  # [j, k]: mu_j - mu_k is above this
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
    new one of ``horizon`` questions, default every row).

    Three ks whose questions share their ease, k = 1 plainly worse: it goes out at the first
    look, and the run settles on k = 2 after 80 of 300 questions, 180 answers instead of 900:

    >>> rng = np.random.default_rng(0)
    >>> ease = rng.uniform(size=(300, 1))
    >>> y = (0.5 * rng.uniform(size=(300, 3)) + 0.5 * ease < [0.3, 0.7, 0.55]).astype(float)
    >>> run = replay_sequential(y, [1, 2, 3], margin=0.05, step=20, n_resamples=300)
    >>> run.stop, run.questions_used, run.recommendation.recommended_k, run.answers_used
    ('settled', 80, 2, 180)
    >>> [look.eliminated for look in run.looks]
    [(1,), (), (), (3,)]
    """
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

    def sentence(self, names: ArmNames | None = None) -> str:
        """What the run did, in words (the columns named by ``names``: ks by default)."""
        names = names or ArmNames()
        why = {
            "settled": "the rule settled",
            "budget": f"its budget ({self.budget}) was spent, or would be by the next batch",
            "max_questions": "it had used every question it was allowed",
        }[self.stop]
        gone = self.eliminated_at()
        out = (
            "; ".join(
                f"{names.one(k)} went out after {n} questions" for k, n in sorted(gone.items())
            )
            if gone
            else f"no {names.noun} went out"
        )
        saved = 1 - self.answers_used / self.answers_fixed if self.answers_fixed else 0.0
        return (
            f"Until decided: {self.questions_used} of at most {self.max_questions} questions in "
            f"{len(self.looks)} looks, stopped because {why}; {out}. It generated and judged "
            f"{self.answers_used:,} answers, {saved:.0%} fewer than a fixed sweep of "
            f"{self.max_questions} questions at every {names.noun}. The error is spent across the "
            f"looks ({self.spending.replace('_', '-')} spending), so every elimination and this "
            f"decision hold together with {self.confidence:.0%} confidence."
        )
