"""The score file: written atomically, read back whole, each malformed row named by line, field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rag_judge.core.errors import InputError
from rag_judge.core.types import ClaimVerdict, JudgeResult, RagSample
from rag_judge.data import score_file as sf
from rag_judge.runtime.atomic import write_lines

OK = {"status": "ok", "value": 1.0}


def _record(
    id_: str,
    results: dict[str, JudgeResult],
    *,
    repeats: dict[str, list[dict[str, Any]]] | None = None,
    note: str = "",
) -> dict[str, Any]:
    sample = RagSample(id=id_, question=f"Où est {id_}?", answer="Paris.", metadata={"k": 1})
    return sf.score_record(
        sample.model_dump(mode="json", exclude={"metadata"}),
        metadata=sample.metadata,
        language="fr",
        prompt_language="en",
        judge_mode="score",
        judge_mode_note=note,
        repeats=repeats or {},
        results={m: r.model_dump(mode="json") for m, r in results.items()},
    )


def _records() -> list[dict[str, Any]]:
    claims = (
        ClaimVerdict(claim="Paris est en France.", verdict="supported", support_probability=0.9),
        ClaimVerdict(claim="Elle a 9 M d'habitants.", verdict="contradicted", reason="2 M"),
    )
    faithful = JudgeResult(metric="faithfulness", value=0.5, claims=claims)
    unscored = JudgeResult(metric="faithfulness", status="parse_error", error="bad json")
    relevant = JudgeResult(metric="answer_relevancy", value=0.75)
    return [
        _record("a", {"faithfulness": faithful}, repeats={"faithfulness": [OK, OK]}),
        _record("b", {"faithfulness": unscored}, repeats={"faithfulness": [{"value": None}]}),
        _record("c", {"answer_relevancy": relevant}, repeats={"faithfulness": []}, note="why"),
    ]


def _write(path: Path, rows: list[Any]) -> Path:
    lines = (row if isinstance(row, str) else json.dumps(row) for row in rows)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_written_file_reads_back_the_same(tmp_path: Path) -> None:
    records = _records()
    path = sf.write_score_file(tmp_path / "scores.jsonl", records, write_lines=write_lines)
    text = path.read_text(encoding="utf-8")
    assert text == "".join(sf.score_line(r) + "\n" for r in records)
    assert "Où est a?" in text  # UTF-8 as is, not \u escapes
    rows = list(sf.read_score_rows(path))
    assert [record for _, record in rows] == records
    assert [where.line for where, _ in rows] == [1, 2, 3]

    found = sf.parse_metric(rows, str(path), "faithfulness")
    assert found.not_judged == ("c",)
    first, second = found.rows
    assert (first.id, first.status, first.value, first.line) == ("a", "ok", 0.5, 1)
    assert [(c.index, c.verdict, c.support_probability) for c in first.claims] == [
        (0, "supported", 0.9),
        (1, "contradicted", None),
    ]
    assert first.probability is None  # one claim has no probability
    assert (second.status, second.value, second.error, second.claims) == (
        "parse_error",
        None,
        "bad json",
        (),
    )
    assert sf.metrics_in(rows) == ("faithfulness", "answer_relevancy")
    assert sf.repeat_groups(rows, "faithfulness") == {"a": [1.0, 1.0], "b": [], "c": []}
    assert sf.field_texts(rows, sf.QUESTION)["b"] == "Où est b?"
    shown = {row.id: row for row in sf.shown_rows(records, "faithfulness")}
    assert list(shown) == ["a", "b"]
    assert [(c.claim, c.reason, c.probability) for c in shown["a"].claims][1] == (
        "Elle a 9 M d'habitants.",
        "2 M",
        None,
    )
    assert (shown["b"].answer, shown["b"].status, shown["b"].error) == (
        "Paris.",
        "parse_error",
        "bad json",
    )


def test_records_in_memory_read_as_the_file_does(tmp_path: Path) -> None:
    records = _records()
    path = sf.write_score_file(tmp_path / "scores.jsonl", records, write_lines=write_lines)
    from_file = sf.parse_metric(sf.read_score_rows(path), str(path), "faithfulness")
    in_memory = sf.parse_metric(sf.score_rows_from_records(records, "mem"), "mem", "faithfulness")
    assert [r.value for r in in_memory.rows] == [r.value for r in from_file.rows]
    assert [r.line for r in in_memory.rows] == [None, None]


def test_a_record_lays_out_its_fields_in_file_order() -> None:
    plain, _, noted = _records()
    assert list(plain)[-6:] == [
        sf.METADATA,
        sf.DETECTED_LANGUAGE,
        sf.PROMPT_LANGUAGE,
        sf.JUDGE_MODE,
        sf.REPEATS,
        sf.RESULTS,
    ]
    assert noted[sf.JUDGE_MODE_NOTE] == "why"
    assert sf.JUDGE_MODE_NOTE not in plain
    assert sf.REPEATS not in _record("d", {})  # judged once: no repeats field


def test_the_field_names_are_the_models_own() -> None:
    assert {sf.ID, sf.QUESTION, sf.ANSWER, sf.METADATA} <= set(RagSample.model_fields)
    assert {sf.VALUE, sf.STATUS, sf.ERROR, sf.CLAIMS} <= set(JudgeResult.model_fields)
    fields = {sf.CLAIM, sf.VERDICT, sf.REASON, sf.SUPPORT_PROBABILITY}
    assert fields <= set(ClaimVerdict.model_fields)
    assert sf.VERDICTS == ("supported", "contradicted", "not_mentioned")


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    path = sf.write_score_file(tmp_path / "scores.jsonl", _records(), write_lines=write_lines)
    before = path.read_bytes()
    broken = {"id": "x", "results": {"faithfulness": {"status": "ok", "value": float("nan")}}}
    with pytest.raises(ValueError, match="not JSON compliant"):
        sf.write_score_file(path, [*_records(), broken], write_lines=write_lines)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["scores.jsonl"]  # no temporary left


def _claim_result(**claim: Any) -> dict[str, Any]:
    return {**OK, "claims": [{"claim": "A", **claim}]}


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"results": {}}, "id", "expected a non-empty string id, got None"),
        ({"id": "", "results": {}}, "id", "expected a non-empty string id, got ''"),
        ({"id": True, "results": {}}, "id", "expected a non-empty string id, got True"),
        ({"id": "a", "results": {}}, "id", "row 'a' appears twice (first at line 1)"),
        ({"id": "b"}, "results", "expected an object of judge results by metric"),
        ({"id": "b", "results": []}, "results", "expected an object of judge results by metric"),
        ({"id": "b", "results": {"f": 1}}, "results.f", "expected a judge result object"),
        ({"id": "b", "results": {"f": {"value": 1}}}, "results.f.status", "a status string"),
        (
            {"id": "b", "results": {"f": {"status": "ok", "value": "high"}}},
            "results.f.value",
            "expected a finite number or null, got 'high'",
        ),
        (
            {"id": "b", "results": {"f": {"status": "ok", "value": True}}},
            "results.f.value",
            "expected a finite number or null, got True",
        ),
        (
            {"id": "b", "results": {"f": {"status": "ok", "value": 1.5}}},
            "results.f.value",
            "a judge's value lies in [0, 1], got 1.5",
        ),
        (
            {"id": "b", "results": {"f": {"status": "ok", "value": None}}},
            "results.f.value",
            "status 'ok' needs a value; a value comes only with status 'ok'",
        ),
        (
            {"id": "b", "results": {"f": {"status": "no_claims", "value": 0.5}}},
            "results.f.value",
            "status 'no_claims' has a value",
        ),
        (
            {"id": "b", "results": {"f": {**OK, "claims": {"A": 1}}}},
            "results.f.claims",
            "expected a list of claims",
        ),
        (
            {"id": "b", "results": {"f": {**OK, "claims": ["A"]}}},
            "results.f.claims[0]",
            "expected a claim object with a 'claim' string",
        ),
        (
            {"id": "b", "results": {"f": _claim_result(verdict="maybe")}},
            "results.f.claims[0].verdict",
            "unknown verdict 'maybe' (known: supported, contradicted, not_mentioned)",
        ),
        (
            {"id": "b", "results": {"f": _claim_result(support_probability=1.5)}},
            "results.f.claims[0].support_probability",
            "expected a probability in [0, 1] or null, got 1.5",
        ),
    ],
)
def test_each_malformed_row_names_file_line_and_field(
    tmp_path: Path, row: dict[str, Any], field: str, message: str
) -> None:
    path = _write(tmp_path / "s.jsonl", [{"id": "a", "results": {"f": OK}}, "", row])
    with pytest.raises(InputError) as info:
        sf.parse_metric(sf.read_score_rows(path), str(path), "f")
    assert str(info.value) == f"{path}:3, field '{field}': {info.value.message}"
    assert message in info.value.message
    with pytest.raises(InputError) as in_memory:  # records in memory: the 0-based row
        sf.parse_metric(
            sf.score_rows_from_records([{"id": "a", "results": {}}, row], "m"), "m", "f"
        )
    assert str(in_memory.value).startswith(f"m, row 1, field '{field}': ")


@pytest.mark.parametrize(
    ("repeats", "field", "message"),
    [
        (3, "repeats.f", "expected a list of repeats"),
        ({"g": []}, "repeats.f", "expected a list of repeats"),
        ({"f": [OK, {"value": "x"}]}, "repeats.f[1].value", "expected a number or null, got 'x'"),
        ({"f": [1]}, "repeats.f[0].value", "expected a number or null, got '?'"),
        ({"f": [{"value": False}]}, "repeats.f[0].value", "expected a number or null, got False"),
    ],
)
def test_each_malformed_repeat_names_file_line_and_field(
    tmp_path: Path, repeats: Any, field: str, message: str
) -> None:
    path = _write(
        tmp_path / "s.jsonl", [{"id": "a", "repeats": {"f": []}}, {"id": "b", "repeats": repeats}]
    )
    with pytest.raises(InputError) as info:
        sf.repeat_groups(list(sf.read_score_rows(path)), "f")
    assert str(info.value) == f"{path}:2, field '{field}': {message}"


def test_file_level_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", [{"id": "a", "results": {"g": OK}}])
    with pytest.raises(InputError) as info:
        sf.parse_metric(sf.read_score_rows(path), str(path), "f")
    assert str(info.value) == f"{path}: no row has results for metric 'f' (metrics found: g)"
    broken = _write(tmp_path / "b.jsonl", [{"id": "a", "results": {"f": OK}}, "{not json", "[1]"])
    with pytest.raises(InputError, match="invalid JSON") as info:
        list(sf.read_score_rows(broken))
    assert (info.value.source, info.value.line) == (str(broken), 2)
    with pytest.raises(InputError, match="file not found"):
        list(sf.read_score_rows(tmp_path / "missing.jsonl"))


def test_shown_rows_are_lenient() -> None:
    records = [
        {"results": {"f": OK}},  # no id: skipped
        {"id": 7, "results": {"f": {"claims": [{"claim": 1, "verdict": 2}, "x"]}}},
        {"id": "z", "results": {"f": 3}},  # not a result object: skipped
    ]
    (row,) = sf.shown_rows(records, "f")
    assert (row.id, row.question, row.status) == ("7", "", "")
    assert row.claims == (sf.ShownClaim(claim="", verdict=None, reason="", probability=None),)
