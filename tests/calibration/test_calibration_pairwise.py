"""Tests for the agreement of judge score differences with human pairwise preferences."""

from __future__ import annotations

import pytest

from rag_judge.calibration import PairwisePreference, judge_preference, pairwise_agreement
from rag_judge.core.errors import InputError

SCORES: dict[str, float | None] = {"q1": 0.9, "q2": 0.5, "q3": 0.5, "q4": None}
PAIRS = [
    PairwisePreference("q1", "q2", "a"),  # judge a: agrees (1)
    PairwisePreference("q2", "q3", "a"),  # judge tie: half (0.5)
    PairwisePreference("q2", "q1", "a"),  # judge b: disagrees (0)
    PairwisePreference("q1", "q3", "tie"),  # human tie, judge a: not in concordance; 3-way no
    PairwisePreference("q2", "q3", "tie"),  # human tie, judge tie: 3-way yes
    PairwisePreference("q1", "q4", "a"),  # q4 unscored: skipped
    PairwisePreference("q9", "q1", "b"),  # q9 not judged: skipped
]


def test_pairwise_agreement_by_hand() -> None:
    got = pairwise_agreement(PAIRS, SCORES, n_resamples=100)
    assert got.concordance.estimate == pytest.approx((1 + 0.5 + 0) / 3)
    assert got.three_way_agreement.estimate == pytest.approx(2 / 5)
    assert (got.n_pairs, got.n_compared, got.n_human_ties, got.n_judge_ties) == (7, 5, 2, 2)
    assert got.concordance.n == 5
    assert [s.reason for s in got.skipped] == [
        "row 'q4' is unscored",
        "row 'q9' is not in the judge output",
    ]
    assert got == pairwise_agreement(PAIRS, SCORES, n_resamples=100)


def test_tie_margin_turns_small_differences_into_ties() -> None:
    assert judge_preference(0.9, 0.88) == "a"
    assert judge_preference(0.9, 0.88, tie_margin=0.05) == "tie"
    assert judge_preference(0.8, 0.9, tie_margin=0.05) == "b"
    assert judge_preference(0.5, 0.5) == "tie"
    pairs = [PairwisePreference("x", "y", "a")]
    got = pairwise_agreement(pairs, {"x": 0.9, "y": 0.88}, tie_margin=0.05, n_resamples=10)
    assert got.concordance.estimate == 0.5


def test_only_human_ties_leave_concordance_undefined() -> None:
    pairs = [PairwisePreference("q1", "q2", "tie")]
    got = pairwise_agreement(pairs, SCORES, n_resamples=10)
    assert got.concordance.estimate is None
    assert got.concordance.reason is not None
    assert "human tie" in got.concordance.reason
    assert got.three_way_agreement.estimate == 0.0


def test_pairwise_errors() -> None:
    with pytest.raises(InputError, match="none of the 1 pairs"):
        pairwise_agreement([PairwisePreference("q1", "q4", "a")], SCORES)
    with pytest.raises(InputError, match="tie_margin"):
        pairwise_agreement(PAIRS, SCORES, tie_margin=-0.1)
