"""What a provider says about itself: one record per ``provider/`` prefix, as judges have theirs.

Everything the rest of the package needs to know about a backend is read from its
:class:`Provider` record (found by :func:`rag_judge.backends.registry.provider_of`): how to
build it from settings, what to install, whether it runs in process, gives log-probabilities,
has a Batch API, reports tokens, what it costs and whether its speed is measured here. Nothing
outside ``backends/`` spells a provider's prefix; adding one is a record in
:data:`rag_judge.backends.registry.PROVIDERS`.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rag_judge.backends.protocol import ChatBackend, EmbeddingBackend

Wire = Literal["openai-chat", "litellm", "in-process"]
"""How requests travel: the OpenAI chat-completions body over HTTP, litellm's call (which picks
the provider's own wire), or a function call in this process."""

Logprobs = Literal["in-process", "if-served", "none"]
"""Log-probabilities: computed in process (free, always there), returned when the server gives
them (probed once), or never."""


@dataclass(frozen=True)
class BuildArgs:
    """The settings a backend is built from (each provider takes what applies to it)."""

    base_url: str | None = None
    """An OpenAI-compatible server (servers and litellm; the embedded model ignores it)."""
    api_key: str | None = None
    """The key sent to that server (else the provider's environment variable)."""
    json_mode: str = "auto"
    """How a server is sent JSON schemas (:data:`rag_judge.backends.types.JSON_MODES`)."""
    threads: int | None = None
    """CPU threads of an in-process model (None: every core the process may use)."""


ChatFactory = Callable[[str, BuildArgs], ChatBackend]
"""Builds the chat backend for the model part of a name (after ``provider/``)."""
EmbeddingFactory = Callable[[str, BuildArgs], EmbeddingBackend]
"""Builds the embedder for the model part of a name."""
Kind = Literal["chat", "embeddings"]
"""What a backend serves."""
Check = Callable[[str, str], "str | None"]
"""Why the model (kind, model part of the name) cannot run here, or None when it can."""
Build = Callable[[Callable[..., Any], str, BuildArgs], Any]
"""How a backend's class (or function) is called: with the model part of a name and the
settings it takes from :class:`BuildArgs`."""


@dataclass(frozen=True)
class Lazy:
    """A factory named by ``module:attribute``: the module, and so its SDK, is imported only
    when a backend is built; ``build`` says how the model and settings reach it."""

    target: str
    """Where the backend's class or function lives, e.g.
    ``rag_judge.backends.providers.openai_backend:OpenAIChat``."""
    build: Build
    """Calls it with the model part of the name and the settings."""

    def __call__(self, model: str, args: BuildArgs) -> Any:
        module, _, attribute = self.target.partition(":")
        return self.build(getattr(importlib.import_module(module), attribute), model, args)


@dataclass(frozen=True)
class Provider:
    """One provider: its prefix, what it needs, what it can do, and how to build it."""

    prefix: str
    """The part of ``provider/model`` before the first slash."""
    extra: str | None
    """The package extra that installs what it needs (``pip install 'rag-judge[extra]'``)."""
    wire: Wire
    """How its requests travel."""
    in_process: bool
    """It runs inside this process (no server, no key, no per-token price)."""
    logprobs: Logprobs
    """Whether it returns the log-probabilities the judges' scoring path reads."""
    batch_api: bool
    """Its requests go to a Batch API as they are (the OpenAI request body)."""
    reports_tokens: bool
    """Its replies say how many tokens were read and written."""
    priced: bool
    """Its calls cost money, priced per token from litellm's price map."""
    default_mode: Literal["score", "generate"]
    """The judges' path that suits its models: ``score`` (one-token probabilities, for small
    in-process models) or ``generate`` (claims and verdicts written as JSON)."""
    chat: ChatFactory | None = None
    """Builds its chat backend (None: it serves no chat models)."""
    embeddings: EmbeddingFactory | None = None
    """Builds its embedder (None: it serves no embedders)."""
    requires: Mapping[str, tuple[str, ...]] | None = None
    """Per kind, the modules that must import for it to run (found without importing them)."""
    needs_target: bool = False
    """It calls a server: an API key or a base URL must be set."""
    listed: Mapping[str, tuple[str, ...]] | None = None
    """What ``rag-judge models`` lists, per kind (``chat``, ``embeddings``): names or patterns
    such as ``openai/*`` (None: nothing; the scripted test backend)."""
    check: Check | None = None
    """A per-model check beyond ``requires`` (weights present, a local embedder's folder),
    for listed names that are not patterns."""
    price_names: Callable[[str], tuple[str, ...]] | None = None
    """The names to look its model up by in litellm's price map (default: the model part and
    the whole name)."""
    measured_here: bool = False
    """Its chat model is llama.cpp weights run on this machine's CPU: a sweep's dry run counts
    its tokens with the model's own tokenizer and times them at the speed measured here
    (:mod:`rag_judge.backends.local.speed`); other models' tokens are estimated, untimed."""

    def missing(self, kind: str) -> str | None:
        """Why it cannot serve ``kind`` here for want of a package, or None."""
        for module in (self.requires or {}).get(kind, ()):
            if importlib.util.find_spec(module) is None:
                hint = f" (pip install 'rag-judge[{self.extra}]')" if self.extra else ""
                return f"{module} not installed{hint}"
        return None

    def status(self, kind: str, model: str, has_target: bool) -> str | None:
        """Why ``prefix/model`` cannot serve ``kind`` here, or None when it can (``has_target``:
        an API key or a server's URL is set)."""
        reason = self.missing(kind)
        if reason is None and self.check is not None and not _is_pattern(model):
            reason = self.check(kind, model)
        if reason is None and self.needs_target and not has_target:
            reason = "no OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
        return reason

    def prices_under(self, model: str) -> tuple[str, ...]:
        """The names litellm's price map may know ``model`` (the part after the prefix) by."""
        if self.price_names is not None:
            return self.price_names(model)
        return (model, f"{self.prefix}/{model}")


def _is_pattern(model: str) -> bool:
    """``*`` or ``<path-to.gguf>``: a family listed by ``rag-judge models``, not one model."""
    return "*" in model or "<" in model
