"""The sweep's decision as a record: which k to use, how sure that is, what it rests on.

A :class:`Decision` says it in one sentence whose numbers are the ones in its tables, and as
JSON (``decision.json``); :mod:`~rag_judge.jobs.sweep.decision.decide` makes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_judge.jobs.sweep.decision.objective import ObjectiveChoice
from rag_judge.jobs.sweep.decision.recommend import Recommendation
from rag_judge.jobs.sweep.decision.refusals import REFUSAL_MEASURES
from rag_judge.jobs.sweep.decision.sequential import SequentialRecord

TOKENS_COST = "generator prompt tokens"
K_COST = "k (the generator's prompt tokens are unknown)"


@dataclass(frozen=True)
class Decision:
    """Which k to use by the objective, or why none can be named yet."""

    objective: ObjectiveChoice
    recommendation: Recommendation | None = None
    """None when no objective could be computed."""
    excluded: Mapping[str, str] = field(default_factory=dict)
    """Questions left out of every k's comparison, with why."""
    refusals: Mapping[int, Mapping[str, float | None]] = field(default_factory=dict)
    """Per k, the shares of :data:`~rag_judge.jobs.sweep.decision.refusals.REFUSAL_MEASURES`
    (over every row with an answer; None where no row counts)."""
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
            "objective": None if self.objective.used is None else str(self.objective.used),
            "objective_requested": str(self.objective.requested),
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


def _decided(found: Recommendation, used: object) -> str:
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


def _undecided(found: Recommendation, used: object) -> str:
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
