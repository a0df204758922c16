"""Tests for prediction-powered inference of the mean human label."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from rag_judge.calibration import ppi_mean
from rag_judge.core.errors import InputError

Z95 = NormalDist().inv_cdf(0.975)


def test_ppi_by_hand() -> None:
    # rectifier = mean(f_L - y_L) = mean(0, 0, -1, 0) = -1/4; mean(f_U) = 4/6.
    # θ = 2/3 + 1/4 = 11/12. s²(f_U) = (4·1/9 + 2·4/9)/5 = 4/15; s²(f_L - y_L) = (3/16 + 9/16)/3.
    got = ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 1, 0])
    half = Z95 * math.sqrt((4 / 15) / 6 + (1 / 4) / 4)
    assert got.rectifier == pytest.approx(-0.25)
    assert got.ppi.estimate == pytest.approx(11 / 12)
    assert (got.ppi.low, got.ppi.high) == pytest.approx((11 / 12 - half, 11 / 12 + half))
    # Classical: mean 3/4, s² = (3/16 + 9/16)/3 = 1/4, half-width z·√(1/4 / 4).
    assert got.classical.estimate == 0.75
    assert (got.classical.low, got.classical.high) == pytest.approx(
        (0.75 - Z95 * 0.25, 0.75 + Z95 * 0.25)
    )
    assert (got.n_labelled, got.n_unlabelled, got.ppi.n, got.classical.n) == (4, 6, 10, 4)
    assert got.ppi.confidence == 0.95


def test_ppi_confidence_sets_the_normal_quantile() -> None:
    wide = ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 1, 0], confidence=0.99)
    narrow = ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 1, 0], confidence=0.8)
    ratio = (wide.ppi.high - wide.ppi.low) / (narrow.ppi.high - narrow.ppi.low)
    assert ratio == pytest.approx(NormalDist().inv_cdf(0.995) / NormalDist().inv_cdf(0.9))


def _synthetic(seed: int = 2023) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A population with a 70% pass rate; a judge that is right 95% of the time."""
    rng = np.random.default_rng(seed)
    y = (rng.random(5100) < 0.7).astype(float)
    flip = rng.random(5100) < 0.05
    f = np.where(flip, 1 - y, y)
    return y[:100], f[:100], f[100:], y


def test_ppi_interval_is_narrower_than_human_only_when_the_judge_is_accurate() -> None:
    y_labelled, f_labelled, f_unlabelled, y_all = _synthetic()
    got = ppi_mean(y_labelled, f_labelled, f_unlabelled)
    ppi_width = got.ppi.high - got.ppi.low
    classical_width = got.classical.high - got.classical.low
    assert ppi_width < 0.6 * classical_width
    assert got.ppi.low <= float(np.mean(y_all)) <= got.ppi.high


def test_ppi_removes_a_lenient_judges_bias() -> None:
    # The judge passes every good row and 30% of the bad ones: its own mean overstates the rate.
    rng = np.random.default_rng(7)
    y = (rng.random(4200) < 0.6).astype(float)
    f = np.where(y == 1, 1.0, (rng.random(4200) < 0.3).astype(float))
    got = ppi_mean(y[:200], f[:200], f[200:])
    truth = float(np.mean(y))
    naive_bias = float(np.mean(f[200:])) - truth
    assert naive_bias > 0.1
    assert abs(got.ppi.estimate - truth) < 0.5 * naive_bias
    assert got.ppi.low <= truth <= got.ppi.high
    assert got.rectifier > 0.05


def test_ppi_errors() -> None:
    with pytest.raises(InputError, match="at least 2 rows") as info:
        ppi_mean([1], [1], [1, 0, 1])
    assert info.value.field == "labelled_human"
    with pytest.raises(InputError, match="at least 2 rows") as info:
        ppi_mean([1, 0], [1, 0], [1])
    assert info.value.field == "unlabelled_judge"
    with pytest.raises(InputError, match="mismatched lengths"):
        ppi_mean([1, 0, 1], [1, 0], [1, 0])
    with pytest.raises(InputError, match="empty input"):
        ppi_mean([1, 0], [1, 0], [])
    with pytest.raises(InputError, match="confidence"):
        ppi_mean([1, 0], [1, 0], [1, 0], confidence=0.0)
