"""`sweep --calibration`: a profile's calibrated P(supported) per question and k, beside the raw
judge, in the per-question table, the summary and the report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from sweep_toy import RESAMPLES, toy_sweep

from rag_judge.calibration.profile import CalibrationProfile
from rag_judge.jobs.calibrate.fit_profile import CALIBRATED_SUFFIX, apply_profile_to_sweep
from rag_judge.report.sweep_report import write_sweep_report

METRIC = "faithfulness"


def profile_for(model: str, mode: str, prompts: list[str]) -> CalibrationProfile:
    """A logistic map that halves the log-odds: P = σ(0.5·logit(v))."""
    return CalibrationProfile.model_validate(
        {
            "judge": {"metric": METRIC, "model": model, "mode": mode, "prompts": prompts},
            "map": {"kind": "logistic", "features": ["value"], "coefficients": [0.5],
                    "intercept": 0.0},
            "threshold": 0.5,
            "objective": "balanced_accuracy",
            "labels": {"source": "human", "files": ["l.jsonl"], "n": 10, "supported": 5},
            "cross_validation": {"folds": 5, "seed": 0, "n": 10, "before": {}, "after": {},
                                 "change": {}, "fold_maps": []},
        }
    )  # fmt: skip


def test_a_sweep_gets_a_calibrated_column_and_reports_it(tmp_path: Path) -> None:
    result, _ = toy_sweep(metrics=[METRIC])
    prompts = sorted({p for r in result.judgements.values() for p in r[METRIC].prompts})
    profile = profile_for(result.model, result.judge_mode, prompts)
    calibrated = apply_profile_to_sweep(result, profile, "p.json@abc")
    column = METRIC + CALIBRATED_SUFFIX
    assert calibrated.calibrated == (column,)
    frame = calibrated.per_question
    raw, fitted = frame[METRIC], frame[column]
    assert (raw.isna() == fitted.isna()).all()
    for v, p in zip(raw.dropna(), fitted.dropna(), strict=True):
        expected = 0.5 if v == 0.5 else None
        assert 0.0 <= p <= 1.0
        if expected is not None:
            assert p == expected
        assert (p - 0.5) * (v - 0.5) >= 0  # the same side of 0.5, pulled towards it
    summary = calibrated.summary(n_resamples=RESAMPLES)
    assert column in set(summary["metric"])
    report = write_sweep_report(calibrated, tmp_path / "report", title="t", n_resamples=RESAMPLES)
    assert column in report.markdown_path.read_text(encoding="utf-8")


def test_rows_judged_outside_the_profile_stay_uncalibrated() -> None:
    result, _ = toy_sweep(metrics=[METRIC])
    profile = profile_for(result.model, result.judge_mode, ["claims/other.en@1#000000000000"])
    calibrated = apply_profile_to_sweep(result, profile, "p.json@abc")
    assert pd.isna(calibrated.per_question[METRIC + CALIBRATED_SUFFIX]).all()
    said = calibrated.skipped[METRIC + CALIBRATED_SUFFIX]
    assert "left uncalibrated by p.json@abc" in said
    assert "not fitted with" in said
