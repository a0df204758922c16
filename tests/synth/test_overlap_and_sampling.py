"""The pure parts of synth: the copy and duplicate filters, the span rule, the chunk order."""

from __future__ import annotations

from collections import Counter

import pytest

from rag_judge.core.errors import InputError
from rag_judge.jobs.synth.options import SynthOptions, parse_chunker
from rag_judge.pipeline.chunking import Chunk
from rag_judge.synth.overlap import (
    copy_overlap,
    duplicate_of,
    is_span,
    refers_to_passage,
    similarity,
)
from rag_judge.synth.sampling import partner, stratified_order


def test_copy_overlap_counts_word_and_character_3grams() -> None:
    passage = "The Langley tunnel was opened in 1958 and runs at Mach 2."
    assert copy_overlap("The Langley tunnel was opened in which year?", passage) == 4 / 6
    assert copy_overlap("When did wind testing start at NASA?", passage) == 0.0
    # Chinese by character: 广三铁 三铁路 年建成 of seven 3-grams
    assert copy_overlap("广三铁路在哪年建成？", "广三铁路于1903年建成。") == 3 / 7
    assert copy_overlap("", passage) == 0.0


def test_near_duplicates_keep_the_first() -> None:
    questions = ["What is BM25?", "What is BM25 ?", "Who wrote BM25?", "what is bm25"]
    assert duplicate_of(questions, 0.7) == {1: 0, 3: 0}
    assert similarity("a b c", "d e f") == 0.0


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("Mach 2", True), ("mach  2", True), ("Mach 3", False), ("", False), ("1958 年", True)],
)
def test_a_span_ignores_case_and_spaces(answer: str, expected: bool) -> None:
    assert is_span(answer, "It opened in 1958年 and runs at Mach 2.") is expected


def test_a_long_answer_is_no_span() -> None:
    text = " ".join(f"w{i}" for i in range(30))
    assert not is_span(text, text)


@pytest.mark.parametrize(
    ("question", "pointer"),
    [
        ("What does the passage say about Mach 2?", "the passage"),
        ("In the first passage, who built it?", "first passage"),
        ("本文提到的铁路是哪年建成的？", "本文"),
        ("What does Passage 2 say about the jet?", "Passage 2"),
        ("How do the two passages differ?", "two passages"),
        ("How fast is the Langley tunnel?", None),
    ],
)
def test_pointing_at_the_source_is_found(question: str, pointer: str | None) -> None:
    assert refers_to_passage(question) == pointer


def _chunks(sizes: dict[str, int]) -> list[Chunk]:
    return [Chunk(f"{d}#{i}", d, f"{d} {i}", 0, 3) for d, n in sizes.items() for i in range(n)]


def test_the_order_takes_documents_in_turn_and_is_seeded() -> None:
    chunks = _chunks({"long": 20, "a": 1, "b": 2, "c": 1})
    order = stratified_order(chunks, seed=3)
    assert sorted(c.id for c in order) == sorted(c.id for c in chunks)
    assert Counter(c.doc_id for c in order[:4]) == Counter({"long": 1, "a": 1, "b": 1, "c": 1})
    assert order == stratified_order(chunks, seed=3)
    assert order != stratified_order(chunks, seed=4)


def test_a_partner_comes_from_another_document_and_never_overlaps() -> None:
    first = Chunk("d#0", "d", "x", 0, 10)
    overlapping = Chunk("d#1", "d", "y", 5, 15)
    apart = Chunk("d#2", "d", "z", 20, 30)
    other = Chunk("e#0", "e", "w", 0, 10)
    assert partner(first, [first, overlapping, apart, other]) == other
    assert partner(first, [first, overlapping, apart]) == apart
    assert partner(first, [first, overlapping]) is None


def test_options_are_checked_when_built() -> None:
    assert SynthOptions(questions=10).quotas() == {
        "factual": 7,
        "multi_source": 2,
        "unanswerable": 1,
    }
    with pytest.raises(InputError, match="must not exceed 1"):
        SynthOptions(multi_source=0.7, unanswerable=0.5)
    with pytest.raises(InputError, match="prompts are in en, zh"):
        SynthOptions(language="fr")
    with pytest.raises(InputError) as raised:
        SynthOptions(chunking={"chunker": "sentence_windows", "min_chars": 9})
    assert raised.value.field == "chunking.max_chars"
    with pytest.raises(InputError, match="unknown chunker 'none'"):
        parse_chunker("none")
    with pytest.raises(InputError, match="give NAME"):
        parse_chunker("structure_aware:100")
