"""Cut documents into chunks for retrieval: fixed windows, pieces that follow the structure,
or overlapping windows of sentences.

Every chunk is an exact slice of its document: ``chunk.text == text[chunk.start:chunk.end]``,
so a chunk can always be traced back (and highlighted) in its source. Chunk ids are
``<doc_id>#<n>``, n counting from 0 in document order, so they are stable for the same
document and chunker. The chunkers are deterministic, pure and never emit an empty or
whitespace-only chunk.

>>> chunker = structure_aware(min_chunk=10, max_chunk=60)
>>> [(c.id, c.text) for c in chunker("law", "第一条 总则。\\n第二条 试用期不得超过六个月。")]
[('law#0', '第一条 总则。\\n第二条 试用期不得超过六个月。')]
>>> [c.text for c in fixed_size(4, 1)("d", "abcdefghij")]
['abcd', 'defg', 'ghij']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from rag_judge.core.errors import InputError
from rag_judge.core.types import Document

Span = tuple[int, int]

_CJK: Final[str] = (
    "\u2e80-\u2fdf\u3000-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef\U00020000-\U000323af"
)
_TOKEN: Final = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
"""A token: one CJK character (or CJK punctuation), or a run of other non-space characters."""
_BOUNDARY: Final = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]"
    r"|第[0-9０-９一二三四五六七八九十百千万零〇两]+[条章节编款]"
    r"|(?:article|section|chapter)[ \t]+(?:\d+|[ivxlc]+)\b|§[ \t]*\d)",
    re.MULTILINE | re.IGNORECASE,
)
"""A line that starts a new section: a Markdown heading or an article/section marker."""
_BLANK_LINE: Final = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END: Final = re.compile(r"(?:[。！？]+|[.!?]+(?=\s|$))[”’\"'」』）)]*")
_SENTENCE_OR_LINE_END: Final = re.compile(_SENTENCE_END.pattern + r"|\n")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable unit: an exact slice ``[start, end)`` of one document's text."""

    id: str
    """Stable id, ``<doc_id>#<n>`` with n from 0 in document order."""
    doc_id: str
    """The document the chunk comes from."""
    text: str
    """The chunk's text, equal to the document text between ``start`` and ``end``."""
    start: int
    """Character offset of the chunk's first character in the document."""
    end: int
    """Character offset just past the chunk's last character."""
    title: str | None = None
    """The document's title, when it has one (e.g. to show with the chunk)."""


@dataclass(frozen=True)
class FixedSize:
    """Windows of ``size`` units, each starting ``size - overlap`` units after the previous one.

    ``unit="char"`` counts every character, whitespace included. ``unit="token"`` counts
    tokens: each CJK character is a token, and so is each whitespace-delimited run of other
    characters, so CJK text is measured in characters and space-delimited text in words. The
    first window starts at the first unit; windows stop once one reaches the end of the text,
    so the last may be short. Whitespace-only windows are skipped; text is never dropped.
    """

    size: int
    overlap: int = 0
    unit: Literal["char", "token"] = "char"

    def __post_init__(self) -> None:
        _check_int(self.size, "size", 1)
        _check_int(self.overlap, "overlap", 0)
        if self.overlap >= self.size:
            raise InputError(
                f"overlap ({self.overlap}) must be smaller than size ({self.size})",
                field="overlap",
            )
        if self.unit not in ("char", "token"):
            raise InputError(f"unit must be 'char' or 'token', got {self.unit!r}", field="unit")

    def __call__(self, doc_id: str, text: str, title: str | None = None) -> list[Chunk]:
        """Chunks of one document."""
        if self.unit == "char":
            bounds = [(i, i + 1) for i in range(len(text))]
        else:
            bounds = [m.span() for m in _TOKEN.finditer(text)]
        step = self.size - self.overlap
        spans: list[Span] = []
        for first in range(0, len(bounds), step):
            last = min(first + self.size, len(bounds)) - 1
            spans.append((bounds[first][0], bounds[last][1]))
            if last == len(bounds) - 1:
                break
        return _chunks(doc_id, text, title, [s for s in spans if text[s[0] : s[1]].strip()])


@dataclass(frozen=True)
class StructureAware:
    """Pieces that follow the document's structure, sized between ``min_chunk`` and ``max_chunk``.

    Lengths are in characters. The rule, in order:

    1. A new section starts at every line that begins with a Markdown heading (``#`` to
       ``######`` then a space) or an article/section marker (``第十二条``, ``第3章``, ``第二节``,
       ``Article 7``, ``Section IV``, ``Chapter 2``, ``§ 5``).
    2. Each section is split into paragraphs at blank lines.
    3. Only a paragraph longer than ``max_chunk`` is split further: at sentence ends
       (``。！？`` always, ``.!?`` when followed by whitespace, closing quotes kept), packed
       greedily into runs of whole sentences of at most ``max_chunk`` (measured from the
       run's first non-space character); a single longer sentence is cut every
       ``max_chunk`` characters.
    4. Each piece is trimmed of surrounding whitespace; empty pieces vanish.
    5. A piece shorter than ``min_chunk`` is merged with the following piece (repeatedly,
       until the merged span reaches ``min_chunk``), and a short last piece with the previous
       chunk. Nothing is dropped, so a merged chunk may exceed ``max_chunk`` by the short
       piece it absorbed. A document shorter than ``min_chunk`` is one chunk.

    ``drop_short=True`` replaces step 5 by dropping pieces shorter than ``min_chunk``. This is
    an ANTI-PATTERN, kept to measure its damage: a one-line article such as
    ``第十二条 试用期不得超过六个月。`` vanishes from the index, and every question it answers
    becomes unanswerable by any retriever (the gold-coverage check reports it).
    """

    min_chunk: int
    max_chunk: int
    drop_short: bool = False

    def __post_init__(self) -> None:
        _check_int(self.min_chunk, "min_chunk", 0)
        _check_int(self.max_chunk, "max_chunk", 1)
        if self.min_chunk > self.max_chunk:
            raise InputError(
                f"min_chunk ({self.min_chunk}) must not exceed max_chunk ({self.max_chunk})",
                field="min_chunk",
            )

    def __call__(self, doc_id: str, text: str, title: str | None = None) -> list[Chunk]:
        """Chunks of one document."""
        pieces = [
            piece
            for section in _split(text, (0, len(text)), _BOUNDARY, at_start=True)
            for paragraph in _split(text, section, _BLANK_LINE, at_start=False)
            for piece in self._fit(text, paragraph)
        ]
        pieces = [s for s in (_strip(text, p) for p in pieces) if s is not None]
        if self.drop_short:
            pieces = [(a, b) for a, b in pieces if b - a >= self.min_chunk]
        else:
            pieces = _merge_short(pieces, self.min_chunk)
        return _chunks(doc_id, text, title, pieces)

    def _fit(self, text: str, span: Span) -> list[Span]:
        """The span itself if short enough, else greedy runs of whole sentences (step 3)."""
        start, end = span
        if end - start <= self.max_chunk:
            return [span]
        cuts = [m.end() + start for m in _SENTENCE_END.finditer(text[start:end])]
        spans = zip([start, *cuts], [*cuts, end], strict=True)
        sentences = [s for s in (_strip(text, span) for span in spans) if s is not None]
        runs: list[Span] = []
        for a, b in sentences:
            if runs and b - runs[-1][0] <= self.max_chunk:
                runs[-1] = (runs[-1][0], b)
            else:
                runs.extend((i, min(i + self.max_chunk, b)) for i in range(a, b, self.max_chunk))
        return runs


class Chunker(Protocol):
    """Anything that cuts one document into chunks, as the two chunkers here do."""

    def __call__(self, doc_id: str, text: str, title: str | None = None) -> list[Chunk]:
        """Chunks of one document, in document order."""
        ...


def fixed_size(size: int, overlap: int = 0, unit: Literal["char", "token"] = "char") -> FixedSize:
    """A chunker of fixed windows; see :class:`FixedSize` for the rule."""
    return FixedSize(size, overlap, unit)


def structure_aware(min_chunk: int, max_chunk: int, *, drop_short: bool = False) -> StructureAware:
    """A chunker following headings, articles, paragraphs, sentences; see :class:`StructureAware`.

    ``drop_short=True`` is a documented anti-pattern (short pieces are lost); do not use it
    except to show what it costs.
    """
    return StructureAware(min_chunk, max_chunk, drop_short)


@dataclass(frozen=True)
class SentenceWindows:
    """Overlapping windows of whole sentences, about ``min_chars``..``max_chars`` long: how a RAG
    usually cuts running text, so that the passages of one document compete for the top k.

    The rule, in order:

    1. The text is cut into sentences (``。！？`` always, ``.!?`` when followed by whitespace,
       closing quotes kept, and every line break), each trimmed; a sentence longer than
       ``max_chars`` is cut every ``max_chars`` characters.
    2. A window takes sentences from its first one while the window (from its first character
       to the end of the last sentence) stays within ``max_chars``, and always takes more while
       it is shorter than ``min_chars`` or holds no sentence the previous window did not (so
       it may exceed ``max_chars`` by one sentence).
    3. The next window starts ``overlap`` sentences before the previous one ended (but at least
       one sentence after the previous one started), so a fact cut between two windows is whole
       in one of them.
    4. Windows stop once one reaches the last sentence. A document with no sentence yields no
       chunk; nothing else is dropped.
    """

    min_chars: int
    max_chars: int
    overlap: int = 1

    def __post_init__(self) -> None:
        _check_int(self.min_chars, "min_chars", 0)
        _check_int(self.max_chars, "max_chars", 1)
        _check_int(self.overlap, "overlap", 0)
        if self.min_chars > self.max_chars:
            raise InputError(
                f"min_chars ({self.min_chars}) must not exceed max_chars ({self.max_chars})",
                field="min_chars",
            )

    def __call__(self, doc_id: str, text: str, title: str | None = None) -> list[Chunk]:
        """Chunks of one document."""
        sentences = self._sentences(text)
        spans: list[Span] = []
        first, previous_last = 0, -1
        while first < len(sentences):
            last = first
            start = sentences[first][0]
            while last + 1 < len(sentences) and (
                last <= previous_last  # a window always brings a sentence of its own
                or sentences[last + 1][1] - start <= self.max_chars
                or sentences[last][1] - start < self.min_chars
            ):
                last += 1
            spans.append((start, sentences[last][1]))
            if last == len(sentences) - 1:
                break
            first, previous_last = max(first + 1, last + 1 - self.overlap), last
        return _chunks(doc_id, text, title, spans)

    def _sentences(self, text: str) -> list[Span]:
        cuts = [m.end() for m in _SENTENCE_OR_LINE_END.finditer(text)]
        pieces = zip([0, *cuts], [*cuts, len(text)], strict=True)
        sentences: list[Span] = []
        for span in pieces:
            trimmed = _strip(text, span)
            if trimmed is None:
                continue
            a, b = trimmed
            for i in range(a, b, self.max_chars):
                piece = _strip(text, (i, min(i + self.max_chars, b)))
                if piece is not None:
                    sentences.append(piece)
        return sentences


@dataclass(frozen=True)
class AsIs:
    """Each document is already one passage (a set whose corpus was cut when it was made, as
    ``rag-judge synth`` writes it): one chunk of its whole text, none for a blank one."""

    def __call__(self, doc_id: str, text: str, title: str | None = None) -> list[Chunk]:
        """The document as one chunk."""
        span = _strip(text, (0, len(text)))
        return _chunks(doc_id, text, title, [span] if span is not None else [])


CHUNKERS: Final = ("structure_aware", "sentence_windows", "none")
"""The chunkers an eval set's manifest may name in its ``chunking`` entry (``none``: the corpus
is already cut, each document one passage)."""


def chunker_from_spec(spec: object) -> Chunker:
    """The chunker a manifest's ``chunking`` entry names, e.g. ``{"chunker":
    "sentence_windows", "min_chars": 100, "max_chars": 200, "overlap": 1}`` or ``{"chunker":
    "structure_aware", "min_chars": 100, "max_chars": 400}``.

    Raises:
        InputError: not an object, an unknown chunker, or a missing, unknown or bad number.
    """
    if not isinstance(spec, Mapping):
        raise InputError("must be an object such as {'chunker': 'sentence_windows', ...}")
    name = spec.get("chunker")
    if name not in CHUNKERS:
        raise InputError(f"unknown chunker {name!r}; one of {', '.join(CHUNKERS)}", field="chunker")
    if name == "none":
        if unknown := sorted(set(spec) - {"chunker"}):
            raise InputError(f"unknown keys {unknown} for none", field=unknown[0])
        return AsIs()
    allowed = {"chunker", "min_chars", "max_chars"} | (
        {"overlap"} if name == "sentence_windows" else set()
    )
    if unknown := sorted(set(spec) - allowed):
        raise InputError(f"unknown keys {unknown} for {name}", field=unknown[0])
    for key in ("min_chars", "max_chars"):
        if key not in spec:
            raise InputError(f"{name} needs {key}", field=key)
    if name == "structure_aware":
        return StructureAware(spec["min_chars"], spec["max_chars"])
    return SentenceWindows(spec["min_chars"], spec["max_chars"], spec.get("overlap", 1))


def chunk_corpus(
    chunker: Chunker, documents: Mapping[str, str] | Iterable[Document]
) -> list[Chunk]:
    """Chunk every document, in order: ``{doc_id: text}`` or :class:`Document` values.

    Raises:
        InputError: a document id repeats, or an id or text is not a string.
    """
    docs = (
        [Document(i, t) for i, t in documents.items()]
        if isinstance(documents, Mapping)
        else list(documents)
    )
    seen: set[str] = set()
    chunks: list[Chunk] = []
    for doc in docs:
        if not isinstance(doc.id, str) or not isinstance(doc.text, str):
            raise InputError("document id and text must be strings", source=f"document {doc.id!r}")
        if doc.id in seen:
            raise InputError(f"document id '{doc.id}' appears twice", field="id")
        seen.add(doc.id)
        chunks.extend(chunker(doc.id, doc.text, doc.title))
    return chunks


def _check_int(value: object, name: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InputError(f"{name} must be an integer >= {least}, got {value!r}", field=name)


def _split(text: str, span: Span, separator: re.Pattern[str], *, at_start: bool) -> list[Span]:
    """Cut a span where the separator matches: before its match (at_start) or around it."""
    start, end = span
    pieces: list[Span] = []
    for match in separator.finditer(text, start, end):
        pieces.append((start, match.start()))
        start = match.start() if at_start else match.end()
    pieces.append((start, end))
    return [(a, b) for a, b in pieces if a < b]


def _strip(text: str, span: Span) -> Span | None:
    """The span without surrounding whitespace, or None if nothing else is in it."""
    start, end = span
    piece = text[start:end]
    stripped = piece.lstrip()
    if not stripped:
        return None
    start += len(piece) - len(stripped)
    return start, start + len(stripped.rstrip())


def _merge_short(pieces: list[Span], min_chunk: int) -> list[Span]:
    """Merge each piece shorter than min_chunk into the next; a short last one into the previous."""
    merged: list[Span] = []
    pending: Span | None = None
    for span in pieces:
        pending = span if pending is None else (pending[0], span[1])
        if pending[1] - pending[0] >= min_chunk:
            merged.append(pending)
            pending = None
    if pending is not None:
        if merged:
            merged[-1] = (merged[-1][0], pending[1])
        else:
            merged.append(pending)
    return merged


def _chunks(doc_id: str, text: str, title: str | None, spans: list[Span]) -> list[Chunk]:
    return [
        Chunk(id=f"{doc_id}#{n}", doc_id=doc_id, text=text[a:b], start=a, end=b, title=title)
        for n, (a, b) in enumerate(spans)
    ]


def sentence_windows(min_chars: int, max_chars: int, overlap: int = 1) -> SentenceWindows:
    """A chunker of overlapping sentence windows; see :class:`SentenceWindows` for the rule."""
    return SentenceWindows(min_chars, max_chars, overlap)
