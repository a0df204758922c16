"""Worked examples from labelled disagreements: the choosing rule, the excerpt, the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rag_judge.calibration import human_labels_from_records, judge_scores_from_records
from rag_judge.calibration.few_shot import (
    WorkedExample,
    choose_examples,
    examples_from_records,
    excerpt,
    few_shot_id,
    read_examples,
    write_examples,
)
from rag_judge.core.errors import InputError


def _scores(rows: list[tuple[str, float | None, list[str]]]) -> Any:
    records = []
    for id_, value, claims in rows:
        result: dict[str, Any] = {
            "value": value,
            "status": "ok" if value is not None else "no_claims",
        }
        result["claims"] = [{"claim": c, "verdict": "supported"} for c in claims]
        records.append({"id": id_, "results": {"faithfulness": result}})
    return judge_scores_from_records(records, "faithfulness")


def _labels(pairs: dict[str, int]) -> Any:
    return human_labels_from_records([{"id": i, "label": y} for i, y in pairs.items()], "binary")


# Rows a..h: the judge (supported iff value >= 0.5) disagrees with the label on a, b, c (label
# 1, judged 0), on d, e (label 0, judged 1); f agrees; g has two claims; h was not scored.
ROWS = [
    ("a", 0.1, ["Ann won."]),
    ("b", 0.2, ["Bob won."]),
    ("c", 0.3, ["Cy won."]),
    ("d", 0.9, ["Dee lost."]),
    ("e", 0.8, ["Eve lost."]),
    ("f", 0.9, ["Fay won."]),
    ("g", 0.1, ["Gus won.", "Gus smiled."]),
    ("h", None, []),
]
LABELS = {"a": 1, "b": 1, "c": 1, "d": 0, "e": 0, "f": 1, "g": 1, "h": 1}
CONTEXTS = {
    "a": ["Ann won the race. It rained all day long in the town."],
    "b": ["Bob won."],
    "c": ["Cy won it. Then."],
    "d": ["Dee lost the game."],
    "e": ["Eve lost."],
    "f": ["Fay won."],
    "g": ["Gus won."],
    "h": ["Hal won."],
}


def test_examples_are_balanced_shortest_evidence_first_alternating_labels() -> None:
    chosen = choose_examples(_scores(ROWS), _labels(LABELS), CONTEXTS, per_label=2)
    # supported pool a (4 words kept: "Ann won the race."), b (2), c (3: "Cy won it.");
    # unsupported pool d (4), e (2): shortest first, alternating supported / unsupported.
    assert [(e.source_id, e.verdict) for e in chosen] == [
        ("b", "supported"),
        ("e", "unsupported"),
        ("c", "supported"),
        ("d", "unsupported"),
    ]
    assert chosen[0] == WorkedExample("Bob won.", "Bob won.", "supported", "b")


def test_excluded_rows_agreeing_rows_and_rows_with_several_claims_are_never_chosen() -> None:
    chosen = choose_examples(
        _scores(ROWS), _labels(LABELS), CONTEXTS, per_label=5, exclude_ids={"b", "e"}
    )
    assert {e.source_id for e in chosen} == {"a", "c", "d"}  # never f, g, h, b, e


def test_ties_in_evidence_length_go_by_id() -> None:
    rows = [("z", 0.1, ["Z won."]), ("y", 0.1, ["Y won."]), ("x", 0.9, ["X lost."])]
    contexts = {"z": ["Z won."], "y": ["Y won."], "x": ["X lost."]}
    chosen = choose_examples(
        _scores(rows), _labels({"z": 1, "y": 1, "x": 0}), contexts, per_label=1
    )
    assert [e.source_id for e in chosen] == ["y", "x"]


def test_no_disagreement_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="nothing to make examples from"):
        choose_examples(_scores(ROWS), _labels(LABELS), CONTEXTS, exclude_ids=set("abcde"))


def test_only_binary_row_level_labels_and_a_positive_count() -> None:
    ordinal = human_labels_from_records([{"id": "a", "label": 3}], "ordinal")
    with pytest.raises(InputError, match="binary row-level"):
        choose_examples(_scores(ROWS), ordinal, CONTEXTS)
    with pytest.raises(InputError, match="per_label"):
        choose_examples(_scores(ROWS), _labels(LABELS), CONTEXTS, per_label=0)


def test_the_excerpt_keeps_the_sentences_sharing_most_words_within_the_cap() -> None:
    passages = [
        "Paris is large. The tower was built in 1889 by Eiffel.",
        "Lyon has silk. Eiffel designed the tower for the fair.",
    ]
    shown = excerpt("Eiffel built the tower in 1889.", passages, max_words=20)
    assert (
        shown
        == "The tower was built in 1889 by Eiffel. […] Eiffel designed the tower for the fair."
    )
    cut = excerpt("one two", ["one two three four five six"], max_words=3)
    assert cut == "one two three …"


def test_examples_round_trip_and_their_id_follows_their_content(tmp_path: Path) -> None:
    examples = choose_examples(_scores(ROWS), _labels(LABELS), CONTEXTS)
    path = tmp_path / "examples.jsonl"
    write_examples(path, examples)
    assert read_examples(path) == examples
    assert few_shot_id(examples) == few_shot_id(read_examples(path))
    assert few_shot_id(examples).startswith("few_shot#")
    assert len(few_shot_id(examples)) == len("few_shot#") + 12
    assert few_shot_id(examples[:1]) != few_shot_id(examples)
    assert few_shot_id(examples[::-1]) != few_shot_id(examples)  # order is part of the prompt


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        (
            {"claim": "c", "evidence": "e", "verdict": "maybe", "source_id": "r"},
            "verdict",
            "'supported'",
        ),
        (
            {"claim": "", "evidence": "e", "verdict": "supported", "source_id": "r"},
            "claim",
            "non-empty",
        ),
        ({"claim": "c", "verdict": "supported", "source_id": "r"}, "evidence", "non-empty"),
        (
            {"claim": "c", "evidence": 3, "verdict": "supported", "source_id": "r"},
            "evidence",
            "string",
        ),
    ],
)
def test_a_malformed_examples_file_names_file_line_and_field(
    tmp_path: Path, record: dict[str, Any], field: str, message: str
) -> None:
    good = {"claim": "c", "evidence": "e", "verdict": "supported", "source_id": "r"}
    path = tmp_path / "examples.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        read_examples(path)
    assert (caught.value.source, caught.value.line, caught.value.field) == (str(path), 3, field)


def test_an_unknown_key_or_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "examples.jsonl"
    record = {"claim": "c", "evidence": "e", "verdict": "supported", "source_id": "r", "why": "x"}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="why"):
        read_examples(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no worked example"):
        read_examples(path)
    with pytest.raises(InputError) as caught:
        examples_from_records([{"claim": "c"}])
    assert caught.value.field == "evidence"
