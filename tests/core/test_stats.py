"""Tests for rag_judge.core.stats: paired bootstrap intervals, McNemar and randomization tests."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import stats as scipy_stats

from rag_judge.core import stats
from rag_judge.core.errors import InputError
from rag_judge.core.stats import (
    ConfidenceInterval,
    bootstrap_mean_ci,
    mcnemar_exact,
    paired_bootstrap_ci,
    paired_randomization_test,
)


def _normal_sample(n: int = 400, seed: int = 12345) -> NDArray[np.float64]:
    return np.random.default_rng(seed).normal(loc=0.4, scale=0.2, size=n)


def _mcnemar_table(
    both: int, a_only: int, b_only: int, neither: int
) -> tuple[list[int], list[int]]:
    """Build paired 0/1 outcomes with the given 2x2 counts (a_only = a right and b wrong)."""
    a = [1] * both + [1] * a_only + [0] * b_only + [0] * neither
    b = [1] * both + [0] * a_only + [1] * b_only + [0] * neither
    return a, b


# --- bootstrap_mean_ci ------------------------------------------------------------------------


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    x = _normal_sample()
    assert bootstrap_mean_ci(x, seed=7) == bootstrap_mean_ci(x, seed=7)


def test_bootstrap_different_seeds_differ_slightly() -> None:
    x = _normal_sample()
    first = bootstrap_mean_ci(x, seed=0)
    second = bootstrap_mean_ci(x, seed=1)
    width = first.high - first.low
    assert (first.low, first.high) != (second.low, second.high)
    assert first.estimate == second.estimate
    assert abs(first.low - second.low) < 0.1 * width
    assert abs(first.high - second.high) < 0.1 * width


def test_bootstrap_estimate_is_the_mean_and_inside_the_interval() -> None:
    x = _normal_sample()
    ci = bootstrap_mean_ci(x, confidence=0.9)
    assert ci.estimate == pytest.approx(float(np.mean(x)), rel=1e-15)
    assert ci.low <= ci.estimate <= ci.high
    assert ci.confidence == 0.9
    assert ci.n == 400
    assert "percentile bootstrap" in ci.method
    assert "2000 resamples" in ci.method


def test_bootstrap_matches_normal_theory_for_a_large_normal_sample() -> None:
    x = _normal_sample()
    ci = bootstrap_mean_ci(x, n_resamples=4000)
    half_width = 1.96 * float(np.std(x, ddof=1)) / math.sqrt(x.size)
    width = 2 * half_width
    assert ci.low == pytest.approx(float(np.mean(x)) - half_width, abs=0.05 * width)
    assert ci.high == pytest.approx(float(np.mean(x)) + half_width, abs=0.05 * width)


def test_bootstrap_matches_scipy_percentile_bootstrap() -> None:
    x = _normal_sample()
    ci = bootstrap_mean_ci(x, n_resamples=4000)
    reference = scipy_stats.bootstrap(
        (x,), np.mean, method="percentile", n_resamples=4000, rng=np.random.default_rng(99)
    ).confidence_interval
    width = reference.high - reference.low
    assert ci.low == pytest.approx(reference.low, abs=0.05 * width)
    assert ci.high == pytest.approx(reference.high, abs=0.05 * width)


def test_bootstrap_result_does_not_depend_on_the_block_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x = _normal_sample(n=50)
    whole = bootstrap_mean_ci(x, n_resamples=300)
    monkeypatch.setattr(stats, "_CHUNK_ELEMENTS", 70)  # one row at a time, and odd-sized blocks
    assert bootstrap_mean_ci(x, n_resamples=300) == whole


def test_bootstrap_of_constant_input_has_zero_width() -> None:
    ci = bootstrap_mean_ci([0.3] * 17)
    assert ci.low == ci.high == ci.estimate
    assert ci.estimate == pytest.approx(0.3)


def test_bootstrap_of_a_single_value_is_degenerate() -> None:
    ci = bootstrap_mean_ci([0.25])
    assert (ci.estimate, ci.low, ci.high, ci.n) == (0.25, 0.25, 0.25, 1)


def test_bootstrap_accepts_bools_and_arrays() -> None:
    assert bootstrap_mean_ci([True, False, True, True]).estimate == 0.75
    assert bootstrap_mean_ci(np.array([1, 2, 3], dtype=np.int32)).estimate == 2.0


def test_bootstrap_huge_values_do_not_overflow() -> None:
    ci = bootstrap_mean_ci([1.5e308, 1.7e308, 1.6e308])
    assert all(math.isfinite(v) for v in (ci.estimate, ci.low, ci.high))
    assert ci.estimate == pytest.approx(1.6e308)


def test_confidence_interval_str_has_four_decimals() -> None:
    ci = ConfidenceInterval(0.41234, 0.38012, 0.44661, 0.95, 10, "test")
    assert str(ci) == "0.4123 [0.3801, 0.4466]"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0.1, float("nan"), 0.3], "non-finite value nan at index 1"),
        ([0.1, 0.2, float("inf")], "non-finite value inf at index 2"),
        ([], "empty input"),
        ([[0.1, 0.2], [0.3, 0.4]], "one-dimensional"),
        (["x", "y"], "sequence of numbers"),
    ],
)
def test_bootstrap_rejects_bad_values(values: list[object], expected: str) -> None:
    with pytest.raises(InputError, match=expected) as info:
        bootstrap_mean_ci(values)  # type: ignore[arg-type]
    assert info.value.field == "values"


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 95.0, float("nan")])
def test_bootstrap_rejects_confidence_outside_unit_interval(confidence: float) -> None:
    with pytest.raises(InputError, match=r"confidence must be in \(0, 1\)"):
        bootstrap_mean_ci([0.1, 0.2], confidence=confidence)


@pytest.mark.parametrize("n_resamples", [0, -3, 2.5, True])
def test_bootstrap_rejects_bad_n_resamples(n_resamples: int) -> None:
    with pytest.raises(InputError, match="n_resamples"):
        bootstrap_mean_ci([0.1, 0.2], n_resamples=n_resamples)


# --- paired_bootstrap_ci ----------------------------------------------------------------------


def test_paired_bootstrap_of_a_constant_shift_is_degenerate() -> None:
    a = _normal_sample(n=100)
    ci = paired_bootstrap_ci(a, a + 0.1)
    assert ci.estimate == pytest.approx(-0.1, abs=1e-12)
    assert ci.low == pytest.approx(-0.1, abs=1e-12)
    assert ci.high == pytest.approx(-0.1, abs=1e-12)
    assert "paired" in ci.method


def test_paired_bootstrap_is_the_bootstrap_of_the_differences() -> None:
    a = _normal_sample(n=60, seed=1)
    b = _normal_sample(n=60, seed=2)
    paired = paired_bootstrap_ci(a, b, seed=3)
    direct = bootstrap_mean_ci(a - b, seed=3)
    assert (paired.estimate, paired.low, paired.high) == (direct.estimate, direct.low, direct.high)


def test_paired_bootstrap_rejects_mismatched_lengths() -> None:
    with pytest.raises(InputError, match="mismatched lengths: a has 3 values but b has 2"):
        paired_bootstrap_ci([0.1, 0.2, 0.3], [0.1, 0.2])


def test_paired_bootstrap_rejects_nan_in_b() -> None:
    with pytest.raises(InputError, match="non-finite") as info:
        paired_bootstrap_ci([0.1, 0.2], [0.1, float("nan")])
    assert info.value.field == "b"


# --- mcnemar_exact ----------------------------------------------------------------------------


def test_mcnemar_hand_derived_value() -> None:
    # b=1, c=9: P[X <= 1] for X ~ Bin(10, 1/2) is (C(10,0) + C(10,1)) / 2**10 = 11/1024,
    # so p = 2 * 11 / 1024 = 0.021484375 exactly.
    a, b = _mcnemar_table(both=5, a_only=1, b_only=9, neither=3)
    result = mcnemar_exact(a, b)
    assert result.p_value == 0.021484375
    assert (result.b, result.c, result.statistic, result.n) == (1, 9, 1.0, 18)


@pytest.mark.parametrize(
    ("both", "a_only", "b_only", "neither"),
    [
        (5, 1, 9, 3),  # the hand-derived case
        (10, 6, 6, 4),  # b == c: p = 1
        (7, 0, 0, 7),  # no discordant pairs: p = 1
        (0, 7, 3, 0),  # all pairs discordant
        (0, 0, 12, 0),  # all discordant, one-sided
        (3, 1, 0, 2),  # a single discordant pair
        (40, 30, 45, 25),
        (0, 200, 150, 0),
        (0, 12_000, 12_500, 0),  # beyond the exact-integer range: log-space tail
        (0, 30_000, 30_100, 0),
    ],
)
def test_mcnemar_matches_scipy_binomtest(both: int, a_only: int, b_only: int, neither: int) -> None:
    a, b = _mcnemar_table(both, a_only, b_only, neither)
    result = mcnemar_exact(a, b)
    discordant = a_only + b_only
    expected = (
        1.0
        if discordant == 0
        else scipy_stats.binomtest(min(a_only, b_only), discordant, 0.5).pvalue
    )
    assert result.p_value == pytest.approx(expected, rel=1e-9, abs=1e-300)
    assert (result.b, result.c) == (a_only, b_only)
    assert 0.0 <= result.p_value <= 1.0


def test_mcnemar_accepts_bools() -> None:
    result = mcnemar_exact([True, True, False], [False, True, True])
    assert (result.b, result.c, result.p_value) == (1, 1, 1.0)


@pytest.mark.parametrize("bad", [[0, 2, 1], [0, 0.5, 1], [0, -1, 1]])
def test_mcnemar_rejects_non_binary_values(bad: list[float]) -> None:
    with pytest.raises(InputError, match=r"non-binary value .* at index 1") as info:
        mcnemar_exact(bad, [0, 1, 1])
    assert info.value.field == "a"


def test_mcnemar_rejects_mismatched_lengths() -> None:
    with pytest.raises(InputError, match="mismatched lengths"):
        mcnemar_exact([0, 1], [0, 1, 1])


# --- paired_randomization_test ----------------------------------------------------------------


def _brute_force_sign_flip_p(a: list[float], b: list[float]) -> float:
    diff = [x - y for x, y in zip(a, b, strict=True)]
    observed = abs(sum(diff) / len(diff))
    hits = 0
    for signs in itertools.product((-1.0, 1.0), repeat=len(diff)):
        flipped = abs(sum(s * d for s, d in zip(signs, diff, strict=True)) / len(diff))
        hits += flipped >= observed - 1e-12
    return hits / 2.0 ** len(diff)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([0.9, 0.7, 0.8, 0.6, 0.95, 0.5, 0.85, 0.75], [0.6, 0.7, 0.5, 0.65, 0.7, 0.4, 0.8, 0.5]),
        ([1, 1, 0, 1, 1, 0, 1, 1, 1, 0], [0, 1, 0, 0, 1, 0, 0, 1, 0, 1]),  # many ties
        ([0.3, 0.1], [0.1, 0.3]),
        ([0.5], [0.2]),
    ],
)
def test_randomization_exact_enumeration_matches_brute_force(
    a: list[float], b: list[float]
) -> None:
    result = paired_randomization_test(a, b)
    assert "exact" in result.method
    assert result.p_value == pytest.approx(_brute_force_sign_flip_p(a, b), abs=1e-15)
    assert result.statistic == pytest.approx(float(np.mean(np.subtract(a, b))))
    assert result.n == len(a)


def test_randomization_exact_when_all_patterns_fit_in_n_resamples() -> None:
    a = [0.9, 0.7, 0.8, 0.6]
    b = [0.6, 0.7, 0.5, 0.65]
    assert "exact" in paired_randomization_test(a, b, n_resamples=16).method
    sampled = paired_randomization_test(a, b, n_resamples=15)
    assert "exact" not in sampled.method
    assert "15 random sign flips" in sampled.method


def test_randomization_matches_scipy_permutation_test() -> None:
    rng = np.random.default_rng(2024)
    a = rng.uniform(0.3, 0.9, size=40)
    b = a - rng.normal(0.03, 0.12, size=40)
    result = paired_randomization_test(a, b, n_resamples=20_000, seed=5)

    def mean_difference(x: NDArray[np.float64], y: NDArray[np.float64], axis: int) -> object:
        return np.mean(x - y, axis=axis)

    reference = scipy_stats.permutation_test(
        (a, b),
        mean_difference,
        permutation_type="samples",
        alternative="two-sided",
        vectorized=True,
        n_resamples=20_000,
        rng=np.random.default_rng(6),
    )
    assert 0.01 < reference.pvalue < 0.5  # a p-value where sampling error is easy to bound
    # Each p-value has standard error sqrt(p(1-p)/20000) <= 0.0036; allow about 4 of them.
    assert result.p_value == pytest.approx(reference.pvalue, abs=0.02)
    assert "random sign flips" in result.method


@pytest.mark.parametrize("n", [5, 50])
def test_randomization_identical_inputs_give_p_one(n: int) -> None:
    a = _normal_sample(n=n)
    result = paired_randomization_test(a, a.copy())
    assert result.p_value == 1.0
    assert result.statistic == 0.0


def test_randomization_is_deterministic_for_a_seed() -> None:
    a = _normal_sample(n=30, seed=1)
    b = _normal_sample(n=30, seed=2)
    first = paired_randomization_test(a, b, n_resamples=500, seed=4)
    assert paired_randomization_test(a, b, n_resamples=500, seed=4) == first
    assert 1 / 501 <= first.p_value <= 1.0


def test_randomization_rejects_bad_input() -> None:
    with pytest.raises(InputError, match="mismatched lengths"):
        paired_randomization_test([0.1], [0.1, 0.2])
    with pytest.raises(InputError, match="empty input"):
        paired_randomization_test([], [])
    with pytest.raises(InputError, match="n_resamples must be >= 1"):
        paired_randomization_test([0.1], [0.2], n_resamples=0)


# --- properties -------------------------------------------------------------------------------

_moderate = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
_any_finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def _pairs(draw: st.DrawFn, elements: st.SearchStrategy[float]) -> tuple[list[float], list[float]]:
    n = draw(st.integers(min_value=1, max_value=20))
    a = draw(st.lists(elements, min_size=n, max_size=n))
    b = draw(st.lists(elements, min_size=n, max_size=n))
    return a, b


@settings(max_examples=50, deadline=None)
@given(
    values=st.lists(_any_finite, min_size=1, max_size=30),
    n_resamples=st.integers(min_value=1, max_value=300),
    confidence=st.floats(min_value=0.01, max_value=0.99),
)
def test_property_bootstrap_interval_is_finite_and_contains_estimate(
    values: list[float], n_resamples: int, confidence: float
) -> None:
    ci = bootstrap_mean_ci(values, n_resamples=n_resamples, confidence=confidence)
    assert all(math.isfinite(v) for v in (ci.estimate, ci.low, ci.high))
    assert ci.low <= ci.estimate <= ci.high


@settings(max_examples=50, deadline=None)
@given(pair=_pairs(_moderate), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_property_swapping_a_and_b_negates_the_paired_estimate(
    pair: tuple[list[float], list[float]], seed: int
) -> None:
    a, b = pair
    forward = paired_bootstrap_ci(a, b, n_resamples=200, seed=seed)
    backward = paired_bootstrap_ci(b, a, n_resamples=200, seed=seed)
    assert backward.estimate == -forward.estimate
    assert forward.low <= forward.estimate <= forward.high
    assert backward.low == pytest.approx(-forward.high, rel=1e-9, abs=1e-9)
    assert backward.high == pytest.approx(-forward.low, rel=1e-9, abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(pair=_pairs(_moderate), n_resamples=st.integers(min_value=1, max_value=3000))
def test_property_randomization_p_in_unit_interval_and_symmetric(
    pair: tuple[list[float], list[float]], n_resamples: int
) -> None:
    a, b = pair
    forward = paired_randomization_test(a, b, n_resamples=n_resamples)
    backward = paired_randomization_test(b, a, n_resamples=n_resamples)
    assert 0.0 < forward.p_value <= 1.0
    assert backward.p_value == forward.p_value
    assert backward.statistic == -forward.statistic


@settings(max_examples=50, deadline=None)
@given(pair=_pairs(st.integers(min_value=0, max_value=1).map(float)))
def test_property_mcnemar_p_in_unit_interval_and_symmetric(
    pair: tuple[list[float], list[float]],
) -> None:
    a, b = pair
    forward = mcnemar_exact(a, b)
    backward = mcnemar_exact(b, a)
    assert 0.0 <= forward.p_value <= 1.0
    assert backward.p_value == forward.p_value
    assert (backward.b, backward.c) == (forward.c, forward.b)


@settings(max_examples=50, deadline=None)
@given(pair=_pairs(_any_finite))
def test_property_results_are_finite_or_input_error(
    pair: tuple[list[float], list[float]],
) -> None:
    a, b = pair
    failure = None
    try:
        ci = paired_bootstrap_ci(a, b, n_resamples=50)
        test = paired_randomization_test(a, b, n_resamples=50)
    except InputError as error:
        failure = str(error)
    if failure is not None:  # only a mean difference beyond float64 range may fail
        assert "overflows float64" in failure
        return
    assert all(math.isfinite(v) for v in (ci.estimate, ci.low, ci.high, test.statistic))
    assert 0.0 < test.p_value <= 1.0
