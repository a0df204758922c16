"""Tests for answer-text relevance: fragments, n-grams, coverage, the chunk index, matching."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rag_judge.core.errors import InputError
from rag_judge.retrieval.text_relevance import (
    CJK_LETTER_RATIO,
    ChunkIndex,
    NgramSpec,
    TextRelevance,
    coverage,
    detect_unit,
    fragment_ngrams,
    match_references,
    split_fragments,
    text_qrels,
    text_requirements,
)

CMRC_SAMPLE = Path(__file__).parents[1] / "fixtures" / "cmrc_sample.jsonl"


# --- fragments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("答案一;答案二", ["答案一", "答案二"]),
        ("答案一；答案二", ["答案一", "答案二"]),
        ("答案一。答案二。", ["答案一", "答案二"]),
        ("first line\nsecond line", ["first line", "second line"]),
        ("first\r\nsecond\rthird", ["first", "second", "third"]),
        ("  padded ; ；\n\n  。  ", ["padded"]),
        ("no separator, here", ["no separator, here"]),
        ("", []),
        ("  \n ; ", []),
    ],
)
def test_split_fragments(reference: str, expected: list[str]) -> None:
    assert split_fragments(reference) == expected


# --- n-grams ---------------------------------------------------------------------------------


def test_chinese_char_4grams() -> None:
    # 北京大学的校长: 7 chars -> 4 distinct 4-grams.
    assert fragment_ngrams("北京大学的校长") == {
        ("北", "京", "大", "学"),
        ("京", "大", "学", "的"),
        ("大", "学", "的", "校"),
        ("学", "的", "校", "长"),
    }


def test_chinese_punctuation_and_space_dropped() -> None:
    assert fragment_ngrams("北京，大学") == {("北", "京", "大", "学")}
    assert fragment_ngrams("「北京 大学」") == {("北", "京", "大", "学")}


def test_nfkc_full_width_digits_and_letters() -> None:
    # １９４９年 -> 1949年 (5 units) -> 4-grams 1949 and 949年.
    assert fragment_ngrams("１９４９年") == {("1", "9", "4", "9"), ("9", "4", "9", "年")}
    assert fragment_ngrams("ＡＢＣ Ｄｅｆ") == fragment_ngrams("abc def")


def test_english_word_bigrams_case_and_punctuation_insensitive() -> None:
    assert fragment_ngrams("The Eiffel Tower, in PARIS!") == {
        ("the", "eiffel"),
        ("eiffel", "tower"),
        ("tower", "in"),
        ("in", "paris"),
    }
    # Repeated bigrams count once: distinct n-grams.
    assert fragment_ngrams("hello world hello world") == {("hello", "world"), ("world", "hello")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("北京", {("北", "京")}),  # 2 chars < 4: matched whole as a 2-gram
        ("北", {("北",)}),
        ("北京大学", {("北", "京", "大", "学")}),  # exactly n: one n-gram
        ("Paris", {("paris",)}),  # 1 word < 2: a unigram
        ("Paris.", {("paris",)}),
        ("New York", {("new", "york")}),
        ("1949", {("1949",)}),  # no letters -> word unit
        ("。；——", frozenset()),
        ("", frozenset()),
    ],
)
def test_short_fragments_use_their_own_length(text: str, expected: set[tuple[str, ...]]) -> None:
    assert fragment_ngrams(text) == expected


def test_forced_units() -> None:
    # Forced word unit: each CJK character is a token of its own.
    assert fragment_ngrams("北京大学", NgramSpec(unit="word")) == {
        ("北", "京"),
        ("京", "大"),
        ("大", "学"),
    }
    # Forced char unit on English: 'newyork' (7 chars) -> 4 distinct 4-grams.
    assert len(fragment_ngrams("New York", NgramSpec(unit="char"))) == 4
    assert fragment_ngrams("abcde", NgramSpec(unit="char", char_n=2)) == {
        ("a", "b"),
        ("b", "c"),
        ("c", "d"),
        ("d", "e"),
    }


def test_detect_unit() -> None:
    assert CJK_LETTER_RATIO == 0.3
    assert detect_unit("北京大学") == "char"
    assert detect_unit("東京タワー") == "char"
    assert detect_unit("서울특별시") == "char"
    assert detect_unit("The Eiffel Tower") == "word"
    assert detect_unit("光荣和ω-force") == "char"  # 3 CJK of 9 letters = 33%
    assert detect_unit("abcdefg 北京大") == "char"  # 3 of 10 = exactly 30%
    assert detect_unit("abcdefgh 北京大") == "word"  # 3 of 11 < 30%
    assert detect_unit("4.9") == "word"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"char_n": 0}, "char_n"),
        ({"word_n": -1}, "word_n"),
        ({"word_n": True}, "word_n"),
        ({"unit": "chars"}, "unit"),
    ],
)
def test_ngram_spec_validation(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as caught:
        NgramSpec(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


# --- coverage --------------------------------------------------------------------------------


def test_coverage_hand_computed_chinese() -> None:
    fragment = "北京大学的校长"  # 4 grams: 北京大学 京大学的 大学的校 学的校长
    # 北京大学是一所大学 shares only 北京大学: 1/4.
    assert coverage(fragment, "北京大学是一所大学") == 0.25
    # 他是北京大学的教授，也是校长 shares 北京大学 and 京大学的: 2/4.
    assert coverage(fragment, "他是北京大学的教授，也是校长") == 0.5
    assert coverage(fragment, "北京大学的校长。") == 1.0
    assert coverage(fragment, "上海") == 0.0


def test_coverage_hand_computed_english() -> None:
    fragment = "The Eiffel Tower, in Paris"  # 4 bigrams
    # Shares (eiffel, tower) and (in, paris): 2/4.
    assert coverage(fragment, "EIFFEL TOWER is located IN PARIS.") == 0.5
    assert coverage("Paris", "I love paris!") == 1.0
    assert coverage("Paris", "Parisian cafes") == 0.0  # tokens, not substrings
    # A Latin or numeric answer inside unsegmented Chinese text still matches.
    assert coverage("40km", "全长40km的铁路") == 1.0
    assert coverage("Pony Canyon", "由Pony Canyon发行") == 1.0


def test_coverage_of_empty_fragment_raises() -> None:
    with pytest.raises(InputError, match="cannot be judged"):
        coverage("。；", "anything")
    with pytest.raises(InputError):
        coverage("", "anything")


# --- index -----------------------------------------------------------------------------------

_ALPHABET = "北京大学的校长是上海 abAB,.;。１"


@settings(max_examples=150, deadline=None)
@given(
    corpus=st.dictionaries(
        st.text("pqrs", min_size=1, max_size=3), st.text(_ALPHABET, max_size=30), max_size=8
    ),
    fragments=st.lists(st.text(_ALPHABET, min_size=1, max_size=12), min_size=1, max_size=5),
    unit=st.sampled_from(["auto", "char", "word"]),
    char_n=st.integers(1, 5),
    word_n=st.integers(1, 3),
)
def test_index_agrees_with_brute_force(
    corpus: dict[str, str], fragments: list[str], unit: str, char_n: int, word_n: int
) -> None:
    spec = NgramSpec(unit=unit, char_n=char_n, word_n=word_n)  # type: ignore[arg-type]
    index = ChunkIndex(corpus, spec)
    judged = [f for f in fragments if fragment_ngrams(f, spec)]
    assume(judged)
    for fragment in judged:
        brute = {doc: coverage(fragment, text, spec) for doc, text in corpus.items()}
        got = index.coverages(fragment)
        assert got == {doc: cov for doc, cov in brute.items() if cov > 0}
        assert all(0 < cov <= 1 and not math.isnan(cov) for cov in got.values())


def test_index_rejects_non_text_and_empty_fragment() -> None:
    with pytest.raises(InputError, match="d1"):
        ChunkIndex({"d1": None})  # type: ignore[dict-item]
    with pytest.raises(InputError):
        ChunkIndex({"d1": "text"}).coverages("——")


# --- matching --------------------------------------------------------------------------------

ZH_CORPUS = {
    "p1": "北京大学创建于1898年，初名京师大学堂。",
    "p2": "清华大学位于北京西北郊。",
    "p3": "复旦大学在上海。",
    "p4": "他是北京大学的教授，也是校长。",
    "p5": "北京大学的教授很多。",
    "p6": "北京大学的校长",
}
EN_CORPUS = {
    "e1": "The Eiffel Tower is located in Paris, France.",
    "e2": "Paris is the capital of France.",
    "e3": "Berlin is the capital of Germany.",
}


def test_fragment_order_threshold_and_best() -> None:
    index = ChunkIndex(ZH_CORPUS)
    # 北京大学的校长 (4 grams): p6 1.0; p4 and p5 share 北京大学, 京大学的 -> 0.5 (exactly at the
    # threshold, so relevant); p1 shares 北京大学 -> 0.25 (not relevant).
    match = match_references({"q": "北京大学的校长"}, index)["q"].fragments[0]
    assert match.doc_ids == ("p6", "p4", "p5")  # coverage desc, then id
    assert (match.best_doc, match.best_coverage) == ("p6", 1.0)
    strict = match_references({"q": "北京大学的校长"}, index, threshold=0.75)["q"]
    assert strict.fragments[0].doc_ids == ("p6",)
    loose = match_references({"q": "北京大学的校长"}, index, threshold=0.25)["q"]
    assert loose.relevant_doc_ids == {"p1", "p4", "p5", "p6"}


def test_multi_fragment_reference_gives_one_requirement_per_fragment() -> None:
    corpus = {"c1": "第一部分：答案一在这里", "c2": "第二部分：答案二在这里", "c3": "无关"}
    matches = match_references({"q": "答案一；答案二"}, ChunkIndex(corpus))
    relevance = matches["q"]
    assert [m.fragment for m in relevance.fragments] == ["答案一", "答案二"]
    assert relevance.requirements == [frozenset({"c1"}), frozenset({"c2"})]
    assert relevance.relevant_doc_ids == {"c1", "c2"}
    assert relevance.uncovered_fragments == ()
    assert text_requirements(matches) == {"q": [frozenset({"c1"}), frozenset({"c2"})]}
    assert text_qrels(matches) == {"q": {"c1": 1, "c2": 1}}


def test_match_references_chinese_and_english() -> None:
    index = ChunkIndex({**ZH_CORPUS, **EN_CORPUS})
    references = {
        "zh": "北京大学；清华大学",  # 4-char fragments: one 4-gram each
        "en": "Paris, France",  # bigram (paris, france): only e1
        "none": "Madrid",
        "half": "清华大学；浙江大学",
    }
    matches = match_references(references, index)
    assert all(isinstance(m, TextRelevance) for m in matches.values())
    assert text_qrels(matches) == {
        "zh": {"p1": 1, "p2": 1, "p4": 1, "p5": 1, "p6": 1},
        "en": {"e1": 1},
        "none": {},
        "half": {"p2": 1},
    }
    assert text_requirements(matches)["zh"] == [
        frozenset({"p1", "p4", "p5", "p6"}),
        frozenset({"p2"}),
    ]
    assert text_requirements(matches)["none"] == [frozenset()]
    half = matches["half"]
    assert [m.fragment for m in half.uncovered_fragments] == ["浙江大学"]
    assert half.uncovered_fragments[0].best_doc is None
    assert half.threshold == 0.5
    assert half.spec == NgramSpec()


def test_match_references_rejects_bad_input() -> None:
    index = ChunkIndex(ZH_CORPUS)
    with pytest.raises(InputError, match="empty reference answer") as caught:
        match_references({"ok": "北京", "q3": " ；\n"}, index)
    assert "q3" in str(caught.value)
    assert caught.value.field == "reference"
    with pytest.raises(InputError, match="q4"):
        match_references({"q4": "北京；——"}, index)
    for bad in (0.0, -0.1, 1.01, math.nan, True):
        with pytest.raises(InputError) as threshold_error:
            match_references({"q": "北京"}, index, threshold=bad)
        assert threshold_error.value.field == "threshold"
    assert match_references({"q": "北京"}, index, threshold=1)["q"].threshold == 1.0


# --- realistic: CMRC 2018 sample -------------------------------------------------------------


def _load_cmrc() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    corpus: dict[str, str] = {}
    references: dict[str, str] = {}
    gold: dict[str, str] = {}
    for line in CMRC_SAMPLE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["kind"] == "doc":
            corpus[record["doc_id"]] = record["text"]
        else:
            references[record["query_id"]] = record["answers"][0]
            gold[record["query_id"]] = record["doc_id"]
    return corpus, references, gold


def test_cmrc_gold_paragraph_covers_answer() -> None:
    corpus, references, gold = _load_cmrc()
    assert (len(corpus), len(references)) == (15, 30)
    matches = match_references(references, ChunkIndex(corpus), threshold=0.5)
    missed = [qid for qid in references if gold[qid] not in matches[qid].relevant_doc_ids]
    for qid in missed:
        print(f"gold paragraph {gold[qid]} does not cover {qid}: {references[qid]!r}")
    assert len(missed) <= 0.1 * len(references)
    # Short answers can be covered by other paragraphs too, but not by most of them.
    assert sum(len(m.relevant_doc_ids) for m in matches.values()) < 3 * len(references)
