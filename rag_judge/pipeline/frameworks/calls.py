"""Our async embedding client called the way the frameworks call an embedder: a batch of texts
to vectors, from async code or from synchronous code in any thread."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from rag_judge.backends.errors import BackendError
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient

T = TypeVar("T")


async def embed(client: EmbeddingClient, texts: Sequence[str]) -> list[list[float]]:
    """One vector per text, as the client returns them.

    Raises:
        BackendError: the embedder failed (its status and error in the message).
    """
    if not texts:
        return []
    result = await client.embed(list(texts))
    if result.status != "ok":
        raise BackendError(
            f"{client.name}: could not embed ({result.status}): {result.error}", transient=False
        )
    return [list(vector) for vector in result.vectors]


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result from synchronous code: in this thread when no event loop runs
    here, else on a worker thread with its own loop (never blocking a running loop's thread
    on itself)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
