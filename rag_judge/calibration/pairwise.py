"""Agreement of judge score differences with human pairwise preferences.

For a pair (a, b) with judge scores s_a and s_b, the judge prefers a if s_a − s_b > margin,
b if s_a − s_b < −margin, and calls a tie otherwise (``tie_margin`` defaults to 0, so only
equal scores tie). Two figures, each with a bootstrap interval over pairs:

- **concordance**, over the pairs where the human preferred one side: 1 if the judge prefers
  the same side, 1/2 if the judge calls a tie, 0 if it prefers the other side (the
  Mann–Whitney treatment of ties, as in ROC AUC); human ties are left out of it and counted;
- **three_way_agreement**, over all compared pairs: the share where the judge's a/b/tie equals
  the human's a/b/tie.

Pairs where a side has no judge score are not compared; they are listed, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rag_judge.calibration._inputs import IntArray
from rag_judge.calibration.estimate import (
    BootstrapOptions,
    Estimate,
    StatisticValue,
    Undefined,
    bootstrap_estimate,
)
from rag_judge.calibration.labels import PairwisePreference, Preference
from rag_judge.core.errors import InputError


@dataclass(frozen=True)
class SkippedPair:
    """A pair that could not be compared, and why."""

    pair: PairwisePreference
    reason: str
    """E.g. "row 'q7' is not in the judge output" or "row 'q7' is unscored"."""


@dataclass(frozen=True)
class PairwiseAgreement:
    """How often judge score differences agree with human preferences."""

    concordance: Estimate
    """Over human-decisive pairs: agree 1, judge tie 1/2, disagree 0. Its ``n`` and resamples
    cover all compared pairs; a resample with only human ties is left out and counted."""
    three_way_agreement: Estimate
    """Over all compared pairs: judge's a/b/tie equals the human's."""
    n_pairs: int
    """Pairs given."""
    n_compared: int
    """Pairs with a judge score on both sides."""
    n_human_ties: int
    """Compared pairs the human called a tie (left out of ``concordance``)."""
    n_judge_ties: int
    """Compared pairs whose judge scores differ by at most the margin."""
    tie_margin: float
    skipped: tuple[SkippedPair, ...]
    """Pairs not compared, with the reason."""


def judge_preference(score_a: float, score_b: float, tie_margin: float = 0.0) -> Preference:
    """The judge's preference: "a" if s_a − s_b > margin, "b" if < −margin, else "tie"."""
    difference = score_a - score_b
    if difference > tie_margin:
        return "a"
    if difference < -tie_margin:
        return "b"
    return "tie"


def pairwise_agreement(
    pairs: Sequence[PairwisePreference],
    scores: Mapping[str, float | None],
    *,
    tie_margin: float = 0.0,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> PairwiseAgreement:
    """Compare human preferences with the judge's score differences (rules in the module doc).

    Args:
        pairs: Human preferences, e.g. from :func:`read_pairwise_labels`.
        scores: Judge score by row id, None for unscored rows (:meth:`JudgeScores.values`).
        tie_margin: Score differences up to this (inclusive) count as a judge tie; >= 0.
        confidence: Nominal coverage, strictly between 0 and 1.
        n_resamples: Number of bootstrap resamples of the pairs, at least 1.
        seed: Seed for ``numpy.random.default_rng``.

    Raises:
        InputError: If no pair can be compared, or ``tie_margin`` is negative or not finite.
    """
    if not (np.isfinite(tie_margin) and tie_margin >= 0):
        raise InputError(f"tie_margin must be >= 0, got {tie_margin}", field="tie_margin")
    human: list[Preference] = []
    judge: list[Preference] = []
    skipped: list[SkippedPair] = []
    for pair in pairs:
        score_a, score_b = scores.get(pair.id_a), scores.get(pair.id_b)
        if score_a is None or score_b is None:
            missing = pair.id_a if score_a is None else pair.id_b
            reason = "unscored" if missing in scores else "not in the judge output"
            skipped.append(SkippedPair(pair, f"row '{missing}' is {reason}"))
            continue
        human.append(pair.preferred)
        judge.append(judge_preference(score_a, score_b, tie_margin))
    if not human:
        raise InputError(f"none of the {len(pairs)} pairs has judge scores on both sides")
    h, j = np.array(human), np.array(judge)
    decisive = h != "tie"
    credit = np.where(j == h, 1.0, np.where(j == "tie", 0.5, 0.0))
    same = (h == j).astype(np.float64)
    options = BootstrapOptions(confidence=confidence, n_resamples=n_resamples, seed=seed)

    def concordance(idx: IntArray) -> StatisticValue:
        chosen = decisive[idx]
        if not chosen.any():
            return Undefined("every compared pair is a human tie; concordance needs a preference")
        return float(np.mean(credit[idx][chosen]))

    return PairwiseAgreement(
        concordance=bootstrap_estimate("pairwise_concordance", concordance, h.size, **options),
        three_way_agreement=bootstrap_estimate(
            "pairwise_three_way_agreement", lambda idx: float(np.mean(same[idx])), h.size, **options
        ),
        n_pairs=len(pairs),
        n_compared=int(h.size),
        n_human_ties=int(np.count_nonzero(~decisive)),
        n_judge_ties=int(np.count_nonzero(j == "tie")),
        tie_margin=float(tie_margin),
        skipped=tuple(skipped),
    )
