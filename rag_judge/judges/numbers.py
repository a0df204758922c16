"""Numbers as values: read the quantities a text states and tell whether other texts state them.

A wrong number is the most common thing a RAG system invents, and a character-pair or word
overlap cannot see it: "170" shares "70" with the truth, "161万" shares most of "1361万". Here a
number is read with its scale and unit (thousand separators, decimals, 万/亿, thousand/million/
billion, %, ‰, "per cent", 百分之, Chinese numerals, the parts of a date) and compared by value:
``1361万`` is 13,610,000 whether a passage writes ``1361万``, ``13,610,000`` or ``13.61 million``.

A claim is read strictly (only what is plainly a quantity, so "一起" or "one of them" is not a
number); a source generously (also English number words, month names and lone Chinese numerals),
so a number stated in another form is still found.

>>> [q.value for q in quantities("人口1361万，增长2.3%，占10.48‰")]
[13610000.0, 0.023, 0.01048]
>>> unstated(quantities("1361万人"), "全市人口为13,610,000人")
[]
>>> [q.text for q in unstated(quantities("161万"), "人口1361万")]
['161万']
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

Kind = Literal["plain", "percent", "permille"]
"""What a number counts: itself, hundredths or thousandths."""

_ZH_DIGITS: Final = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
    "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
_ZH_UNITS: Final = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG: Final = {"万": 10**4, "亿": 10**8}
_ZH_DIGIT_CHARS: Final = "".join(_ZH_DIGITS)
_ZH_SCALE_CHARS: Final = "十百千万亿"
_MEASURES: Final = frozenset(
    "个位项名人次年月日号天岁种座条家所部本只件张届场轮秒时米元倍层期章集季辆架艘门首篇份批"
    "支队枚颗棵株块片间栋户周代级度克吨斤升里亩"
)
"""Characters that make a lone Chinese numeral a count ("五位", "三项", "两个") in a claim."""
_SCALE_WORDS: Final = {
    "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12,
    "k": 10**3, "mn": 10**6, "bn": 10**9,
}  # fmt: skip
_SUFFIXES: Final = frozenset({"st", "nd", "rd", "th", "s"})
"""Letters that may follow digits in a number (1st, 1990s)."""
_UNITS: Final = frozenset(
    (
        *("km", "m", "cm", "mm", "nm", "kg", "g", "mg", "t", "ml", "mL", "l", "L"),
        *("KB", "MB", "GB", "TB", "kB", "Hz", "kHz", "MHz", "GHz"),
        *("W", "kW", "MW", "GW", "V", "kV", "mph", "ft", "mi", "lb", "oz", "h", "min"),
    )
)
"""Units glued to digits (364.6km, 5kg, 8GB), case as written: the number is read, the unit is
part of it. Any other glued letters make a name (5G, 3D, MP3), which the lexical check
compares as a word."""
_EN_WORDS: Final = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12, "once": 1,
    "twice": 2, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "half": 0.5,
}  # fmt: skip
_MONTHS: Final = {
    name: i + 1
    for i, names in enumerate(
        [
            "january jan", "february feb", "march mar", "april apr", "may", "june jun",
            "july jul", "august aug", "september sep sept", "october oct", "november nov",
            "december dec",
        ]
    )
    for name in names.split()
}  # fmt: skip

_DIGITS: Final = re.compile(
    r"(?<![A-Za-z0-9._])(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.(?P<dec>\d+))?"
    r"(?P<after>[A-Za-z]*)"
)
_SCALE_AFTER: Final = re.compile(
    rf"\s*(?:(?P<zh>[{_ZH_SCALE_CHARS}]+)|(?P<en>thousand|million|billion|trillion)\b)",
    re.IGNORECASE,
)
_UNIT_AFTER: Final = re.compile(
    r"\s*(?:(?P<pct>%|per\s?cent\b|个?百分点)|(?P<pml>‰))", re.IGNORECASE
)
_ZH_RUN: Final = re.compile(
    rf"(?P<pre>[百千]分之)?(?P<num>[{_ZH_DIGIT_CHARS}{_ZH_SCALE_CHARS}]+"
    rf"(?:点[{_ZH_DIGIT_CHARS}]+)?)"
)
_SEASON: Final = re.compile(r"(?<!\d)(?P<year>1\d{3}|20\d{2})[-–]$")
"""A year and a dash right before two digits: a season or span (2018–19)."""
_PREFIX: Final = re.compile(r"(?P<pre>[百千]分之)\s*$")
_EN_WORD: Final = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)?")


@dataclass(frozen=True)
class Quantity:
    """A number as a text states it, and its value."""

    text: str
    """The number as written (``1361万``, ``2.3%``)."""
    value: float
    """What it amounts to: ``1361万`` is 13,610,000; ``2.3%`` is 0.023."""
    mantissa: float
    """The digits as written, without scale or unit (1361; 2.3)."""
    decimals: int
    """Digits written after the decimal point: the precision the text claims."""
    scale: float = 1.0
    """The scale word's factor (万: 10,000; billion: 10^9); 1 without one."""
    kind: Kind = "plain"
    start: int = 0
    """Where it starts in the (NFKC-normalised) text."""
    end: int = 0
    """Where it ends."""


def normalised(text: str) -> str:
    """The text in NFKC form: full-width digits and letters as ASCII (``１０`` is ``10``)."""
    return unicodedata.normalize("NFKC", text)


def quantities(text: str, *, generous: bool = False) -> list[Quantity]:
    """The numbers ``text`` states, in order, with spans in :func:`normalised` text.

    ``generous`` also reads what is only sometimes a number (English number words, month names,
    a lone Chinese numeral): right for a text that must be found to state a number, wrong for a
    claim that would then be held to numbers it never meant.
    """
    text = normalised(text)
    found = _arabic(text) + _chinese(text, generous=generous)
    if generous:
        found += _english_words(text)
    return sorted(found, key=lambda q: (q.start, q.end))


def unstated(claimed: Sequence[Quantity], *sources: str) -> list[Quantity]:
    """The claimed quantities that no source states (by value; see :func:`states`)."""
    if not claimed:
        return []
    stated = [q for source in sources for q in quantities(source, generous=True)]
    return [q for q in claimed if not any(states(s, q) for s in stated)]


def states(source: Quantity, claim: Quantity) -> bool:
    """Whether a source's number states the claim's: the same value; or the same digits where
    one is a percentage and the other a bare number ("2.3" for "2.3%"); or the source's value
    rounded to the claim's precision, when the claim is a rounded figure (a decimal, or a
    scale word: "10.4 billion" for "$10,412 million").

    >>> states(quantities("13,610,000")[0], quantities("1361万")[0])
    True
    >>> states(quantities("70")[0], quantities("170")[0])
    False
    """
    if _close(source.value, claim.value):
        return True
    one_a_percentage = {source.kind, claim.kind} & {"percent", "permille"}
    if (
        one_a_percentage
        and source.scale == claim.scale == 1
        and _close(source.mantissa, claim.mantissa)
    ):
        return True
    if (claim.decimals > 0 or claim.scale >= 1000) and claim.mantissa:
        unit = claim.value / claim.mantissa  # what one of the claim's written units is worth
        return _close(round(source.value / unit, claim.decimals), claim.mantissa)
    return False


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _arabic(text: str) -> list[Quantity]:
    """Numbers written in digits, with a scale word or characters and a percent or per-mille
    sign after them, or 百分之/千分之 before."""
    out = []
    for match in _DIGITS.finditer(text):
        after = match["after"].lower()
        unit = match["after"] in _UNITS
        if after and after not in _SUFFIXES and after not in _SCALE_WORDS and not unit:
            continue  # glued letters: a name such as 5G or MP3
        digits, decimals = match["int"].replace(",", ""), match["dec"] or ""
        mantissa = float(f"{digits}.{decimals}" if decimals else digits)
        scale, end = float(_SCALE_WORDS.get(after, 1)), match.end()
        kind, end = _unit(text, end)
        if kind == "plain" and not after and (words := _SCALE_AFTER.match(text, end)):
            factor = _zh_scale(words["zh"]) if words["zh"] else _SCALE_WORDS[words["en"].lower()]
            scale, end = float(factor), words.end()
            kind, end = _unit(text, end)
        if (prefix := _PREFIX.search(text, 0, match.start())) is not None:
            kind = "percent" if prefix["pre"] == "百分之" else "permille"
        if (season := _SEASON.search(text, 0, match.start())) and len(digits) == 2 and not after:
            mantissa = _season_end(int(season["year"]), int(digits), mantissa)  # 2018–19: 2019
        out.append(_quantity(text, match.start(), end, mantissa, len(decimals), scale, kind))
    return out


def _season_end(year: int, short: int, as_written: float) -> float:
    """The full year that two digits after a year and a dash stand for (2018–19: 2019,
    1999-00: 2000), when it is at most ten years on; else the digits (2021-02-12 is a date)."""
    full = year - year % 100 + short
    full = full if full > year else full + 100
    return float(full) if full - year <= 10 else as_written


def _unit(text: str, end: int) -> tuple[Kind, int]:
    if (unit := _UNIT_AFTER.match(text, end)) is None:
        return "plain", end
    return ("percent" if unit["pct"] else "permille"), unit.end()


def _quantity(
    text: str, start: int, end: int, mantissa: float, decimals: int, scale: float, kind: Kind
) -> Quantity:
    per = {"plain": 1.0, "percent": 0.01, "permille": 0.001}[kind]
    return Quantity(
        text=text[start:end].strip(),
        value=round(mantissa * scale * per, 12),
        mantissa=mantissa,
        decimals=decimals,
        scale=scale,
        kind=kind,
        start=start,
        end=end,
    )


def _zh_scale(chars: str) -> int:
    """The factor of a run of scale characters after digits (万: 10^4; 千万: 10^7)."""
    factor = 1
    for char in chars:
        factor *= _ZH_UNITS.get(char) or _ZH_BIG[char]
    return factor


def _chinese(text: str, *, generous: bool) -> list[Quantity]:
    """Numbers in Chinese numerals. Strictly, a lone numeral counts only before a measure word
    (两个, 五位; not 一 at all: 一个 is mostly "a"), and a digit string only as a year (二〇一〇);
    a run that starts with 百/千/万/亿 is a word (千万 "by all means", 万一 "in case")."""
    out = []
    for match in _ZH_RUN.finditer(text):
        run = match["num"]
        integer, _, fraction = run.partition("点")
        if run[0] in "百千万亿":
            continue
        if not generous and not match["pre"] and not _plainly_a_number(text, match):
            continue
        if not any(c in _ZH_DIGITS for c in integer) and integer != "十":
            continue
        value = _zh_value(integer, fraction)
        kind: Kind = "plain"
        if match["pre"]:
            kind = "percent" if match["pre"] == "百分之" else "permille"
        out.append(_quantity(text, match.start(), match.end(), value, len(fraction), 1.0, kind))
    return out


def _plainly_a_number(text: str, match: re.Match[str]) -> bool:
    run = match["num"]
    after = text[match.end() : match.end() + 1]
    if len(run) == 1:
        return run != "一" and after in _MEASURES  # 五位, 十年; not 十分 ("very")
    if "点" in run or any(c in _ZH_UNITS or c in _ZH_BIG for c in run):
        return True  # a decimal (三点五) or positional (十五, 三千, 一百二十)
    return "〇" in run or after == "年"  # 二〇一〇, 二零一零年; not 一一 or 三三两两


def _zh_value(integer: str, fraction: str = "") -> float:
    """The value of a Chinese numeral: positional (三千五百 = 3500, 十五 = 15, 两万 = 20000),
    digit by digit (二〇一〇 = 2010), with a decimal part after 点 (三点五 = 3.5)."""
    whole = _zh_integer(integer)
    if fraction:
        return float(f"{whole}.{''.join(str(_ZH_DIGITS[c]) for c in fraction)}")
    return float(whole)


def _zh_integer(run: str) -> int:
    if not any(c in _ZH_UNITS or c in _ZH_BIG for c in run):
        return int("".join(str(_ZH_DIGITS[c]) for c in run))
    total, section, number = 0, 0, 0
    for char in run:
        if char in _ZH_DIGITS:
            number = _ZH_DIGITS[char]
        elif char in _ZH_UNITS:
            section += (number or 1) * _ZH_UNITS[char]
            number = 0
        else:
            big = _ZH_BIG[char]
            section += number
            total = (total + section) * big if big > 10**4 and total else total + section * big
            section, number = 0, 0
    return total + section + number


def _english_words(text: str) -> list[Quantity]:
    """Number words and month names (a source's ``four`` states a claim's ``4``)."""
    out = []
    for match in _EN_WORD.finditer(text):
        word = match.group().lower()
        parts = word.split("-")
        if len(parts) == 2 and parts[0] in _EN_WORDS and parts[1] in _EN_WORDS:
            value = float(_EN_WORDS[parts[0]] + _EN_WORDS[parts[1]])  # twenty-five
        elif word in _EN_WORDS:
            value = float(_EN_WORDS[word])
        elif word in _MONTHS:
            value = float(_MONTHS[word])
        else:
            continue
        out.append(_quantity(text, match.start(), match.end(), value, 0, 1.0, "plain"))
    return out


def spans(found: Iterable[Quantity]) -> list[tuple[int, int]]:
    """The (start, end) of each quantity, for masking them out of a word count."""
    return [(q.start, q.end) for q in found]
