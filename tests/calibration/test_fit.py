"""Fitting a judge to labels: the maps, the cross-validation, the refusals, the profile."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from rag_judge.calibration import (
    balanced_accuracy,
    brier_score,
    cohen_kappa,
    expected_calibration_error,
    human_labels_from_records,
    judge_scores_from_records,
    roc_auc,
)
from rag_judge.calibration.annotators import annotator_agreement
from rag_judge.calibration.fit import (
    _STATISTICS,
    FitRows,
    check_fit_labels,
    cross_validate_fit,
    fit_judge,
)
from rag_judge.calibration.probability_map import ProbabilityMap, fit_map
from rag_judge.calibration.profile import (
    CalibrationProfile,
    check_profile,
    read_profile,
    row_outside_profile,
)
from rag_judge.core.errors import InputError

METRIC = "faithfulness"


def miscalibrated(n: int, seed: int = 0) -> FitRows:
    """A judge that ranks well but is overconfident: labels ~ Bernoulli(p), value = p**3."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    labels = (rng.uniform(size=n) < p).astype(float)
    return FitRows(tuple(f"r{i}" for i in range(n)), p**3, None, labels)


def test_fewer_than_ten_labels_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="at least 10 labelled rows, got 9"):
        check_fit_labels(np.array([0, 1] * 4 + [1], dtype=float), 5)


def test_one_class_is_a_clear_error() -> None:
    with pytest.raises(InputError, match=r"all 12 labels are 1 \(supported\).*both classes"):
        check_fit_labels(np.ones(12), 5)


def test_a_class_smaller_than_the_folds_is_a_clear_error() -> None:
    labels = np.array([1.0] * 10 + [0.0] * 3)
    with pytest.raises(InputError, match="class 0 has 3"):
        check_fit_labels(labels, 5)


def test_fitting_an_overconfident_judge_improves_its_calibration_out_of_fold() -> None:
    rows = miscalibrated(400)
    cv = cross_validate_fit(rows, n_resamples=200)
    before = cv.before["expected_calibration_error"].estimate
    after = cv.after["expected_calibration_error"].estimate
    assert before is not None
    assert after is not None
    assert after < before - 0.05
    brier = cv.change["brier_score"]
    assert brier.estimate is not None
    assert brier.high is not None
    assert brier.high < 0
    assert len(cv.choices) == 5
    assert sum(c.n_held_out for c in cv.choices) == 400
    assert ((cv.out_of_fold >= 0) & (cv.out_of_fold <= 1)).all()


def test_the_cross_validation_is_seeded() -> None:
    rows = miscalibrated(120)
    first = cross_validate_fit(rows, n_resamples=50, seed=3)
    again = cross_validate_fit(rows, n_resamples=50, seed=3)
    assert np.array_equal(first.out_of_fold, again.out_of_fold)
    assert first.after == again.after


def test_the_paired_statistics_are_the_module_figures() -> None:
    rng = np.random.default_rng(1)
    h = (rng.uniform(size=80) < 0.4).astype(float)
    p = rng.uniform(size=80)
    v = (p >= 0.5).astype(float)
    expected = {
        "expected_calibration_error": expected_calibration_error(h, p).ece.estimate,
        "brier_score": brier_score(h, p).estimate,
        "balanced_accuracy": balanced_accuracy(h, v).estimate,
        "cohen_kappa": cohen_kappa(h, v, categories=(0.0, 1.0)).estimate,
        "roc_auc": roc_auc(h, p).estimate,
    }
    for name, value in expected.items():
        assert _STATISTICS[name](h, p, v) == pytest.approx(value), name


def test_isotonic_map_is_scikit_learns_and_survives_json() -> None:
    rows = miscalibrated(200)
    fitted = fit_map("isotonic", ("value",), rows.features(("value",)), rows.labels)
    reference = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")
    reference.fit(rows.values, rows.labels)
    grid = np.linspace(0, 1, 101)
    assert np.allclose(fitted.apply(grid[:, None]), reference.predict(grid))
    again = ProbabilityMap.from_json(json.loads(json.dumps(fitted.to_json())))
    assert np.array_equal(again.apply(grid[:, None]), fitted.apply(grid[:, None]))
    assert again.monotone_in_value


def test_logistic_map_is_platt_scaling_on_the_logit() -> None:
    rows = miscalibrated(200)
    fitted = fit_map("logistic", ("value",), rows.features(("value",)), rows.labels)
    x = np.log(np.clip(rows.values, 1e-4, 1 - 1e-4) / (1 - np.clip(rows.values, 1e-4, 1 - 1e-4)))
    reference = LogisticRegression().fit(x[:, None], rows.labels)
    assert np.allclose(
        fitted.apply(rows.features(("value",))), reference.predict_proba(x[:, None])[:, 1]
    )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"kind": "spline", "features": ["value"]}, "map.kind"),
        ({"kind": "isotonic", "features": ["value"], "x": [0, 1], "y": [1, 0]}, "map.x"),
        ({"kind": "logistic", "features": ["value"], "coefficients": [1.0]}, "map"),
    ],
)
def test_a_malformed_map_names_its_field(data: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as raised:
        ProbabilityMap.from_json(data)
    assert raised.value.field == field


def test_two_inputs_are_offered_only_with_claim_probabilities() -> None:
    rows = miscalibrated(60)
    assert all("min_probability" not in c[1] for c in rows.candidates())
    with_claims = FitRows(rows.ids, rows.values, rows.values**0.5, rows.labels)
    assert any("min_probability" in c[1] for c in with_claims.candidates())
    fitted = fit_judge(with_claims)
    assert 0.0 <= fitted.threshold <= 1.0


def profile(prompts: tuple[str, ...] = ("claims/support.en@2#aaaaaaaaaaaa",)) -> CalibrationProfile:
    rows = miscalibrated(100)
    fitted = fit_judge(rows)
    empty = {"estimate": None, "low": None, "high": None}
    return CalibrationProfile.model_validate(
        {
            "judge": {"metric": METRIC, "model": "local/m", "mode": "score", "prompts": prompts},
            "map": fitted.map.to_json(),
            "threshold": fitted.threshold,
            "objective": fitted.objective,
            "labels": {"source": "human", "files": ["l.jsonl"], "n": 100, "supported": 50},
            "cross_validation": {
                "folds": 5, "seed": 0, "n": 100, "before": {"brier_score": empty},
                "after": {"brier_score": empty}, "change": {"brier_score": empty},
                "fold_maps": [],
            },
        }
    )  # fmt: skip


def test_a_profile_is_refused_on_a_changed_prompt_model_or_path() -> None:
    fitted = profile()
    ref = fitted.judge.prompts[0]
    same = {ref: ref}
    check_profile(fitted, metric=METRIC, model="local/m", mode="score", current_prompts=same)
    edited = {ref: "claims/support.en@3#bbbbbbbbbbbb"}
    with pytest.raises(InputError, match=r"that prompt is now claims/support.en@3#bbbb"):
        check_profile(fitted, metric=METRIC, model="local/m", mode="score", current_prompts=edited)
    with pytest.raises(InputError, match="no longer exists"):
        check_profile(fitted, metric=METRIC, model="local/m", mode="score", current_prompts={})
    with pytest.raises(InputError, match="another model"):
        check_profile(fitted, metric=METRIC, model="openai/x", mode="score", current_prompts=same)
    with pytest.raises(InputError, match="generate path"):
        check_profile(fitted, metric=METRIC, model="local/m", mode="generate", current_prompts=same)


def test_a_row_judged_with_another_prompt_falls_outside_the_profile() -> None:
    fitted = profile()
    assert row_outside_profile(fitted, fitted.judge.prompts, "score") is None
    outside = row_outside_profile(fitted, ("few_shot#123",), "score")
    assert outside is not None
    assert "few_shot#123" in outside


def test_reading_a_profile_checks_it(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile().model_dump(mode="json")), encoding="utf-8")
    read, name = read_profile(path)
    assert name.startswith("p.json@")
    assert read.judge.model == "local/m"
    path.write_text('{"format": 99}', encoding="utf-8")
    with pytest.raises(InputError, match="newer"):
        read_profile(path)
    path.write_text('{"format": 1, "judge": {}}', encoding="utf-8")
    with pytest.raises(InputError, match="not a calibration profile"):
        read_profile(path)
    path.write_text("not json", encoding="utf-8")
    with pytest.raises(InputError, match="not a JSON profile"):
        read_profile(path)


def test_two_annotators_are_joined_by_id() -> None:
    scores = judge_scores_from_records(
        [{"id": i, "results": {METRIC: {"value": v, "status": "ok"}}}
         for i, v in [("a", 0.9), ("b", 0.1), ("c", 0.8), ("d", 0.2), ("e", 0.7)]],
        METRIC,
    )  # fmt: skip
    first = human_labels_from_records(
        [{"id": i, "label": y} for i, y in [("a", 1), ("b", 0), ("c", 1), ("d", 0), ("x", 1)]],
        "binary",
    )
    # The second annotator labelled in another order, one row the first did not, and
    # disagrees on "c".
    second = human_labels_from_records(
        [{"id": i, "label": y} for i, y in [("d", 0), ("c", 0), ("b", 0), ("a", 1), ("e", 1)]],
        "binary",
    )
    found = annotator_agreement(scores, first, second)
    assert found.n == 4  # a, b, c, d: both labelled and scored
    assert (found.only_first, found.only_second) == (1, 1)
    h1, h2, judge = [1, 0, 1, 0], [1, 0, 0, 0], [1, 0, 1, 0]
    expected = cohen_kappa(h1, h2, categories=(0.0, 1.0)).estimate
    assert found.between_people.estimate == pytest.approx(expected)
    assert found.judge_first.estimate == pytest.approx(1.0)
    assert found.judge_second.estimate == pytest.approx(
        cohen_kappa(h2, judge, categories=(0.0, 1.0)).estimate
    )
    assert found.people_accuracy.estimate == pytest.approx(0.75)


def test_annotators_with_no_row_in_common_is_a_clear_error() -> None:
    scores = judge_scores_from_records(
        [{"id": "a", "results": {METRIC: {"value": 1.0, "status": "ok"}}}], METRIC
    )
    first = human_labels_from_records([{"id": "a", "label": 1}], "binary")
    second = human_labels_from_records([{"id": "b", "label": 1}], "binary")
    with pytest.raises(InputError, match="share row ids"):
        annotator_agreement(scores, first, second)
