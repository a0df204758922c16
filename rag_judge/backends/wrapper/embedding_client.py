"""The wrapper every embedding call goes through: per-text cache, timeout, transient retries.

Embeddings are deterministic for a given model, so each text's vector is cached on its own:
a re-run embeds nothing, and a new batch embeds only the texts not seen before. Failures come
back as a status, like :class:`~rag_judge.backends.wrapper.client.ModelClient`'s.
"""

from __future__ import annotations

import asyncio
import json
import time

from pydantic import BaseModel, ConfigDict

from rag_judge.backends.errors import BackendError, BackendTimeout
from rag_judge.backends.protocol import CountingEmbeddingBackend, EmbeddingBackend
from rag_judge.backends.types import CallStatus, cache_key
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import CallPolicy
from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.core.types import Usage


class _EmbedKey(BaseModel):
    """What one cached vector depends on besides the model: the text."""

    model_config = ConfigDict(frozen=True)

    text: str


class EmbeddingResult(BaseModel):
    """Vectors for a batch of texts, in order, or a status saying why there are none."""

    model_config = ConfigDict(frozen=True)

    status: CallStatus
    vectors: tuple[tuple[float, ...], ...] = ()
    """One vector per text (empty unless status is ok)."""
    cached: int = 0
    """Texts answered from the cache."""
    error: str | None = None


class EmbeddingClient:
    """Cache, timeout and retries around one embedding backend."""

    def __init__(
        self,
        backend: EmbeddingBackend,
        *,
        cache: ResponseCache | None = None,
        policy: CallPolicy | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.policy = policy or CallPolicy()
        self.ledger = ledger if ledger is not None else Ledger()

    @property
    def name(self) -> str:
        """The embedder's ``provider/model``."""
        return self.backend.name

    async def embed(self, texts: list[str]) -> EmbeddingResult:
        """One vector per text; only texts missing from the cache reach the backend."""
        keys = [
            cache_key("embed", self.name, self.backend.endpoint, _EmbedKey(text=t)) for t in texts
        ]
        found: dict[int, tuple[float, ...]] = {}
        if self.cache is not None:
            for i, key in enumerate(keys):
                if (stored := self.cache.get(key)) is not None:
                    found[i] = tuple(json.loads(stored))
        missing = [i for i in range(len(texts)) if i not in found]
        if texts and not missing:  # the whole batch from the cache: counted, as chat hits are
            self.ledger.record(
                self.name, usage=Usage(), status="ok", cached=True, attempts=0, seconds=0.0
            )
        if missing:
            started = time.perf_counter()
            vectors, usage, attempts, error = await self._call([texts[i] for i in missing])
            status: CallStatus = "ok" if error is None else _status(error)
            self.ledger.record(
                self.name,
                usage=usage,
                status=status,
                cached=False,
                attempts=attempts,
                seconds=time.perf_counter() - started,
            )
            if error is not None:
                return EmbeddingResult(status=status, error=str(error))
            for i, vector in zip(missing, vectors, strict=True):
                found[i] = tuple(vector)
                if self.cache is not None:
                    self.cache.put(keys[i], kind="embed", model=self.name, value=json.dumps(vector))
        return EmbeddingResult(
            status="ok",
            vectors=tuple(found[i] for i in range(len(texts))),
            cached=len(texts) - len(missing),
        )

    async def _call(
        self, texts: list[str]
    ) -> tuple[list[list[float]], Usage, int, BackendError | None]:
        """The backend call with timeout and retries of transient errors; the usage is what the
        backend reported (an embedder that reports none: ``reported=False``, not zero)."""
        error: BackendError | None = None
        usage = Usage(reported=False)
        for attempt in range(1, self.policy.max_attempts + 1):
            try:
                async with asyncio.timeout(self.policy.timeout):
                    if isinstance(self.backend, CountingEmbeddingBackend):
                        vectors, usage = await self.backend.embed_with_usage(texts)
                    else:
                        vectors = await self.backend.embed(texts)
            except TimeoutError:
                error = BackendTimeout(
                    f"no embeddings within {self.policy.timeout:g} s", transient=True
                )
            except BackendError as failure:
                error = failure
            else:
                if len(vectors) != len(texts):
                    error = BackendError(
                        f"{self.name} returned {len(vectors)} vectors for {len(texts)} texts",
                        transient=False,
                    )
                    return [], Usage(), attempt, error
                return vectors, usage, attempt, None
            if not error.transient or attempt == self.policy.max_attempts:
                return [], Usage(), attempt, error
            wait = (
                error.retry_after
                if error.retry_after is not None
                else self.policy.initial_wait * 2**attempt
            )
            await asyncio.sleep(min(wait, self.policy.max_wait))
        return [], Usage(), self.policy.max_attempts, error


def _status(error: BackendError) -> CallStatus:
    return "timeout" if isinstance(error, BackendTimeout) else "backend_error"
