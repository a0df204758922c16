"""Comparisons with the best: the bounds' arithmetic against a hand computation, their
properties, missing values, the small-sample critical value, and coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import t as student

from rag_judge.core.best import PSEUDO, compare_with_best, t_critical
from rag_judge.core.errors import InputError


def test_two_columns_are_one_one_sided_comparison_by_hand() -> None:
    rng = np.random.default_rng(0)
    y = rng.uniform(size=(40, 2))
    y[:, 1] += 0.1  # column 2 better by about 0.1
    found = compare_with_best(y, n_resamples=500)
    diff = y[:, 1] - y[:, 0]
    se = math.sqrt(diff.var(ddof=1) / 40 + (PSEUDO / 40) ** 2)
    assert found.difference[1, 0] == pytest.approx(diff.mean())
    assert found.se[1, 0] == pytest.approx(se)
    # one comparison: at least Student's one-sided quantile with n - 1 degrees of freedom
    assert found.critical >= student.ppf(0.95, 39) - 0.03
    d = found.critical
    assert found.regret_bound[0] == pytest.approx(max(0.0, diff.mean() + d * se))
    assert found.could_be_best[1]
    # column 1 could be best only if its bound against column 2 is above zero
    assert found.could_be_best[0] == (-diff.mean() + d * se > 0)


def test_missing_values_compare_each_pair_on_the_rows_both_have() -> None:
    y = np.array([[1.0, 0.0, 1.0], [0.0, np.nan, 1.0], [1.0, 1.0, np.nan], [0.0, 0.0, 0.0]] * 5)
    found = compare_with_best(y, n_resamples=300)
    both = ~np.isnan(y[:, 0]) & ~np.isnan(y[:, 1])
    assert found.difference[0, 1] == pytest.approx((y[both, 0] - y[both, 1]).mean())
    assert found.n_pairs[0, 1] == both.sum() == 15
    assert found.means[1] == pytest.approx(np.nanmean(y[:, 1]))
    with pytest.raises(InputError, match="every column needs at least one value"):
        compare_with_best([[1.0, np.nan], [0.0, np.nan]])


@given(arrays(np.float64, st.tuples(st.integers(3, 25), st.integers(1, 5)),
              elements=st.floats(0, 1)))  # fmt: skip
def test_bounds_are_within_the_range_and_the_leader_could_be_best(y: np.ndarray) -> None:
    found = compare_with_best(y, n_resamples=100)
    assert np.all(found.regret_bound >= 0)
    assert np.all(found.regret_bound <= 1)
    assert np.all(found.best_bound >= 0)
    assert np.all(found.best_bound <= 1)
    assert found.could_be_best[int(np.argmax(y.mean(axis=0)))]
    assert np.all(np.isfinite(found.shortfall_low))


def test_the_small_sample_critical_value_is_a_multivariate_t() -> None:
    one = [np.eye(1)]
    assert t_critical(one, 4, 0.95, 0) == pytest.approx(student.ppf(0.95, 4), abs=0.1)
    assert t_critical(one, 0, 0.95, 0) == math.inf  # one row says nothing about spread
    # nine comparisons correlated 0.5: above one comparison's, below Bonferroni's
    corr = np.full((9, 9), 0.5) + 0.5 * np.eye(9)
    nine = t_critical([corr], 1000, 0.95, 0)
    assert student.ppf(0.95, 1000) < nine < student.ppf(1 - 0.05 / 9, 1000)


@pytest.mark.parametrize("n", [5, 20])
def test_a_pair_that_never_differs_is_not_shown_equal(n: int) -> None:
    found = compare_with_best(np.ones((n, 2)), n_resamples=200)
    assert found.regret_bound[0] > 0  # the error of one question in n differing
    assert found.regret_bound[0] >= found.critical * PSEUDO / n - 1e-12


def test_coverage_of_the_best_comparisons_holds_in_simulation() -> None:
    """The event the promise rests on (the best column's comparisons within their bounds)
    fails at most about 5% of the time: 400 seeded runs of three 0/1 columns sharing a
    question's ease, the best column 0.03 above the others (within simulation error)."""
    rng = np.random.default_rng(11)
    means = np.array([0.5, 0.53, 0.5])
    failed = 0
    for seed in range(400):
        ease = rng.standard_normal((30, 1))
        latent = np.array([-0.0, 0.0754, 0.0]) + 0.84 * ease + 0.55 * rng.standard_normal((30, 3))
        y = (latent > 0).astype(float)
        found = compare_with_best(y, n_resamples=300, seed=seed)
        upper = found.upper
        truth = means[1] - means
        failed += bool(np.any(truth[[0, 2]] >= upper[1, [0, 2]]))
    assert failed / 400 <= 0.08
