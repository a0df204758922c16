"""`calibrate` and its report files on small hand-built judge outputs with hand-derived figures.

The binary fixture (derivations in the tests): five labelled rows with scores, one labelled
row the judge could not parse, one labelled row with no claims, and three judged rows nobody
labelled (one of them unparsed), as `rag-judge score` writes them.
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rag_judge.calibration import (
    PairwisePreference,
    cohen_kappa,
    expected_calibration_error,
    human_labels_from_records,
    judge_scores_from_records,
    krippendorff_alpha,
    ppi_mean,
    select_threshold,
    spearman,
)
from rag_judge.calibration.report import CalibrationReport, calibrate, to_scale
from rag_judge.core.errors import InputError
from rag_judge.jobs.calibrate.job import row_details_from_records
from rag_judge.report.calibration_html import (
    headline,
    render_summary_markdown,
    write_calibration_report,
)

FAST = {"n_resamples": 200}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def record(
    id_: str,
    value: float | None,
    probability: float | None = None,
    *,
    status: str = "ok",
    answer: str = "An answer.",
    claims: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One score-file line: a faithfulness result with one claim (supported iff value >= .5)."""
    if claims is None:
        claims = []
        if status == "ok":
            verdict = "supported" if value is not None and value >= 0.5 else "not_mentioned"
            claims = [
                {
                    "claim": f"Claim of {id_}.",
                    "verdict": verdict,
                    "reason": f"reason for {id_}",
                    "support_probability": probability,
                }
            ]
    result = {"value": value, "status": status, "error": None, "claims": claims}
    return {
        "id": id_,
        "question": f"Question {id_}?",
        "answer": answer,
        "results": {"faithfulness": result},
    }


# id: value, P(supported), human label
BINARY = [
    ("a", 1.0, 0.9, 1),
    ("b", 0.0, 0.1, 0),
    ("c", 0.5, 0.6, 0),
    ("d", 1.0, 0.8, 1),
    ("f", 0.25, 0.3, 1),
]


def binary_records(with_probability: bool = True) -> list[dict[str, Any]]:
    rows = [record(i, v, p if with_probability else None) for i, v, p, _ in BINARY]
    rows += [
        record("e", None, status="parse_error"),
        record("g", None, status="no_claims"),
        record("u1", 1.0, 0.7 if with_probability else None),
        record("u2", 0.0, 0.2 if with_probability else None),
        record("u3", None, status="parse_error"),
    ]
    return rows


def binary_labels() -> Any:
    rows = [{"id": i, "label": y} for i, _, _, y in BINARY]
    rows += [{"id": "e", "label": 1}, {"id": "g", "label": 0}]
    return human_labels_from_records(rows, "binary", source="labels.jsonl")


def binary_report(**options: Any) -> CalibrationReport:
    records = binary_records(options.pop("with_probability", True))
    judge = judge_scores_from_records(records, "faithfulness", source="scores.jsonl")
    details = row_details_from_records(records, "faithfulness")
    return calibrate(judge, binary_labels(), details=details, **FAST, **options)


H = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
S = np.array([1.0, 0.0, 0.5, 1.0, 0.25])
P = np.array([0.9, 0.1, 0.6, 0.8, 0.3])


def test_binary_figures_at_the_default_threshold() -> None:
    report = binary_report()
    # At 0.5 the judge says [1, 0, 1, 1, 0] against humans [1, 0, 0, 1, 1]:
    # caught b, missed c, false alarm f, passed a and d.
    c = report.confusion
    assert c is not None
    assert (c.threshold, c.caught, c.missed, c.false_alarm, c.passed) == (0.5, 1, 1, 1, 2)
    assert report.threshold is not None
    assert report.threshold.source == "default"
    assert report.n == 5
    expected = {
        "accuracy": 3 / 5,
        "balanced_accuracy": (1 / 2 + 2 / 3) / 2,
        "negative_precision": 1 / 2,
        "negative_recall": 1 / 2,
        "negative_f1": 2 * 1 / (2 * 1 + 1 + 1),
        # p_o = 0.6, p_e = 0.4·0.4 + 0.6·0.6 = 0.52 -> (0.6 − 0.52) / 0.48
        "cohen_kappa": 1 / 6,
        # supported scores {1, 1, 0.25} vs unsupported {0, 0.5}: 5 of 6 pairs ordered
        "roc_auc(value)": 5 / 6,
        "roc_auc(probability)": 5 / 6,
        # (0.1² + 0.1² + 0.6² + 0.2² + 0.7²) / 5
        "brier_score(probability)": 0.91 / 5,
        # one row per bin, so ECE = Σ|p − y| / n
        "expected_calibration_error(10 bins, probability)": 1.7 / 5,
    }
    for name, value in expected.items():
        assert report.estimate(name).estimate == pytest.approx(value, abs=1e-12), name
    predicted = (S >= 0.5).astype(float)
    assert report.estimate("cohen_kappa") == cohen_kappa(
        H, predicted, categories=(0.0, 1.0), **FAST
    )
    assert report.estimate("krippendorff_alpha(nominal)") == krippendorff_alpha(
        H, predicted, **FAST
    )
    assert report.estimate("spearman") == spearman(H, S, **FAST)
    assert report.reliability == expected_calibration_error(H, P, **FAST)
    assert report.reliability_on == "probability"
    names = [e.name for e in report.estimates]
    assert len(names) == len(set(names))


def test_unscored_rows_are_counted_not_dropped() -> None:
    report = binary_report()
    assert report.unscored == {"no_claims": 1, "parse_error": 1}
    assert report.judge_statuses == {"no_claims": 1, "ok": 7, "parse_error": 2}
    assert "2 labelled but unscored (1 no_claims, 1 parse_error)" in report.coverage
    assert "3 judged but not labelled (u1, u2, u3)" in report.coverage


def test_ppi_uses_the_judged_rows_nobody_labelled() -> None:
    report = binary_report()
    assert report.ppi is not None
    # f = the judge's label at 0.5; u3 is unscored and left out.
    direct = ppi_mean(H, (S >= 0.5).astype(float), [1.0, 0.0])
    assert report.ppi == direct
    # errors f − y = [0, 0, 1, 0, −1]: no bias, so θ = mean(f(U)) = 0.5
    assert report.ppi.ppi.estimate == pytest.approx(0.5)
    assert any("1 unlabelled rows without a score left out" in n for n in report.notes)


def test_worst_disagreements_carry_the_judges_claims() -> None:
    report = binary_report()
    # |value − label|: f 0.75, c 0.5; a, b, d agree exactly and are not listed
    assert [(d.id, d.gap) for d in report.disagreements] == [("f", 0.75), ("c", 0.5)]
    first = report.disagreements[0]
    assert first.detail is not None
    assert first.detail.claims[0].reason == "reason for f"
    assert first.detail.claims[0].verdict == "not_mentioned"
    assert first.probability == 0.3


def test_a_given_threshold_moves_the_confusion_matrix() -> None:
    report = binary_report(threshold=0.2)
    # f (0.25) is now judged supported: caught b, missed c, passed a, d, f
    c = report.confusion
    assert c is not None
    assert (c.caught, c.missed, c.false_alarm, c.passed) == (1, 1, 0, 3)
    assert report.estimate("accuracy").estimate == pytest.approx(4 / 5)
    assert report.threshold is not None
    assert report.threshold.source == "given"
    assert "given, not selected" in report.threshold.describe()


def test_a_selected_threshold_is_reported_on_held_out_rows_only() -> None:
    values = [0.1, 0.2, 0.3, 0.9, 0.4, 0.6, 0.7, 0.8, 0.35, 0.95]
    labels = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    ids = [f"r{i}" for i in range(10)]
    judge = judge_scores_from_records(
        [record(i, v) for i, v in zip(ids, values, strict=True)], "faithfulness"
    )
    human = human_labels_from_records(
        [{"id": i, "label": y} for i, y in zip(ids, labels, strict=True)], "binary"
    )
    report = calibrate(judge, human, select="balanced_accuracy", **FAST)
    selection = select_threshold(labels, values, **FAST)
    assert report.threshold is not None
    assert report.threshold.source == "selected"
    assert report.threshold.threshold == selection.choice.threshold
    held_out = report.estimate("accuracy[held_out]")
    assert held_out == replace(selection.held_out["accuracy"], name="accuracy[held_out]")
    # 5 rows per class, round(2.5) = 3 of each to dev: 4 held out
    assert held_out.n == len(selection.test_indices) == 4
    assert report.confusion is not None
    assert report.confusion.n == 4
    with pytest.raises(KeyError, match="no estimate 'accuracy'"):
        report.estimate("accuracy")
    assert "held-out" in headline(report)


def test_select_needs_both_classes_twice() -> None:
    judge = judge_scores_from_records([record("a", 1.0), record("b", 0.0)], "faithfulness")
    human = human_labels_from_records([{"id": "a", "label": 1}, {"id": "b", "label": 0}], "binary")
    with pytest.raises(InputError, match=r"cannot select a threshold on these 2 rows.*instead"):
        calibrate(judge, human, select="f_beta")


def test_without_probabilities_brier_and_ece_use_the_value_and_say_so() -> None:
    report = binary_report(with_probability=False)
    names = [e.name for e in report.estimates]
    assert "roc_auc(probability)" not in names
    assert "brier_score(value)" in names
    # (0² + 0² + 0.5² + 0² + 0.75²) / 5
    assert report.estimate("brier_score(value)").estimate == pytest.approx(0.8125 / 5)
    assert report.reliability_on == "value"
    assert any("the judge gave no support probabilities" in n for n in report.notes)


def test_excluded_labels_are_listed_with_the_judges_status() -> None:
    records = [record("a", 1.0), record("b", 0.0), record("x", None, status="no_claims")]
    judge = judge_scores_from_records(records, "faithfulness")
    human = human_labels_from_records(
        [{"id": "a", "label": "yes"}, {"id": "b", "label": "no"}, {"id": "x", "label": "generic"}],
        "binary",
        mapping={"yes": 1, "no": 0, "generic": None},
    )
    report = calibrate(judge, human, **FAST)
    assert report.n == 2
    assert any("the judge's statuses on them: no_claims 1" in n for n in report.notes)
    assert report.ppi is None  # the excluded row is labelled, not unlabelled


def test_ordinal_mapping_rule() -> None:
    values = [0.0, 0.124, 0.125, 0.374, 0.375, 0.5, 0.625, 0.874, 0.875, 1.0]
    # 1 + floor(4v + 0.5): the cut points are 0.125, 0.375, 0.625, 0.875
    assert to_scale(values, 1, 5).tolist() == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert to_scale([0.5], 0, 1).tolist() == [1]  # half rounds up
    assert to_scale([0.49], 0, 1).tolist() == [0]


def ordinal_report(**options: Any) -> CalibrationReport:
    values = {"a": 1.0, "b": 0.6, "c": 0.3, "d": 0.0, "e": 0.9}
    ratings = {"a": 5, "b": 4, "c": 2, "d": 1, "e": 3}
    judge = judge_scores_from_records([record(i, v) for i, v in values.items()], "faithfulness")
    human = human_labels_from_records(
        [{"id": i, "label": y} for i, y in ratings.items()], "ordinal"
    )
    return calibrate(judge, human, **FAST, **options)


def test_ordinal_figures_use_the_mapped_categories() -> None:
    report = ordinal_report(scale=(1, 5))
    human = [5.0, 4.0, 2.0, 1.0, 3.0]
    mapped = [5.0, 3.0, 2.0, 1.0, 5.0]  # 1 + floor(4v + 0.5) for v = 1, .6, .3, 0, .9
    scale = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert report.scale == (1, 5)
    assert report.estimate("exact_agreement(mapped)").estimate == pytest.approx(3 / 5)
    for weights in ("linear", "quadratic"):
        assert report.estimate(f"cohen_kappa(weights={weights})") == cohen_kappa(
            human, mapped, weights=weights, categories=scale, **FAST
        )
    assert report.estimate("krippendorff_alpha(ordinal)") == krippendorff_alpha(
        human, mapped, level="ordinal", **FAST
    )
    assert report.estimate("spearman") == spearman(human, [1.0, 0.6, 0.3, 0.0, 0.9], **FAST)
    assert report.confusion is None
    assert report.reliability is None
    # gaps on the scale, unrounded: e |4.6 − 3| = 1.6, b |3.4 − 4| = 0.6, c |2.2 − 2| = 0.2
    assert [(d.id, d.judge) for d in report.disagreements] == [("e", 5), ("b", 3), ("c", 2)]
    assert [d.gap for d in report.disagreements] == pytest.approx([1.6, 0.6, 0.2])
    assert any("1 + floor(4·v + 0.5)" in n for n in report.notes)


def test_ordinal_labels_off_the_scale_are_refused() -> None:
    with pytest.raises(InputError, match="label 5 is off the scale 1–4"):
        ordinal_report(scale=(1, 4))


def test_continuous_alpha_needs_labels_on_the_judges_scale() -> None:
    judge = judge_scores_from_records(
        [record("a", 0.2), record("b", 0.5), record("c", 0.9)], "faithfulness"
    )

    def report(labels: list[float]) -> CalibrationReport:
        rows = [{"id": i, "label": y} for i, y in zip("abc", labels, strict=True)]
        return calibrate(judge, human_labels_from_records(rows, "continuous"), **FAST)

    inside = report([0.1, 0.6, 0.8])
    assert inside.estimate("krippendorff_alpha(interval)") == krippendorff_alpha(
        [0.1, 0.6, 0.8], [0.2, 0.5, 0.9], level="interval", **FAST
    )
    outside = report([1.0, 6.0, 8.0])
    alpha = outside.estimate("krippendorff_alpha(interval)")
    assert alpha.estimate is None
    assert alpha.reason is not None
    assert "outside [0, 1]" in alpha.reason
    assert outside.estimate("pearson").estimate == pytest.approx(
        float(np.corrcoef([1.0, 6.0, 8.0], [0.2, 0.5, 0.9])[0, 1])
    )


def test_claim_level_labels_pair_with_verdicts() -> None:
    claims = [
        {"claim": "One.", "verdict": "supported", "reason": "r1", "support_probability": 0.8},
        {"claim": "Two.", "verdict": "contradicted", "reason": "r2", "support_probability": 0.3},
    ]
    judge = judge_scores_from_records([record("q", 0.5, claims=claims)], "faithfulness")
    human = human_labels_from_records(
        [{"id": "q", "claim": 0, "label": 0}, {"id": "q", "claim": 1, "label": 0}],
        "binary",
        level="claim",
    )
    report = calibrate(judge, human, **FAST)
    # verdicts 1, 0 against labels 0, 0: missed claim 0, caught claim 1
    c = report.confusion
    assert c is not None
    assert (c.caught, c.missed, c.false_alarm, c.passed) == (1, 1, 0, 0)
    assert [(d.id, d.claim) for d in report.disagreements] == [("q", 0)]
    assert "claims" in headline(report)


def test_pairwise_preferences() -> None:
    judge = judge_scores_from_records(
        [
            record("a", 0.9),
            record("b", 0.2),
            record("c", 0.5),
            record("x", None, status="parse_error"),
        ],
        "faithfulness",
    )
    pairs = [
        PairwisePreference("a", "b", "a"),  # judge agrees
        PairwisePreference("c", "a", "a"),  # human prefers c, judge a (0.9 > 0.5)
        PairwisePreference("b", "c", "a"),  # human prefers b, judge c (0.5 > 0.2)
        PairwisePreference("a", "x", "a"),  # x unscored: skipped
    ]
    report = calibrate(judge, pairs, **FAST)
    assert report.kind == "pairwise"
    assert report.n == 3
    assert report.estimates[0].estimate == pytest.approx(1 / 3)  # concordance: 1 of 3
    assert report.unscored == {"parse_error": 1}
    assert "3 of 4 pairs compared" in report.coverage
    with pytest.raises(InputError, match="a threshold applies to binary labels, not pairwise"):
        calibrate(judge, pairs, threshold=0.5)


def test_bad_requests_are_refused_with_a_reason() -> None:
    judge = judge_scores_from_records([record("a", 1.0)], "faithfulness")
    human = human_labels_from_records([{"id": "a", "label": 1}], "binary")
    with pytest.raises(InputError, match="not both"):
        calibrate(judge, human, threshold=0.5, select="balanced_accuracy")
    with pytest.raises(InputError, match="hold metric 'faithfulness', not 'context_recall'"):
        calibrate(judge, human, metric="context_recall")
    with pytest.raises(InputError, match="kind 'ordinal' does not match the labels"):
        calibrate(judge, human, kind="ordinal")
    with pytest.raises(InputError, match="a scale applies to ordinal labels"):
        calibrate(judge, human, scale=(1, 5))
    other = human_labels_from_records([{"id": "zz", "label": 1}], "binary")
    with pytest.raises(InputError, match="no id in common"):
        calibrate(judge, other)


# --- the report files -------------------------------------------------------------------------


def test_report_files_are_written_and_real(tmp_path: Path) -> None:
    records = binary_records()
    records[4] = record("f", 0.25, 0.3, answer="<script>alert('x')</script> & | more")
    judge = judge_scores_from_records(records, "faithfulness", source="scores.jsonl")
    details = row_details_from_records(records, "faithfulness")
    report = calibrate(judge, binary_labels(), details=details, **FAST)
    files = write_calibration_report(report, tmp_path / "out")
    names = set(files.paths)
    assert names == {
        "metrics.csv",
        "summary.md",
        "reliability.png",
        "disagreements.jsonl",
        "report.html",
    }
    for path in files.paths.values():
        assert path.stat().st_size > 0, path

    png = files.paths["reliability.png"].read_bytes()
    assert png.startswith(PNG_MAGIC)
    again = write_calibration_report(report, tmp_path / "again")
    assert again.paths["reliability.png"].read_bytes() == png  # deterministic bytes

    with files.paths["metrics.csv"].open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["name", "estimate", "low", "high", "n", "method", "reason"]
    by_name = {r["name"]: r for r in rows}
    assert float(by_name["accuracy"]["estimate"]) == 0.6
    assert by_name["threshold"]["estimate"] == "0.5"
    assert by_name["threshold"]["low"] == ""
    assert float(by_name["ppi_mean"]["estimate"]) == pytest.approx(0.5)
    assert len(rows) == len(report.figures())

    lines = files.paths["disagreements.jsonl"].read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 2
    assert first["id"] == "f"
    assert first["answer"].startswith("<script>")
    assert first["claims"][0]["reason"] == "reason for f"

    summary = files.paths["summary.md"].read_text(encoding="utf-8")
    assert "| accuracy | 0.600 | [" in summary
    assert "| unsupported (0) | 1 (caught) | 1 (missed) |" in summary
    assert "Labelled but not scored: no_claims 1, parse_error 1" in summary
    assert "`reliability.png`" in summary

    html = files.paths["report.html"].read_text(encoding="utf-8")
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; | more" in html
    assert "data:image/png;base64," in html
    assert "http://" not in html
    assert "https://" not in html
    assert "<link" not in html
    assert "reason for f" in html


def test_ordinal_report_has_no_reliability_diagram(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "reliability.png").write_bytes(b"stale")
    files = write_calibration_report(ordinal_report(scale=(1, 5)), out)
    assert "reliability.png" not in files.paths
    assert not (out / "reliability.png").exists()
    html = files.paths["report.html"].read_text(encoding="utf-8")
    assert "data:image/png" not in html
    markdown = render_summary_markdown(ordinal_report(scale=(1, 5)))
    assert "| cohen_kappa(weights=quadratic) |" in markdown
    assert "Spearman ρ" in markdown
