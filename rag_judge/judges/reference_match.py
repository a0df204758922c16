"""Reference match: exact match and F1 against every reference answer, with no model.

What question-answering readers check first, free and deterministic, beside the judges:

- **English and every language but Chinese**: SQuAD v1.1's official evaluation
  (``evaluate-v1.1.py``): lower case, punctuation and the articles a/an/the removed, white space
  collapsed; exact match on the normalised strings, F1 over the bag of whitespace tokens.
- **Chinese**: CMRC 2018's official evaluation (``cmrc2018_evaluate.py``, v6): lower case, the
  script's punctuation list removed; exact match on the result, F1 from the longest common
  substring of the segments (each Han character one segment, other runs split by NLTK's
  Treebank word tokenizer).

Both take the best value over all reference answers. ``benchmarks/reference_match_official.py``
checks every value against the official scripts (``results/reference_match_official.json``).

>>> squad_f1("The Denver Broncos", "Denver Broncos"), squad_exact("the Broncos!", "Broncos")
(1.0, True)
>>> round(cmrc_f1("光荣和ω-force公司", "光荣和ω-force"), 3), cmrc_exact("《光荣》", "光荣")
(0.8, True)
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Final

from rag_judge.core.types import JudgeResult
from rag_judge.judges.base import Judge
from rag_judge.judges.work import SampleWork

_SQUAD_PUNCTUATION: Final = frozenset(string.punctuation)
_ARTICLES: Final = re.compile(r"\b(a|an|the)\b")
CMRC_PUNCTUATION: Final = frozenset(
    ["-", ":", "_", "*", "^", "/", "\\", "~", "`", "+", "=", "，", "。", "：", "？", "！", "“",
     "”", "；", "’", "《", "》", "……", "·", "、", "「", "」", "（", "）", "－", "～", "『", "』"]
)  # fmt: skip
"""The official script's ``sp_char`` list, verbatim ("……" is two characters there, so it never
matches one: kept so, as the script behaves)."""
_CMRC_HAN: Final = re.compile(r"[\u4e00-\u9fa5]")
"""What the official script counts as a Chinese character (its range, not all of Han)."""


def squad_normalise(text: str) -> str:
    """SQuAD v1.1's ``normalize_answer``: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _SQUAD_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def squad_exact(prediction: str, reference: str) -> bool:
    """SQuAD v1.1's exact match: the normalised strings are equal."""
    return squad_normalise(prediction) == squad_normalise(reference)


def squad_f1(prediction: str, reference: str) -> float:
    """SQuAD v1.1's token F1 over the normalised strings' whitespace tokens."""
    predicted = squad_normalise(prediction).split()
    truth = squad_normalise(reference).split()
    same = sum((Counter(predicted) & Counter(truth)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(truth)
    return (2 * precision * recall) / (precision + recall)


def cmrc_segments(text: str) -> list[str]:
    """CMRC 2018's ``mixed_segmentation(text, rm_punc=True)``: each Chinese character one
    segment, the runs between them split by NLTK's Treebank word tokenizer, punctuation of
    :data:`CMRC_PUNCTUATION` removed.

    The script calls ``nltk.word_tokenize``, which first splits a run into sentences with the
    Punkt model (a data download); here each run is one sentence. They differ only on a run of
    several Latin sentences between Chinese characters, where the script also splits off the
    period ending each inner sentence.
    """
    segments: list[str] = []
    run = ""
    for char in text.lower().strip():
        if char in CMRC_PUNCTUATION:
            continue
        if _CMRC_HAN.match(char):
            if run:
                segments.extend(_treebank(run))
                run = ""
            segments.append(char)
        else:
            run += char
    if run:
        segments.extend(_treebank(run))
    return segments


def cmrc_exact(prediction: str, reference: str) -> bool:
    """CMRC 2018's exact match: equal after lower-casing, stripping and removing
    :data:`CMRC_PUNCTUATION` (white space inside is kept, as the script does)."""
    return _cmrc_strip(prediction) == _cmrc_strip(reference)


def cmrc_f1(prediction: str, reference: str) -> float:
    """CMRC 2018's F1: the longest common substring of the two segment lists, as a share of
    each (precision over the prediction's, recall over the reference's)."""
    predicted, truth = cmrc_segments(prediction), cmrc_segments(reference)
    common = _longest_common_substring(truth, predicted)
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(truth)
    return (2 * precision * recall) / (precision + recall)


def best_match(
    prediction: str, references: Sequence[str], language: str
) -> tuple[bool, float, dict[str, Any]]:
    """(exact match, F1, details) of ``prediction`` against the best of ``references``:
    CMRC 2018's rules for Chinese, SQuAD v1.1's otherwise."""
    chinese = language == "zh"
    exact, f1 = (cmrc_exact, cmrc_f1) if chinese else (squad_exact, squad_f1)
    scores = [f1(prediction, r) for r in references]
    best = max(range(len(references)), key=lambda i: scores[i])
    details = {"rules": "cmrc2018" if chinese else "squad_v1.1", "best_reference": best}
    return any(exact(prediction, r) for r in references), scores[best], details


def _cmrc_strip(text: str) -> str:
    return "".join(c for c in text.lower().strip() if c not in CMRC_PUNCTUATION)


def _longest_common_substring(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest run of segments both lists share (the script's ``find_lcs``)."""
    best = 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b):
            if x == y:
                current[j + 1] = previous[j] + 1
                best = max(best, current[j + 1])
        previous = current
    return best


@cache
def _tokenizer() -> Callable[[str], list[str]]:
    from nltk.tokenize import NLTKWordTokenizer

    tokenize: Callable[[str], list[str]] = NLTKWordTokenizer().tokenize
    return tokenize


def _treebank(run: str) -> list[str]:
    return _tokenizer()(run)


def _matcher(metric: str) -> Callable[[SampleWork], Any]:
    async def run(work: SampleWork) -> JudgeResult:
        exact, f1, details = best_match(
            work.sample.answer or "", work.sample.reference_answers, work.language
        )
        value = float(exact) if metric == EXACT_MATCH_NAME else f1
        return JudgeResult(metric=metric, value=value, details=details)

    return run


EXACT_MATCH_NAME: Final = "exact_match"
EXACT_MATCH = Judge(
    name=EXACT_MATCH_NAME,
    label="exact match",
    needs=("answer", "reference"),
    run=_matcher(EXACT_MATCH_NAME),
    description=(
        "1 when the answer equals a reference answer after normalisation (SQuAD v1.1; CMRC 2018 "
        "for Chinese), else 0. No model call."
    ),
    default=True,
    uses_model=False,
)
ANSWER_F1 = Judge(
    name="answer_f1",
    label="answer F1",
    needs=("answer", "reference"),
    run=_matcher("answer_f1"),
    description=(
        "Best F1 of the answer's tokens against a reference answer's (SQuAD v1.1 words; CMRC "
        "2018 characters for Chinese). No model call."
    ),
    default=True,
    uses_model=False,
)
