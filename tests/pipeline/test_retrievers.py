"""Tests for the retrievers of the RAG under test: BM25, dense, RRF fusion and their caches.

No network and no real model: dense retrieval runs on a scripted embedder.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import pytest

from rag_judge.backends.errors import BackendError
from rag_judge.backends.providers.scripted import ScriptedEmbedder
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.core.errors import InputError
from rag_judge.pipeline.base import Hit, Retriever
from rag_judge.pipeline.bm25 import BM25Retriever, tokenize
from rag_judge.pipeline.chunking import Chunk
from rag_judge.pipeline.dense import DenseRetriever
from rag_judge.pipeline.fusion import HybridRetriever, rrf_fuse


def _chunk(chunk_id: str, text: str) -> Chunk:
    return Chunk(chunk_id, chunk_id.split("#")[0], text, 0, len(text))


EN = [
    _chunk("aero#0", "The boundary layer flow over a flat plate becomes turbulent."),
    _chunk("heat#0", "Heat transfer in hypersonic flow raises the wall temperature."),
    _chunk("wing#0", "Swept wings delay the onset of compressibility drag."),
]
ZH = [
    _chunk("law#0", "本法是为了保护劳动者的合法权益，调整劳动关系。"),
    _chunk("law#1", "第十二条 试用期不得超过六个月。"),
    _chunk("law#2", "用人单位应当依法建立和完善劳动规章制度。"),
]


def _search(retriever: Retriever, queries: Sequence[str], k: int) -> list[list[Hit]]:
    return asyncio.run(retriever.search(queries, k))


def _ids(hits: list[Hit]) -> list[str]:
    return [hit.chunk_id for hit in hits]


@pytest.fixture
def index_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts real BM25 index builds (bm25s.BM25.index calls); a load from disk adds none."""
    builds: list[int] = []
    original = bm25s.BM25.index

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        builds.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(bm25s.BM25, "index", spy)
    return builds


# --------------------------------------------------------------------------- BM25


def test_tokenize_words_jieba_and_bigrams() -> None:
    assert tokenize("Boundary-layer FLOW, 1960s.") == ["boundary", "layer", "flow", "1960s"]
    assert tokenize("the flow", stopwords={"The"}) == ["flow"]
    assert "试用期" in tokenize("试用期不得超过六个月")
    assert tokenize("试用期，AI模型", zh_tokenizer="bigram") == ["试用", "用期", "ai", "模型"]


def test_bm25_finds_the_obvious_english_chunk() -> None:
    retriever = BM25Retriever.build(EN)
    [hits] = _search(retriever, ["turbulent boundary layer"], 3)
    assert _ids(hits) == ["aero#0"]  # no other chunk shares a term
    assert hits[0].rank == 1
    assert hits[0].score > 0


@pytest.mark.parametrize("zh_tokenizer", ["jieba", "bigram"])
def test_bm25_finds_the_obvious_chinese_chunk(zh_tokenizer: Any) -> None:
    retriever = BM25Retriever.build(ZH, zh_tokenizer=zh_tokenizer)
    [hits] = _search(retriever, ["试用期最长是多久？"], 3)
    assert _ids(hits)[0] == "law#1"


def test_bm25_orders_by_score_then_chunk_id_descending_and_respects_k() -> None:
    chunks = [
        _chunk("a#0", "wing flutter"),
        _chunk("c#0", "wing flutter"),
        _chunk("b#0", "wing flutter"),
        _chunk("z#0", "wing wing flutter"),
        _chunk("y#0", "nothing relevant"),
    ]
    retriever = BM25Retriever.build(chunks)
    [hits] = _search(retriever, ["wing"], 10)
    # z has the higher term frequency; a, b, c tie and go by id descending; y never matches
    assert _ids(hits) == ["z#0", "c#0", "b#0", "a#0"]
    assert hits[1].score == hits[2].score == hits[3].score < hits[0].score
    assert [hit.rank for hit in hits] == [1, 2, 3, 4]
    [top2] = _search(retriever, ["wing"], 2)
    assert top2 == hits[:2]


def test_bm25_query_without_known_terms_retrieves_nothing() -> None:
    retriever = BM25Retriever.build(EN)
    assert _search(retriever, ["photosynthesis", "", "!!"], 5) == [[], [], []]


def test_bm25_index_is_loaded_from_cache_not_rebuilt(
    tmp_path: Path, index_builds: list[int]
) -> None:
    first = BM25Retriever.build(EN, cache_dir=tmp_path)
    assert (first.from_cache, len(index_builds)) == (False, 1)
    assert first.directory is not None
    assert first.directory.parent == tmp_path / "indexes"
    assert first.directory.name.startswith("bm25-")

    second = BM25Retriever.build(EN, cache_dir=tmp_path)
    assert (second.from_cache, len(index_builds)) == (True, 1)
    assert second.directory == first.directory
    queries = ["turbulent flow", "wall temperature"]
    assert _search(second, queries, 3) == _search(first, queries, 3)


def test_bm25_cache_misses_when_a_chunk_or_the_tokenizer_changes(
    tmp_path: Path, index_builds: list[int]
) -> None:
    base = BM25Retriever.build(ZH, cache_dir=tmp_path)
    edited = [*ZH[:2], _chunk("law#2", "用人单位应当依法建立劳动规章制度。")]
    changed_text = BM25Retriever.build(edited, cache_dir=tmp_path)
    changed_tokenizer = BM25Retriever.build(ZH, cache_dir=tmp_path, zh_tokenizer="bigram")
    assert not changed_text.from_cache
    assert not changed_tokenizer.from_cache
    assert len(index_builds) == 3
    assert len({base.directory, changed_text.directory, changed_tokenizer.directory}) == 3


def test_a_broken_cached_index_is_rebuilt(tmp_path: Path, index_builds: list[int]) -> None:
    first = BM25Retriever.build(EN, cache_dir=tmp_path)
    assert first.directory is not None
    (first.directory / "vocab.index.json").write_text("{not json", encoding="utf-8")
    rebuilt = BM25Retriever.build(EN, cache_dir=tmp_path)
    assert not rebuilt.from_cache
    assert BM25Retriever.build(EN, cache_dir=tmp_path).from_cache  # repaired on disk
    assert len(index_builds) == 2


# --------------------------------------------------------------------------- dense


TOPICS = {"boundary": (1.0, 0.0, 0.0), "heat": (0.0, 1.0, 0.0), "wings": (0.0, 0.0, 1.0)}


def _topic_vector(text: str) -> list[float]:
    """Sum of the topic axes whose word the text contains (plus a small constant)."""
    vector = [0.1, 0.1, 0.1]
    for word, axis in TOPICS.items():
        if word in text.lower():
            vector = [v + a for v, a in zip(vector, axis, strict=True)]
    return vector


def _dense(
    chunks: list[Chunk], embed: Callable[[str], Sequence[float]] = _topic_vector, **kw: Any
) -> tuple[DenseRetriever, ScriptedEmbedder]:
    embedder = ScriptedEmbedder(embed, **kw)
    return asyncio.run(DenseRetriever.build(chunks, EmbeddingClient(embedder))), embedder


def test_dense_ranks_by_cosine_with_the_tie_rule() -> None:
    shield = _chunk("hull#0", "Heat shields ablate on entry.")
    retriever, _ = _dense([*EN, shield])
    [hits] = _search(retriever, ["what heat load"], 4)
    # query (0.1, 1.1, 0.1) has the direction of heat#0 and hull#0 (cosine 1: an exact tie,
    # broken by id descending); aero#0 (1.1, 0.1, 0.1) and wing#0 (0.1, 0.1, 1.1) both have
    # cosine (0.11 + 0.11 + 0.01) / 1.23
    assert _ids(hits)[:2] == ["hull#0", "heat#0"]
    assert hits[0].score == hits[1].score == pytest.approx(1.0, abs=1e-6)
    assert set(_ids(hits)[2:]) == {"aero#0", "wing#0"}
    assert [h.score for h in hits[2:]] == pytest.approx([0.23 / 1.23] * 2, abs=1e-6)
    [top1] = _search(retriever, ["what heat load"], 1)
    assert top1 == hits[:1]


def test_dense_ranking_of_a_query_does_not_depend_on_its_batch() -> None:
    retriever, _ = _dense(EN)
    alone = _search(retriever, ["turbulent boundary layer"], 3)
    batched = _search(retriever, ["swept wings", "turbulent boundary layer", "heat"], 3)
    assert batched[1] == alone[0]


def test_dense_matrix_is_cached_and_chunks_not_embedded_again(tmp_path: Path) -> None:
    embedder = ScriptedEmbedder(_topic_vector)
    client = EmbeddingClient(embedder)
    first = asyncio.run(DenseRetriever.build(EN, client, cache_dir=tmp_path, batch_size=2))
    assert embedder.calls == [[c.text for c in EN[:2]], [EN[2].text]]  # two batches
    second = asyncio.run(DenseRetriever.build(EN, client, cache_dir=tmp_path))
    assert second.from_cache
    assert len(embedder.calls) == 2  # nothing embedded for the second build
    assert (second.matrix == first.matrix).all()

    other = ScriptedEmbedder(_topic_vector, name="scripted/other")
    third = asyncio.run(DenseRetriever.build(EN, EmbeddingClient(other), cache_dir=tmp_path))
    assert not third.from_cache  # another embedder is another index
    assert third.directory != first.directory


def test_dense_embedder_failure_is_a_backend_error() -> None:
    def broken(text: str) -> list[float]:
        raise BackendError("model crashed", transient=False)

    with pytest.raises(BackendError, match=r"could not embed chunks.*model crashed"):
        _dense(EN, broken)
    retriever, _ = _dense(EN, lambda text: [float(len(text) > 0), 0.0])
    with pytest.raises(BackendError, match="zero or non-finite vector for text #0"):
        _search(retriever, [""], 3)


# --------------------------------------------------------------------------- fusion


def _hits(*ids: str) -> list[Hit]:
    return [Hit(chunk_id, 1.0 / rank, rank) for rank, chunk_id in enumerate(ids, start=1)]


def test_rrf_hand_computed_example() -> None:
    fused = rrf_fuse([_hits("a", "b", "c"), _hits("c", "a", "d")], k=60)
    # a: 1/61 + 1/62 = 0.0325875...   (rank 1 in the first, rank 2 in the second)
    # c: 1/63 + 1/61 = 0.0322664...   (rank 3, rank 1)
    # b: 1/62        = 0.0161290...
    # d: 1/63        = 0.0158730...
    assert _ids(fused) == ["a", "c", "b", "d"]
    assert [h.score for h in fused] == pytest.approx(
        [1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62, 1 / 63], rel=1e-12
    )
    assert [h.rank for h in fused] == [1, 2, 3, 4]


def test_rrf_depth_ties_and_order_independence() -> None:
    first, second = _hits("a", "b", "c"), _hits("b", "a", "x")
    # a and b both score 1/61 + 1/62: the tie goes to the larger id, b
    assert _ids(rrf_fuse([first, second])) == ["b", "a", "x", "c"]
    assert rrf_fuse([first, second]) == rrf_fuse([second, first])
    # depth 1 keeps only each ranking's top hit: a (1/61) and b (1/61) tie again
    assert _ids(rrf_fuse([first, second], depth=1)) == ["b", "a"]
    assert rrf_fuse([]) == []


def test_rrf_rejects_bad_input() -> None:
    with pytest.raises(InputError, match="chunk 'a' appears twice in ranking #1"):
        rrf_fuse([_hits("a"), _hits("a", "b", "a")])
    with pytest.raises(InputError, match="k must be an integer >= 0, got -1"):
        rrf_fuse([_hits("a")], k=-1)
    with pytest.raises(InputError, match="depth must be an integer >= 1, got 0"):
        rrf_fuse([_hits("a")], depth=0)


class _Fixed:
    """A retriever that returns the same ranking for every query."""

    def __init__(self, *ids: str) -> None:
        self.ranking = _hits(*ids)
        self.asked: list[int] = []

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        self.asked.append(k)
        return [self.ranking[:k] for _ in queries]


def test_hybrid_returns_the_union_ranked_by_rrf() -> None:
    lexical, semantic = _Fixed("a", "b"), _Fixed("c", "a")
    hybrid = HybridRetriever([lexical, semantic], depth=5)
    [hits] = _search(hybrid, ["q"], 10)
    # a: 1/61 + 1/62; c: 1/61; b: 1/62
    assert _ids(hits) == ["a", "c", "b"]
    assert hits[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert lexical.asked == semantic.asked == [10]  # max(k, depth)
    assert _ids(_search(hybrid, ["q"], 2)[0]) == ["a", "c"]


def test_hybrid_of_bm25_and_dense_fuses_their_rankings() -> None:
    bm25 = BM25Retriever.build(EN)
    dense, _ = _dense(EN)
    queries = ["turbulent boundary layer", "swept wings"]
    fused = _search(HybridRetriever([bm25, dense]), queries, 3)
    for query, hits in zip(queries, fused, strict=True):
        expected = rrf_fuse([*_search(bm25, [query], 100), *_search(dense, [query], 100)])
        assert hits == expected[:3]
    assert _ids(fused[0])[0] == "aero#0"
    assert _ids(fused[1])[0] == "wing#0"
    assert math.isclose(fused[0][0].score, 2 / 61)  # first in both rankings


# --------------------------------------------------------------------------- bad input


def test_bad_k_and_queries_are_input_errors() -> None:
    retrievers: list[Retriever] = [
        BM25Retriever.build(EN),
        _dense(EN)[0],
        HybridRetriever([_Fixed("a")]),
    ]
    for retriever in retrievers:
        with pytest.raises(InputError, match="k must be an integer >= 1, got 0"):
            _search(retriever, ["flow"], 0)
        with pytest.raises(InputError, match="queries must be a sequence of strings, got str"):
            _search(retriever, "flow", 3)


def test_empty_or_duplicate_corpus_is_an_input_error() -> None:
    client = EmbeddingClient(ScriptedEmbedder())
    with pytest.raises(InputError, match="cannot build an index over an empty corpus"):
        BM25Retriever.build([])
    with pytest.raises(InputError, match="cannot build an index over an empty corpus"):
        asyncio.run(DenseRetriever.build([], client))
    with pytest.raises(InputError, match="chunk id 'aero#0' appears twice"):
        BM25Retriever.build([EN[0], EN[0]])
    with pytest.raises(InputError, match="no chunk has a word or character to index"):
        BM25Retriever.build([_chunk("p#0", "…！")])
    with pytest.raises(InputError, match="needs at least one retriever"):
        HybridRetriever([])
