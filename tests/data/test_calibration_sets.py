"""The bundled calibration sets match their manifests and sources; bad sets fail clearly."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rag_judge.core.errors import InputError
from rag_judge.data.calibration_sets import (
    CalibrationSet,
    available_calibration_sets,
    load_calibration_set,
)
from rag_judge.data.samples import load_samples

REPO = Path(__file__).parents[2]
SETS = ("alce_utility", "begin_dev", "wice_dev")
SHARED_DATA = next(
    (p for p in (REPO.parent / "shared" / "data", Path("/work/shared/data")) if p.is_dir()), None
)


@pytest.fixture(scope="module", params=SETS)
def bundled(request: pytest.FixtureRequest) -> CalibrationSet:
    return load_calibration_set(request.param)


def test_available_sets_are_the_three_human_labelled_sets_and_the_short_answers() -> None:
    # cmrc_short_answers is built by eval_sets/build.py (tests/data/test_short_answers.py).
    assert available_calibration_sets() == sorted([*SETS, "cmrc_short_answers"])


@pytest.mark.parametrize("name", SETS)
def test_manifest_sha256_matches_every_file(name: str) -> None:
    folder = REPO / "eval_sets" / name
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["name"] == name
    for file, entry in manifest["files"].items():
        assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == entry["sha256"], file
    on_disk = {p.name for p in folder.iterdir()}
    assert on_disk == {*manifest["files"], "manifest.json", "LICENSE.md"}
    assert {"samples.jsonl", "labels.jsonl"} <= set(manifest["files"])
    assert sum((folder / f).stat().st_size for f in on_disk) < 3_000_000


def test_counts_and_labels_match_the_manifest(bundled: CalibrationSet) -> None:
    counts = bundled.manifest["counts"]
    assert len(bundled.samples) == counts["samples"]
    assert bundled.label_counts() == counts["labels"]
    source = Counter(str(v) for v in bundled.source_labels.values())
    assert dict(sorted(source.items())) == counts["source_labels"]
    assert list(bundled.labels) == [s.id for s in bundled.samples]
    assert bundled.label_kind == bundled.manifest["label_kind"]
    assert counts["source_rows"] == counts["samples"] + bundled.manifest["excluded"]["count"]
    assert all(s.language == "en" and s.answer for s in bundled.samples)


def test_samples_load_with_load_samples_unchanged(bundled: CalibrationSet) -> None:
    assert tuple(load_samples(bundled.path / "samples.jsonl")) == bundled.samples


def test_wice_maps_supported_to_1_and_caps_the_evidence() -> None:
    wice = load_calibration_set("wice_dev")
    assert all(
        wice.labels[i] == (1 if source == "supported" else 0)
        for i, source in wice.source_labels.items()
    )
    # WiCE dev as fetched: 115 supported, 191 partially_supported, 43 not_supported claims.
    kept = Counter(wice.source_labels.values())
    dropped = Counter(wice.manifest["excluded"]["by_source_label"])
    assert kept + dropped == Counter(supported=115, partially_supported=191, not_supported=43)
    lengths = [sum(len(c) for c in s.contexts or ()) for s in wice.samples]
    assert max(lengths) == wice.manifest["evidence_chars"]["kept"]["max"] <= 8000
    first = wice.samples[0]
    assert first.id == "dev02563"
    assert first.question == "What does Wikipedia say about Anthropological Literature?"
    assert first.contexts is not None
    assert first.contexts[0].startswith("(meta data) TITLE: ")
    assert set(wice.manifest["excluded"]["ids"]).isdisjoint(wice.labels)


def test_begin_maps_generic_to_none_and_keeps_every_row() -> None:
    begin = load_calibration_set("begin_dev")
    mapping = {"Fully attributable": 1, "Not fully attributable": 0, "Generic": None}
    assert all(begin.labels[i] == mapping[str(s)] for i, s in begin.source_labels.items())
    # begin_dev_cmu.tsv line 2: gpt2, "i like michael caine too" -> "but i didn't watch ...".
    first = begin.samples[0]
    assert (first.id, first.question, first.answer) == (
        "cmu-001",
        "i like michael caine too",
        "but i didn't watch the whole movie",
    )
    assert first.metadata == {"model_name": "gpt2", "data_source": "cmu"}
    assert first.contexts is not None
    assert len(first.contexts) == 1
    assert [s.id for s in begin.samples[:4]] == ["cmu-001", "tc-001", "wow-001", "cmu-002"]
    # Two CMU-DoG rows have an empty message: no question.
    assert [s.id for s in begin.samples if s.question is None] == ["cmu-095", "cmu-200"]


def test_alce_is_ordinal_without_contexts() -> None:
    alce = load_calibration_set("alce_utility")
    assert alce.label_kind == "ordinal"
    assert all(alce.labels[i] == s for i, s in alce.source_labels.items())
    assert all(s.contexts is None for s in alce.samples)
    first = alce.samples[0]
    assert first.id == "asqa/1/-7013890438520559398"
    assert first.question == "Who has the highest goals in world football?"
    assert alce.labels[first.id] == 5
    # 8 systems x 100 questions, minus 22 empty outputs (every one rated 1).
    assert alce.manifest["excluded"]["by_source_label"] == {"1": 22}
    assert len(alce.samples) == 800 - 22


# --- limit ---------------------------------------------------------------------------------


def test_limit_sees_every_class_in_small_runs(bundled: CalibrationSet) -> None:
    values = {bundled.labels[i] for i in bundled.labels}
    small = bundled.limit(len(values))
    assert {small.labels[s.id] for s in small.samples} == values
    assert set(small.labels) == {s.id for s in small.samples}
    if bundled.label_kind == "binary":
        pair = bundled.limit(2)
        assert sorted(pair.labels[s.id] for s in pair.samples) == [0, 1]  # type: ignore[type-var]


def test_limit_is_nested_in_file_order_and_whole_at_full_size(bundled: CalibrationSet) -> None:
    order = {s.id: n for n, s in enumerate(bundled.samples)}
    ten, eleven = bundled.limit(10), bundled.limit(11)
    assert {s.id for s in ten.samples} < {s.id for s in eleven.samples}
    assert [order[s.id] for s in ten.samples] == sorted(order[s.id] for s in ten.samples)
    assert bundled.limit(len(bundled.samples) + 5).samples == bundled.samples
    with pytest.raises(InputError, match="field 'limit'"):
        bundled.limit(0)


# --- tiny sets in tmp_path -----------------------------------------------------------------


def _lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _samples(n: int) -> list[dict[str, Any]]:
    return [{"id": f"s{i}", "contexts": [f"passage {i}"], "answer": f"claim {i}"} for i in range(n)]


def _labels(values: list[int | None], kind: str = "binary") -> list[dict[str, Any]]:
    return [
        {"id": f"s{i}", "label": v, "label_kind": kind, "source_label": str(v)}
        for i, v in enumerate(values)
    ]


def _write_set(
    folder: Path, samples: str, labels: str, *, kind: str = "binary", extra: str = ""
) -> Path:
    """A set folder whose manifest matches the files (so only the content is wrong)."""
    folder.mkdir(exist_ok=True)
    files: dict[str, Any] = {}
    for name, text in (("samples.jsonl", samples), ("labels.jsonl", labels)):
        (folder / name).write_text(text, encoding="utf-8")
        files[name] = {"sha256": hashlib.sha256(text.encode()).hexdigest(), "fields": "test"}
    if extra:
        files[extra] = {"sha256": "0" * 64, "fields": "licence"}
    manifest = {"name": "tiny", "label_kind": kind, "files": files}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_limit_takes_round_robin_over_labels(tmp_path: Path) -> None:
    # Labels by position: 0 0 0 1 1 None. Strata, highest first: 1 -> s3 s4; 0 -> s0 s1 s2;
    # None -> s5. Round 0 takes s3, s0, s5; round 1 takes s4, s1. limit(4) = s3 s0 s5 s4,
    # returned in file order.
    values: list[int | None] = [0, 0, 0, 1, 1, None]
    folder = _write_set(tmp_path / "t", _lines(_samples(6)), _lines(_labels(values)))
    tiny = load_calibration_set(folder)
    assert tiny.name == "tiny"
    assert [s.id for s in tiny.limit(4).samples] == ["s0", "s3", "s4", "s5"]
    assert [s.id for s in tiny.limit(1).samples] == ["s3"]
    assert tiny.limit(4).labels == {"s0": 0, "s3": 1, "s4": 1, "s5": None}
    assert tiny.limit(4).source_labels["s5"] == "None"
    assert tiny.label_counts() == {"0": 3, "1": 2, "null": 1}


def test_an_ordinal_tiny_set_limits_highest_first(tmp_path: Path) -> None:
    folder = _write_set(
        tmp_path / "t",
        _lines(_samples(4)),
        _lines(_labels([2, 5, 2, 1], "ordinal")),
        kind="ordinal",
    )
    tiny = load_calibration_set(folder)
    # Strata 5 -> s1; 2 -> s0 s2; 1 -> s3. Round 0: s1, s0, s3.
    assert [s.id for s in tiny.limit(3).samples] == ["s0", "s1", "s3"]


GOOD_SAMPLES = _lines(_samples(2))
GOOD_LABELS = _lines(_labels([1, 0]))


@pytest.mark.parametrize(
    ("samples", "labels", "expected"),
    [
        (
            GOOD_SAMPLES.replace("}\n", "\n", 1),
            GOOD_LABELS,
            r"samples\.jsonl:1: invalid JSON",
        ),
        (
            _lines([{"id": "s0", "contexts": ["p"]}, _samples(2)[1]]),
            GOOD_LABELS,
            r"samples\.jsonl:1, field 'answer': missing",
        ),
        (
            _lines([_samples(2)[0], {"id": "s1", "contexts": "p", "answer": "a"}]),
            GOOD_LABELS,
            r"samples\.jsonl:2, field 'contexts': must be a list of strings",
        ),
        (
            _lines([{"id": "s0", "contxts": ["p"], "answer": "a"}]),
            GOOD_LABELS,
            r"samples\.jsonl:1, field 'contxts': unknown field",
        ),
        (
            _lines([_samples(2)[0], _samples(2)[0]]),
            GOOD_LABELS,
            r"samples\.jsonl:2, field 'id': duplicate id 's0' \(first on line 1\)",
        ),
        (
            _lines([{**_samples(1)[0], "question": " "}]),
            GOOD_LABELS,
            r"samples\.jsonl:1, field 'question': must not be blank",
        ),
        (
            GOOD_SAMPLES,
            _lines(_labels([2, 0])),
            r"labels\.jsonl:1, field 'label': a binary label must be 0, 1 or null, got 2",
        ),
        (
            GOOD_SAMPLES,
            _lines([{**_labels([1])[0], "label": True}, _labels([1, 0])[1]]),
            r"labels\.jsonl:1, field 'label': a binary label must be 0, 1 or null, got True",
        ),
        (
            GOOD_SAMPLES,
            _lines([_labels([1])[0], {**_labels([1, 0])[1], "label_kind": "ordinal"}]),
            r"labels\.jsonl:2, field 'label_kind': must be 'binary' as in manifest\.json",
        ),
        (
            GOOD_SAMPLES,
            _lines([*_labels([1, 0]), {**_labels([1])[0], "id": "zz"}]),
            r"labels\.jsonl:3, field 'id': no sample 'zz' in samples\.jsonl",
        ),
        (
            GOOD_SAMPLES,
            _lines(_labels([1])),
            r"labels\.jsonl, field 'id': no label for samples s1",
        ),
        (
            GOOD_SAMPLES,
            _lines([{"id": "s0", "label": 1, "label_kind": "binary"}]),
            r"labels\.jsonl:1, field 'source_label': missing",
        ),
    ],
)
def test_malformed_lines_name_file_line_and_field(
    tmp_path: Path, samples: str, labels: str, expected: str
) -> None:
    folder = _write_set(tmp_path / "bad", samples, labels)
    with pytest.raises(InputError, match=expected):
        load_calibration_set(folder)


def test_a_modified_file_fails_the_sha256_check(tmp_path: Path) -> None:
    folder = _write_set(tmp_path / "t", GOOD_SAMPLES, GOOD_LABELS)
    (folder / "labels.jsonl").write_text(_lines(_labels([0, 0])), encoding="utf-8")
    expected = (
        r"labels\.jsonl, field 'sha256': the file was modified; rebuild with "
        r"eval_sets/build_calibration\.py or update the manifest \(sha256 [0-9a-f]{64}"
    )
    with pytest.raises(InputError, match=expected):
        load_calibration_set(folder)


def test_missing_files_are_named(tmp_path: Path) -> None:
    folder = _write_set(tmp_path / "t", GOOD_SAMPLES, GOOD_LABELS, extra="LICENSE.source")
    with pytest.raises(InputError, match=r"LICENSE\.source: listed in manifest\.json but missing"):
        load_calibration_set(folder)
    folder = _write_set(tmp_path / "u", GOOD_SAMPLES, GOOD_LABELS)
    (folder / "labels.jsonl").unlink()
    with pytest.raises(InputError, match=r"labels\.jsonl: listed in manifest\.json but missing"):
        load_calibration_set(folder)
    (folder / "manifest.json").unlink()
    with pytest.raises(InputError, match=r"no manifest\.json: not a calibration set folder"):
        load_calibration_set(folder)


def test_bad_manifests_are_named(tmp_path: Path) -> None:
    folder = _write_set(tmp_path / "t", GOOD_SAMPLES, GOOD_LABELS, kind="likert")
    with pytest.raises(InputError, match=r"manifest\.json, field 'label_kind': must be one of"):
        load_calibration_set(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    del manifest["files"]["labels.jsonl"]
    manifest["label_kind"] = "binary"
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(InputError, match=r"manifest\.json, field 'files': does not list labels"):
        load_calibration_set(folder)


def test_unknown_name_lists_the_bundled_sets() -> None:
    with pytest.raises(
        InputError,
        match=r"no calibration set 'fever'; bundled sets: alce_utility, begin_dev, cmrc_short_an",
    ):
        load_calibration_set("fever")


# --- reproducibility -----------------------------------------------------------------------


@pytest.mark.skipif(SHARED_DATA is None, reason="source data (../shared/data) not present")
def test_build_script_writes_exactly_the_bundled_files(tmp_path: Path) -> None:
    script = REPO / "eval_sets" / "build_calibration.py"
    args = [sys.executable, str(script), "--source", str(SHARED_DATA), "--out", str(tmp_path)]
    subprocess.run(args, check=True, capture_output=True, timeout=300)
    for name in SETS:
        built = sorted(p.name for p in (tmp_path / name).iterdir())
        assert built == sorted(p.name for p in (REPO / "eval_sets" / name).iterdir())
        for file in built:
            bundled = (REPO / "eval_sets" / name / file).read_bytes()
            assert (tmp_path / name / file).read_bytes() == bundled, f"{name}/{file}"
