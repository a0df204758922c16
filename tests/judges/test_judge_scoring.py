"""The pure scoring functions, with each expected value derived by hand in a comment."""

from __future__ import annotations

import pytest

from rag_judge.core.types import ClaimVerdict
from rag_judge.judges.scoring import (
    answer_relevancy_score,
    average_precision,
    context_utilization,
    first_supporting_rank,
    noise_sensitivity,
    precision_by_k,
    recall_by_k,
    supported_fraction,
    useful_chunks,
)


def v(label: str | None, *chunks: int, claim: str = "c") -> ClaimVerdict:
    return ClaimVerdict(claim=claim, verdict=label, chunks=chunks)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([], None),  # no claims: no score, not 0 and not 1
        ([v("supported", 1)], 1.0),
        ([v("contradicted", 1)], 0.0),
        ([v("supported", 1), v("not_mentioned"), v("contradicted", 2)], 1 / 3),
        ([v(None)], 0.0),  # a claim without a verdict is not supported
    ],
)
def test_supported_fraction(verdicts: list[ClaimVerdict], expected: float | None) -> None:
    assert supported_fraction(verdicts) == expected


@pytest.mark.parametrize(
    ("verdict", "k_max", "expected"),
    [
        (v("supported", 3, 2), 5, 2),  # the best supporting rank
        (v("supported"), 4, 4),  # supported, no passage named: only the whole set is credited
        (v("supported", 7), 5, 5),  # passage numbers beyond K are ignored
        (v("not_mentioned"), 5, None),
        (v("contradicted", 1), 5, None),
    ],
)
def test_first_supporting_rank(verdict: ClaimVerdict, k_max: int, expected: int | None) -> None:
    assert first_supporting_rank(verdict, k_max) == expected


def test_recall_by_k_grows_with_k_and_ends_at_full_recall() -> None:
    # claims first supported at ranks 1, 3, never, 3 -> 1/4, 1/4, 3/4, 3/4
    grid = [v("supported", 1), v("supported", 3, 4), v("not_mentioned"), v("supported", 3)]
    assert recall_by_k(grid, 4) == {1: 0.25, 2: 0.25, 3: 0.75, 4: 0.75}
    assert recall_by_k([], 4) == {}
    assert recall_by_k(grid, 0) == {}


def test_useful_chunks_and_average_precision() -> None:
    grid = [v("supported", 2), v("supported", 4, 2), v("contradicted", 1), v("not_mentioned")]
    useful = useful_chunks(grid, 4)
    assert useful == [False, True, False, True]  # contradicting passage 1 is not useful
    # AP = (1/2 + 2/4) / 2 = 0.5
    assert average_precision(useful) == 0.5
    assert precision_by_k(useful) == {1: 0.0, 2: 0.5, 3: 0.5, 4: 0.5}


@pytest.mark.parametrize(
    ("useful", "expected"),
    [
        ([], 0.0),
        ([False, False], 0.0),  # nothing useful retrieved: a real 0
        ([True, True], 1.0),
        ([True, False, True], (1 + 2 / 3) / 2),
        ([False, False, True], 1 / 3),
    ],
)
def test_average_precision(useful: list[bool], expected: float) -> None:
    assert average_precision(useful) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("sims", "noncommittal", "policy", "expected"),
    [
        ([0.8, 0.6, 1.0], False, "zero", 0.8),
        ([-0.2, 0.1], False, "zero", 0.0),  # mean -0.05 clamped to 0
        ([1.2], False, "zero", 1.0),  # clamped to 1
        ([0.9], True, "zero", 0.0),
        ([0.9], True, "unscored", None),
        ([0.9], True, "ignore", 0.9),
        ([], False, "zero", None),
    ],
)
def test_answer_relevancy_score(
    sims: list[float], noncommittal: bool, policy: str, expected: float | None
) -> None:
    got = answer_relevancy_score(sims, noncommittal=noncommittal, policy=policy)  # type: ignore[arg-type]
    assert got == (None if expected is None else pytest.approx(expected))


def test_context_utilization() -> None:
    in_ctx = [
        v("supported", 1, claim="a"),
        v("supported", 2, claim="b"),
        v("not_mentioned", claim="c"),
    ]
    in_ans = [
        v("supported", 1, claim="a"),
        v("not_mentioned", claim="b"),
        v("supported", 1, claim="c"),
    ]
    # available in contexts: a, b; stated by the answer: a -> 1/2 (c does not count)
    assert context_utilization(in_ctx, in_ans) == 0.5
    assert context_utilization([v("not_mentioned", claim="a")], [v("supported", claim="a")]) is None
    with pytest.raises(ValueError, match="same claims"):
        context_utilization([v("supported", claim="a")], [v("supported", claim="b")])


def test_noise_sensitivity() -> None:
    vs_ctx = [
        v("supported", 1, claim="a"),
        v("supported", 2, claim="b"),
        v("not_mentioned", claim="c"),
    ]
    vs_ref = [
        v("supported", 1, claim="a"),
        v("contradicted", 1, claim="b"),
        v("not_mentioned", claim="c"),
    ]
    # only b is wrong (not in the reference) yet in a context -> 1/3
    assert noise_sensitivity(vs_ctx, vs_ref) == pytest.approx(1 / 3)
    assert noise_sensitivity([], []) is None
