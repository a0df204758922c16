"""The sweep's decision as a record: which k to use, how sure that is, what it rests on.

A :class:`Decision` says it in one sentence whose numbers are the ones in its tables, and as
JSON (``decision.json``); :mod:`~rag_judge.jobs.sweep.decision.decide` makes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_judge.jobs.sweep.decision.arms import ArmNames
from rag_judge.jobs.sweep.decision.defaults import ALL_REFUSED, MIN_QUESTIONS
from rag_judge.jobs.sweep.decision.looks import SweepLooks
from rag_judge.jobs.sweep.decision.objective import ObjectiveChoice
from rag_judge.jobs.sweep.decision.recommend import Recommendation
from rag_judge.jobs.sweep.decision.refusals import REFUSAL_MEASURES
from rag_judge.jobs.sweep.decision.sequential import SequentialRecord

TOKENS_COST = "generator prompt tokens"
MANY_ARMS = 3
"""A headline names this many arms still in at most, then counts the rest."""
K_COST = "k (the generator's prompt tokens are unknown)"


@dataclass(frozen=True)
class Decision:
    """Which k to use by the objective, or why none can be named yet."""

    objective: ObjectiveChoice
    recommendation: Recommendation | None = None
    """None when no objective could be computed."""
    excluded: Mapping[str, str] = field(default_factory=dict)
    """Questions with no value at any k, left out of the comparison, with why."""
    refusals: Mapping[int, Mapping[str, float | None]] = field(default_factory=dict)
    """Per k, the shares of :data:`~rag_judge.jobs.sweep.decision.refusals.REFUSAL_MEASURES`
    (over every row with an answer; None where no row counts)."""
    n_swept: int = 0
    """Questions swept."""
    cost_unit: str = TOKENS_COST
    """What a k's cost is: the generator's prompt tokens, or k itself when they are unknown."""
    sequential: SequentialRecord | None = None
    """A sweep until decided: its looks, the ks that went out, why it stopped (else None)."""
    failures: Mapping[int, float] = field(default_factory=dict)
    """Per k, the share of the compared questions it has no value for (a failed call, or a
    judge that could not score it)."""
    not_compared: Mapping[int, str] = field(default_factory=dict)
    """Ks with no value at any question, left out of the comparison, with why."""
    looks: SweepLooks | None = None
    """Every look of this sweep's test, this one included (None: a decision outside the job's
    record, whose confidence holds for this look alone)."""
    looks_note: str = ""
    """Why this look is not a new look of the test, or why there is no record ("" when it is
    one)."""
    names: ArmNames = field(default_factory=ArmNames)
    """How the compared columns are named: ks, or a configuration sweep's arms (whose numbers
    are what :attr:`recommended_arm`, :attr:`undecided_between` and the standings hold)."""

    @property
    def recommended_arm(self) -> int | None:
        """The recommended column's number: the k itself in a k-sweep, the arm's number in a
        configuration sweep; None when the data cannot yet name one."""
        return None if self.recommendation is None else self.recommendation.recommended_k

    @property
    def recommended_k(self) -> int | None:
        """The k to use (in a configuration sweep, the recommended arm's k: its configuration is
        :attr:`recommended_configuration`); None when the data cannot yet name one."""
        chosen = self.recommended_arm
        return chosen if chosen is None or not self.names.arms else self.names.arms[chosen].k

    @property
    def recommended_configuration(self) -> str | None:
        """A configuration sweep's recommended configuration (None in a k-sweep, or undecided)."""
        chosen = self.recommended_arm
        return (
            None if chosen is None or not self.names.arms else self.names.arms[chosen].configuration
        )

    @property
    def undecided_between(self) -> tuple[int, ...]:
        """The ks that could still be recommended, when none is."""
        return () if self.recommendation is None else self.recommendation.undecided_between

    @property
    def n_questions(self) -> int:
        """The questions the decision compared the ks on."""
        return 0 if self.recommendation is None else self.recommendation.n_questions

    @property
    def confidence(self) -> float | None:
        """The confidence the decision holds at over every look of its test (this look's own
        when it has no test)."""
        if self.looks is not None:
            return self.looks.confidence
        return None if self.recommendation is None else self.recommendation.confidence

    @property
    def headline(self) -> str:
        """The decision in a few words: ``Use k = 4``, ``Undecided between k = 3, 4``, ``No k``."""
        names = self.names
        if names.arms:
            if self.recommended_arm is not None:
                return f"Use {names.one(self.recommended_arm)}"
            if len(self.undecided_between) == 1:
                lead = names.one(self.undecided_between[0])
                return f"Undecided: {lead} leads, not yet within the margin"
            between = self.undecided_between
            if len(between) > MANY_ARMS:
                shown = names.many(between[:MANY_ARMS])
                return f"Undecided between {len(between)} arms ({shown}; ...)"
            if between:
                return f"Undecided between {names.many(between)}"
            return "No configuration"
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
                f"No question has a value of {used} at any {self.names.noun}, so no "
                f"{self.names.noun} can be named. {left_out}"
            ).strip()
        if all(s.why_not_eligible.startswith(ALL_REFUSED) for s in found.standings):
            return (
                "Every answer to an answerable question was a refusal at every k: no k answers, "
                f"so none is recommended. {left_out}"
            ).strip()
        if not any(s.eligible for s in found.standings):
            return " ".join(
                part
                for part in (
                    f"No {self.names.noun} may be recommended.",
                    self.flags_sentence(),
                    left_out,
                )
                if part
            )
        confidence = self.confidence or found.confidence
        if found.recommended_k is not None:
            text = _decided(found, used, confidence, self.names)
        else:
            text = _undecided(found, used, confidence, self.names)
        run = "" if self.sequential is None else self.sequential.sentence(self.names)
        parts = (text, self.flags_sentence(), left_out, self.looks_sentence(), run)
        return " ".join(part for part in parts if part)

    def flags_sentence(self) -> str:
        """The ks judged on fewer questions, and those that may not be recommended, and why."""
        found = self.recommendation
        if found is None:
            return ""
        parts = []
        for standing in found.standings:
            missing = found.n_questions - standing.n
            if missing and standing.eligible:
                parts.append(
                    f"{self.names.one(standing.k)} has no value for {missing} of the "
                    f"{found.n_questions} "
                    f"questions (a failed call or an unscored answer) and is judged on the "
                    f"{standing.n} it has."
                )
        barred = [s for s in found.standings if not s.eligible]
        if barred:
            reasons = "; ".join(f"{self.names.one(s.k)}: {s.why_not_eligible}" for s in barred)
            parts.append(f"Not recommended: {reasons}.")
        if self.not_compared:
            gone = "; ".join(
                f"{self.names.one(k)}: {why}" for k, why in sorted(self.not_compared.items())
            )
            parts.append(f"Not compared: {gone}.")
        return " ".join(parts)

    def excluded_sentence(self) -> str:
        """How many questions left the comparison, and why ("" when none did)."""
        if not self.excluded:
            return ""
        reasons = Counter(why.split(": ", 1)[-1] for why in self.excluded.values())
        counted = ", ".join(f"{n} {why}" for why, n in reasons.most_common())
        n = len(self.excluded)
        return (
            f"{n} of {self.n_swept} question{'s' * (self.n_swept != 1)} had no value at any "
            f"{self.names.noun} "
            f"because a call failed or a judge could not score {'them' if n != 1 else 'it'} "
            f"({counted}); a failed call is not a refusal."
        )

    def looks_sentence(self) -> str:
        """Which look of the sweep's test this is, and the error spent ("" without a test)."""
        if self.looks_note:
            return self.looks_note
        test = self.looks
        if test is None or not test.taken:
            return ""
        looks = test.taken
        if len(looks) == 1:
            return (
                f"This is the first look of this sweep's test (level {looks[0].alpha:.3g} of its "
                f"{test.alpha:.3g}); a re-run with more questions looks again within the same "
                f"{test.confidence:.0%}."
            )
        sizes = ", ".join(str(look.n_questions) for look in looks)
        levels = ", ".join(f"{look.alpha:.3g}" for look in looks)
        return (
            f"This sweep's test has looked {len(looks)} times (at {sizes} questions, levels "
            f"{levels}): every look together holds with {test.confidence:.0%} confidence."
        )

    def to_json(self) -> dict[str, Any]:
        """The decision as ``decision.json`` holds it."""
        found = self.recommendation
        per_k = [self._k_json(s.k) for s in (() if found is None else found.standings)]
        grid = self._grid_json()
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
            "confidence": _round(self.confidence),
            "look_confidence": None if found is None else _round(found.confidence),
            "undecided_between": list(self.undecided_between),
            "too_few_questions": None if found is None else found.too_few,
            "questions_needed": None if found is None else found.questions_needed,
            "settle_probability": None if found is None else _round(found.settle_probability, 3),
            "n_questions": self.n_questions,
            "n_swept": self.n_swept,
            "cost_unit": self.cost_unit,
            "excluded": dict(sorted(self.excluded.items())),
            "not_compared": {str(k): why for k, why in sorted(self.not_compared.items())},
            "method": None if found is None else found.method,
            "critical_value": None if found is None else _round(found.critical),
            "per_k": per_k,
            "looks": None if self.looks is None else self.looks.as_json(),
            "looks_note": self.looks_note,
            "sequential": None if self.sequential is None else self.sequential.as_json(),
            **grid,
        }

    def _grid_json(self) -> dict[str, Any]:
        """A configuration sweep's fields: its ks as ks and its arms by configuration (the
        k-sweep's own fields keep the arms' numbers: ``undecided_between`` and the looks)."""
        names, found = self.names, self.recommendation
        if not names.arms:
            return {}

        def arm(key: int | None) -> dict[str, Any]:
            return names.as_json(key) if key is not None else {}

        picks = {
            "recommended": self.recommended_arm,
            "best_by_mean": None if found is None else found.best_k_by_mean,
            "reference": None if found is None else found.reference_k,
        }
        return {
            "recommended_k": arm(picks["recommended"]).get("k"),
            "recommended_configuration": arm(picks["recommended"]).get("configuration"),
            "recommended_arm": picks["recommended"],
            "best_k_by_mean": arm(picks["best_by_mean"]).get("k"),
            "best_configuration_by_mean": arm(picks["best_by_mean"]).get("configuration"),
            "best_arm_by_mean": picks["best_by_mean"],
            "reference_k": arm(picks["reference"]).get("k"),
            "reference_arm": picks["reference"],
            "undecided_between_arms": [names.as_json(key) for key in self.undecided_between],
        }

    def _k_json(self, k: int) -> dict[str, Any]:
        found = self.recommendation
        assert found is not None  # the caller iterates its standings
        standing = found.standing(k)
        return {
            "k": standing.k,
            **self.names.as_json(standing.k),
            "mean": _round(standing.mean),
            "n": standing.n,
            "failure_share": _round(self.failures.get(k, 0.0)),
            "cost": _round(standing.cost, 1),
            **{m: _round(self.refusals.get(k, {}).get(m)) for m in REFUSAL_MEASURES},
            "difference_to_best_other": {
                "estimate": _round(standing.difference),
                "low": _round(standing.difference_low),
                "high": _round(standing.difference_high),
            },
            "regret_bound": _round(standing.regret_bound),
            "shortfall_low": _round(standing.shortfall_low),
            "within_margin": standing.within_margin,
            "could_be_best": standing.could_be_best,
            "candidate": standing.candidate,
            "eligible": standing.eligible,
            "why_not_eligible": standing.why_not_eligible,
        }


def _decided(found: Recommendation, used: object, confidence: float, names: ArmNames) -> str:
    k = found.recommended_k
    assert k is not None  # the caller checked
    chosen, best = found.standing(k), found.best_k_by_mean
    n, noun, it = found.n_questions, names.noun, names.one(k)
    head = (
        f"{it} is the cheapest {noun} whose {used} is within {found.margin:g} of the best: with "
        f"{confidence:.0%} confidence, comparing each of the {len(found.standings)} "
        f"{names.nouns} with the best, no {noun} is better than {it} by more than "
        f"{chosen.regret_bound:.3f}."
    )
    means = f"Over {n} question{'s' * (n != 1)}, {it} has a mean of {chosen.mean:.3f}"
    if best is None or best == k:
        return f"{head} {means}, the highest."
    return f"{head} {means}; the highest is {names.one(best)}'s, {found.standing(best).mean:.3f}."


def _undecided(found: Recommendation, used: object, confidence: float, names: ArmNames) -> str:
    n = found.n_questions
    candidates = found.undecided_between
    best = found.best_k_by_mean
    lean = (
        ""
        if best is None
        else f" The highest mean so far is {names.one(best)}'s, {found.standing(best).mean:.3f}."
    )
    if found.too_few:
        return (
            f"{n} question{'s' * (n != 1)} are too few for a decision: the rule needs at least "
            f"{MIN_QUESTIONS} to keep its {confidence:.0%} confidence.{lean}"
        )
    if len(candidates) > 1:
        if not names.arms:
            which = f"k = {_ks(candidates)}"
        elif len(candidates) > MANY_ARMS:
            which = (
                f"the {len(candidates)} arms still in ({names.many(candidates[:MANY_ARMS])}; ...: "
                "every one in decision.json)"
            )
        else:
            which = names.many(candidates)
        head = (
            f"{n} questions cannot yet tell which of {which} is within "
            f"{found.margin:g} of the best by {used}: none is confirmed with {confidence:.0%} "
            f"confidence (each {names.noun} compared with the best), and none of them is shown "
            f"more than {found.margin:g} below another."
        )
    else:
        head = (
            f"{names.one(candidates[0])} could be within {found.margin:g} of the best by "
            f"{used}, but {n} questions cannot confirm it with {confidence:.0%} confidence."
        )
    return head + lean + _plan_sentence(found)


def _plan_sentence(found: Recommendation) -> str:
    """What the simulation says more questions would do ("" when it was not asked)."""
    if found.questions_needed is not None and found.settle_probability is not None:
        extra = found.questions_needed - found.n_questions
        return (
            f" With {found.settle_probability:.0%} probability about {found.questions_needed} "
            f"questions in all ({extra} more) would settle it: the rule simulated at that size, "
            "at the level a further look would have, the leads shrunk for the winner's curse."
        )
    return ""


def _ks(ks: Sequence[int]) -> str:
    return ", ".join(str(k) for k in ks)


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(float(value), digits) + 0.0  # no "-0.0"
