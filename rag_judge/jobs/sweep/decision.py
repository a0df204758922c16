"""The sweep's decision: which k to use, how sure that is, and what it rests on.

:func:`decide_frame` reads the per-question table: every (question, k) gets an objective value
(:mod:`~rag_judge.jobs.sweep.outcomes`: refusals are outcomes, failed calls leave the question
out of every k), the ks are compared on the same questions with simultaneous intervals, and the
recommendation is the cheapest k within the margin of the best, or "undecided between ..."
(:mod:`~rag_judge.jobs.sweep.recommend`). The :class:`Decision` says it in one sentence whose
numbers are the ones in its tables, and as JSON (``decision.json``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rag_judge.jobs.sweep.columns import ANSWER_TOKENS, ANSWERABLE, REFUSED
from rag_judge.jobs.sweep.outcomes import (
    ObjectiveTable,
    objective_table,
    values_answers,
    with_refusals,
)
from rag_judge.jobs.sweep.recommend import Recommendation, recommend
from rag_judge.jobs.sweep.refusals import REFUSAL_MEASURES, refusal_indicators
from rag_judge.jobs.sweep.sequential import SequentialRecord

DEFAULT_MARGIN = 0.05
"""How much worse than the best a recommended k may be, on the objective's 0..1 scale
(docs/concepts/statistics.md: why this default, from ``benchmarks/decision_quality.py``)."""
DEFAULT_CONFIDENCE = 0.95
"""Family-wise confidence of the decision's intervals."""
TOKENS_COST = "generator prompt tokens"
K_COST = "k (the generator's prompt tokens are unknown)"


@dataclass(frozen=True)
class Objective:
    """The objective k is chosen by, and why, when it is not the one asked for."""

    requested: str
    used: str | None
    """None when neither the request nor any fallback has a value."""
    note: str = ""
    """Why the requested objective was not used ("" when it was)."""


@dataclass(frozen=True)
class Decision:
    """Which k to use by the objective, or why none can be named yet."""

    objective: Objective
    recommendation: Recommendation | None = None
    """None when no objective could be computed."""
    excluded: Mapping[str, str] = field(default_factory=dict)
    """Questions left out of every k's comparison, with why."""
    refusals: Mapping[int, Mapping[str, float | None]] = field(default_factory=dict)
    """Per k, the shares of :data:`~rag_judge.jobs.sweep.refusals.REFUSAL_MEASURES` (over every
    row with an answer; None where no row counts)."""
    n_swept: int = 0
    """Questions swept (the decision uses those not excluded)."""
    cost_unit: str = TOKENS_COST
    """What a k's cost is: the generator's prompt tokens, or k itself when they are unknown."""
    sequential: SequentialRecord | None = None
    """A sweep until decided: its looks, the ks that went out, why it stopped (else None)."""

    @property
    def recommended_k(self) -> int | None:
        """The k to use; None when the data cannot yet name one."""
        return None if self.recommendation is None else self.recommendation.recommended_k

    @property
    def undecided_between(self) -> tuple[int, ...]:
        """The ks that could still be the best, when none is recommended."""
        return () if self.recommendation is None else self.recommendation.undecided_between

    @property
    def n_questions(self) -> int:
        """The questions the decision used (every k over the same ones)."""
        return 0 if self.recommendation is None else self.recommendation.n_questions

    @property
    def headline(self) -> str:
        """The decision in a few words: ``Use k = 4``, ``Undecided between k = 3, 4``, ``No k``."""
        if self.recommended_k is not None:
            return f"Use k = {self.recommended_k}"
        if len(self.undecided_between) == 1:
            return f"Undecided: k = {self.undecided_between[0]} leads, not yet within the margin"
        if self.undecided_between:
            return f"Undecided between k = {_ks(self.undecided_between)}"
        return "No k"

    @property
    def sentence(self) -> str:
        """The decision and its numbers in plain words (the same numbers as its tables)."""
        found, used = self.recommendation, self.objective.used
        if used is None:
            return self.objective.note or "No objective could be computed: no k."
        left_out = self.excluded_sentence()
        if found is None or found.n_questions == 0:
            return (
                f"No question has a value of {used} at every k, so no k can be named. {left_out}"
            ).strip()
        if not any(s.eligible for s in found.standings):
            return (
                f"Every answer to an answerable question was a refusal at every k: no k answers, "
                f"so none is recommended. {left_out}"
            ).strip()
        text = _decided(found, used) if found.recommended_k is not None else _undecided(found, used)
        run = "" if self.sequential is None else self.sequential.sentence()
        return " ".join(part for part in (text, left_out, run) if part)

    def excluded_sentence(self) -> str:
        """How many questions left every k's comparison, and why ("" when none did)."""
        if not self.excluded:
            return ""
        reasons = Counter(why.split(": ", 1)[-1] for why in self.excluded.values())
        counted = ", ".join(f"{n} {why}" for why, n in reasons.most_common())
        n = len(self.excluded)
        return (
            f"{n} of {self.n_swept} question{'s' * (self.n_swept != 1)} left every k's comparison "
            f"because a call failed or a judge could not score {'them' if n != 1 else 'it'} "
            f"({counted}); a failed call is not a refusal."
        )

    def to_json(self) -> dict[str, Any]:
        """The decision as ``decision.json`` holds it."""
        found = self.recommendation
        per_k = []
        for standing in () if found is None else found.standings:
            per_k.append(
                {
                    "k": standing.k,
                    "mean": _round(standing.mean),
                    "cost": _round(standing.cost, 1),
                    **{
                        m: _round(self.refusals.get(standing.k, {}).get(m))
                        for m in REFUSAL_MEASURES
                    },
                    "difference_to_reference": {
                        "estimate": _round(standing.difference),
                        "low": _round(standing.difference_low),
                        "high": _round(standing.difference_high),
                    },
                    "regret_bound": _round(standing.regret_bound),
                    "within_margin": standing.within_margin,
                    "could_be_best": standing.could_be_best,
                    "eligible": standing.eligible,
                }
            )
        return {
            "decision": self.headline,
            "sentence": self.sentence,
            "objective": self.objective.used,
            "objective_requested": self.objective.requested,
            "objective_note": self.objective.note,
            "recommended_k": self.recommended_k,
            "best_k_by_mean": None if found is None else found.best_k_by_mean,
            "reference_k": None if found is None else found.reference_k,
            "margin": None if found is None else found.margin,
            "confidence": None if found is None else found.confidence,
            "undecided_between": list(self.undecided_between),
            "questions_needed": None if found is None else found.questions_needed,
            "n_questions": self.n_questions,
            "n_swept": self.n_swept,
            "cost_unit": self.cost_unit,
            "excluded": dict(sorted(self.excluded.items())),
            "method": None if found is None else found.method,
            "critical_value": None if found is None else _round(found.critical),
            "per_k": per_k,
            "sequential": None if self.sequential is None else self.sequential.as_json(),
        }


def decide_frame(
    frame: pd.DataFrame,
    objective: Objective,
    ks: Sequence[int],
    *,
    margin: float = DEFAULT_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Decision:
    """Decide k from a sweep's per-question table by ``objective.used`` (see the module
    docstring); with no objective, a decision that names no k."""
    frame = with_refusals(frame)  # a table written before the column: read from the answers
    n_swept = int(frame["question_id"].nunique()) if len(frame) else 0
    refusals = refusal_shares(frame)
    if objective.used is None:
        return Decision(objective, refusals=refusals, n_swept=n_swept)
    table = objective_table(frame, objective.used)
    chosen = [k for k in ks if k in table.ks] or list(table.ks)
    costs, unit = _costs(frame, table, chosen)
    found = recommend(
        table.values[chosen].to_numpy(dtype=float),
        chosen,
        costs=costs,
        eligible=_eligible(frame, table, chosen),
        margin=margin,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    return Decision(objective, found, table.excluded, refusals, n_swept, unit)


def refusal_shares(frame: pd.DataFrame) -> dict[int, dict[str, float | None]]:
    """Per k, the mean of each refusal indicator (None where no row counts)."""
    if not len(frame) or REFUSED not in frame.columns:
        return {}
    indicators = refusal_indicators(frame).assign(k=frame["k"].to_numpy())
    out: dict[int, dict[str, float | None]] = {}
    for k, rows in indicators.groupby("k", sort=True):
        out[int(str(k))] = {
            m: (None if rows[m].notna().sum() == 0 else float(rows[m].mean()))
            for m in REFUSAL_MEASURES
        }
    return out


def _costs(
    frame: pd.DataFrame, table: ObjectiveTable, ks: Sequence[int]
) -> tuple[list[float], str]:
    """Per k, the mean generator prompt tokens over the decision's questions, and the unit; k
    itself when the tokens are unknown (the user's RAG answered)."""
    kept = frame[frame["question_id"].isin(table.values.index)]
    tokens = kept.groupby("k")[ANSWER_TOKENS].mean() if ANSWER_TOKENS in kept.columns else None
    if tokens is None or any(pd.isna(tokens.get(k)) for k in ks):
        return [float(k) for k in ks], K_COST
    return [float(tokens[k]) for k in ks], TOKENS_COST


def _eligible(frame: pd.DataFrame, table: ObjectiveTable, ks: Sequence[int]) -> list[bool]:
    """A k that refused every answerable question of the decision is never recommended."""
    if not values_answers(table.objective) or REFUSED not in frame.columns:
        return [True] * len(ks)
    kept = frame[frame["question_id"].isin(table.values.index)]
    if ANSWERABLE in kept.columns:
        kept = kept[kept[ANSWERABLE].fillna(True).astype(bool)]
    if kept.empty:
        return [True] * len(ks)
    refused_all = kept.groupby("k")[REFUSED].apply(lambda s: bool(s.fillna(False).all()))
    return [not bool(refused_all.get(k, False)) for k in ks]


def _decided(found: Recommendation, used: str) -> str:
    k = found.recommended_k
    assert k is not None  # the caller checked
    chosen, best = found.standing(k), found.best_k_by_mean
    head = (
        f"k={k} is the cheapest k whose {used} is within {found.margin:g} of the best: with "
        f"{found.confidence:.0%} confidence across all {len(found.standings)} ks, no k is better "
        f"by more than {chosen.regret_bound:.3f}."
    )
    n = found.n_questions
    means = f"Over the same {n} question{'s' * (n != 1)}, k={k} has a mean of {chosen.mean:.3f}"
    if best is None or best == k:
        return f"{head} {means}, the highest."
    other = found.standing(best)
    return (
        f"{head} {means}; the highest mean is k={best}'s, {other.mean:.3f} "
        f"(k={best} − k={k}: {other.difference:+.3f}, simultaneous CI "
        f"[{other.difference_low:+.3f}, {other.difference_high:+.3f}])."
    )


def _undecided(found: Recommendation, used: str) -> str:
    n = found.n_questions
    candidates = found.undecided_between
    head = (
        f"{n} question{'s' * (n != 1)} cannot yet tell which of k = {_ks(candidates)} is best "
        f"by {used}: no k is confirmed within {found.margin:g} of the best with "
        f"{found.confidence:.0%} confidence across all {len(found.standings)} ks."
        if len(candidates) > 1
        else f"k={candidates[0]} could be the best by {used}, but {n} questions cannot confirm "
        f"it within {found.margin:g} of every other k with {found.confidence:.0%} confidence."
    )
    best = found.best_k_by_mean
    lean = (
        ""
        if best is None
        else f" The highest mean so far is k={best}'s, {found.standing(best).mean:.3f}."
    )
    more = ""
    if found.questions_needed is not None:
        extra = found.questions_needed - n
        more = (
            f" At least about {found.questions_needed} questions in all ({extra} more) would "
            "settle it: that is if the differences stayed as measured, and a lead seen in few "
            "questions tends to shrink."
        )
    return head + lean + more


def _ks(ks: Sequence[int]) -> str:
    return ", ".join(str(k) for k in ks)


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(float(value), digits) + 0.0  # no "-0.0"
