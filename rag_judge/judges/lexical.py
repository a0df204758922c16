"""What a claim shares with its sources, script by script and number by number.

Within one text, Han (and kana, Hangul) runs are compared as character bigrams and every other
run of letters or digits as a word, so "光荣和ω-force" is found in a passage that says it (a
whole-text choice between word and bigram mode compared its words with the passage's bigrams,
which never match). Numbers are values (:mod:`rag_judge.judges.numbers`): a claim's number
counts as found only when a source states the same value, and a claim with a number no source
states is flagged (:func:`unstated_numbers`), whatever else it shares.

>>> coverage("光荣和ω-force", "《战国无双3》是由光荣和ω-force合作开发的游戏。")
1.0
>>> coverage("Acme was founded in 1990 in Boston.", "Acme, founded in 1990, ...")
0.75
>>> unstated_numbers("1.0级地震", "发生7.0级地震")
['1.0']
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Final

from rag_judge.judges.numbers import normalised, quantities, unstated
from rag_judge.judges.segment import CJK_RANGES

_HAN_CHAR: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_TOKEN: Final = re.compile(r"[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*")
"""A run of Latin letters and digits with at least one letter (``JR``, ``CD11a``, ``iPhone``)."""
_LETTER: Final = rf"(?:(?![{CJK_RANGES}])[^\W_])"
_RUN: Final = re.compile(rf"(?P<han>[{CJK_RANGES}]+)|(?P<word>{_LETTER}+(?:['’.-]{_LETTER}+)*)")
"""A Han run, or a word of any other script (letters and digits, joined by ' ’ . -)."""
STOPWORDS: Final = frozenset(
    """a an the of in on at to for from by with and or but not no nor is are was were be been
    being am do does did has have had having it its it's this that these those there here he
    she they them his her their him we us our you your i me my as so than then too very can
    could will would shall should may might must also only just about into over under after
    before between during while which who whom whose what when where why how all any both
    each few more most other some such own same s t""".split()  # noqa: SIM905
)
"""English function words left out of the content-word check."""
STEM: Final = 5
"""A word counts as found when a source word shares its first this many letters
("founded"/"founding")."""
GROUNDED_SHARE: Final = 0.8
"""A model-written claim must take at least this share of its content words (and of its Han
characters, and its numbers) from its source text."""


def content_units(text: str) -> list[str]:
    """A text's content units, in order: each Han run's character bigrams (a lone character as
    itself) and every other word, lowercased, English function words left out. Digits are
    words here; :func:`coverage` compares numbers by value.

    >>> content_units("2010年iPhone 4发售")
    ['2010', '年', 'iphone', '4', '发售']
    """
    units: list[str] = []
    for match in _RUN.finditer(normalised(text).lower()):
        if han := match["han"]:
            units.extend(_bigrams(han))
        elif (word := _word(match["word"])) and word not in STOPWORDS:
            units.append(word)
    return units


def coverage(claim: str, *sources: str) -> float:
    """The share of the claim's units found in the sources (0 when it has none): Han bigrams in
    the sources' bigrams (a lone character among their characters), words by their first
    :data:`STEM` letters, numbers by value."""
    found, total = _found(claim, sources, han_units=_bigrams)
    return found / total if total else 0.0


def grounded_in(claim: str, *sources: str) -> bool:
    """Whether a model-written ``claim`` is made of its sources: at least
    :data:`GROUNDED_SHARE` of its units occur in them, Han counted character by character
    (a faithful Chinese rewording keeps the characters but breaks character pairs). A claim
    with no unit is not grounded.

    >>> grounded_in("Acme was founded in 1990.", "In 1990, Acme was founded by Jo Park.")
    True
    """
    found, total = _found(claim, sources, han_units=list)
    return bool(total) and found >= GROUNDED_SHARE * total


def unstated_numbers(claim: str, *sources: str) -> list[str]:
    """The claim's numbers (as written) that no source states as a value."""
    return [q.text for q in unstated(quantities(claim), *sources)]


def unstated_names(claim: str, *sources: str) -> list[str]:
    """In a claim with Han characters, its Latin-script words (names, codes, terms: ``JR``,
    ``ω-force``, ``CD11a``) that no source contains. Chinese text copies such words as they
    are, so one that no passage has is not from the passages, however much Han text around
    it they share. Units after numbers are part of the number, not names.

    >>> unstated_names("东日本旅客铁道（Apthorp东日本）", "东日本旅客铁道（JR东日本）")
    ['Apthorp']
    """
    text = normalised(claim)
    if not _HAN_CHAR.search(text):
        return []
    for q in quantities(claim):
        text = text[: q.start] + " " * (q.end - q.start) + text[q.end :]
    have = {w.lower() for source in sources for w in _LATIN_TOKEN.findall(normalised(source))}
    return [w for w in dict.fromkeys(_LATIN_TOKEN.findall(text)) if w.lower() not in have]


def unstated_facts(claim: str, *sources: str) -> list[str]:
    """What the claim states exactly that no source does: numbers (by value) and, in Chinese
    text, Latin-script names (:func:`unstated_names`)."""
    return unstated_numbers(claim, *sources) + unstated_names(claim, *sources)


def _found(
    claim: str, sources: tuple[str, ...], *, han_units: Callable[[str], list[str]]
) -> tuple[int, int]:
    """(units found, units in all) of ``claim`` against ``sources``."""
    numbers = quantities(claim)
    text = normalised(claim).lower()
    for q in numbers:  # a number is compared by value, not as the words it is written with
        text = text[: q.start] + " " * (q.end - q.start) + text[q.end :]
    han: list[str] = []
    words: list[str] = []
    for match in _RUN.finditer(text):
        if match["han"]:
            han.extend(han_units(match["han"]))
        elif (word := _word(match["word"])) and word not in STOPWORDS:
            words.append(word)
    seen = _SourceUnits(sources)
    found = sum(seen.has_han(unit) for unit in han) + sum(seen.has_word(w) for w in words)
    found += len(numbers) - len(unstated(numbers, *sources))
    return found, len(han) + len(words) + len(numbers)


class _SourceUnits:
    """The units of the sources, for look-ups."""

    def __init__(self, sources: tuple[str, ...]) -> None:
        self.chars: set[str] = set()
        self.bigrams: set[str] = set()
        self.words: set[str] = set()
        for source in sources:
            for match in _RUN.finditer(normalised(source).lower()):
                if han := match["han"]:
                    self.chars.update(han)
                    self.bigrams.update(a + b for a, b in itertools.pairwise(han))
                elif (word := _word(match["word"])) and word not in STOPWORDS:
                    self.words.add(word)
        self.stems = {w[:STEM] for w in self.words}

    def has_han(self, unit: str) -> bool:
        return unit in (self.bigrams if len(unit) > 1 else self.chars)

    def has_word(self, word: str) -> bool:
        return word in self.words or word[:STEM] in self.stems


def _bigrams(run: str) -> list[str]:
    return [a + b for a, b in itertools.pairwise(run)] or [run]


def _word(word: str) -> str:
    return re.sub(r"['’]s$", "", word).strip("'’.-")
