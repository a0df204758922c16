"""The rag-judge command line: formats, notes on stderr, and one-line errors with exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_judge.cli import main

SAMPLE = Path(__file__).parents[2] / "eval_sets" / "trec_eval_sample"
QRELS, RUN, TRUNC = (str(SAMPLE / n) for n in ("qrels.test", "results.test", "results.trunc"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_output_has_aggregate_and_per_query() -> None:
    code, out, _ = run(
        "retrieval", QRELS, RUN, "-m", "ndcg@10,map", "-m", "P_5", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"aggregate", "per_query"}
    assert list(data["aggregate"]) == ["ndcg@10", "map", "precision@5"]
    assert round(data["aggregate"]["map"], 4) == 0.1785  # trec_eval's out.test
    assert set(data["per_query"]) == {"301", "302", "303"}


def test_table_prints_trec_eval_digits_and_per_query_rows() -> None:
    code, out, _ = run("retrieval", QRELS, RUN, "-m", "map", "--per-query")
    assert code == 0
    assert re.search(r"all\s+│\s+0\.1785", out)
    assert re.search(r"302\s+│\s+0\.4175", out)


def test_csv_has_every_digit() -> None:
    code, out, _ = run("retrieval", QRELS, RUN, "-m", "map", "-q", "--format", "csv")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "query_id,map"
    assert lines[-1].startswith("all,0.17854506")
    assert len(lines) == 5


def test_missing_queries_are_reported_or_zeroed() -> None:
    code, out, err = run("retrieval", QRELS, TRUNC, "-m", "map", "--format", "json")
    assert code == 0
    assert "302 (no ranking in the run)" in err
    assert "--missing-as-zero" in err
    assert set(json.loads(out)["per_query"]) == {"301", "303"}
    code, out, _ = run(
        "retrieval", QRELS, TRUNC, "-m", "map", "--missing-as-zero", "--format", "json"
    )
    assert round(json.loads(out)["aggregate"]["map"], 4) == 0.1016  # trec_eval -c, out.test.aqc


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "ndcg@-3"], "cutoff k must be a positive integer, got -3"),
        (["-m", "bleu"], "unknown measure 'bleu'"),
    ],
)
def test_bad_measures_exit_2_without_traceback(args: list[str], message: str) -> None:
    code, out, err = run("retrieval", QRELS, RUN, *args)
    assert code == 2
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err + out


def test_malformed_run_file_names_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "run.txt"
    bad.write_text("301 Q0 doc1 1 0.5 t\n301 Q0 doc2 2 high t\n")
    code, _, err = run("retrieval", QRELS, str(bad))
    assert code == 2
    assert err.strip() == f"error: {bad}:2, field 'score': 'high' is not a number"


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    code, _, err = run("retrieval", QRELS, str(tmp_path / "nope.txt"))
    assert code == 2
    assert "file not found" in err


def test_compare_runs_reports_ci_and_mcnemar() -> None:
    code, out, _ = run(
        "compare-runs",
        QRELS,
        TRUNC,
        RUN,
        "-m",
        "map,hit_rate@5",
        "--missing-as-zero",
        "--format",
        "json",
    )
    assert code == 0
    rows = {row["measure"]: row for row in json.loads(out)["measures"]}
    assert round(rows["map"]["mean_a"], 4) == 0.1016
    assert round(rows["map"]["mean_b"], 4) == 0.1785
    assert rows["map"]["ci_low"] <= rows["map"]["diff_b_minus_a"] <= rows["map"]["ci_high"]
    assert rows["map"]["p_mcnemar"] is None
    assert 0.0 <= rows["hit_rate@5"]["p_mcnemar"] <= 1.0


def test_compare_runs_table() -> None:
    code, out, _ = run("compare-runs", QRELS, TRUNC, RUN, "-m", "map", "--missing-as-zero")
    assert code == 0
    assert "95% CI" in out
    assert "p McNemar" in out


def test_the_old_name_compare_still_works_says_the_new_one_and_is_not_listed() -> None:
    args = (QRELS, TRUNC, RUN, "-m", "map", "--missing-as-zero", "--format", "json")
    old_code, old_out, old_err = run("compare", *args)
    new_code, new_out, new_err = run("compare-runs", *args)
    assert (old_code, old_out) == (new_code, new_out) == (0, new_out)
    assert "`rag-judge compare` is now `rag-judge compare-runs`" in old_err
    assert "is now" not in new_err
    _, listing, _ = run("--help")
    assert "compare-runs" in listing
    assert not re.search(r"^  compare\s", listing, flags=re.M)


def test_measures_lists_every_family() -> None:
    code, out, _ = run("measures")
    assert code == 0
    assert "ndcg@k" in out
    assert "joint_recall@k" in out
    assert "rprec" in out


def test_an_interrupt_exits_130_and_says_how_to_resume() -> None:
    import click

    from rag_judge.cli.common import friendly_errors

    @click.command()
    @friendly_errors
    def stopped() -> None:
        raise KeyboardInterrupt

    run = CliRunner().invoke(stopped, [])
    assert run.exit_code == 130
    assert "run the same command again to resume" in run.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep", "no_such_set", "-o", "out"], "no eval set 'no_such_set'"),
        (["sweep", "cmrc2018_zh", "-o", "out", "--metrics", "bogus"], "unknown metric(s) bogus"),
        (["calibrate", "--run", "no_such_set"], "no calibration set 'no_such_set'"),
        (["calibrate", "--run", "wice_dev", "--metric", "bogus"], "unknown metric 'bogus'"),
    ],
)
def test_input_errors_come_before_any_progress(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(main, args, env={"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache")})
    assert run.exit_code == 2, run.output
    assert message in run.output
    assert run.output.startswith("error: "), run.output  # no progress line above it
    assert not (tmp_path / "out").exists()


def test_data_that_looks_like_console_markup_is_printed_as_text(tmp_path: Path) -> None:
    qrels, run_file = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("[/bold] 0 d1 1\n[red]x 0 d2 1\n")
    run_file.write_text("[/bold] Q0 d1 1 1.0 r\n[red]x Q0 d3 1 1.0 r\n")
    code, out, err = run("retrieval", str(qrels), str(run_file), "-m", "P_1", "-q")
    assert code == 0, err
    assert "[/bold]" in out
    assert "[red]x" in out


@pytest.mark.parametrize(
    ("grade", "measure", "message"),
    [
        ("2000", "ndcg_exp@10", "grade 2000 is too large for ndcg_exp@10"),  # was NaN
        ("99999999999999999999", "ndcg@10", "out of range"),  # was an OverflowError
    ],
)
def test_extreme_grades_are_one_line_never_nan(
    tmp_path: Path, grade: str, measure: str, message: str
) -> None:
    qrels, run_file = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(f"q1 0 d1 {grade}\nq1 0 d2 1\n")
    run_file.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    code, out, err = run("retrieval", str(qrels), str(run_file), "-m", measure, "--format", "json")
    assert code == 2
    assert message in err
    assert "NaN" not in out


def test_a_tab_separated_trec_file_whose_first_query_is_named_query_has_no_header(
    tmp_path: Path,
) -> None:
    qrels, run_file = tmp_path / "qrels.tsv", tmp_path / "run"
    qrels.write_text("query\t0\td1\t1\nq2\t0\td2\t1\n")
    run_file.write_text("query Q0 d1 1 1.0 r\nq2 Q0 d2 1 1.0 r\n")
    code, out, err = run(
        "retrieval", str(qrels), str(run_file), "-m", "P_1", "-q", "--format", "csv"
    )
    assert code == 0, err
    assert "query,1.0" in out.replace("1.0000", "1.0")
