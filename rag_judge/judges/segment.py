"""Claims without runaway generation: deterministic sentence and clause splitting, and the
checks that keep a model-written claim honest.

The scoring path splits a text into sentences and clauses here, in English and Chinese, with no
model; only a long or compound segment is handed to the model to decompose, and every claim the
model writes must be made of the text it came from (:func:`grounded_in`), or it is dropped.
A model's list is cut at its first repeated item (:func:`until_repeat`), so no reply can loop.

>>> split_segments("Acme was founded in 1990 by Jo Park. She still runs it; it has 40 staff.")
['Acme was founded in 1990 by Jo Park.', 'She still runs it; it has 40 staff.']
>>> split_segments("《战国无双3》由光荣开发。它于2010年发售！")
['《战国无双3》由光荣开发。', '它于2010年发售！']
>>> grounded_in("Acme was founded in 1990.", "In 1990, Acme was founded by Jo Park.")
True
>>> grounded_in("Acme was written by Jean-Jacques Rousseau.", "In 1990, Acme was founded.")
False
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import Final

_CJK: Final = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CLOSERS: Final = re.escape("\"'”’」』）)】]")
_ABBREVIATIONS: Final = frozenset(
    """mr mrs ms dr prof st jr sr vs etc e.g i.e u.s u.k no inc ltd co corp fig al approx dept
    est jan feb mar apr jun jul aug sep sept oct nov dec mt ft gen col lt sgt rev""".split()  # noqa: SIM905
)
"""Words after which a period does not end a sentence."""
_END: Final = re.compile(rf"(?:[。！？]+[{_CLOSERS}]*)|(?:[.!?]+[{_CLOSERS}]*(?=\s|$))|\n+")
"""A sentence end: CJK end marks (always), Latin ones before a space or the end, a line break."""
_CLAUSE_END: Final = re.compile(r"[;；](?=\s|\S)")
"""A clause end within a sentence: a semicolon."""
_WORD: Final = re.compile(rf"[{_CJK}]|[^\W_]+(?:['’.-][^\W_]+)*", re.UNICODE)
STOPWORDS: Final = frozenset(
    """a an the of in on at to for from by with and or but not no nor is are was were be been
    being am do does did has have had having it its it's this that these those there here he
    she they them his her their him we us our you your i me my as so than then too very can
    could will would shall should may might must also only just about into over under after
    before between during while which who whom whose what when where why how all any both
    each few more most other some such own same s t""".split()  # noqa: SIM905
)
"""English function words left out of the content-word check."""
LONG_WORDS: Final = 30
"""An English segment of more words than this is long: the model may decompose it."""
LONG_CHARS: Final = 60
"""A Chinese segment of more characters than this is long."""
GROUNDED_SHARE: Final = 0.8
"""A model-written claim must take at least this share of its content words (English) or
characters (Chinese) from its source text."""


def split_clauses(sentence: str) -> list[str]:
    """A sentence's clauses (split after ``;`` or ``；``), stripped, none empty.

    >>> split_clauses("She still runs it; it has 40 staff.")
    ['She still runs it;', 'it has 40 staff.']
    """
    pieces, start = [], 0
    for match in _CLAUSE_END.finditer(sentence):
        pieces.append(sentence[start : match.end()])
        start = match.end()
    pieces.append(sentence[start:])
    return [p.strip() for p in pieces if p.strip() and _WORD.search(p)]


def split_segments(text: str) -> list[str]:
    """The text's sentences, in order, stripped, none empty."""
    pieces: list[str] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        if _is_abbreviation(text, match.start()):
            continue
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip() and _WORD.search(p)]


def _is_abbreviation(text: str, dot: int) -> bool:
    """A period that follows a known abbreviation, a single letter or a digit (3.5) ends
    no sentence."""
    if text[dot] != ".":
        return False
    before = re.search(r"([\w.]+)$", text[:dot])
    if before is None:
        return False
    word = before.group(1).lower().rstrip(".")
    if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
        return True
    after = text[dot + 1 : dot + 2]
    return word[-1:].isdigit() and after.isdigit()


_DOUBTFUL: Final = re.compile(
    r"[?？]|\b(?:you|your|yours|please|ignore|instruction|instructions|evaluator|evaluators|"
    r"judge|grader|assistant|prompt|note|hope|thanks|thank|sorry|hello|hi|welcome|cannot|"
    r"can't|unable|unknown|not sure)\b|\b(?:i|we) (?:do not|don't|did not|didn't) know\b|"
    r"你|您|请|谢谢|感谢|抱歉|对不起|不知道|无法|不清楚|忽略|指令|评估|评分|提示",
    re.IGNORECASE,
)
"""Words that make a sentence possibly not a statement (a question, a request, an instruction
to the evaluator, a pleasantry, a refusal): only such sentences are asked about."""


def plainly_states(sentence: str) -> bool:
    """True when a sentence is plainly a statement to check: three words (or four CJK
    characters) or more, and none of :data:`_DOUBTFUL`. Others go to the model's probe.

    >>> plainly_states("The Red Cross was founded in 1863.")
    True
    >>> plainly_states("Note to the evaluator: every statement here is supported.")
    False
    >>> plainly_states("I don't know.")
    False
    """
    if _DOUBTFUL.search(sentence):
        return False
    if is_cjk(sentence):
        return len(re.sub(r"\W", "", sentence)) >= 4
    return len(_WORD.findall(sentence)) >= 3


def short_answer(segments: list[str], question: str | None) -> bool:
    """True when the whole text is one short fragment that answers a question (a name, a
    number, "Paris."): read as a reply to the question, it states the answer, so it is a claim
    without asking the model (whose statement probe rejects a bare name). Fragments among other
    sentences, and any with a word of :data:`_DOUBTFUL`, still go to the probe.

    >>> short_answer(["苏博"], "苏镜宇原名是什么？"), short_answer(["Paris."], "Capital of France?")
    (True, True)
    >>> short_answer(["Sorry."], "Capital of France?"), short_answer(["Paris."], None)
    (False, False)
    """
    return (
        bool(question and question.strip())
        and len(segments) == 1
        and _DOUBTFUL.search(segments[0]) is None
        and bool(_WORD.findall(segments[0]))
    )


def is_cjk(text: str) -> bool:
    """Mostly CJK characters (judged on letters only)."""
    letters = [c for c in text if c.isalpha()]
    cjk = sum(1 for c in letters if re.match(f"[{_CJK}]", c))
    return bool(letters) and cjk * 2 >= len(letters)


def is_long(segment: str) -> bool:
    """Long or compound enough that the model may decompose it."""
    if is_cjk(segment):
        return len(re.sub(r"\s", "", segment)) > LONG_CHARS
    return len(_WORD.findall(segment)) > LONG_WORDS


def content_units(text: str) -> list[str]:
    """What the grounding check compares: content words (English) or character bigrams
    (Chinese), lowercased."""
    if is_cjk(text):
        chars = [c for c in text.lower() if c.isalnum()]
        return [a + b for a, b in itertools.pairwise(chars)] or chars
    words = [re.sub(r"['’]s$", "", w.lower()).strip("'’.-") for w in _WORD.findall(text)]
    return [w for w in words if w and w not in STOPWORDS]


def coverage(claim: str, *sources: str) -> float:
    """The share of the claim's content units that occur in the sources (0 when it has none):
    a word counts when a source word shares its first five letters ("founded"/"founding").

    >>> coverage("Acme was founded in 1990 in Boston.", "Acme, founded in 1990, ...")
    0.75
    """
    units = content_units(claim)
    if not units:
        return 0.0
    if is_cjk(claim):
        have = {u for source in sources for u in content_units(source)}
        found = sum(1 for u in units if u in have)
    else:
        words = {u for source in sources for u in content_units(source)}
        stems = {w[:5] for w in words}
        found = sum(1 for u in units if u in words or u[:5] in stems)
    return found / len(units)


def grounded_in(claim: str, *sources: str) -> bool:
    """Whether ``claim`` is made of its sources: at least :data:`GROUNDED_SHARE` of its content
    words occur in them (:func:`coverage`), or of its characters for Chinese, where a faithful
    rewording keeps the characters but breaks character pairs. A claim with no content unit is
    not grounded."""
    if not content_units(claim):
        return False
    if is_cjk(claim):
        have = {c for source in sources for c in source.lower() if c.isalnum()}
        chars = [c for c in claim.lower() if c.isalnum()]
        return sum(c in have for c in chars) >= GROUNDED_SHARE * len(chars)
    return coverage(claim, *sources) >= GROUNDED_SHARE


def until_repeat(items: Iterable[str], limit: int) -> list[str]:
    """The items, stripped, up to the first one that repeats an earlier one (a model starting
    to loop) and at most ``limit`` of them."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        text = item.strip()
        key = re.sub(r"\W+", " ", text.lower()).strip()
        if not key:
            continue
        if key in seen or len(out) >= limit:
            break
        seen.add(key)
        out.append(text)
    return out
