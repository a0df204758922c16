"""`calibrate` on files `rag-judge label` wrote: what the sampling supports is said, a fit
records it, and a second annotator's file adds the people's own κ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_judge.calibration.label_log import Sampling, label_event
from rag_judge.jobs.calibrate.fit_profile import FitOptions, LabelSource, fit_profile
from rag_judge.jobs.calibrate.job import LabelFile, calibrate_files

METRIC = "faithfulness"
VALUES = [0.9, 0.8, 0.2, 0.1, 0.7, 0.3, 0.95, 0.05, 0.6, 0.4, 0.85, 0.15]


def write_scores(path: Path) -> Path:
    rows = [
        {
            "id": f"r{i}",
            "judge_model": "local/m",
            "judge_mode": "score",
            "results": {METRIC: {"value": v, "status": "ok", "prompts": ["claims/x.en@1#abc"]}},
        }
        for i, v in enumerate(VALUES)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_log(path: Path, strategy: str, flips: set[int] = frozenset()) -> Path:
    sampling = Sampling(strategy, 0, len(VALUES), len(VALUES), "scores.jsonl")
    events = [
        label_event(f"r{i}", int((v >= 0.5) != (i in flips)), metric=METRIC,
                    annotator="a", sampling=sampling)
        for i, v in enumerate(VALUES)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("strategy", "said"),
    [
        ("random", "every figure here (and the PPI interval) estimates the whole score file"),
        ("stratified", "the reliability diagram and per-bin rates are sound"),
        ("uncertain", "every agreement figure here is biased low"),
    ],
)
def test_calibrate_says_what_the_sampling_supports(
    tmp_path: Path, strategy: str, said: str
) -> None:
    scores = write_scores(tmp_path / "scores.jsonl")
    labels = write_log(tmp_path / "labels.jsonl", strategy)
    report = calibrate_files(scores, labels, LabelFile(metric=METRIC))
    assert any(said in note and f"({strategy}, a sample of 12 of 12" in note
               for note in report.notes), report.notes  # fmt: skip


def test_a_second_annotator_adds_the_peoples_kappa(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "scores.jsonl")
    first = write_log(tmp_path / "a.jsonl", "random")
    second = write_log(tmp_path / "b.jsonl", "random", flips={0, 1})
    reading = LabelFile(metric=METRIC, second=second)
    report = calibrate_files(scores, first, reading)
    note = next(n for n in report.notes if n.startswith("Two annotators"))
    assert "on 12 rows both labelled and judged" in note
    assert "κ judge vs " + str(first) + ": 1.0000" in note


def test_a_fit_records_the_sampling_of_its_labels(tmp_path: Path) -> None:
    from rag_judge.calibration.labels import read_human_labels
    from rag_judge.jobs.calibrate.job import label_file_sampling

    scores = write_scores(tmp_path / "scores.jsonl")
    labels = write_log(tmp_path / "labels.jsonl", "stratified", flips={2, 5})
    source = LabelSource(
        human=read_human_labels(labels, "binary"),
        sampling=label_file_sampling(labels).to_json(),  # type: ignore[union-attr]
    )
    outcome = fit_profile(scores, source, FitOptions(metric=METRIC, folds=2, n_resamples=50))
    assert outcome.profile.labels.sampling == {
        "strategy": "stratified", "seed": 0, "sample": 12, "population": 12,
        "scores": "scores.jsonl",
    }  # fmt: skip
    assert outcome.profile.judge.model == "local/m"
    assert outcome.profile.judge.prompts == ("claims/x.en@1#abc",)


def test_labels_of_other_rows_are_a_clear_error(tmp_path: Path) -> None:
    from rag_judge.calibration.labels import human_labels_from_records
    from rag_judge.core.errors import InputError

    scores = write_scores(tmp_path / "scores.jsonl")
    other = human_labels_from_records(
        [{"id": f"x{i}", "label": i % 2} for i in range(12)], "binary"
    )
    with pytest.raises(InputError, match="no labelled row is in the score file"):
        fit_profile(scores, LabelSource(human=other), FitOptions(metric=METRIC))
