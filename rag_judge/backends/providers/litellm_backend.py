"""Any provider LiteLLM speaks (Anthropic, Gemini, Bedrock, Ollama, OpenAI ...) as a backend.

Like every backend it makes one attempt per call (LiteLLM's and the inner SDK's retries are
off) and caches nothing; :class:`~rag_judge.backends.wrapper.client.ModelClient` does both.
It sends the OpenAI backend's bodies and reads its replies the same way
(:mod:`~rag_judge.backends.providers.openai_methods`); LiteLLM's exceptions subclass OpenAI's,
so the OpenAI backend's error mapping classifies them too.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from rag_judge.backends.errors import PLACEHOLDER_KEY, BackendError, BackendUnavailable
from rag_judge.backends.providers.openai_backend import to_backend_error
from rag_judge.backends.providers.openai_methods import ShapedChat, ShapedEmbedder

_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


class _LiteLLMBase:
    """Lazy import, quiet LiteLLM, and the keyword arguments every call shares."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
    ) -> None:
        # Without this LiteLLM fetches its price map from GitHub on import (10 s offline);
        # the bundled copy is enough for the ledger's cost estimates.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm
        except ImportError as error:
            raise BackendUnavailable(
                "litellm is not installed: pip install 'rag-judge[litellm]'"
            ) from error
        _configure(litellm)
        if (
            api_key is None
            and api_base is not None
            and model.startswith("openai/")
            and not os.environ.get("OPENAI_API_KEY")
        ):
            api_key = PLACEHOLDER_KEY  # a local OpenAI-compatible server ignores the key
        self.model = model
        self.name = f"litellm/{_qualified(litellm, model)}"
        self.endpoint: str | None = api_base.rstrip("/") if api_base else None
        self._litellm = litellm
        self._key = api_key
        self._timeout = timeout

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, endpoint={self.endpoint!r})"

    def _common(self) -> dict[str, Any]:
        """Routing, credentials and the no-retry settings; None values are left out."""
        common: dict[str, Any] = {
            "model": self.model,
            "api_base": self.endpoint,
            "api_key": self._key,
            "timeout": self._timeout,
            "num_retries": 0,  # LiteLLM's own retry loop
            "max_retries": 0,  # the provider SDK's retries inside LiteLLM
        }
        return {k: v for k, v in common.items() if v is not None}

    def _error(self, error: BaseException) -> BackendError:
        secrets = [self._key, *(v for k, v in os.environ.items() if k.endswith("_API_KEY"))]
        return to_backend_error(error, provider="litellm", secrets=secrets)


class LiteLLMChat(ShapedChat, _LiteLLMBase):
    """A chat model through ``litellm.acompletion`` (``name``: ``litellm/<provider>/<model>``)."""

    async def _send_chat(self, body: dict[str, Any]) -> Any:
        try:
            return await self._litellm.acompletion(**body, **self._common())
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key


class LiteLLMEmbedder(ShapedEmbedder, _LiteLLMBase):
    """An embedding model through ``litellm.aembedding``."""

    async def _send_embeddings(self, texts: list[str]) -> Any:
        try:
            return await self._litellm.aembedding(input=texts, **self._common())
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key


def _qualified(litellm: Any, model: str) -> str:
    """``provider/model``: as given when prefixed, else with the provider LiteLLM infers."""
    if "/" in model:
        return model
    try:
        _, provider, _, _ = litellm.get_llm_provider(model)
    except Exception:
        return model
    return f"{provider}/{model}"


def _configure(litellm: Any) -> None:
    """No SDK retries, no telemetry, no "Give Feedback" banners, no per-call warnings (unless
    LITELLM_LOG asks for them)."""
    # Its embedding path reads ``max_retries or DEFAULT_MAX_RETRIES``, so max_retries=0 alone
    # still lets the OpenAI SDK inside retry twice. Process-wide, but in rag_judge every retry
    # belongs to ModelClient.
    litellm.DEFAULT_MAX_RETRIES = 0
    litellm.telemetry = False
    litellm.suppress_debug_info = True
    if not os.environ.get("LITELLM_LOG"):
        for name in _LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
