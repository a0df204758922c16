"""The two-level bootstrap against a direct simulation with known row and judge variances."""

from __future__ import annotations

import numpy as np
import pytest

from rag_judge.core.errors import InputError
from rag_judge.core.nested_bootstrap import (
    paired_two_level_bootstrap_ci,
    two_level_bootstrap_ci,
    within_spread,
)

N, R, ROW_SD, JUDGE_SD = 40, 3, 0.20, 0.15


def simulate(rng: np.random.Generator, mean: float = 0.5) -> np.ndarray:
    return mean + ROW_SD * rng.standard_normal((N, 1)) + JUDGE_SD * rng.standard_normal((N, R))


def test_the_interval_width_and_coverage_match_the_known_variances() -> None:
    """Over 200 simulated runs: the interval's width matches the analytic variance of the
    grand mean (within the method's known excess), and it covers the truth ~95% of the time."""
    rng = np.random.default_rng(7)
    true_sd = np.sqrt(ROW_SD**2 / N + JUDGE_SD**2 / (N * R))
    excess_sd = np.sqrt(ROW_SD**2 / N + (2 - 1 / R) * JUDGE_SD**2 / (N * R))
    widths, covered = [], 0
    for trial in range(200):
        ci = two_level_bootstrap_ci(simulate(rng).tolist(), n_resamples=1000, seed=trial)
        widths.append(ci.high - ci.low)
        covered += ci.low <= 0.5 <= ci.high
    expected = 2 * 1.96 * np.array([true_sd, excess_sd])
    assert expected[0] * 0.9 < np.mean(widths) < expected[1] * 1.1
    assert 0.90 <= covered / 200 <= 0.99


def test_judge_noise_widens_the_interval_and_the_spread_recovers_it() -> None:
    rng = np.random.default_rng(3)
    rows = 0.5 + ROW_SD * rng.standard_normal((N, 1))
    quiet = np.repeat(rows, R, axis=1)
    noisy = quiet + 0.3 * rng.standard_normal((N, R))
    q = two_level_bootstrap_ci(quiet.tolist(), seed=1)
    n = two_level_bootstrap_ci(noisy.tolist(), seed=1)
    assert (n.high - n.low) > (q.high - q.low) * 1.2
    spread = within_spread(noisy.tolist())
    assert spread is not None
    assert spread.sd == pytest.approx(0.3, rel=0.15)
    assert spread.n_rows == N
    still = within_spread(quiet.tolist())
    assert still is not None
    assert still.sd == pytest.approx(0.0, abs=1e-12)
    assert within_spread([[0.5], [0.7]]) is None  # one repeat each: no spread to see


def test_the_paired_interval_is_centred_on_the_true_shift_and_rows_may_be_ragged() -> None:
    rng = np.random.default_rng(5)
    base = simulate(rng)
    new = base + 0.1 + JUDGE_SD * rng.standard_normal((N, R))
    ragged_new = [list(row[: 1 + i % R]) for i, row in enumerate(new)]
    ci = paired_two_level_bootstrap_ci(ragged_new, base.tolist(), seed=2)
    assert ci.low < 0.1 < ci.high
    assert ci.low > 0.0
    with pytest.raises(InputError, match="rows must pair"):
        paired_two_level_bootstrap_ci(ragged_new[:-1], base.tolist())
    with pytest.raises(InputError, match="at least one value"):
        two_level_bootstrap_ci([[0.5], []])
