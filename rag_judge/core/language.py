"""Guess a question's language from its script, to pick the judge prompts (``en``, ``zh``, ...).

The rule, on letters only (``str.isalpha``: digits, spaces and punctuation do not count):

1. If Han, kana and Hangul together make up less than ``CJK_SHARE`` (15%) of the letters,
   the text is ``"en"``. A Han character carries about what a four-letter English word does,
   so 15% of the letters is some 40% of the words: a Chinese question naming English things
   stays Chinese (``PyTorch和TensorFlow哪个好?`` is 19% Han), an English question quoting a
   Chinese name stays English (``What is the population of 北京?`` is 9%). Short English
   questions around a Chinese name can tip over (``Who founded 腾讯?`` is 17%): data sets that
   mix the two should give each row a ``language``.
2. Otherwise any Hangul makes it ``"ko"``, any kana ``"ja"`` (Chinese uses neither; Japanese
   nearly always has kana, Korean always has Hangul), and only Han ``"zh"``.

Text with no letters at all (``None``, ``""``, ``"42?"``) is ``"en"``.

>>> detect_language("NBA的创始人是谁?")
'zh'
>>> detect_language("PyTorch和TensorFlow哪个好?")
'zh'
>>> detect_language("What is the population of 北京?")
'en'
>>> detect_language("東京都の人口は?"), detect_language("서울의 인구는?")
('ja', 'ko')
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

CJK_SHARE = 0.15
"""Least share of the letters written in Han, kana or Hangul for a CJK language."""

LANGUAGE_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "en": "English",
        "zh": "Chinese (简体中文)",
        "ja": "Japanese (日本語)",
        "ko": "Korean (한국어)",
    }
)
"""Display names of the languages ``detect_language`` can return."""

_HAN = (
    (0x3005, 0x3005),  # 々 iteration mark
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x323AF),  # Extensions B to H
)
_KANA = (
    (0x3041, 0x309F),  # Hiragana
    (0x30A1, 0x30FA),  # Katakana (without the ・ and ー that Chinese text borrows)
    (0x30FD, 0x30FF),
    (0x31F0, 0x31FF),  # Katakana Phonetic Extensions
    (0xFF66, 0xFF9D),  # Halfwidth Katakana
    (0x1B000, 0x1B16F),  # Kana Supplement and Extended-A
)
_HANGUL = (
    (0x1100, 0x11FF),  # Jamo
    (0x3130, 0x318F),  # Compatibility Jamo
    (0xA960, 0xA97F),  # Jamo Extended-A
    (0xAC00, 0xD7FF),  # Syllables and Jamo Extended-B
    (0xFFA0, 0xFFDC),  # Halfwidth Jamo
)


def detect_language(text: str | None) -> str:
    """``"zh"``, ``"ja"``, ``"ko"`` or ``"en"`` for ``text``, by the script rule above.

    Args:
        text: A question (or answer); None and empty text give ``"en"``.

    Returns:
        A language code; every other script (Latin, Cyrillic, ...) is ``"en"``.

    >>> detect_language("GPT-4有多少参数?"), detect_language(None)
    ('zh', 'en')
    """
    letters = han = kana = hangul = 0
    for char in text or "":
        if not char.isalpha():
            continue
        letters += 1
        point = ord(char)
        han += _within(point, _HAN)
        kana += _within(point, _KANA)
        hangul += _within(point, _HANGUL)
    if letters == 0 or (han + kana + hangul) / letters < CJK_SHARE:
        return "en"
    if hangul:
        return "ko"
    return "ja" if kana else "zh"


def language_name(code: str) -> str:
    """The display name of a language code, or the code itself when it is not one we know.

    >>> language_name("zh"), language_name("fr")
    ('Chinese (简体中文)', 'fr')
    """
    return LANGUAGE_NAMES.get(code, code)


def _within(point: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(low <= point <= high for low, high in ranges)
