"""Lexical filters on synthetic questions: one that copies its chunk, one that repeats another.

A question lifted from its passage makes BM25 look perfect (its rare words are the passage's),
so questions are compared with their chunk by token n-grams: words for most scripts, single
characters for Chinese and Japanese (so the rule works without a word segmenter).

>>> round(copy_overlap("When was the Langley tunnel opened?",
...                    "The Langley tunnel was opened in 1958."), 2)
0.25
>>> round(copy_overlap("广三铁路在哪年建成？", "广三铁路于1903年建成，连接广州与三水。"), 2)
0.43
>>> duplicate_of(["What is BM25?", "what is BM25 ?", "Who wrote BM25?"], 0.8)
{1: 0}
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from rag_judge.judges.segment import CJK_RANGES

COPY_NGRAM: Final = 3
"""Tokens per n-gram when a question is compared with its chunk."""
DUPLICATE_NGRAM: Final = 2
"""Tokens per n-gram when two questions are compared."""
MAX_SPAN_TOKENS: Final = 16
"""Longest factual answer, in tokens (words; a CJK character is one): a name, a number, a date
or a short phrase, as exact match expects."""
_POINTER: Final = re.compile(
    r"\b(?:the|this|that|these|above|given)\s+(?:passages?|texts?|paragraphs?|excerpts?|"
    r"articles?|documents?|abstracts?|study|paper|report|section)\b"
    r"|\b(?:first|second|both|two|other)\s+(?:passages?|texts?|paragraphs?)\b"
    r"|\b(?:passage|text|paragraph)\s*[12]\b|(?:本文|文中|这段|该段|段落|上文|原文|文章中|短文)",
    re.IGNORECASE,
)
"""Words that point at the source text instead of naming the subject."""
_TOKEN: Final = re.compile(f"[{CJK_RANGES}]|(?:(?![{CJK_RANGES}])[^\\W_])+")
"""One CJK character, or a run of letters and digits."""


def tokens(text: str) -> list[str]:
    """The text's tokens, lowercased: each CJK character alone, every other word whole."""
    return [t.lower() for t in _TOKEN.findall(text)]


def ngrams(items: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """The text's n-grams (the whole sequence when it is shorter than ``n``)."""
    if len(items) < n:
        return {tuple(items)} if items else set()
    return {tuple(items[i : i + n]) for i in range(len(items) - n + 1)}


def copy_overlap(question: str, *passages: str, n: int = COPY_NGRAM) -> float:
    """The share of the question's token n-grams found in any passage (0 when it has none)."""
    asked = ngrams(tokens(question), n)
    if not asked:
        return 0.0
    source: set[tuple[str, ...]] = set()
    for passage in passages:
        source |= ngrams(tokens(passage), n)
    return len(asked & source) / len(asked)


def similarity(a: str, b: str, n: int = DUPLICATE_NGRAM) -> float:
    """Jaccard similarity of two questions' token n-gram sets."""
    first, second = ngrams(tokens(a), n), ngrams(tokens(b), n)
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)


def duplicate_of(questions: Sequence[str], threshold: float) -> dict[int, int]:
    """Each question at least ``threshold`` similar to an earlier kept one -> that one's index.

    Earlier questions win, so the result depends only on the order given.
    """
    kept: list[int] = []
    found: dict[int, int] = {}
    for index, question in enumerate(questions):
        match = next((k for k in kept if similarity(questions[k], question) >= threshold), None)
        if match is None:
            kept.append(index)
        else:
            found[index] = match
    return found


def is_span(answer: str, passage: str) -> bool:
    """The answer is short (at most :data:`MAX_SPAN_TOKENS` tokens) and occurs in the passage,
    ignoring case and whitespace (a model may space out Chinese or join a line break)."""
    squeezed = "".join(answer.split()).lower()
    short = len(tokens(answer)) <= MAX_SPAN_TOKENS
    return bool(squeezed) and short and squeezed in "".join(passage.split()).lower()


def refers_to_passage(question: str) -> str | None:
    """The words by which a question points at the text it was written from ("the passage",
    "本文"), which a user of a search system would never say; None when it does not."""
    found = _POINTER.search(question)
    return found.group(0) if found else None
