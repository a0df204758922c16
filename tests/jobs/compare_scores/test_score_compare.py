"""compare-scores and the gate: paired figures computed right, and decisions that separate a
real regression from noise; every unpaired row listed; bad input named."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rag_judge.cli import main
from rag_judge.core.errors import InputError
from rag_judge.jobs.compare_scores.comparison import compare_scores
from rag_judge.jobs.compare_scores.files import read_score_file, score_records
from rag_judge.jobs.compare_scores.gate import Gate, parse_bounds, run_gate


def record(i: int, value: float | None, status: str = "ok", **metrics: Any) -> dict[str, Any]:
    result = {
        "metric": "faithfulness",
        "value": value,
        "status": status,
        "claims": [
            {
                "claim": f"Claim {i}.",
                "verdict": "supported" if (value or 0) >= 0.5 else "not_mentioned",
                "support_probability": value,
            }
        ]
        if value is not None
        else [],
    }
    return {
        "id": f"q{i}",
        "question": f"Question {i}?",
        "results": {"faithfulness": result, **metrics},
    }


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


BASE_VALUES = [0.9, 0.8, 1.0, 0.7, 0.95, 0.85] * 5  # 30 rows


def base_records() -> list[dict[str, Any]]:
    return [record(i, v) for i, v in enumerate(BASE_VALUES)]


def compare(tmp_path: Path, new: list[dict[str, Any]], *args: str) -> Any:
    base = write(tmp_path / "base.jsonl", base_records())
    changed = write(tmp_path / "new.jsonl", new)
    return CliRunner().invoke(main, ["compare-scores", str(base), str(changed), *args])


def test_identical_files_pass_with_a_zero_difference(tmp_path: Path) -> None:
    run = compare(tmp_path, base_records(), "--fail-if-worse", "--margin", "0.02")
    assert run.exit_code == 0, run.output
    assert (
        "| faithfulness | 30 | 0.867 | 0.867 | +0.000 [+0.000, +0.000] | 1.000 | 0 / 0 |"
        in run.output
    )
    assert "gate: pass faithfulness not worse than the baseline (margin 0.020)" in run.output


def test_a_third_of_the_rows_degraded_fails_the_gate(tmp_path: Path) -> None:
    new = [record(i, 0.2 if i % 3 == 0 else v) for i, v in enumerate(BASE_VALUES)]
    junit = tmp_path / "gate.xml"
    run = compare(tmp_path, new, "--fail-if-worse", "--margin", "0.02", "--junit", str(junit))
    assert run.exit_code == 1, run.output
    assert "gate: FAIL faithfulness not worse than the baseline" in run.output
    assert "the whole interval lies below −0.020" in run.output
    suite = ElementTree.parse(junit).getroot()
    assert suite.attrib == {"tests": "2", "failures": "1"}  # every row judged; not worse
    failure = suite.find("testsuite/testcase/failure")
    assert failure is not None
    assert "NEW − BASE -0.200, 95% CI [" in (failure.attrib["message"])


@pytest.mark.parametrize("side", ["NEW", "BASE"])
def test_a_row_that_could_not_be_judged_fails_the_gate_unless_allowed(
    tmp_path: Path, side: str
) -> None:
    """An outage that empties some rows must not turn the gate green on the rest: the paired
    comparison leaves them out, so the gate fails on them (either side), unless the user says
    so with --allow-unjudged, and the count is printed either way."""
    failed = [record(i, None, "backend_error") if i == 3 else record(i, v)
              for i, v in enumerate(BASE_VALUES)]  # fmt: skip
    base = write(tmp_path / "base.jsonl", failed if side == "BASE" else base_records())
    new = write(tmp_path / "new.jsonl", failed if side == "NEW" else base_records())
    junit = tmp_path / "gate.xml"

    def gate(*args: str) -> Any:
        return CliRunner().invoke(
            main, ["compare-scores", str(base), str(new), "--fail-if-worse", *args]
        )

    run = gate("--junit", str(junit))
    assert run.exit_code == 1, run.output
    assert (
        "gate: FAIL faithfulness judged on every gated row: 1 of 30 rows of "
        f"{side} could not be judged (backend_error 1; first: 'q3')"
    ) in run.output
    assert "gate: pass faithfulness not worse than the baseline" in run.output  # 29 paired rows
    assert ElementTree.parse(junit).getroot().attrib == {"tests": "2", "failures": "1"}
    allowed = gate("--allow-unjudged")
    assert allowed.exit_code == 0, allowed.output
    assert f"1 of 30 rows of {side} could not be judged" in allowed.output
    assert "allowed by --allow-unjudged" in allowed.output
    only_new = CliRunner().invoke(
        main, ["compare-scores", str(base), str(new), "--fail-under", "faithfulness=0.5"]
    )
    assert only_new.exit_code == (1 if side == "NEW" else 0), only_new.output  # NEW's mean


def test_a_row_without_a_result_for_the_metric_is_not_judged() -> None:
    rows = base_records()
    del rows[0]["results"]["faithfulness"]
    rows[0]["results"]["exact_match"] = {"metric": "exact_match", "value": 1.0, "status": "ok"}
    checks = run_gate(score_records(rows, "x"), Gate(bounds={"faithfulness": 0.5}))
    assert [c.passed for c in checks] == [False, True]
    assert "1 of 30 rows of NEW could not be judged (no result 1; first: 'q0')" in (
        checks[0].message
    )
    no_claims = [record(0, None, "no_claims"), *base_records()[1:]]
    checks = run_gate(score_records(no_claims, "x"), Gate(bounds={"faithfulness": 0.5}))
    assert checks[0].passed  # nothing to judge is no failure of the run
    assert checks[0].message == "rows judged: NEW 30 of 30"  # one had nothing to judge


def test_markdown_carries_no_raw_html_from_the_files(tmp_path: Path) -> None:
    """Markdown renders HTML: a metric name, row id, question or claim from the input must reach
    it escaped, as the HTML report escapes it."""
    hostile = "<img src=x onerror=alert(1)>"

    def rows(values: list[float]) -> list[dict[str, Any]]:
        out = []
        for i, v in enumerate(values):
            row = record(i, v)
            result = row["results"].pop("faithfulness")
            result["metric"] = hostile
            result["claims"][0]["claim"] = hostile
            row["results"][hostile] = result
            row["question"] = f"{hostile}?"
            row["id"] = f"{hostile}{i}"
            out.append(row)
        return out

    base = write(tmp_path / "base.jsonl", rows(BASE_VALUES))
    new = write(tmp_path / "new.jsonl", rows([0.1] * len(BASE_VALUES)))
    out = tmp_path / "out"
    run = CliRunner().invoke(
        main, ["compare-scores", str(base), str(new), "--fail-if-worse", "-o", str(out)]
    )
    assert run.exit_code == 1, run.output
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    outside_code = re.sub(r"`[^`\n]*`", "", markdown)  # a code span shows its text literally
    assert "<img" not in outside_code
    assert "&lt;img src=x onerror=alert(1)&gt;" in markdown
    assert "<img" not in (out / "comparison.html").read_text(encoding="utf-8")


def test_one_row_flipped_among_many_is_noise_and_passes_with_its_ci(tmp_path: Path) -> None:
    new = [record(i, 0.0 if i == 4 else v) for i, v in enumerate(BASE_VALUES)]
    run = compare(tmp_path, new, "--fail-if-worse", "--margin", "0.02")
    assert run.exit_code == 0, run.output
    assert "a drop the data cannot tell from noise" in run.output
    assert "NEW − BASE -0.032, 95% CI [-0.095, +0.000] over 30 paired rows" in run.output
    assert "| faithfulness | 30 | 0.867 | 0.835 |" in run.output
    assert "0 / 1" in run.output  # one row broken at the 0.5 threshold, none fixed


def test_the_paired_figures_match_a_direct_computation(tmp_path: Path) -> None:
    new = [record(i, min(1.0, v + 0.05)) for i, v in enumerate(BASE_VALUES)]
    base = read_score_file(write(tmp_path / "b.jsonl", base_records()))
    found = compare_scores(base, score_records(new, "new")).metric("faithfulness")
    expected = sum(min(1.0, v + 0.05) - v for v in BASE_VALUES) / len(BASE_VALUES)
    assert found.difference is not None
    assert found.difference.estimate == pytest.approx(expected)
    assert found.difference.low <= expected <= found.difference.high
    assert found.randomization is not None
    assert found.randomization.p_value < 0.001  # every difference has the same sign
    assert found.changed[0].change == pytest.approx(0.05)
    assert [c.id for c in found.changed][:2] == ["q0", "q1"]  # ties in id order


def test_unpaired_rows_are_listed_with_their_statuses(tmp_path: Path) -> None:
    new = base_records()[1:]  # q0 only in BASE
    new[0] = record(1, None, "parse_error")  # q1 scored in BASE only
    new.append(record(99, 0.5))  # only in NEW
    run = compare(tmp_path, new, "-o", str(tmp_path / "out"))
    assert run.exit_code == 0, run.output
    assert "- faithfulness: only in BASE (ok): `q0`" in run.output
    assert "- faithfulness: BASE ok, NEW parse_error: `q1`" in run.output
    assert "- faithfulness: only in NEW (ok): `q99`" in run.output
    saved = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert saved["only_base"] == ["q0"]
    assert saved["only_new"] == ["q99"]
    assert saved["metrics"][0]["n_paired"] == 28
    html = (tmp_path / "out" / "comparison.html").read_text(encoding="utf-8")
    assert "<script" not in html
    assert "http" not in html
    csv_lines = (tmp_path / "out" / "comparison.csv").read_text(encoding="utf-8").splitlines()
    assert csv_lines[0].startswith("metric,n_paired,base_mean,new_mean,difference")
    assert csv_lines[1].startswith("faithfulness,28,")


def test_the_html_escapes_claims_and_questions(tmp_path: Path) -> None:
    new = base_records()
    new[0] = record(0, 0.1)
    new[0]["question"] = "<script>alert(1)</script>?"
    new[0]["results"]["faithfulness"]["claims"][0]["claim"] = "x < y & <b>z</b>"
    run = compare(tmp_path, new, "-o", str(tmp_path / "out"))
    assert run.exit_code == 0, run.output
    html = (tmp_path / "out" / "comparison.html").read_text(encoding="utf-8")
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;?" in html
    assert "x &lt; y &amp; &lt;b&gt;z&lt;/b&gt;" in html


def test_fail_under_on_the_mean_or_its_ci_low_end(tmp_path: Path) -> None:
    run = compare(tmp_path, base_records(), "--fail-under", "faithfulness=0.85")
    assert run.exit_code == 0, run.output
    assert "gate: pass faithfulness mean >= 0.850: mean 0.867 [" in run.output
    strict = compare(
        tmp_path, base_records(), "--fail-under", "faithfulness=0.85", "--gate-on", "ci-low"
    )
    assert strict.exit_code == 1, strict.output
    assert "gate: FAIL faithfulness CI lower bound >= 0.850" in strict.output


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda r: r[3]["results"]["faithfulness"].update(value="high"),
            "new.jsonl:4, field 'results.faithfulness.value'",
        ),
        (lambda r: r[2].update(id=""), "new.jsonl:3, field 'id'"),
        (
            lambda r: r[5]["results"]["faithfulness"].update(status="ok", value=None),
            "status 'ok' needs a value",
        ),
    ],
)
def test_bad_input_exits_2_naming_the_file_and_field(
    tmp_path: Path, mutate: Any, message: str
) -> None:
    new = base_records()
    mutate(new)
    run = compare(tmp_path, new)
    assert run.exit_code == 2, run.output
    assert "new.jsonl" in run.output
    assert message in run.output
    assert "Traceback" not in run.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-under", "faithfulness"], "expected METRIC=BOUND"),
        (["--fail-under", "faithfulness=1.5"], "must be in [0, 1]"),
        (["--fail-under", "recall=0.5"], "no results for metric 'recall'"),
        (["--metrics", "completeness"], "no row has results for metric 'completeness'"),
    ],
)
def test_bad_gate_arguments_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    run = compare(tmp_path, base_records(), *args)
    assert run.exit_code == 2, run.output
    assert message in run.output


def test_parse_bounds_and_a_gate_without_checks() -> None:
    assert parse_bounds("faithfulness=0.8, context_recall=0.7") == {
        "faithfulness": 0.8,
        "context_recall": 0.7,
    }
    with pytest.raises(InputError, match="not a number"):
        parse_bounds("faithfulness=high")
    assert run_gate(score_records(base_records(), "x")) == []


@pytest.mark.parametrize("value", [1.5, -0.5])
def test_a_value_outside_zero_to_one_is_not_a_score(tmp_path: Path, value: float) -> None:
    bad = base_records()
    bad[3] = record(3, value)
    run = compare(tmp_path, bad)
    assert run.exit_code == 2
    assert "new.jsonl:4, field 'results.faithfulness.value': a judge's value lies in [0, 1]" in (
        run.output
    )
