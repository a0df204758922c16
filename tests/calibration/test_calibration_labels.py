"""Tests for reading judge scores and human labels and joining them, nothing dropped silently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.calibration import (
    CalibrationRow,
    UnscoredRow,
    human_labels_from_records,
    join_labels,
    judge_scores_from_records,
    read_human_labels,
    read_judge_scores,
    read_pairwise_labels,
    roc_auc,
)
from rag_judge.core.errors import InputError
from rag_judge.core.types import ClaimVerdict, JudgeResult, RagSample
from rag_judge.jobs.score.result import EvaluationResult, SampleResult

MAPPING = {"attributable": 1, "not_attributable": 0, "generic": None}


def _claim(text: str, verdict: Any, probability: float | None) -> ClaimVerdict:
    return ClaimVerdict(claim=text, verdict=verdict, support_probability=probability)


def _faithfulness(value: float | None, status: Any = "ok", **extra: Any) -> JudgeResult:
    return JudgeResult(metric="faithfulness", value=value, status=status, **extra)


def _evaluation() -> EvaluationResult:
    """Seven rows, as `rag-judge score` would write them."""
    results: dict[str, dict[str, JudgeResult]] = {
        "q1": {
            "faithfulness": _faithfulness(
                0.5,
                claims=(
                    _claim("Paris is in France.", "supported", 0.9),
                    _claim("It has 9 million people.", "contradicted", 0.2),
                ),
            )
        },
        "q2": {
            "faithfulness": _faithfulness(1.0, claims=(_claim("It is red.", "supported", None),))
        },
        "q3": {"faithfulness": _faithfulness(None, "no_claims")},
        "q4": {"faithfulness": _faithfulness(None, "parse_error", error="bad json")},
        "q5": {"faithfulness": _faithfulness(0.0, claims=(_claim("A.", "not_mentioned", 0.1),))},
        "q6": {"answer_relevancy": JudgeResult(metric="answer_relevancy", value=0.7)},
        "q7": {
            "faithfulness": _faithfulness(
                1.0, claims=(_claim("B.", "supported", 0.8), _claim("C.", None, None))
            )
        },
    }
    samples = [
        SampleResult(
            sample=RagSample(id=id_, question="q?", answer="a."),
            language="en",
            prompt_language="en",
            results=by_metric,
        )
        for id_, by_metric in results.items()
    ]
    return EvaluationResult(
        samples, metrics=["faithfulness", "answer_relevancy"], model="scripted", ledger=Ledger()
    )


@pytest.fixture
def score_file(tmp_path: Path) -> Path:
    return _evaluation().write_jsonl(tmp_path / "scores.jsonl")


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
        encoding="utf-8",
    )
    return path


# --- judge scores ---------------------------------------------------------------------------


def test_read_judge_scores_from_the_score_output(score_file: Path) -> None:
    scores = read_judge_scores(score_file, "faithfulness")
    assert [r.id for r in scores.rows] == ["q1", "q2", "q3", "q4", "q5", "q7"]
    assert scores.not_judged == ("q6",)
    q1, q2, q3, q4, _, q7 = scores.rows
    assert (q1.status, q1.value, q1.line) == ("ok", 0.5, 1)
    assert q1.probability == pytest.approx((0.9 + 0.2) / 2)
    assert [(c.index, c.verdict) for c in q1.claims] == [(0, "supported"), (1, "contradicted")]
    assert q2.probability is None  # its claim has no support probability
    assert (q3.status, q3.value, q3.probability) == ("no_claims", None, None)
    assert (q4.status, q4.error) == ("parse_error", "bad json")
    assert q7.probability is None  # one claim of two lacks a probability
    assert scores.values() == {"q1": 0.5, "q2": 1.0, "q3": None, "q4": None, "q5": 0.0, "q7": 1.0}


def test_judge_scores_from_records_match_the_file(score_file: Path) -> None:
    from_file = read_judge_scores(score_file, "faithfulness")
    in_memory = judge_scores_from_records(_evaluation().to_records(), "faithfulness")
    strip = [(r.id, r.status, r.value, r.claims) for r in from_file.rows]
    assert strip == [(r.id, r.status, r.value, r.claims) for r in in_memory.rows]
    assert in_memory.rows[0].line is None


def test_a_metric_no_row_has_is_an_error(score_file: Path) -> None:
    with pytest.raises(InputError, match="no row has results for metric 'completeness'") as info:
        read_judge_scores(score_file, "completeness")
    assert "metrics found: answer_relevancy, faithfulness" in str(info.value)


@pytest.mark.parametrize(
    ("result", "field", "message"),
    [
        (
            {"status": "ok", "value": None},
            "results.faithfulness.value",
            "status 'ok' needs a value",
        ),
        ({"status": "parse_error", "value": 0.5}, "results.faithfulness.value", "has a value"),
        ({"value": 0.5}, "results.faithfulness.status", "expected a status string"),
        ({"status": "ok", "value": "high"}, "results.faithfulness.value", "finite number"),
        (
            {"status": "ok", "value": 1, "claims": [{"claim": "A", "support_probability": 1.5}]},
            "results.faithfulness.claims[0].support_probability",
            "probability in [0, 1]",
        ),
        (
            {"status": "ok", "value": 1, "claims": [{"claim": "A", "verdict": "maybe"}]},
            "results.faithfulness.claims[0].verdict",
            "unknown verdict 'maybe'",
        ),
    ],
)
def test_malformed_judge_results_name_file_line_and_field(
    tmp_path: Path, result: dict[str, Any], field: str, message: str
) -> None:
    path = _write(
        tmp_path / "s.jsonl",
        [
            {"id": "a", "results": {"faithfulness": {"status": "ok", "value": 1.0}}},
            {"id": "b", "results": {"faithfulness": result}},
        ],
    )
    with pytest.raises(InputError) as info:
        read_judge_scores(path, "faithfulness")
    assert str(info.value).startswith(f"{path}:2, field '{field}': ")
    assert message in info.value.message


def test_score_file_errors(tmp_path: Path) -> None:
    twice = _write(
        tmp_path / "twice.jsonl", [{"id": "a", "results": {}}, "", {"id": "a", "results": {}}]
    )
    with pytest.raises(InputError, match="row 'a' appears twice \\(first at line 1\\)") as info:
        read_judge_scores(twice, "faithfulness")
    assert info.value.line == 3
    broken = _write(tmp_path / "broken.jsonl", ['{"id": "a", "results": {}}', "{not json"])
    with pytest.raises(InputError, match="invalid JSON") as info:
        read_judge_scores(broken, "faithfulness")
    assert info.value.line == 2
    with pytest.raises(InputError, match="file not found"):
        read_judge_scores(tmp_path / "missing.jsonl", "faithfulness")
    no_results = _write(tmp_path / "nores.jsonl", [{"id": "a"}])
    with pytest.raises(InputError, match="judge results by metric"):
        read_judge_scores(no_results, "faithfulness")


# --- human labels ---------------------------------------------------------------------------


def test_binary_labels_in_every_spelling(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"id": "a", "label": True},
            {"id": "b", "label": False},
            {"id": "c", "label": 1},
            {"id": "d", "label": 0.0},
            {"id": "e", "label": "TRUE"},
            {"id": 7, "label": "false"},
        ],
    )
    labels = read_human_labels(path, "binary")
    assert [(x.id, x.value, x.line) for x in labels.labels] == [
        ("a", 1.0, 1),
        ("b", 0.0, 2),
        ("c", 1.0, 3),
        ("d", 0.0, 4),
        ("e", 1.0, 5),
        ("7", 0.0, 6),
    ]
    assert (labels.kind, labels.level, labels.excluded) == ("binary", "sample", ())


def test_named_classes_go_through_the_mapping_and_none_excludes(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"id": "a", "label": "attributable"},
            {"id": "b", "label": "generic"},
            {"id": "c", "label": "not_attributable"},
        ],
    )
    labels = read_human_labels(path, "binary", mapping=MAPPING)
    assert [(x.id, x.value) for x in labels.labels] == [("a", 1.0), ("c", 0.0)]
    assert [(e.id, e.label, e.line) for e in labels.excluded] == [("b", "'generic'", 2)]


@pytest.mark.parametrize(
    ("kind", "label", "message"),
    [
        ("binary", 2, "expected 0/1, true/false, or a class name with a mapping, got 2"),
        ("binary", "yes", "got 'yes'"),
        ("ordinal", 2.5, "expected an integer"),
        ("ordinal", "3", "expected an integer"),
        ("ordinal", True, "expected an integer"),
        ("continuous", "x", "expected a finite number"),
        ("continuous", None, "expected a finite number, got None"),
    ],
)
def test_bad_label_values_name_file_line_and_field(
    tmp_path: Path, kind: Any, label: Any, message: str
) -> None:
    path = _write(tmp_path / "l.jsonl", [{"id": "a", "label": 1}, {"id": "b", "label": label}])
    with pytest.raises(InputError) as info:
        read_human_labels(path, kind)
    assert str(info.value).startswith(f"{path}:2, field 'label': ")
    assert message in info.value.message


def test_ordinal_and_continuous_labels(tmp_path: Path) -> None:
    path = _write(tmp_path / "l.jsonl", [{"id": "a", "label": 5}, {"id": "b", "label": 3.0}])
    assert [x.value for x in read_human_labels(path, "ordinal").labels] == [5.0, 3.0]
    path = _write(tmp_path / "c.jsonl", [{"id": "a", "score": 0.37}])
    labels = read_human_labels(path, "continuous", label_field="score")
    assert [x.value for x in labels.labels] == [0.37]


def test_nan_in_a_label_file_is_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path / "l.jsonl", ['{"id": "a", "label": NaN}'])
    with pytest.raises(InputError, match="expected a finite number, got nan"):
        read_human_labels(path, "continuous")


def test_label_file_errors(tmp_path: Path) -> None:
    twice = _write(tmp_path / "t.jsonl", [{"id": "a", "label": 1}, {"id": "a", "label": 0}])
    with pytest.raises(InputError, match="row 'a' is labelled twice \\(first at line 1\\)"):
        read_human_labels(twice, "binary")
    no_id = _write(tmp_path / "n.jsonl", [{"label": 1}])
    with pytest.raises(InputError, match="missing id") as info:
        read_human_labels(no_id, "binary")
    assert (info.value.line, info.value.field) == (1, "id")
    no_label = _write(tmp_path / "m.jsonl", [{"id": "a"}])
    with pytest.raises(InputError, match="missing label"):
        read_human_labels(no_label, "binary")
    unknown = _write(tmp_path / "u.jsonl", [{"id": "a", "label": "maybe"}])
    with pytest.raises(InputError, match="label 'maybe' is not in the mapping"):
        read_human_labels(unknown, "binary", mapping=MAPPING)
    with pytest.raises(InputError, match="must map to 0, 1 or None") as info:
        read_human_labels(unknown, "binary", mapping={"maybe": 0.5})
    assert info.value.field == "mapping"


def test_labels_from_records_name_the_row() -> None:
    labels = human_labels_from_records([{"id": "a", "label": 4}], "ordinal", source="memory")
    assert labels.labels[0].line is None
    with pytest.raises(InputError) as info:
        human_labels_from_records([{"id": "a", "label": 1}, {"id": "b"}], "binary")
    assert str(info.value) == "records, row 1, field 'label': missing label"


def test_claim_labels_need_a_claim_position(tmp_path: Path) -> None:
    path = _write(tmp_path / "l.jsonl", [{"id": "a", "claim": -1, "label": 1}])
    with pytest.raises(InputError, match="0-based claim position") as info:
        read_human_labels(path, "binary", level="claim")
    assert info.value.field == "claim"


def test_pairwise_labels(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "p.jsonl",
        [
            {"id_a": "q1", "id_b": "q2", "preferred": "a"},
            {"id_a": 3, "id_b": "q2", "preferred": "tie"},
        ],
    )
    pairs = read_pairwise_labels(path)
    assert [(p.id_a, p.id_b, p.preferred, p.line) for p in pairs] == [
        ("q1", "q2", "a", 1),
        ("3", "q2", "tie", 2),
    ]
    bad = _write(tmp_path / "b.jsonl", [{"id_a": "q1", "id_b": "q2", "preferred": "A"}])
    with pytest.raises(InputError) as info:
        read_pairwise_labels(bad)
    assert str(info.value) == f"{bad}:1, field 'preferred': expected 'a', 'b' or 'tie', got 'A'"
    same = _write(tmp_path / "s.jsonl", [{"id_a": "q1", "id_b": "q1", "preferred": "a"}])
    with pytest.raises(InputError, match="compares row 'q1' with itself"):
        read_pairwise_labels(same)


# --- joining --------------------------------------------------------------------------------


def test_row_level_join_accounts_for_every_row(score_file: Path, tmp_path: Path) -> None:
    labels_path = _write(
        tmp_path / "labels.jsonl",
        [
            {"id": "q1", "label": "not_attributable"},
            {"id": "q2", "label": "attributable"},
            {"id": "q3", "label": "attributable"},
            {"id": "q4", "label": "not_attributable"},
            "",
            {"id": "q5", "label": "not_attributable"},
            {"id": "q6", "label": "attributable"},
            {"id": "q8", "label": "attributable"},
            {"id": "q9", "label": "generic"},
        ],
    )
    labels = read_human_labels(labels_path, "binary", mapping=MAPPING)
    joined = join_labels(read_judge_scores(score_file, "faithfulness"), labels)
    assert joined.rows == (
        CalibrationRow("q1", None, 0.0, 0.5, pytest.approx(0.55)),  # type: ignore[arg-type]
        CalibrationRow("q2", None, 1.0, 1.0, None),
        CalibrationRow("q5", None, 0.0, 0.0, 0.1),
    )
    assert joined.unscored == (
        UnscoredRow("q3", None, "no_claims", None),
        UnscoredRow("q4", None, "parse_error", "bad json"),
        UnscoredRow("q6", None, "not_judged", None),
    )
    assert (joined.only_in_labels, joined.only_in_judge) == (("q8",), ("q7",))
    assert [e.id for e in joined.excluded] == ["q9"]
    assert joined.unscored_by_status() == {"no_claims": 1, "not_judged": 1, "parse_error": 1}
    assert joined.describe() == (
        "faithfulness vs binary human labels: 3 rows joined; "
        "3 labelled but unscored (1 no_claims, 1 not_judged, 1 parse_error); "
        "1 labelled but not in the judge output (q8); 1 judged but not labelled (q7); "
        "1 labels excluded by the mapping ('generic' ×1)."
    )
    assert joined.human().tolist() == [0.0, 1.0, 0.0]
    assert joined.scores().tolist() == [0.5, 1.0, 0.0]
    with pytest.raises(
        InputError, match="1 of 3 joined rows have no support probability \\(first: q2\\)"
    ):
        joined.probabilities()
    # Joined arrays feed the statistics directly: the supported row scores above both others.
    assert roc_auc(joined.human(), joined.scores(), n_resamples=10).estimate == 1.0


def test_claim_level_join(score_file: Path, tmp_path: Path) -> None:
    labels_path = _write(
        tmp_path / "claims.jsonl",
        [
            {"id": "q1", "claim": 0, "label": True, "claim_text": "Paris is in France."},
            {"id": "q1", "claim": 1, "label": False},
            {"id": "q2", "claim": 0, "label": 1},
            {"id": "q2", "claim": 3, "label": 1},
            {"id": "q4", "claim": 0, "label": 0},
            {"id": "q6", "claim": 0, "label": 0},
            {"id": "q7", "claim": 1, "label": 1},
        ],
    )
    labels = read_human_labels(labels_path, "binary", level="claim")
    joined = join_labels(read_judge_scores(score_file, "faithfulness"), labels)
    assert joined.rows == (
        CalibrationRow("q1", 0, 1.0, 1.0, 0.9),
        CalibrationRow("q1", 1, 0.0, 0.0, 0.2),
        CalibrationRow("q2", 0, 1.0, 1.0, None),
    )
    assert joined.unscored == (
        UnscoredRow("q4", 0, "parse_error", "bad json"),
        UnscoredRow("q6", 0, "not_judged", None),
        UnscoredRow("q7", 1, "no_verdict", None),
    )
    assert joined.only_in_labels == ("q2#3",)
    assert joined.only_in_judge == ("q5#0", "q7#0")
    assert joined.describe().startswith("faithfulness vs binary human labels: 3 claims joined;")


def test_claim_text_mismatch_is_an_error(score_file: Path, tmp_path: Path) -> None:
    labels_path = _write(
        tmp_path / "claims.jsonl",
        [
            {"id": "q1", "claim": 0, "label": 1},
            {"id": "q1", "claim": 1, "label": 0, "claim_text": "Paris is in France."},
        ],
    )
    labels = read_human_labels(labels_path, "binary", level="claim")
    with pytest.raises(InputError) as info:
        join_labels(read_judge_scores(score_file, "faithfulness"), labels)
    assert str(info.value).startswith(f"{labels_path}:2, field 'claim_text': ")
    assert "'It has 9 million people.'" in info.value.message


def test_a_join_with_no_scored_row_explains_itself(score_file: Path) -> None:
    labels = human_labels_from_records([{"id": "q3", "label": 1}], "binary")
    joined = join_labels(read_judge_scores(score_file, "faithfulness"), labels)
    assert joined.rows == ()
    with pytest.raises(InputError, match=r"no labelled row has a judge score: .*1 no_claims"):
        joined.human()
