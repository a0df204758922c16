"""The provider table: each record names its factory in one line (``Lazy``), whose module, and
so its SDK, is imported only when a backend is built; records answer for capabilities."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from rag_judge.backends.provider import BuildArgs, Lazy
from rag_judge.backends.providers.http_backend import HTTPChat, HTTPEmbedder
from rag_judge.backends.providers.scripted import ScriptedBackend, ScriptedEmbedder, register
from rag_judge.backends.registry import PROVIDERS, chat_backend, embedding_backend

FACTORIES = [
    (record.prefix, kind, factory)
    for record in PROVIDERS.values()
    for kind, factory in (("chat", record.chat), ("embeddings", record.embeddings))
    if factory is not None
]


@pytest.mark.parametrize(("prefix", "kind", "factory"), FACTORIES)
def test_every_factory_names_a_class_or_function_that_exists(
    prefix: str, kind: str, factory: object
) -> None:
    assert isinstance(factory, Lazy), f"{prefix} {kind}"
    module, _, attribute = factory.target.partition(":")
    assert callable(getattr(importlib.import_module(module), attribute))


def test_the_table_imports_no_backend_module_until_one_is_built() -> None:
    code = (
        "import sys, rag_judge.backends.registry\n"
        "print(sorted(m for m in sys.modules if m.startswith(("
        "'rag_judge.backends.providers.', 'rag_judge.backends.local.', 'openai', 'litellm', "
        "'aiohttp', 'llama_cpp', 'sentence_transformers'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_factory_passes_the_settings_its_backend_takes() -> None:
    args = BuildArgs(base_url="http://127.0.0.1:9/v1", api_key="k", json_mode="json_object")
    chat = chat_backend("openai-compatible/m", args)
    assert isinstance(chat, HTTPChat)
    assert (chat.name, chat.endpoint, chat.json_mode) == (
        "openai-compatible/m",
        "http://127.0.0.1:9/v1",
        "json_object",
    )
    embedder = embedding_backend("openai-compatible/e", args)
    assert isinstance(embedder, HTTPEmbedder)
    assert embedder.endpoint == "http://127.0.0.1:9/v1"


def test_a_scripted_name_builds_the_backend_registered_under_it() -> None:
    chat = ScriptedBackend(["x"], name="scripted/registry-test")
    embedder = ScriptedEmbedder(name="scripted/registry-test")
    register(chat)
    register(embedder)
    assert chat_backend("scripted/registry-test") is chat
    assert embedding_backend("scripted/registry-test") is embedder


def test_only_the_embedded_model_is_measured_here() -> None:
    """A dry run counts tokens and times them only for the provider whose record says so."""
    measured = [prefix for prefix, record in PROVIDERS.items() if record.measured_here]
    assert measured == ["local"]
