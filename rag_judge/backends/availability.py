"""What can run here, and if not, why: the data behind ``rag-judge models``."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from rag_judge.backends.registry import DEFAULT_EMBEDDINGS, DEFAULT_MODEL, MULTILINGUAL_EMBEDDINGS


@dataclass(frozen=True)
class Availability:
    """One model (or provider family) and whether it can be used on this machine."""

    name: str
    """``provider/model``, or ``provider/*`` for a family."""
    kind: Literal["chat", "embeddings"]
    reason: str | None
    """Why it cannot be used, or None when it can."""

    @property
    def available(self) -> bool:
        """True when nothing stands in the way."""
        return self.reason is None


def _installed(module: str, extra: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return f"{module} not installed (pip install 'rag-judge[{extra}]')"
    return None


def _safely(check: Callable[[], str | None]) -> str | None:
    """Run a check that imports optional modules; a missing module is a reason, not a crash."""
    try:
        return check()
    except ImportError as error:
        return f"not installed ({error.name})"


def _local_chat() -> str | None:
    from rag_judge.backends.local.weights import weights_status

    return _installed("llama_cpp", "local") or weights_status()


def _local_embedder(model: str) -> str | None:
    from rag_judge.backends.local.embedders import embedder_status

    return embedder_status(model)


def list_models(env: Mapping[str, str] | None = None) -> list[Availability]:
    """The known backends with the reason each is unavailable, if it is."""
    env = os.environ if env is None else env
    has_openai_target = bool(
        env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL") or env.get("RAG_JUDGE_BASE_URL")
    )
    no_target = (
        None if has_openai_target else "no OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
    )
    openai_reason = _installed("openai", "openai") or no_target
    compatible_reason = _installed("aiohttp", "openai") or no_target
    litellm_reason = _installed("litellm", "litellm")
    return [
        Availability(DEFAULT_MODEL, "chat", _safely(_local_chat)),
        Availability("local/<path-to.gguf>", "chat", _installed("llama_cpp", "local")),
        Availability("openai/*", "chat", openai_reason),
        Availability("openai-compatible/*", "chat", compatible_reason),
        Availability("litellm/<provider>/<model>", "chat", litellm_reason),
        Availability(
            DEFAULT_EMBEDDINGS, "embeddings", _safely(lambda: _local_embedder(DEFAULT_EMBEDDINGS))
        ),
        Availability(
            MULTILINGUAL_EMBEDDINGS,
            "embeddings",
            _safely(lambda: _local_embedder(MULTILINGUAL_EMBEDDINGS)),
        ),
        Availability(
            "sentence-transformers/<local path>",
            "embeddings",
            _installed("sentence_transformers", "embeddings"),
        ),
        Availability("openai/*", "embeddings", openai_reason),
        Availability("openai-compatible/*", "embeddings", compatible_reason),
        Availability("litellm/<provider>/<model>", "embeddings", litellm_reason),
    ]
