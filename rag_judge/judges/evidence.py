"""What the scoring path shows the model of long passages: the sentences that bear on the text.

A 1.5B model on two cores reads ~150 tokens a second, so a 4,000-character web page costs ~7 s
before a single claim is checked, and most of it is navigation and boilerplate. When the
passages are longer than a budget, :func:`focus` keeps, per row, each passage's first sentence
(a page's title says whom "he" is) and the sentences that share the most rare words with the
text being checked (an answer, or the claims to verify), in their original order and under
their original passage numbers, and marks what it left out; passages within the budget are
shown whole. What was kept is recorded in the judge's details.

>>> passages = ["Paris is the capital of France. The weather is mild. Cafes are common."]
>>> focused = focus(passages, "The capital of France is Paris.", budget=40)
>>> focused.passages
['Paris is the capital of France. […]']
>>> focused.kept_chars, focused.total_chars
(31, 70)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from rag_judge.judges.lexical import content_units
from rag_judge.judges.segment import split_segments

BUDGET_CHARS: Final = 2000
"""Passages longer than this in all (characters) are focused; ~500 tokens of English web text."""
OMITTED: Final = "[…]"


@dataclass(frozen=True)
class Focused:
    """The passages as shown to the model, and how much of them that is."""

    passages: list[str]
    kept_chars: int
    """Characters of the original sentences kept."""
    total_chars: int
    """Characters of the passages in all."""

    @property
    def whole(self) -> bool:
        """Nothing was left out."""
        return self.kept_chars == self.total_chars


def focus(passages: Sequence[str], text: str, *, budget: int = BUDGET_CHARS) -> Focused:
    """The passages whole when they fit ``budget``, else only their sentences most related to
    ``text`` (BM25-like: matched rare words count more), up to ``budget`` characters."""
    total = sum(len(p) for p in passages)
    if total <= budget:
        return Focused(list(passages), total, total)
    sentences = [(i, s) for i, passage in enumerate(passages) for s in _sentences(passage)]
    owners = sorted({owner for owner, _ in sentences})
    query = set(content_units(text))
    units = [set(content_units(s)) for _, s in sentences]
    frequency = Counter(u for found in units for u in found)
    n = len(sentences)

    def score(found: set[str]) -> float:
        return sum(math.log(1 + n / frequency[u]) for u in found & query)

    ranked = sorted(range(n), key=lambda j: (-score(units[j]), j))
    # Each passage's first sentence (a web page's title, a chunk's lead) names what it is about.
    leads = [next(j for j, (owner, _) in enumerate(sentences) if owner == i) for i in owners]
    chosen: set[int] = set()
    used = 0
    for j in leads:
        if used + len(sentences[j][1]) <= budget // 4:
            chosen.add(j)
            used += len(sentences[j][1])
    for j in ranked:
        if j in chosen:
            continue
        length = len(sentences[j][1])
        if used + length > budget and chosen:
            continue
        if score(units[j]) == 0 and chosen:
            break
        chosen.add(j)
        used += length
    shown = []
    for i in range(len(passages)):
        parts: list[str] = []
        for j, (owner, sentence) in enumerate(sentences):
            if owner != i:
                continue
            if j in chosen:
                parts.append(sentence)
            elif not parts or parts[-1] != OMITTED:
                parts.append(OMITTED)
        shown.append(" ".join(parts) if parts else OMITTED)
    return Focused(shown, used, total)


def _sentences(passage: str) -> list[str]:
    """A passage's sentences; overlong ones (a page without punctuation) cut at 300 chars."""
    out: list[str] = []
    for sentence in split_segments(passage):
        out.extend(sentence[i : i + 300] for i in range(0, len(sentence), 300))
    return out or [passage]
