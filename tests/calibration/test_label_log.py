"""The labelling log: events folded to labels, and read by calibrate as plain labels are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rag_judge.calibration.label_log import (
    ClaimLabel,
    Sampling,
    fold_label_log,
    is_label_log,
    label_event,
    read_label_log,
    undo_event,
)
from rag_judge.calibration.labels import read_human_labels
from rag_judge.core.errors import InputError

SAMPLING = Sampling("random", 0, 3, 236, "scores.jsonl")
AT = "2026-12-04T01:00:00+00:00"


def label(id_: str, value: int | None, **more: Any) -> dict[str, Any]:
    return label_event(id_, value, metric="m", annotator="alice", sampling=SAMPLING, at=AT, **more)


def undo(id_: str) -> dict[str, Any]:
    return undo_event(id_, annotator="alice", sampling=SAMPLING, at=AT)


def write(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def test_events_have_the_documented_fields() -> None:
    event = label("dev001", 1, claims=[ClaimLabel(0, 1)])
    assert event == {
        "id": "dev001",
        "label": 1,
        "metric": "m",
        "annotator": "alice",
        "note": "",
        "claims": [{"claim": 0, "label": 1}],
        "sampling": {
            "strategy": "random",
            "seed": 0,
            "sample": 3,
            "population": 236,
            "scores": "scores.jsonl",
        },
        "at": AT,
    }
    skipped = label("dev002", None)
    assert skipped["label"] is None
    assert skipped["skipped"] is True
    assert "claims" not in skipped
    assert undo("dev001") == {
        "id": "dev001",
        "undo": True,
        "annotator": "alice",
        "sampling": event["sampling"],
        "at": AT,
    }


def test_the_last_event_per_id_wins_and_undo_unlabels() -> None:
    log = fold_label_log(
        [
            label("a", 1),
            label("b", 0, note="wrong year"),
            label("c", None),
            undo("c"),
            label("d", 1),
            label("a", 0),
            undo("d"),
        ]
    )
    assert log.labels == {"a": 0, "b": 0}
    assert [row.id for row in log.rows] == ["a", "b"]  # first-labelled order
    assert log.order == ("b", "a")  # what undo takes back next: a
    assert log.notes == {"b": "wrong year"}
    assert log.skipped == ()
    assert log.sampling == SAMPLING
    assert log.annotator == "alice"
    assert log.events == 7


def test_skips_are_kept_apart_from_labels() -> None:
    log = fold_label_log([label("a", None), label("b", 1)])
    assert log.skipped == ("a",)
    assert log.labels == {"b": 1}
    assert log.done == {"a", "b"}


def test_per_claim_labels() -> None:
    claims = [ClaimLabel(0, 1, "Paris is in France."), ClaimLabel(2, 0)]
    log = fold_label_log([label("a", 0, claims=claims)])
    assert log.claim_labels == {("a", 0): claims[0], ("a", 2): claims[1]}


def test_an_empty_log() -> None:
    log = fold_label_log([])
    assert (log.rows, log.sampling, log.annotator) == ((), None, None)


def test_a_log_is_told_from_plain_labels() -> None:
    assert is_label_log([label("a", 1)])
    assert not is_label_log([{"id": "a", "label": 1}])
    assert not is_label_log([])


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"id": "a", "label": 2}, "expected 1, 0 or null"),
        ({"id": "a", "label": True}, "expected 1, 0 or null"),
        ({"id": "a"}, "an event is a label"),
        ({"id": "", "label": 1}, "non-empty string id"),
        ({"id": "a", "label": 1, "skipped": True}, "a skipped row has label null"),
        ({"id": "a", "label": 1, "claims": [{"claim": -1, "label": 1}]}, "0-based claim"),
        ({"id": "a", "label": 1, "claims": [{"claim": 0, "label": 5}]}, "expected 1 or 0"),
        ({"id": "a", "label": 1, "note": 3}, "expected a string"),
    ],
)
def test_malformed_events_name_the_line_and_field(
    tmp_path: Path, event: dict[str, Any], message: str
) -> None:
    path = write(
        tmp_path / "labels.jsonl", [label("z", 1), event | {"sampling": SAMPLING.to_json()}]
    )
    with pytest.raises(InputError, match=message) as raised:
        read_label_log(path)
    assert "labels.jsonl:2" in str(raised.value)


def test_a_log_of_two_samplings_is_refused(tmp_path: Path) -> None:
    other = label("b", 1) | {"sampling": SAMPLING.to_json() | {"seed": 1}}
    path = write(tmp_path / "labels.jsonl", [label("a", 1), other])
    with pytest.raises(InputError, match=r"sampling differs from line 1's \(seed: 1 vs 0\)"):
        read_label_log(path)


def test_an_event_without_sampling_in_a_log_is_refused() -> None:
    with pytest.raises(InputError, match="carries its sampling"):
        fold_label_log([label("a", 1), {"id": "b", "label": 1}])


def test_calibrate_reads_a_log_as_labels(tmp_path: Path) -> None:
    path = write(
        tmp_path / "labels.jsonl",
        [label("a", 1), label("b", 0), label("a", 0), label("c", None), label("d", 1), undo("d")],
    )
    labels = read_human_labels(path, "binary")
    assert [(h.id, h.value, h.line) for h in labels.labels] == [("a", 0.0, 3), ("b", 0.0, 2)]
    assert labels.excluded == ()


def test_calibrate_reads_a_logs_claim_labels(tmp_path: Path) -> None:
    claims = [ClaimLabel(0, 1, "first"), ClaimLabel(1, 0)]
    path = write(tmp_path / "labels.jsonl", [label("a", 0, claims=claims), label("b", 1)])
    labels = read_human_labels(path, "binary", level="claim")
    found = [(h.id, h.claim, h.value, h.claim_text) for h in labels.labels]
    assert found == [("a", 0, 1.0, "first"), ("a", 1, 0.0, None)]


def test_plain_label_files_still_refuse_repeated_ids(tmp_path: Path) -> None:
    path = write(tmp_path / "labels.jsonl", [{"id": "a", "label": 1}, {"id": "a", "label": 0}])
    with pytest.raises(InputError, match="labelled twice"):
        read_human_labels(path, "binary")
