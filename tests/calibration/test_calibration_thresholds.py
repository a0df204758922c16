"""Tests for threshold selection: the cut by hand, the stratified split, the held-out report."""

from __future__ import annotations

import numpy as np
import pytest

from rag_judge.calibration import (
    accuracy,
    best_threshold,
    cohen_kappa,
    negative_f_beta,
    predict_supported,
    select_threshold,
    stratified_split,
)
from rag_judge.core.errors import InputError

HUMAN = [0, 0, 0, 1, 1, 1]
SCORES = [0.1, 0.4, 0.6, 0.3, 0.7, 0.9]
# Distinct scores 0.1 0.3 0.4 0.6 0.7 0.9; cut k labels unsupported every score <= the k-th:
#   t      caught  false alarm   balanced accuracy           negative F1
#   0.2    1       0             (1/3 + 3/3)/2 = 2/3          2/(2+2+0) = 1/2
#   0.35   1       1             (1/3 + 2/3)/2 = 1/2          2/(2+2+1) = 2/5
#   0.5    2       1             (2/3 + 2/3)/2 = 2/3          4/(4+1+1) = 2/3
#   0.65   3       1             (3/3 + 2/3)/2 = 5/6          6/(6+0+1) = 6/7
#   0.8    3       2             (3/3 + 1/3)/2 = 2/3          6/(6+0+2) = 3/4


def test_best_threshold_for_balanced_accuracy_by_hand() -> None:
    choice = best_threshold(HUMAN, SCORES)
    assert choice.threshold == pytest.approx(0.65)
    assert choice.value == pytest.approx(5 / 6)
    assert (choice.objective, choice.n) == ("balanced_accuracy", 6)


def test_best_threshold_for_negative_f1_by_hand() -> None:
    choice = best_threshold(HUMAN, SCORES, objective="f_beta")
    assert choice.threshold == pytest.approx(0.65)
    assert choice.value == pytest.approx(6 / 7)
    assert choice.objective == "negative_f_beta(beta=1)"


def test_objectives_can_disagree_and_ties_take_the_lowest_threshold() -> None:
    # human 0 1 0 1 at scores 0.1 0.2 0.3 0.4. Cuts 0.15 / 0.25 / 0.35:
    # balanced accuracy 3/4, 1/2, 3/4 (a tie: the lowest, 0.15, wins);
    # negative F1 2/3, 1/2, 4/5 (0.35 wins).
    human, scores = [0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4]
    assert best_threshold(human, scores).threshold == pytest.approx(0.15)
    f1 = best_threshold(human, scores, objective="f_beta")
    assert (f1.threshold, f1.value) == pytest.approx((0.35, 0.8))


def test_recall_heavy_beta_moves_the_threshold_up() -> None:
    # F3 weighs recall nine times: flagging all but the top score (t = 0.35) beats t = 0.15:
    # t=0.15: 10·1/(10·1 + 9·1 + 0) = 10/19; t=0.35: 10·2/(10·2 + 0 + 1) = 20/21.
    choice = best_threshold([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], objective="f_beta", beta=3)
    assert (choice.threshold, choice.value) == pytest.approx((0.35, 20 / 21))


def test_best_threshold_errors() -> None:
    with pytest.raises(InputError, match="constant"):
        best_threshold([0, 1, 0], [0.5, 0.5, 0.5])
    with pytest.raises(InputError, match="one class"):
        best_threshold([1, 1, 1], [0.1, 0.5, 0.9])
    with pytest.raises(InputError, match="unknown objective"):
        best_threshold(HUMAN, SCORES, objective="auc")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="beta"):
        best_threshold(HUMAN, SCORES, objective="f_beta", beta=-1)


def test_stratified_split_keeps_class_shares_and_repeats_with_the_seed() -> None:
    human = np.array([0] * 4 + [1] * 6 + [0] * 3)  # 7 unsupported, 6 supported
    dev, test = stratified_split(human, dev_fraction=0.5, seed=3)
    # round(0.5 · 7) = 4 (halves round up) and round(0.5 · 6) = 3.
    assert (int(np.sum(human[dev] == 0)), int(np.sum(human[dev] == 1))) == (4, 3)
    assert sorted([*dev.tolist(), *test.tolist()]) == list(range(13))
    again = stratified_split(human, dev_fraction=0.5, seed=3)
    assert (again[0].tolist(), again[1].tolist()) == (dev.tolist(), test.tolist())
    other = stratified_split(human, dev_fraction=0.5, seed=4)
    assert other[0].tolist() != dev.tolist()


def test_stratified_split_keeps_one_row_of_each_class_on_each_side() -> None:
    dev, test = stratified_split([0, 0, 1, 1, 1], dev_fraction=0.05)
    assert len(dev) == 2  # one of each class, though 5% of 2 or 3 rounds to 0
    assert len(test) == 3


def test_stratified_split_errors() -> None:
    with pytest.raises(InputError, match="class 0 has 1 row"):
        stratified_split([0, 1, 1, 1])
    with pytest.raises(InputError, match="dev_fraction"):
        stratified_split([0, 0, 1, 1], dev_fraction=1.0)


def test_select_threshold_on_separable_data_by_hand() -> None:
    # Every unsupported row scores 0.2 and every supported one 0.8, whatever the split:
    # the only cut is 0.5 and the held-out rows are all labelled right.
    human = [0, 1, 1, 0, 1, 0, 1, 1, 0, 1]
    scores = [0.2 if h == 0 else 0.8 for h in human]
    got = select_threshold(human, scores, n_resamples=100)
    assert got.choice.threshold == 0.5
    assert got.choice.value == 1.0
    assert len(got.dev_indices) == 5  # 2 of the 4 unsupported, 3 of the 6 supported
    assert len(got.test_indices) == 5
    for name in ("accuracy", "balanced_accuracy", "negative_precision", "negative_recall"):
        assert got.held_out[name].estimate == 1.0
    assert got.held_out["cohen_kappa"].estimate == 1.0
    assert got.held_out["negative_f_beta"].estimate == 1.0


def test_select_threshold_reports_only_held_out_rows() -> None:
    rng = np.random.default_rng(21)
    human = rng.integers(0, 2, 60).astype(float)
    scores = np.round(np.clip(0.4 * human + rng.random(60) * 0.6, 0, 1), 2)
    got = select_threshold(human, scores, objective="f_beta", beta=2, seed=5, n_resamples=100)
    assert set(got.dev_indices).isdisjoint(got.test_indices)
    assert len(got.dev_indices) + len(got.test_indices) == 60
    dev = list(got.dev_indices)
    assert got.choice == best_threshold(human[dev], scores[dev], objective="f_beta", beta=2)
    test = list(got.test_indices)
    predicted = predict_supported(scores[test], got.choice.threshold)
    options = {"n_resamples": 100, "seed": 5}
    assert got.held_out["accuracy"] == accuracy(human[test], predicted, **options)
    assert got.held_out["negative_f_beta"] == negative_f_beta(
        human[test], predicted, beta=2, **options
    )
    assert got.held_out["cohen_kappa"] == cohen_kappa(
        human[test], predicted, categories=(0, 1), **options
    )
    assert got == select_threshold(
        human, scores, objective="f_beta", beta=2, seed=5, n_resamples=100
    )
    for estimate in got.held_out.values():
        assert estimate.n == len(test)
        assert estimate.low is not None
        assert estimate.high is not None
        assert estimate.estimate is not None
        assert estimate.low <= estimate.estimate <= estimate.high
