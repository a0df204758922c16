"""benchmarks/few_shot_alignment.py: folds that are stratified and disjoint, and examples for a
fold that never come from the fold itself (the cross-validation's one rule)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from rag_judge.calibration import human_labels_from_records, read_judge_scores
from rag_judge.calibration.few_shot import choose_examples

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module("few_shot_alignment")
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize("name", ["wice_dev", "begin_dev"])
def test_folds_are_disjoint_stratified_and_examples_come_from_other_folds(
    bench: ModuleType, name: str
) -> None:
    chosen = bench.loaded(name)
    folds = bench.folds(chosen)
    labelled = [s.id for s in chosen.samples if chosen.labels[s.id] is not None]
    assert sorted(i for fold in folds for i in fold) == sorted(labelled)
    positives = [sum(chosen.labels[i] == 1 for i in fold) for fold in folds]
    assert max(positives) - min(positives) <= 1
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    judge = read_judge_scores(bench.before_file(name), bench.METRIC)
    labels = human_labels_from_records(bench.labels_of(chosen), "binary")
    contexts = {s.id: list(s.contexts or ()) for s in chosen.samples}
    for fold in folds:
        examples = choose_examples(judge, labels, contexts, exclude_ids=fold)
        assert len(examples) == 2 * bench.PER_LABEL
        assert not {e.source_id for e in examples} & set(fold)


def test_timed_rows_leave_out_cached_rows_and_the_model_load(bench: ModuleType) -> None:
    assert bench._timed([0.02, 0.01, 30.0, 8.0, 9.5]) == [8.0, 9.5]
