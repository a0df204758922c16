"""Tests for the chunkers: exact slices, the windowing and structure rules, never losing text."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_judge.core.errors import InputError
from rag_judge.core.types import Document
from rag_judge.pipeline.chunking import (
    Chunk,
    SentenceWindows,
    chunk_corpus,
    chunker_from_spec,
    fixed_size,
    sentence_windows,
    structure_aware,
)
from rag_judge.retrieval.gold_coverage import check_gold_coverage

LONG_A = "本法是为了保护劳动者的合法权益，调整劳动关系，建立和维护适应社会主义市场经济的劳动制度。"
LONG_B = "用人单位应当依法建立和完善劳动规章制度，保障劳动者享有劳动权利、履行劳动义务。"
ARTICLE = "第十二条 试用期不得超过六个月。"
LAW = f"{LONG_A}\n\n{ARTICLE}\n\n{LONG_B}"


def _texts(chunks: list[Chunk]) -> list[str]:
    return [chunk.text for chunk in chunks]


def _assert_exact_slices(text: str, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text.strip()


# --------------------------------------------------------------------------- fixed size


def test_fixed_size_chars_overlap_and_short_last_window() -> None:
    chunks = fixed_size(4, 1)("d", "abcdefghijk", title="T")
    # starts 0, 3, 6, 9 (step 3); the window at 9 reaches the end, so it is the last
    assert _texts(chunks) == ["abcd", "defg", "ghij", "jk"]
    assert [(c.id, c.start, c.end) for c in chunks] == [
        ("d#0", 0, 4),
        ("d#1", 3, 7),
        ("d#2", 6, 10),
        ("d#3", 9, 11),
    ]
    assert {c.title for c in chunks} == {"T"}
    assert {c.doc_id for c in chunks} == {"d"}


def test_fixed_size_stops_at_the_window_that_reaches_the_end() -> None:
    # a window ending exactly at the end must not be followed by one inside it
    assert _texts(fixed_size(4, 2)("d", "abcdef")) == ["abcd", "cdef"]


def test_fixed_size_tokens_are_words_for_english_and_characters_for_cjk() -> None:
    english = fixed_size(3, 1, unit="token")("e", "one two  three four five")
    assert _texts(english) == ["one two  three", "three four five"]
    chinese = fixed_size(4, unit="token")("z", "试用期 不得超过六个月。")
    assert _texts(chinese) == ["试用期 不", "得超过六", "个月。"]
    _assert_exact_slices("试用期 不得超过六个月。", chinese)


def test_fixed_size_never_emits_whitespace_only_chunks() -> None:
    chunks = fixed_size(3)("w", "ab     cd")
    assert _texts(chunks) == ["ab ", " cd"]  # "   " at 3..6 is skipped
    assert fixed_size(5)("empty", "") == []
    assert fixed_size(5)("blank", "   \n ") == []


@pytest.mark.parametrize(
    ("size", "overlap", "unit", "message"),
    [
        (0, 0, "char", "size must be an integer >= 1, got 0"),
        (4, -1, "char", "overlap must be an integer >= 0"),
        (4, 4, "char", "overlap (4) must be smaller than size (4)"),
        (4, 0, "word", "unit must be 'char' or 'token'"),
    ],
)
def test_fixed_size_rejects_bad_settings(size: int, overlap: int, unit: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        fixed_size(size, overlap, unit)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- structure aware


def test_headings_and_article_markers_start_new_pieces() -> None:
    text = (
        "# Setup\nInstall the package first.\n"
        "## Usage\nRun the command with a file.\n"
        "Article 5 Nothing here is binding.\n"
        "第三条 本规定自公布之日起施行。"
    )
    chunks = structure_aware(min_chunk=1, max_chunk=200)("doc", text)
    assert _texts(chunks) == [
        "# Setup\nInstall the package first.",
        "## Usage\nRun the command with a file.",
        "Article 5 Nothing here is binding.",
        "第三条 本规定自公布之日起施行。",
    ]
    _assert_exact_slices(text, chunks)


def test_paragraphs_split_at_blank_lines_and_sentences_only_when_too_long() -> None:
    text = "Short one. Still short.\n\n  \nA long paragraph. It has three sentences! Right?"
    chunks = structure_aware(min_chunk=1, max_chunk=30)("doc", text)
    # paragraph 1 (23 chars) fits; paragraph 2 (48 chars) is packed sentence by sentence:
    # "A long paragraph." (17) + " It has three sentences!" would be 41 > 30, while
    # "It has three sentences!" (23) + " Right?" is exactly 30
    assert _texts(chunks) == [
        "Short one. Still short.",
        "A long paragraph.",
        "It has three sentences! Right?",
    ]
    _assert_exact_slices(text, chunks)


def test_cjk_sentences_and_overlong_sentences_are_cut() -> None:
    text = "第一句很短。第二句也很短！" + "长" * 25
    chunks = structure_aware(min_chunk=1, max_chunk=10)("doc", text)
    assert _texts(chunks) == ["第一句很短。", "第二句也很短！", "长" * 10, "长" * 10, "长" * 5]


def test_short_pieces_merge_into_the_next_or_at_the_end_the_previous() -> None:
    text = "Tiny.\n\nA paragraph that is long enough.\n\nAnother long enough paragraph.\n\nEnd."
    chunks = structure_aware(min_chunk=10, max_chunk=100)("doc", text)
    assert _texts(chunks) == [
        "Tiny.\n\nA paragraph that is long enough.",
        "Another long enough paragraph.\n\nEnd.",
    ]
    _assert_exact_slices(text, chunks)


def test_a_document_shorter_than_min_chunk_is_one_chunk() -> None:
    assert _texts(structure_aware(50, 100)("doc", "Only this.")) == ["Only this."]


def test_drop_short_is_the_anti_pattern_that_loses_text() -> None:
    dropped = structure_aware(min_chunk=30, max_chunk=200, drop_short=True)("law", LAW)
    assert _texts(dropped) == [LONG_A, LONG_B]
    merged = structure_aware(min_chunk=30, max_chunk=200)("law", LAW)
    assert _texts(merged) == [LONG_A, f"{ARTICLE}\n\n{LONG_B}"]


def test_structure_aware_rejects_min_above_max() -> None:
    with pytest.raises(InputError, match=r"min_chunk \(20\) must not exceed max_chunk \(10\)"):
        structure_aware(20, 10)


@settings(max_examples=60)
@given(
    text=st.text(alphabet=st.sampled_from("ab. 。\n#第三条Article 5"), max_size=120),
    min_chunk=st.integers(0, 15),
    extra=st.integers(1, 30),
)
def test_merging_never_loses_or_repeats_text(text: str, min_chunk: int, extra: int) -> None:
    chunks = structure_aware(min_chunk, min_chunk + extra)("doc", text)
    _assert_exact_slices(text, chunks)
    covered = [False] * len(text)
    for chunk in chunks:
        assert not any(covered[chunk.start : chunk.end])  # ordered, no overlap
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))
    assert [c.id for c in chunks] == [f"doc#{n}" for n in range(len(chunks))]
    assert structure_aware(min_chunk, min_chunk + extra)("doc", text) == chunks


# --------------------------------------------------------------------------- corpora


def test_chunk_corpus_takes_a_mapping_or_documents_in_order() -> None:
    chunker = fixed_size(100)
    from_map = chunk_corpus(chunker, {"b": "second", "a": "first"})
    assert [(c.id, c.text) for c in from_map] == [("b#0", "second"), ("a#0", "first")]
    from_docs = chunk_corpus(chunker, [Document("a", "first", title="A")])
    assert from_docs == [Chunk("a#0", "a", "first", 0, 5, "A")]


def test_chunk_corpus_rejects_repeated_document_ids() -> None:
    with pytest.raises(InputError, match="document id 'a' appears twice"):
        chunk_corpus(fixed_size(10), [Document("a", "x"), Document("a", "y")])


# --------------------------------------------------------------------------- the seed's lesson


def test_dropping_short_pieces_makes_an_index_gap_the_coverage_check_reports() -> None:
    """A one-line article dropped by the chunker is a chunking gap, not a retrieval failure.

    Its question must be excluded from retrieval metrics (no retriever could find what is not
    in the index), which the gold-coverage check says; merging short pieces keeps it covered.
    """
    references = {"probation": "试用期不得超过六个月", "purpose": "保护劳动者的合法权益"}
    lossy = structure_aware(min_chunk=30, max_chunk=200, drop_short=True)
    safe = structure_aware(min_chunk=30, max_chunk=200)

    gap = check_gold_coverage(references, {c.id: c.text for c in lossy("law", LAW)})
    assert list(gap.uncovered) == ["probation"]
    assert gap.covered_ids == ["purpose"]
    assert "covered by no chunk" in gap.uncovered["probation"]
    assert "excluded from retrieval metrics: probation" in gap.summary()

    kept = check_gold_coverage(references, {c.id: c.text for c in safe("law", LAW)})
    assert kept.uncovered == {}
    assert kept.covered_ids == ["probation", "purpose"]


# --------------------------------------------------------------------------- sentence windows

S1, S2, S3, S4 = "甲" * 40 + "。", "乙" * 40 + "。", "丙" * 40 + "。", "丁" * 40 + "。"


def test_sentence_windows_overlap_by_one_sentence_and_keep_within_max() -> None:
    text = S1 + S2 + S3 + S4
    chunks = sentence_windows(50, 90)("p", text)
    _assert_exact_slices(text, chunks)
    assert _texts(chunks) == [S1 + S2, S2 + S3, S3 + S4]
    assert [c.doc_id for c in chunks] == ["p", "p", "p"]
    assert [c.id for c in chunks] == ["p#0", "p#1", "p#2"]


def test_sentence_windows_take_more_while_shorter_than_min_and_cut_long_sentences() -> None:
    short = "短句。" * 5  # 15 characters
    assert _texts(sentence_windows(10, 12)("d", short)) == [
        "短句。短句。短句。短句。",
        "短句。短句。",
    ]
    long = "长" * 25
    assert _texts(sentence_windows(0, 10, overlap=0)("d", long)) == ["长" * 10, "长" * 10, "长" * 5]
    assert sentence_windows(10, 20)("d", " \n ") == []
    lines = "first line\nsecond line"
    assert _texts(sentence_windows(0, 12, overlap=0)("d", lines)) == ["first line", "second line"]


def test_a_window_always_brings_a_sentence_the_previous_one_did_not() -> None:
    a, b, c = "一二三四。", "五六七八。", "九" * 19 + "。"
    assert _texts(sentence_windows(0, 22, overlap=2)("d", a + b + c)) == [a + b, b + c]


def test_sentence_windows_without_overlap_tile_the_sentences() -> None:
    text = S1 + S2 + S3
    assert _texts(sentence_windows(0, 90, overlap=0)("p", text)) == [S1 + S2, S3]


@settings(max_examples=200)
@given(
    text=st.text(alphabet=st.sampled_from("ab. 。！\n"), max_size=120),
    least=st.integers(0, 15),
    extra=st.integers(1, 30),
    overlap=st.integers(0, 3),
)
def test_sentence_windows_never_lose_text_and_always_advance(
    text: str, least: int, extra: int, overlap: int
) -> None:
    chunker = sentence_windows(least, least + extra, overlap)
    chunks = chunker("doc", text)
    _assert_exact_slices(text, chunks)
    covered = [False] * len(text)
    for before, after in itertools.pairwise(chunks):  # always advances
        assert after.start > before.start
        assert after.end > before.end
    for chunk in chunks:
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    sentence_marks = set("。！.\n")
    assert all(
        covered[i] or text[i].isspace() or text[i] in sentence_marks for i in range(len(text))
    )
    assert all(covered[i] for i in range(len(text)) if text[i] in "ab")
    assert chunker("doc", text) == chunks


def test_a_chunker_from_a_manifest_spec() -> None:
    spec = {"chunker": "sentence_windows", "min_chars": 100, "max_chars": 200, "overlap": 1}
    assert chunker_from_spec(spec) == SentenceWindows(100, 200, 1)
    assert chunker_from_spec({"chunker": "structure_aware", "min_chars": 1, "max_chars": 9}) == (
        structure_aware(1, 9)
    )
    for bad, message in [
        ([1], "must be an object"),
        ({"chunker": "words", "min_chars": 1, "max_chars": 2}, "unknown chunker 'words'"),
        ({"chunker": "structure_aware", "min_chars": 1, "max_chars": 2, "overlap": 1}, "unknown"),
        ({"chunker": "sentence_windows", "max_chars": 2}, "needs min_chars"),
        ({"chunker": "sentence_windows", "min_chars": 5, "max_chars": 2}, "must not exceed"),
        ({"chunker": "sentence_windows", "min_chars": 1, "max_chars": "2"}, "max_chars must be"),
    ]:
        with pytest.raises(InputError, match=message):
            chunker_from_spec(bad)


def test_a_corpus_already_cut_is_kept_as_it_is() -> None:
    none = chunker_from_spec({"chunker": "none"})
    (chunk,) = none("a.md#3", "  A passage of 500 characters or more, never cut.  ", "T")
    assert (chunk.id, chunk.doc_id, chunk.title) == ("a.md#3#0", "a.md#3", "T")
    assert chunk.text == "A passage of 500 characters or more, never cut."
    assert chunk.start == 2
    assert none("blank", " \n ") == []
    with pytest.raises(InputError, match="unknown keys"):
        chunker_from_spec({"chunker": "none", "max_chars": 9})
