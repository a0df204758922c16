"""Simultaneous intervals for every paired difference of columns (max-t bootstrap).

Checked against an independent computation (Tukey's studentized range, from scipy, on
independent equal-variance columns), by coverage in simulation, and on edge cases.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm, studentized_range

from rag_judge.core.errors import InputError
from rag_judge.core.simultaneous import pairwise_intervals


@pytest.mark.parametrize("columns", [3, 5, 10])
def test_independent_columns_reproduce_tukeys_critical_value(columns: int) -> None:
    # Tukey's HSD: max over pairs |d_jk / se_jk| of independent, equal-variance means follows
    # the studentized range / sqrt 2 (df = infinity for a large n).
    rows = np.random.default_rng(columns).normal(size=(4000, columns))
    found = pairwise_intervals(rows, n_resamples=4000, seed=1)
    tukey = studentized_range.ppf(0.95, columns, np.inf) / math.sqrt(2)
    assert found.critical == pytest.approx(tukey, rel=0.04)


def test_two_columns_give_the_ordinary_two_sided_interval() -> None:
    rows = np.random.default_rng(0).normal(size=(3000, 2))
    found = pairwise_intervals(rows, n_resamples=4000)
    assert found.critical == pytest.approx(norm.ppf(0.975), rel=0.04)


def test_perfectly_correlated_pairs_count_as_one_comparison() -> None:
    # Columns 1 and 2 are the same system: the family has one distinct difference, so the
    # critical value is the single comparison's, not a correction for three pairs.
    base = np.random.default_rng(3).normal(size=(3000, 1))
    other = np.random.default_rng(4).normal(size=(3000, 1))
    found = pairwise_intervals(np.hstack([base, other, other]), n_resamples=4000)
    assert found.critical == pytest.approx(norm.ppf(0.975), rel=0.05)


def _sweep_like(rng: np.random.Generator, n: int) -> np.ndarray:
    """0/1 outcomes of n questions at 5 ks, correlated across ks by a question's ease."""
    thresholds = np.array([0.30, 0.45, 0.50, 0.50, 0.48])
    ease = rng.uniform(size=(n, 1))
    return (0.5 * rng.uniform(size=(n, 5)) + 0.5 * ease < thresholds).astype(float)


def test_the_family_covers_every_true_difference_at_the_stated_rate() -> None:
    # 300 simulated sweeps of 60 questions: the share in which all 10 intervals cover their
    # true difference at once is about 95% (the truth from a million questions).
    rng = np.random.default_rng(7)
    truth = _sweep_like(rng, 1_000_000).mean(axis=0)
    true_difference = truth[:, None] - truth[None, :]
    trials = 300
    hits = 0
    for trial in range(trials):
        found = pairwise_intervals(_sweep_like(rng, 60), n_resamples=400, seed=trial)
        covered = (found.low <= true_difference + 1e-9) & (true_difference <= found.high + 1e-9)
        hits += bool(np.all(covered))
    assert 0.90 <= hits / trials <= 0.995


def test_a_pair_that_never_differs_is_not_called_exactly_equal() -> None:
    rows = np.array([[1.0, 1.0, 0.0]] * 10 + [[0.0, 0.0, 1.0]] * 10)
    found = pairwise_intervals(rows, n_resamples=500)
    assert found.difference[0, 1] == 0.0
    assert found.se[0, 1] == pytest.approx(1 / 20)  # floored: one row in 20 by the full range
    assert found.low[0, 1] < 0 < found.high[0, 1]
    assert found.sd[0, 1] == 0.0  # as measured


def test_intervals_are_antisymmetric_and_contain_the_estimate() -> None:
    rows = np.random.default_rng(2).uniform(size=(40, 4))
    found = pairwise_intervals(rows, n_resamples=300)
    np.testing.assert_allclose(found.low, -found.high.T)
    assert np.all(found.low <= found.difference)
    assert np.all(found.difference <= found.high)
    assert np.all(np.diag(found.low) == 0)
    assert np.all(np.diag(found.high) == 0)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.lists(st.floats(0, 1), min_size=3, max_size=3), min_size=1, max_size=15),
    st.integers(0, 10),
)
def test_same_seed_same_intervals_and_always_finite(rows: list[list[float]], seed: int) -> None:
    one = pairwise_intervals(rows, n_resamples=50, seed=seed)
    two = pairwise_intervals(rows, n_resamples=50, seed=seed)
    np.testing.assert_array_equal(one.high, two.high)
    assert np.all(np.isfinite(one.low))
    assert np.all(np.isfinite(one.high))


@pytest.mark.parametrize(
    ("table", "field"),
    [([], "table"), ([[0.1, float("nan")]], "table"), ([1.0, 2.0], "table")],
)
def test_bad_tables_are_refused(table: object, field: str) -> None:
    with pytest.raises(InputError) as raised:
        pairwise_intervals(table)  # type: ignore[arg-type]
    assert raised.value.field == field


def test_a_bad_scale_or_confidence_is_refused() -> None:
    with pytest.raises(InputError, match="scale"):
        pairwise_intervals([[0.0, 1.0]], scale=-1)
    with pytest.raises(InputError):
        pairwise_intervals([[0.0, 1.0]], confidence=1.5)
