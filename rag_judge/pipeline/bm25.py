"""BM25 retrieval over chunks (bm25s, Lucene's BM25 variant), with the index cached on disk.

Tokenisation, decided per text (chunk or query) by :func:`rag_judge.core.language.detect_language`
on NFKC-normalised, casefolded text:

* Chinese: jieba words (``zh_tokenizer="jieba"``, the default) or overlapping character
  bigrams (``"bigram"``); Japanese and Korean always use bigrams. In bigram mode each run of
  CJK characters gives its bigrams (a lone character itself) and each run of other letters
  and digits is one token. Punctuation and whitespace never become tokens.
* Everything else: ``\\w+`` word tokens.

Stopwords (optional) are removed after tokenising. A query sharing no token with a chunk does
not retrieve it: rankings hold only chunks with a positive score, so they may be shorter than k.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np

from rag_judge.core.errors import InputError
from rag_judge.core.language import detect_language
from rag_judge.pipeline.base import Hit, check_k, check_queries, top_k_hits
from rag_judge.pipeline.chunking import Chunk
from rag_judge.pipeline.index_cache import check_chunks, index_dir, index_key, read_manifest, store
from rag_judge.retrieval.text_relevance import normalise

ZhTokenizer = Literal["jieba", "bigram"]

_WORD: Final = re.compile(r"\w+")
_CJK_RUN: Final = re.compile(
    "([\u3005-\u3007\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7ff"
    "\uf900-\ufaff\U00020000-\U000323af]+)"
)


@dataclass(frozen=True)
class Tokenizer:
    """How BM25 cuts text into terms; part of the index's cache key."""

    zh_tokenizer: ZhTokenizer = "jieba"
    """``jieba`` words or character ``bigram`` for Chinese text."""
    stopwords: frozenset[str] = frozenset()
    """Terms removed after tokenising (compared casefolded)."""

    def __post_init__(self) -> None:
        if self.zh_tokenizer not in ("jieba", "bigram"):
            raise InputError(
                f"zh_tokenizer must be 'jieba' or 'bigram', got {self.zh_tokenizer!r}",
                field="zh_tokenizer",
            )

    def __call__(self, text: str) -> list[str]:
        """The terms of one text, in order."""
        language = detect_language(text)
        text = normalise(text)
        if language == "zh" and self.zh_tokenizer == "jieba":
            tokens = [t.strip() for t in _jieba_lcut()(text) if _WORD.search(t)]
        elif language in ("zh", "ja", "ko"):
            tokens = _bigrams(text)
        else:
            tokens = _WORD.findall(text)
        return [t for t in tokens if t not in self.stopwords]


def tokenize(
    text: str, zh_tokenizer: ZhTokenizer = "jieba", stopwords: Collection[str] = ()
) -> list[str]:
    """The BM25 terms of a text (see the module docstring for the rule).

    >>> tokenize("The Cranfield tests, 1960s!")
    ['the', 'cranfield', 'tests', '1960s']
    >>> tokenize("试用期不得超过六个月", zh_tokenizer="bigram")
    ['试用', '用期', '期不', '不得', '得超', '超过', '过六', '六个', '个月']
    """
    return Tokenizer(zh_tokenizer, frozenset(normalise(w) for w in stopwords))(text)


def _bigrams(text: str) -> list[str]:
    tokens: list[str] = []
    for word in _WORD.findall(text):
        for part in _CJK_RUN.split(word):
            if _CJK_RUN.fullmatch(part) and len(part) > 1:
                tokens.extend(part[i : i + 2] for i in range(len(part) - 1))
            elif part:
                tokens.append(part)
    return tokens


def _jieba_lcut() -> Any:
    """jieba's ``lcut``, imported on first use with its chatty logger quietened.

    jieba loads its bundled dictionary on the first cut (a second or two); it reads no network.
    """
    try:
        import jieba
    except ImportError as error:  # a core dependency, but say what to do if it is missing
        raise InputError(
            "jieba is not installed (pip install jieba), or use zh_tokenizer='bigram'",
            field="zh_tokenizer",
        ) from error
    jieba.setLogLevel(logging.WARNING)
    return jieba.lcut


class BM25Retriever:
    """BM25 over a fixed list of chunks. Build with :meth:`build`; search with :meth:`search`."""

    def __init__(
        self,
        model: Any,
        chunk_ids: Sequence[str],
        tokenizer: Tokenizer,
        *,
        from_cache: bool = False,
        directory: Path | None = None,
    ) -> None:
        self._model = model
        self.chunk_ids: tuple[str, ...] = tuple(chunk_ids)
        """Chunk ids in index order."""
        self.tokenizer = tokenizer
        """The tokenisation used for chunks and queries alike."""
        self.from_cache = from_cache
        """True when the index was loaded from disk rather than built."""
        self.directory = directory
        """The index's cache directory (None when not cached)."""

    @classmethod
    def build(
        cls,
        chunks: Sequence[Chunk],
        *,
        zh_tokenizer: ZhTokenizer = "jieba",
        stopwords: Collection[str] = (),
        k1: float = 1.5,
        b: float = 0.75,
        cache_dir: Path | None = None,
    ) -> BM25Retriever:
        """Index the chunks, or load their index from ``cache_dir`` if it was built before.

        The cache lives in ``<cache_dir>/indexes/bm25-<key>/`` (bm25s' own save format), the
        key hashing chunk ids and texts, tokeniser settings, k1, b and the bm25s version.
        ``cache_dir=None`` keeps the index in memory only.

        Raises:
            InputError: no chunks, a repeated chunk id, or no chunk with any term to index.
        """
        import bm25s

        batch = check_chunks(chunks)
        tokenizer = Tokenizer(zh_tokenizer, frozenset(normalise(w) for w in stopwords))
        settings = {
            "bm25s": bm25s.__version__,
            "zh_tokenizer": tokenizer.zh_tokenizer,
            "stopwords": sorted(tokenizer.stopwords),
            "k1": k1,
            "b": b,
        }
        key = index_key("bm25", settings, batch)
        ids = [chunk.id for chunk in batch]
        directory = None if cache_dir is None else index_dir(cache_dir, "bm25", key)
        if directory is not None and (model := _load(directory, key, len(batch))) is not None:
            return cls(model, ids, tokenizer, from_cache=True, directory=directory)
        model = _index([tokenizer(chunk.text) for chunk in batch], k1, b)
        if directory is not None:
            info = {**settings, "n_chunks": len(batch)}
            store(directory, key, info, lambda tmp: model.save(str(tmp), show_progress=False))
        return cls(model, ids, tokenizer, directory=directory)

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """The top ``k`` chunks per query by BM25 score (only chunks sharing a term)."""
        k = check_k(k)
        return [self._rank(query, k) for query in check_queries(queries)]

    def _rank(self, query: str, k: int) -> list[Hit]:
        token_ids = self._model.get_tokens_ids(self.tokenizer(query))
        if not token_ids:
            return []
        scores = np.asarray(self._model.get_scores_from_ids(token_ids), dtype=np.float64)
        matched = np.flatnonzero(scores > 0)
        return top_k_hits([self.chunk_ids[i] for i in matched.tolist()], scores[matched], k)


def _index(corpus_tokens: list[list[str]], k1: float, b: float) -> Any:
    import bm25s

    if not any(corpus_tokens):
        raise InputError(
            "no chunk has a word or character to index (all are punctuation or empty)",
            field="chunks",
        )
    model = bm25s.BM25(k1=k1, b=b)
    model.index(corpus_tokens, show_progress=False)
    return model


def _load(directory: Path, key: str, n_chunks: int) -> Any | None:
    """The stored index for this key, or None when absent or unusable (it is then rebuilt)."""
    import bm25s

    manifest = read_manifest(directory, key)
    if manifest is None or manifest.get("n_chunks") != n_chunks:
        return None
    try:
        model = bm25s.BM25.load(str(directory), show_progress=False)
    except (OSError, ValueError, KeyError):
        return None
    return model if model.scores.get("num_docs") == n_chunks else None
