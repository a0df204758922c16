"""Tests for the calibration statistics: hand-derived values, reference libraries, degenerate data.

Oracles: scikit-learn (classification metrics, κ, AUC, Brier, calibration curve), scipy
(correlations), the ``krippendorff`` package (α). Convention under test: 1 = supported,
0 = unsupported, and precision/recall/F-beta are those of class 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import krippendorff
import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats as scipy_stats
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve

from rag_judge.calibration import (
    Estimate,
    Undefined,
    accuracy,
    balanced_accuracy,
    bootstrap_estimate,
    brier_score,
    cohen_kappa,
    expected_calibration_error,
    kendall_tau_b,
    krippendorff_alpha,
    negative_f_beta,
    negative_precision,
    negative_recall,
    pearson,
    predict_supported,
    roc_auc,
    spearman,
)
from rag_judge.calibration import estimate as estimate_module
from rag_judge.core import stats
from rag_judge.core.errors import InputError

FAST = {"n_resamples": 50}
"""For tests of the point estimate only: a few resamples keep them fast."""


def _binary_data(n: int = 80, seed: int = 7) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Human 0/1 labels and judge scores rounded to one decimal, so that scores tie often."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 2, n).astype(np.float64)
    scores = np.round(np.clip(0.35 * human + rng.random(n) * 0.65, 0.0, 1.0), 1)
    return human, scores


def _ordinal_data(n: int = 70, seed: int = 11) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Human ratings 1..5 and judge ratings within one step of them (many ties)."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(np.float64)
    judge = np.clip(human + rng.integers(-1, 2, n), 1, 5).astype(np.float64)
    return human, judge


def _finite_or_none(estimate: Estimate) -> None:
    for value in (estimate.estimate, estimate.low, estimate.high):
        assert value is None or math.isfinite(value)


# --- binary agreement: hand-derived ---------------------------------------------------------


def test_binary_agreement_by_hand() -> None:
    # human 0 0 0 1 1, judge 0 0 0 0 1: caught 3, missed 0, false alarm 1, passed 1.
    human, judge = [0, 0, 0, 1, 1], [0, 0, 0, 0, 1]
    assert accuracy(human, judge, **FAST).estimate == pytest.approx(4 / 5)
    assert balanced_accuracy(human, judge, **FAST).estimate == pytest.approx((3 / 3 + 1 / 2) / 2)
    assert negative_precision(human, judge, **FAST).estimate == pytest.approx(3 / 4)
    assert negative_recall(human, judge, **FAST).estimate == pytest.approx(1.0)
    # F1 = 2·3 / (2·3 + 0 + 1); F2 = 5·3 / (5·3 + 4·0 + 1).
    assert negative_f_beta(human, judge, **FAST).estimate == pytest.approx(6 / 7)
    assert negative_f_beta(human, judge, beta=2, **FAST).estimate == pytest.approx(15 / 16)


def test_negative_class_is_the_target_not_the_positive_one() -> None:
    # The judge catches the only unsupported row but raises two false alarms.
    human, judge = [0, 1, 1, 1], [0, 0, 0, 1]
    assert negative_precision(human, judge, **FAST).estimate == pytest.approx(1 / 3)
    assert negative_recall(human, judge, **FAST).estimate == pytest.approx(1.0)
    assert skm.precision_score(human, judge) == pytest.approx(1.0)  # class 1 would say 1.0


def test_predict_supported_uses_greater_or_equal() -> None:
    assert predict_supported([0.2, 0.5, 0.7], 0.5).tolist() == [0.0, 1.0, 1.0]
    with pytest.raises(InputError, match="NaN"):
        predict_supported([0.2], float("nan"))


def test_cohen_kappa_by_hand() -> None:
    # p_o = 3/4; human marginals (1/2, 1/2), judge (3/4, 1/4): p_e = 1/2; κ = (3/4 - 1/2) / (1/2).
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0], **FAST).estimate == pytest.approx(0.5)


def test_weighted_kappa_by_hand() -> None:
    # Pairs (1,1), (2,3), (3,3); rows 1/3 each, judge columns (1/3, 0, 2/3).
    # Linear: Σ w·O = 1/3 and Σ w·E = (4/3 + 1 + 2/3)/3 = 1 -> κ = 2/3.
    # Quadratic: Σ w·O = 1/3 and Σ w·E = (8/3 + 1 + 4/3)/3 = 5/3 -> κ = 4/5.
    human, judge = [1, 2, 3], [1, 3, 3]
    assert cohen_kappa(human, judge, weights="linear", **FAST).estimate == pytest.approx(2 / 3)
    assert cohen_kappa(human, judge, weights="quadratic", **FAST).estimate == pytest.approx(0.8)


def test_weighted_kappa_counts_unused_categories_of_the_scale() -> None:
    # Values 1, 2, 5: by default their positions are 0, 1, 2 (the same table as above, κ = 2/3);
    # on the scale 1..5 they are 0, 1, 4: Σ w·O = 3/3 = 1, Σ w·E = (8/3 + 7/3 + 4/3)/3 = 19/9,
    # so κ = 1 - 9/19 = 10/19.
    human, judge = [1, 2, 5], [1, 5, 5]
    assert cohen_kappa(human, judge, weights="linear", **FAST).estimate == pytest.approx(2 / 3)
    scale = cohen_kappa(human, judge, weights="linear", categories=[1, 2, 3, 4, 5], **FAST)
    assert scale.estimate == pytest.approx(10 / 19)
    reference = skm.cohen_kappa_score(human, judge, weights="linear", labels=[1, 2, 3, 4, 5])
    assert scale.estimate == pytest.approx(reference)


# --- binary agreement: against scikit-learn ---------------------------------------------------


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7])
def test_binary_agreement_matches_scikit_learn(threshold: float) -> None:
    human, scores = _binary_data()
    judge = predict_supported(scores, threshold)
    pairs: list[tuple[Callable[..., Estimate], float]] = [
        (accuracy, skm.accuracy_score(human, judge)),
        (balanced_accuracy, skm.balanced_accuracy_score(human, judge)),
        (negative_precision, skm.precision_score(human, judge, pos_label=0)),
        (negative_recall, skm.recall_score(human, judge, pos_label=0)),
        (negative_f_beta, skm.f1_score(human, judge, pos_label=0)),
        (cohen_kappa, skm.cohen_kappa_score(human, judge)),
    ]
    for function, expected in pairs:
        assert function(human, judge, **FAST).estimate == pytest.approx(expected, abs=1e-12)
    f2 = negative_f_beta(human, judge, beta=2.0, **FAST).estimate
    assert f2 == pytest.approx(skm.fbeta_score(human, judge, beta=2.0, pos_label=0), abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_scikit_learn_on_ordinal_ratings(weights: Any) -> None:
    human, judge = _ordinal_data()
    expected = skm.cohen_kappa_score(human, judge, weights=weights, labels=[1, 2, 3, 4, 5])
    got = cohen_kappa(human, judge, weights=weights, categories=range(1, 6), **FAST)
    assert got.estimate == pytest.approx(expected, abs=1e-12)


# --- Krippendorff's alpha -------------------------------------------------------------------


def test_krippendorff_alpha_nominal_by_hand() -> None:
    # Pooled values: three 0s and five 1s (n = 8); one disagreeing unit gives Σ o·δ = 2,
    # Σ n_c·n_k·δ = 2·3·5 = 30, so α = 1 - (8 - 1)·2/30 = 8/15.
    got = krippendorff_alpha([0, 0, 1, 1], [0, 1, 1, 1], level="nominal", **FAST)
    assert got.estimate == pytest.approx(8 / 15)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_matches_the_krippendorff_package(level: Any) -> None:
    human, judge = _ordinal_data()
    expected = krippendorff.alpha(
        reliability_data=np.vstack([human, judge]), level_of_measurement=level
    )
    got = krippendorff_alpha(human, judge, level=level, **FAST)
    assert got.estimate == pytest.approx(expected, abs=1e-12)


def test_krippendorff_alpha_interval_on_continuous_values() -> None:
    rng = np.random.default_rng(5)
    human = rng.normal(3.0, 1.0, 40)
    judge = np.round(human + rng.normal(0.0, 0.5, 40), 1)
    expected = krippendorff.alpha(
        reliability_data=np.vstack([human, judge]), level_of_measurement="interval"
    )
    got = krippendorff_alpha(human, judge, level="interval", **FAST)
    assert got.estimate == pytest.approx(expected, abs=1e-12)


def test_krippendorff_alpha_of_identical_constant_values_is_undefined() -> None:
    got = krippendorff_alpha([2, 2, 2], [2, 2, 2], level="ordinal", **FAST)
    assert got.estimate is None
    assert got.reason is not None
    assert "same" in got.reason


def test_krippendorff_alpha_rejects_an_unknown_level() -> None:
    with pytest.raises(InputError, match="unknown level 'ratio'"):
        krippendorff_alpha([1, 2], [1, 2], level="ratio")  # type: ignore[arg-type]


# --- correlations ---------------------------------------------------------------------------


def test_correlations_by_hand() -> None:
    # dx = (-1, 0, 1), dy = (-1, 1, 0): r = 1/√(2·2) = 1/2 (the values are their own ranks).
    # Pairs: (1,2) concordant, (1,3) concordant, (2,3) discordant: τ = (2 - 1)/3.
    x, y = [1, 2, 3], [1, 3, 2]
    assert pearson(x, y, **FAST).estimate == pytest.approx(0.5)
    assert spearman(x, y, **FAST).estimate == pytest.approx(0.5)
    assert kendall_tau_b(x, y, **FAST).estimate == pytest.approx(1 / 3)


def test_kendall_tau_b_with_a_tie_by_hand() -> None:
    # x = (1, 1, 2), y = (1, 2, 3): one pair tied in x, two concordant; n0 = 3, n1 = 1, n2 = 0.
    got = kendall_tau_b([1, 1, 2], [1, 2, 3], **FAST)
    assert got.estimate == pytest.approx(2 / math.sqrt((3 - 1) * 3))


def test_correlations_match_scipy_with_ties() -> None:
    human, judge = _ordinal_data()
    scores = np.round(judge / 5 + np.random.default_rng(2).random(judge.size) * 0.2, 1)
    assert pearson(human, scores, **FAST).estimate == pytest.approx(
        scipy_stats.pearsonr(human, scores).statistic, abs=1e-12
    )
    assert spearman(human, scores, **FAST).estimate == pytest.approx(
        scipy_stats.spearmanr(human, scores).statistic, abs=1e-12
    )
    assert kendall_tau_b(human, scores, **FAST).estimate == pytest.approx(
        scipy_stats.kendalltau(human, scores, variant="b").statistic, abs=1e-12
    )


def test_kendall_tau_b_matches_a_brute_force_pair_count() -> None:
    human, judge = _ordinal_data(n=30)
    concordant = discordant = tied_x = tied_y = 0
    for i in range(human.size):
        for k in range(i + 1, human.size):
            sign = np.sign(human[i] - human[k]) * np.sign(judge[i] - judge[k])
            concordant += sign > 0
            discordant += sign < 0
            tied_x += human[i] == human[k]
            tied_y += judge[i] == judge[k]
    n0 = human.size * (human.size - 1) / 2
    expected = (concordant - discordant) / math.sqrt((n0 - tied_x) * (n0 - tied_y))
    assert kendall_tau_b(human, judge, **FAST).estimate == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("function", [pearson, spearman, kendall_tau_b])
def test_correlation_with_a_constant_input_is_undefined(function: Callable[..., Estimate]) -> None:
    got = function([1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5], **FAST)
    assert (got.estimate, got.low, got.high) == (None, None, None)
    assert got.reason is not None
    assert "judge scores are constant" in got.reason
    assert str(got).startswith("undefined (")


def test_pearson_of_huge_values_is_finite() -> None:
    got = pearson([1e300, -1e300, 3e300], [1.0, -1.0, 3.0], **FAST)
    assert got.estimate == pytest.approx(1.0)


# --- probabilities --------------------------------------------------------------------------


def test_roc_auc_with_a_tie_by_hand() -> None:
    # Positive-negative pairs: 0.5>0.2, 0.5=0.5 (half), 0.9>0.2, 0.9>0.5 -> 3.5 / 4.
    got = roc_auc([0, 0, 1, 1], [0.2, 0.5, 0.5, 0.9], **FAST)
    assert got.estimate == pytest.approx(0.875)


def test_roc_auc_matches_scikit_learn_with_ties() -> None:
    human, scores = _binary_data()
    assert len(np.unique(scores)) < scores.size / 4  # heavily tied
    got = roc_auc(human, scores, **FAST)
    assert got.estimate == pytest.approx(skm.roc_auc_score(human, scores), abs=1e-12)
    # Detecting unsupported rows by 1 - score is the same number.
    flipped = skm.roc_auc_score(1 - human, 1 - scores)
    assert got.estimate == pytest.approx(flipped, abs=1e-12)


def test_roc_auc_of_constant_scores_is_one_half() -> None:
    assert roc_auc([0, 1, 1, 0], [0.3] * 4, **FAST).estimate == 0.5


def test_brier_score_by_hand_and_against_scikit_learn() -> None:
    assert brier_score([1, 0], [0.8, 0.4], **FAST).estimate == pytest.approx((0.04 + 0.16) / 2)
    human, scores = _binary_data()
    got = brier_score(human, scores, **FAST)
    assert got.estimate == pytest.approx(skm.brier_score_loss(human, scores), abs=1e-12)


def test_expected_calibration_error_by_hand() -> None:
    # Bin [0, 0.5]: p 0.1, 0.3 (mean 0.2), labels 1, 0 (0.5): |0.2 - 0.5| · 2/4 = 0.15.
    # Bin (0.5, 1]: p 0.8, 0.9 (mean 0.85), labels 1, 1: |0.85 - 1| · 2/4 = 0.075.
    got = expected_calibration_error([1, 0, 1, 1], [0.1, 0.3, 0.8, 0.9], n_bins=2, **FAST)
    assert got.ece.estimate == pytest.approx(0.225)
    assert got.n_bins == 2
    assert [(b.low, b.high, b.count) for b in got.bins] == [(0.0, 0.5, 2), (0.5, 1.0, 2)]
    assert got.bins[0].mean_predicted == pytest.approx(0.2)
    assert got.bins[0].observed_frequency == pytest.approx(0.5)


def test_a_probability_on_an_inner_edge_goes_to_the_lower_bin() -> None:
    got = expected_calibration_error([1, 0], [0.5, 0.0], n_bins=2, **FAST)
    assert [b.count for b in got.bins] == [2, 0]
    assert got.bins[1].mean_predicted is None
    assert got.bins[1].observed_frequency is None


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_reliability_bins_match_scikit_learn_calibration_curve(n_bins: int) -> None:
    human, scores = _binary_data(n=200)
    got = expected_calibration_error(human, scores, n_bins=n_bins, **FAST)
    prob_true, prob_pred = calibration_curve(human, scores, n_bins=n_bins, strategy="uniform")
    filled = [b for b in got.bins if b.count]
    assert [b.observed_frequency for b in filled] == pytest.approx(prob_true.tolist(), abs=1e-12)
    assert [b.mean_predicted for b in filled] == pytest.approx(prob_pred.tolist(), abs=1e-12)
    assert sum(b.count for b in got.bins) == human.size
    expected = sum(
        b.count / human.size * abs(float(b.mean_predicted or 0) - float(b.observed_frequency or 0))
        for b in filled
    )
    assert got.ece.estimate == pytest.approx(expected, abs=1e-12)


def test_probability_checks() -> None:
    with pytest.raises(InputError, match="outside") as info:
        brier_score([1, 0], [0.5, 1.2])
    assert info.value.field == "probabilities"
    with pytest.raises(InputError, match="n_bins"):
        expected_calibration_error([1, 0], [0.5, 0.2], n_bins=0)


# --- degenerate inputs ----------------------------------------------------------------------

ALL: list[Callable[..., Estimate]] = [
    accuracy,
    balanced_accuracy,
    negative_precision,
    negative_recall,
    negative_f_beta,
    cohen_kappa,
    krippendorff_alpha,
    pearson,
    spearman,
    kendall_tau_b,
    roc_auc,
    brier_score,
]


@pytest.mark.parametrize("function", ALL)
def test_empty_input_is_an_error(function: Callable[..., Estimate]) -> None:
    with pytest.raises(InputError, match="empty input"):
        function([], [])


@pytest.mark.parametrize("function", ALL)
def test_mismatched_lengths_are_an_error(function: Callable[..., Estimate]) -> None:
    with pytest.raises(InputError, match="mismatched lengths: human has 3 values but"):
        function([0, 1, 1], [0, 1])


@pytest.mark.parametrize("function", ALL)
def test_nan_is_an_error(function: Callable[..., Estimate]) -> None:
    with pytest.raises(InputError, match="non-finite value nan at index 1"):
        function([0, 1, 1], [0, float("nan"), 1])


@pytest.mark.parametrize(
    "function",
    [balanced_accuracy, negative_precision, negative_recall, negative_f_beta, roc_auc, brier_score],
)
def test_binary_statistics_reject_other_labels(function: Callable[..., Estimate]) -> None:
    with pytest.raises(InputError, match=r"non-binary value 2\.0 at index 1") as info:
        function([0, 2, 1], [0, 1, 1])
    assert info.value.field == "human"


@pytest.mark.parametrize(
    ("function", "human", "judge", "reason"),
    [
        (roc_auc, [1, 1, 1], [0.2, 0.5, 0.9], "one class (1); AUC needs both"),
        (balanced_accuracy, [0, 0, 0], [0, 1, 0], "one class (0)"),
        (negative_precision, [0, 1, 1], [1, 1, 1], "no row unsupported"),
        (negative_recall, [1, 1, 1], [0, 1, 1], "no human label is unsupported"),
        (negative_f_beta, [1, 1, 1], [1, 1, 1], "neither humans nor the judge"),
        (cohen_kappa, [1, 1, 1], [1, 1, 1], "single category"),
    ],
)
def test_undefined_statistics_give_none_and_a_reason(
    function: Callable[..., Estimate], human: list[int], judge: list[float], reason: str
) -> None:
    got = function(human, judge, **FAST)
    assert (got.estimate, got.low, got.high, got.defined) == (None, None, None, False)
    assert got.reason is not None
    assert reason in got.reason
    assert got.n == 3


def test_kappa_with_one_class_per_rater_is_defined_and_zero() -> None:
    # Humans all 1, judge all 0: p_o = 0 and p_e = 0, so κ = 0 (not the degenerate 0/0 case).
    assert cohen_kappa([1, 1, 1], [0, 0, 0], **FAST).estimate == 0.0


def test_kappa_rejects_values_outside_the_categories() -> None:
    with pytest.raises(InputError, match=r"value 6\.0 at index 1 is not one of") as info:
        cohen_kappa([1, 6], [1, 2], categories=[1, 2, 3])
    assert info.value.field == "human"
    with pytest.raises(InputError, match="unknown weights"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")  # type: ignore[arg-type]


def test_f_beta_rejects_a_non_positive_beta() -> None:
    with pytest.raises(InputError, match="beta must be a positive number"):
        negative_f_beta([0, 1], [0, 1], beta=0.0)


# --- bootstrap intervals --------------------------------------------------------------------


@pytest.mark.parametrize("function", ALL)
def test_intervals_contain_the_estimate_and_repeat_with_the_seed(
    function: Callable[..., Estimate],
) -> None:
    human, scores = _binary_data(n=40)
    judge = scores if function in (pearson, spearman, roc_auc, brier_score) else np.round(scores)
    first = function(human, judge, n_resamples=200, seed=3)
    assert first.low is not None
    assert first.high is not None
    assert first.estimate is not None
    assert first.low <= first.estimate <= first.high
    assert first.low < first.high
    assert first == function(human, judge, n_resamples=200, seed=3)
    assert first.confidence == 0.95
    assert first.n == 40
    assert "200 resamples, seed 3" in first.method
    _finite_or_none(first)


def test_another_seed_moves_the_interval_but_not_the_estimate() -> None:
    human, scores = _binary_data()
    first, second = (roc_auc(human, scores, n_resamples=300, seed=s) for s in (0, 1))
    assert first.estimate == second.estimate
    assert (first.low, first.high) != (second.low, second.high)


def test_accuracy_interval_equals_the_mean_interval_of_rag_judge_stats() -> None:
    # Same resample stream and quantile rule as stats.bootstrap_mean_ci, so the same interval.
    human, scores = _binary_data()
    judge = predict_supported(scores, 0.5)
    got = accuracy(human, judge, n_resamples=500, seed=4, confidence=0.9)
    reference = stats.bootstrap_mean_ci(
        (human == judge).astype(float), n_resamples=500, seed=4, confidence=0.9
    )
    assert (got.estimate, got.low, got.high) == pytest.approx(
        (reference.estimate, reference.low, reference.high), abs=1e-15
    )


def test_undefined_resamples_are_left_out_and_counted() -> None:
    # One unsupported row out of six: resamples without it (or with only it) have one class.
    human, scores = [0, 1, 1, 1, 1, 1], [0.1, 0.4, 0.5, 0.6, 0.2, 0.9]
    got = roc_auc(human, scores, n_resamples=400, seed=9)
    indices = np.random.default_rng(9).integers(0, 6, size=(400, 6))
    one_class = int(np.sum(np.all(indices != 0, axis=1) | np.all(indices == 0, axis=1)))
    assert one_class > 0
    assert got.undefined_resamples == one_class
    assert f"{one_class} resamples where it is undefined left out" in got.method
    assert got.low is not None
    assert got.high is not None


def test_interval_does_not_depend_on_the_block_size(monkeypatch: pytest.MonkeyPatch) -> None:
    human, scores = _binary_data(n=30)
    whole = cohen_kappa(human, np.round(scores), n_resamples=120)
    monkeypatch.setattr(estimate_module, "_CHUNK_ELEMENTS", 70)
    assert cohen_kappa(human, np.round(scores), n_resamples=120) == whole


def test_a_statistic_undefined_in_every_resample_has_no_interval() -> None:
    def only_on_all_rows(idx: NDArray[np.intp]) -> float | Undefined:
        if idx.tolist() == [0, 1, 2]:
            return 1.0
        return Undefined("not the original rows")

    got = bootstrap_estimate("odd", only_on_all_rows, 3, n_resamples=5)
    assert got.estimate == 1.0
    assert (got.low, got.high, got.undefined_resamples) == (None, None, 5)
    assert got.reason == "undefined in every bootstrap resample (not the original rows)"
    assert str(got).startswith("1.0000 [no interval:")


def test_bootstrap_options_are_checked() -> None:
    with pytest.raises(InputError, match="confidence"):
        accuracy([1, 0], [1, 0], confidence=1.0)
    with pytest.raises(InputError, match="n_resamples"):
        accuracy([1, 0], [1, 0], n_resamples=0)


def test_estimate_str() -> None:
    got = Estimate("x", 0.41234, 0.38012, 0.44661, 0.95, 10, "m")
    assert str(got) == "0.4123 [0.3801, 0.4466]"
