"""Judge a retrieved chunk relevant by the reference *answer text* it contains, not its doc id.

A reference answer is split into fragments (on ``;``, ``；``, ``。`` and line breaks). A chunk
covers a fragment when the share of the fragment's distinct n-grams that also occur in the
chunk reaches a threshold (default 0.5). Text is NFKC-normalised and casefolded. CJK fragments
use character 4-grams over letters and digits (whitespace and punctuation dropped); other
fragments use word bigrams over ``\\w+`` tokens, where each CJK character is a token of its own
so that a Latin or numeric answer can still be found inside unsegmented CJK text. A fragment
shorter than n units is matched whole, as one n-gram of its own length.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from rag_judge.core.errors import InputError

Unit = Literal["char", "word"]
Gram = str | tuple[str, ...]
"""Internal n-gram key: a string for character n-grams, a token tuple for word n-grams."""

CJK_LETTER_RATIO: Final[float] = 0.3
"""A fragment is CJK (character n-grams) when at least this share of its letters are CJK.

Low enough that a Chinese answer with an embedded Latin name (``光荣和ω-force``) stays CJK."""

DEFAULT_THRESHOLD: Final[float] = 0.5
_EPS: Final[float] = 1e-9  # so a coverage exactly at the threshold counts despite float rounding

_CJK_RANGES: Final[str] = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3040-\u30ff"
    "\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff"
    "\uf900-\ufaff\uff66-\uffdc\U00020000-\U000323af"
)
_CJK_CHAR: Final = re.compile(f"[{_CJK_RANGES}]")
_WORD_TOKEN: Final = re.compile(f"(?=[{_CJK_RANGES}])\\w|[^\\W{_CJK_RANGES}]+")
_NOT_ALNUM: Final = re.compile(r"[\W_]+")
_SEPARATORS: Final = re.compile(r"[;；。]|\r\n|[\n\r\v\f\x85\u2028\u2029]")


@dataclass(frozen=True)
class NgramSpec:
    """How text is cut into n-grams: the unit (``auto`` detects it per fragment) and n per unit."""

    unit: Literal["auto", "char", "word"] = "auto"
    char_n: int = 4
    word_n: int = 2

    def __post_init__(self) -> None:
        if self.unit not in ("auto", "char", "word"):
            raise InputError(
                f"unit must be 'auto', 'char' or 'word', got {self.unit!r}", field="unit"
            )
        for name in ("char_n", "word_n"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"n must be an integer >= 1, got {value!r}", field=name)

    def n_for(self, unit: Unit) -> int:
        """Return the configured n for a resolved unit."""
        return self.char_n if unit == "char" else self.word_n


DEFAULT_SPEC: Final[NgramSpec] = NgramSpec()


def split_fragments(reference: str) -> list[str]:
    """Split a reference answer into stripped, non-empty fragments, each judged on its own."""
    return [part.strip() for part in _SEPARATORS.split(reference) if part.strip()]


def normalise(text: str) -> str:
    """NFKC-normalise and casefold, so full-width, ligature and case variants compare equal."""
    return unicodedata.normalize("NFKC", text).casefold()


def detect_unit(text: str) -> Unit:
    """Return ``char`` if at least CJK_LETTER_RATIO of the letters are CJK, else ``word``.

    Text without letters (``1949``, ``4.9``) is ``word``: its tokens still match inside CJK
    chunks because CJK characters are separate word tokens.
    """
    letters = [ch for ch in normalise(text) if ch.isalpha()]
    if not letters:
        return "word"
    cjk = sum(1 for ch in letters if _CJK_CHAR.match(ch))
    return "char" if cjk >= CJK_LETTER_RATIO * len(letters) else "word"


def _resolve_unit(text: str, spec: NgramSpec) -> Unit:
    return detect_unit(text) if spec.unit == "auto" else spec.unit


def _units(normalised: str, unit: Unit) -> str | list[str]:
    """Letters and digits only (``char``) or the word tokens (``word``) of normalised text."""
    if unit == "char":
        return _NOT_ALNUM.sub("", normalised)
    return _WORD_TOKEN.findall(normalised)


def _grams(units: str | list[str], n: int) -> set[Gram]:
    if isinstance(units, str):
        return {units[i : i + n] for i in range(len(units) - n + 1)}
    return {tuple(units[i : i + n]) for i in range(len(units) - n + 1)}


def _fragment_plan(fragment: str, spec: NgramSpec) -> tuple[Unit, int, set[Gram]]:
    """Unit, effective n (shrunk to the fragment's length) and distinct n-grams of a fragment."""
    unit = _resolve_unit(fragment, spec)
    units = _units(normalise(fragment), unit)
    n = min(spec.n_for(unit), len(units))
    return unit, n, (_grams(units, n) if n > 0 else set())


def fragment_ngrams(text: str, spec: NgramSpec = DEFAULT_SPEC) -> frozenset[tuple[str, ...]]:
    """Return the distinct n-grams a fragment is matched by.

    A fragment with fewer than n units (characters or words) yields one n-gram of its own
    length, so a 2-character answer is a 2-gram and a one-word answer a unigram. Text with no
    letters or digits yields the empty set.
    """
    _, _, grams = _fragment_plan(text, spec)
    return frozenset(tuple(g) for g in grams)


def _no_grams_error(fragment: str) -> InputError:
    return InputError(
        f"fragment {fragment!r} has no letters or digits, so it cannot be judged",
        field="fragment",
    )


def coverage(fragment: str, chunk: str, spec: NgramSpec = DEFAULT_SPEC) -> float:
    """Share of the fragment's distinct n-grams that occur in the chunk, in [0, 1]."""
    unit, n, grams = _fragment_plan(fragment, spec)
    if not grams:
        raise _no_grams_error(fragment)
    chunk_grams = _grams(_units(normalise(chunk), unit), n)
    return len(grams & chunk_grams) / len(grams)


class ChunkIndex:
    """Inverted index n-gram -> chunks over a corpus, built lazily per (unit, n) as needed."""

    def __init__(self, corpus: Mapping[str, str], spec: NgramSpec = DEFAULT_SPEC) -> None:
        for doc_id, text in corpus.items():
            if not isinstance(doc_id, str) or not isinstance(text, str):
                raise InputError(
                    f"expected str doc id and text, got {type(doc_id).__name__} "
                    f"and {type(text).__name__}",
                    source=f"corpus doc {doc_id!r}",
                    field="text",
                )
        self.spec = spec
        self.doc_ids: tuple[str, ...] = tuple(corpus)
        self._texts = tuple(normalise(text) for text in corpus.values())
        self._units: dict[Unit, list[str | list[str]]] = {}
        self._postings: dict[tuple[Unit, int], dict[Gram, list[int]]] = {}

    def __len__(self) -> int:
        return len(self.doc_ids)

    def _postings_for(self, unit: Unit, n: int) -> dict[Gram, list[int]]:
        key = (unit, n)
        if key not in self._postings:
            if unit not in self._units:
                self._units[unit] = [_units(text, unit) for text in self._texts]
            postings: defaultdict[Gram, list[int]] = defaultdict(list)
            for row, units in enumerate(self._units[unit]):
                for gram in _grams(units, n):
                    postings[gram].append(row)
            self._postings[key] = postings
        return self._postings[key]

    def coverages(self, fragment: str) -> dict[str, float]:
        """Map doc id -> coverage of the fragment, for docs with coverage > 0 (corpus order)."""
        unit, n, grams = _fragment_plan(fragment, self.spec)
        if not grams:
            raise _no_grams_error(fragment)
        postings = self._postings_for(unit, n)
        counts: Counter[int] = Counter()
        for gram in grams:
            counts.update(postings.get(gram, ()))
        total = len(grams)
        return {self.doc_ids[row]: counts[row] / total for row in sorted(counts)}


@dataclass(frozen=True)
class FragmentMatch:
    """One fragment's covering docs (coverage >= threshold, best first) and its best doc.

    ``best_doc`` is the highest-coverage doc even when below the threshold (None if no doc
    shares an n-gram), so a report can say how close the corpus came.
    """

    fragment: str
    doc_ids: tuple[str, ...]
    best_doc: str | None
    best_coverage: float


@dataclass(frozen=True)
class TextRelevance:
    """Text-based relevance of one question: a FragmentMatch per reference fragment."""

    question_id: str
    fragments: tuple[FragmentMatch, ...]
    threshold: float
    spec: NgramSpec

    @property
    def relevant_doc_ids(self) -> frozenset[str]:
        """Docs covering at least one fragment."""
        return frozenset(doc for match in self.fragments for doc in match.doc_ids)

    @property
    def requirements(self) -> list[frozenset[str]]:
        """One set per fragment, any doc of which satisfies it; empty if nothing covers it."""
        return [frozenset(match.doc_ids) for match in self.fragments]

    @property
    def uncovered_fragments(self) -> tuple[FragmentMatch, ...]:
        """Fragments that no doc covers at the threshold."""
        return tuple(match for match in self.fragments if not match.doc_ids)


def validate_threshold(threshold: float) -> float:
    """Return the threshold as a float, or raise InputError unless it is in (0, 1]."""
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise InputError(f"threshold must be a number, got {threshold!r}", field="threshold")
    if not (math.isfinite(threshold) and 0 < threshold <= 1):
        raise InputError(f"threshold must be in (0, 1], got {threshold!r}", field="threshold")
    return float(threshold)


def match_fragment(fragment: str, index: ChunkIndex, threshold: float) -> FragmentMatch:
    """Find the docs of the index that cover one fragment at the threshold."""
    ranked = sorted(index.coverages(fragment).items(), key=lambda item: (-item[1], item[0]))
    covering = tuple(doc for doc, cov in ranked if cov >= threshold - _EPS)
    best_doc, best = ranked[0] if ranked else (None, 0.0)
    return FragmentMatch(fragment, covering, best_doc, best)


def match_question(
    question_id: str, reference: str, index: ChunkIndex, *, threshold: float = DEFAULT_THRESHOLD
) -> TextRelevance:
    """Match every fragment of one reference answer; raise InputError if it has none."""
    threshold = validate_threshold(threshold)
    source = f"question '{question_id}'"
    if not isinstance(reference, str):
        raise InputError(
            f"reference answer must be a string, got {type(reference).__name__}",
            source=source,
            field="reference",
        )
    fragments = split_fragments(reference)
    if not fragments:
        raise InputError("empty reference answer", source=source, field="reference")
    matches: list[FragmentMatch] = []
    for fragment in fragments:
        try:
            matches.append(match_fragment(fragment, index, threshold))
        except InputError as error:
            raise InputError(error.message, source=source, field="reference") from error
    return TextRelevance(question_id, tuple(matches), threshold, index.spec)


def match_references(
    references: Mapping[str, str], index: ChunkIndex, *, threshold: float = DEFAULT_THRESHOLD
) -> dict[str, TextRelevance]:
    """Match each question's reference answer against the index, keyed by question id."""
    return {
        qid: match_question(qid, reference, index, threshold=threshold)
        for qid, reference in references.items()
    }


def text_qrels(matches: Mapping[str, TextRelevance]) -> dict[str, dict[str, int]]:
    """Qrels with grade 1 for every doc covering a fragment; ``{}`` for a question with none."""
    return {qid: dict.fromkeys(sorted(m.relevant_doc_ids), 1) for qid, m in matches.items()}


def text_requirements(matches: Mapping[str, TextRelevance]) -> dict[str, list[frozenset[str]]]:
    """Per-question fragment requirements for joint_recall@k (every fragment needs one doc)."""
    return {qid: m.requirements for qid, m in matches.items()}
