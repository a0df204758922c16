"""Tests for the gold-coverage check: which reference answers no chunk covers, and why."""

from __future__ import annotations

import pytest

from rag_judge.core.errors import InputError
from rag_judge.retrieval.gold_coverage import EMPTY_REFERENCE, CoverageReport, check_gold_coverage
from rag_judge.retrieval.text_relevance import ChunkIndex, NgramSpec

CORPUS = {
    "p1": "北京大学创建于1898年，初名京师大学堂。",
    "p2": "清华大学位于北京西北郊。",
    "e1": "The Eiffel Tower is located in Paris, France.",
}
REFERENCES = {
    "q1": "北京大学",
    "q2": "清华大学；北京大学的校长",  # fragment 2: only 北京大学 of 4 grams in p1 -> 0.25
    "q3": "",
    "q4": "  ；\n ",
    "q5": "浙江大学",  # a single 4-gram no chunk has
    "q6": "Paris, France",
    "q7": "北京；——",
}


def _report() -> CoverageReport:
    return check_gold_coverage(REFERENCES, CORPUS)


def test_lists_exactly_the_uncovered_questions_with_reasons() -> None:
    report = _report()
    assert report.uncovered == {
        "q2": "fragment 2/2 '北京大学的校长' covered by no chunk (best 0.25 in doc 'p1')",
        "q3": "empty reference answer",
        "q4": EMPTY_REFERENCE,
        "q5": "fragment 1/1 '浙江大学' covered by no chunk (no chunk shares any n-gram)",
        "q7": "fragment 2/2 '——' has no letters or digits",
    }
    assert report.covered_ids == ["q1", "q6"]
    assert report.n_questions == 7
    assert report.threshold == 0.5
    assert report.spec == NgramSpec()


def test_every_uncovered_fragment_is_named() -> None:
    report = check_gold_coverage({"q": "浙江大学；北京大学；复旦大学"}, CORPUS)
    assert report.uncovered["q"] == (
        "fragment 1/3 '浙江大学' covered by no chunk (no chunk shares any n-gram); "
        "fragment 3/3 '复旦大学' covered by no chunk (no chunk shares any n-gram)"
    )


def test_threshold_changes_the_verdict() -> None:
    report = check_gold_coverage({"q2": REFERENCES["q2"]}, CORPUS, threshold=0.25)
    assert report.uncovered == {}
    assert report.covered_ids == ["q2"]


def test_summary() -> None:
    assert _report().summary() == (
        "5 of 7 questions (71.4%) have reference text no chunk covers at threshold 0.5; "
        "excluded from retrieval metrics: q2, q3, q4, q5, q7"
    )
    covered = check_gold_coverage({"q1": "北京大学"}, CORPUS, threshold=0.75)
    assert covered.summary() == (
        "the 1 question has reference text some chunk covers at threshold 0.75"
    )


def test_summary_truncates_long_id_lists() -> None:
    references = {f"q{i}": "浙江大学" for i in range(60)}
    summary = check_gold_coverage(references, CORPUS).summary()
    assert summary.startswith("60 of 60 questions (100.0%)")
    assert "q49, … (10 more)" in summary
    assert "q50" not in summary


def test_accepts_a_prebuilt_index() -> None:
    index = ChunkIndex(CORPUS, NgramSpec(char_n=2))
    report = check_gold_coverage({"q": "北京大学的校长"}, index)
    assert report.spec == NgramSpec(char_n=2)
    # 2-grams: 北京 京大 大学 学的 的校 校长; p1 has 北京 京大 大学 -> 0.5.
    assert report.uncovered == {}
    with pytest.raises(InputError) as caught:
        check_gold_coverage({"q": "北京"}, index, spec=NgramSpec())
    assert caught.value.field == "spec"


def test_bad_threshold() -> None:
    with pytest.raises(InputError) as caught:
        check_gold_coverage(REFERENCES, CORPUS, threshold=0)
    assert caught.value.field == "threshold"
