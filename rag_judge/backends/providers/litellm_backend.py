"""Any provider LiteLLM speaks (Anthropic, Gemini, Bedrock, Ollama, OpenAI ...) as a backend.

Like every backend it makes one attempt per call (LiteLLM's and the inner SDK's retries are
off) and caches nothing; :class:`~rag_judge.backends.wrapper.client.ModelClient` does both.
LiteLLM's
exceptions subclass OpenAI's, so the OpenAI backend's error mapping classifies them too.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from rag_judge.backends.errors import PLACEHOLDER_KEY, BackendError, BackendUnavailable
from rag_judge.backends.providers.openai_backend import (
    TOP_LOGPROBS,
    chat_messages,
    chat_response,
    ordered_vectors,
    send_structured,
    to_backend_error,
    usage_of,
    yes_no_response,
)
from rag_judge.backends.types import ChatRequest, ChatResponse, YesNoResponse
from rag_judge.core.types import Usage

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


class LiteLLMChat(_LiteLLMBase):
    """A chat model through ``litellm.acompletion`` (``name``: ``litellm/<provider>/<model>``)."""

    json_mode: str = "auto"
    """How a JSON schema is sent (``openai_backend.JSON_MODES``)."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One completion; a JSON schema on the request becomes ``response_format``."""
        options: dict[str, Any] = {"temperature": request.temperature}
        if request.max_tokens is not None:
            options["max_tokens"] = request.max_tokens
        if request.seed is not None:
            options["seed"] = request.seed

        async def send(form: dict[str, Any] | None) -> ChatResponse:
            extra = {} if form is None else {"response_format": form}
            try:
                completion = await self._litellm.acompletion(
                    messages=chat_messages(request), **options, **extra, **self._common()
                )
            except Exception as error:
                raise self._error(error) from None  # the cause may quote the key
            return chat_response(completion)

        if request.json_schema is None:
            return await send(None)
        return await send_structured(self, request.json_schema, send)

    async def yes_probability(self, request: ChatRequest) -> YesNoResponse:
        """P(yes) over P(yes) + P(no) from the first token's top log-probabilities."""
        options: dict[str, Any] = {"temperature": request.temperature}
        if request.seed is not None:
            options["seed"] = request.seed
        try:
            completion = await self._litellm.acompletion(
                messages=chat_messages(request),
                max_tokens=1,
                logprobs=True,
                top_logprobs=TOP_LOGPROBS,
                **options,
                **self._common(),
            )
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key
        return yes_no_response(completion)


class LiteLLMEmbedder(_LiteLLMBase):
    """An embedding model through ``litellm.aembedding``."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order."""
        return (await self.embed_with_usage(texts))[0]

    async def embed_with_usage(self, texts: Sequence[str]) -> tuple[list[list[float]], Usage]:
        """The vectors and the tokens the provider says it read."""
        if not texts:
            return [], Usage()
        try:
            response = await self._litellm.aembedding(input=list(texts), **self._common())
        except Exception as error:
            raise self._error(error) from None  # the cause may quote the key
        usage = usage_of(getattr(response, "usage", None))
        return ordered_vectors(getattr(response, "data", None) or [], len(texts)), usage


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
