"""Run a job through a provider's Batch API, in stages over the response cache.

Each stage runs the whole job with a client that answers only from the cache and writes every
miss down as a batch line (:mod:`rag_judge.backends.batch.batch_collect`), submits those lines
as one
batch, polls it, and writes its replies into the cache under their ``custom_id`` (the cache
key). The next stage runs the job again: the steps that waited on those replies (a claim's
verdict waits on the claims) now miss in turn. When a stage misses nothing, the job runs once
more with the real client and every call comes from the cache, so the results are those of a
live run. Lines a batch did not answer (failed, expired) are sent again live, through the real
client with its retries; what still fails is recorded with its status. The batch ids are kept
in a state file next to the output, so an interrupted wait polls the same batch again instead
of submitting a second one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Generic, TypeVar

from rag_judge.backends.batch.batch_api import BatchAPI, BatchState
from rag_judge.backends.batch.batch_collect import (
    CollectingBackend,
    batch_api_of,
    batchable,
    ingest_replies,
    require_batchable,
)
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.errors import InputError
from rag_judge.runtime.atomic import write_lines
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import Settings

T = TypeVar("T")
Job = Callable[[tuple[ModelClient, ...]], Awaitable[T]]
"""The job, given the clients to call models with, in the order they were handed to
:func:`run_batched` (collecting ones in a stage, the real ones last)."""

MAX_STAGES = 8
"""A judge has two or three dependent steps; more stages than this means no progress."""

NEEDS_CACHE = "--batch hands replies over through the response cache: drop --no-cache"
"""Why a batch refuses to run without a response cache (the CLI says it before any call)."""


@dataclass(frozen=True)
class Stage:
    """One batch: what it asked, how it ended, what had to go live."""

    index: int
    model: str
    """The model the batch's lines call (a Batch API takes one model per batch)."""
    requests: int
    batch_id: str
    status: str
    answered: int
    """Lines whose reply came back in the batch and went into the cache."""
    sent_live: int
    """Lines the batch did not answer, sent again live."""
    resumed: bool
    """True when an earlier, interrupted run had submitted this batch."""


@dataclass(frozen=True)
class BatchRun(Generic[T]):
    """The job's result (from the final, all-cached run) and the stages that led to it."""

    result: T
    stages: tuple[Stage, ...]


def check_batch_apis(settings: Settings, *, generator: bool = False) -> None:
    """Before any model call: the judge (and with ``generator``, the generator) of
    ``settings`` takes batches where it is served, and at least one of them is batchable.

    Raises:
        BackendUnavailable: neither model is an ``openai/`` or ``openai-compatible/`` one.
        BackendError: a server without a Batch API (with how to go on).
    """
    names = [settings.judge_model, *([settings.generator_model] if generator else [])]
    if not any(batchable(name) for name in names):
        require_batchable(names[0])  # raises: says which models take batches
    session = open_session(settings, cache=False)
    clients = [session.client, *([session.generator] if generator else [])]
    for client in {id(c): c for c in clients}.values():  # one check per model and server
        if batchable(client.name):
            batch_api_of(client).check()


def state_path_for(output: Path) -> Path:
    """Where a run keeps its batch ids: next to its output (a file, or a folder's)."""
    return output.with_name(output.name + ".batches.json")


async def run_batched(
    job: Job[T],
    clients: Sequence[ModelClient],
    *,
    state_path: Path,
    api: BatchAPI | None = None,
    poll_seconds: float = 10.0,
    on_poll: Callable[[Stage | None, BatchState], None] | None = None,
) -> BatchRun[T]:
    """Run ``job`` through the Batch API of the servers behind ``clients`` (module docstring).

    Every client of an ``openai/`` or ``openai-compatible/`` model collects its misses into one
    batch per stage (a Batch API takes one model per batch); any other client (say, a local
    generator beside a remote judge) is called live in every stage, from the cache after the
    first. ``api`` replaces every client's own Batch API (tests).

    Raises:
        InputError: no response cache (the stages hand replies over through it).
        BackendUnavailable: no client of an ``openai/`` or ``openai-compatible/`` model.
    """
    unique = list({id(c): c for c in clients}.values())
    batched = [c for c in unique if batchable(c.name)]
    if not batched:
        require_batchable(unique[0].name)  # raises: says which models take batches
    for client in batched:
        if client.cache is None:
            raise InputError(NEEDS_CACHE)
    stages: list[Stage] = []
    given_up: set[str] = set()
    for index in range(MAX_STAGES):
        collectors = {id(c): CollectingBackend(c.backend) for c in batched}
        views = {id(c): c.over(collectors[id(c)]) for c in batched}
        await job(tuple(views.get(id(c), c) for c in clients))
        wanted = {cid for collector in collectors.values() for cid in collector.lines}
        if not wanted or wanted <= given_up:
            break  # done, or only lines that failed live too: the final run records their status
        for client in batched:
            collector = collectors[id(client)]
            if not collector.lines:
                continue
            own = api or batch_api_of(client)
            stage = await _stage(index, collector, client, own, state_path, poll_seconds, on_poll)
            stages.append(stage)
            assert client.cache is not None
            given_up |= {cid for cid in collector.lines if client.cache.get(cid) is None}
    result = await job(tuple(clients))
    _save(state_path, {"stages": [asdict(s) for s in stages], "pending": {}})
    return BatchRun(result, tuple(stages))


async def _stage(
    index: int,
    collector: CollectingBackend,
    client: ModelClient,
    api: BatchAPI,
    state_path: Path,
    poll_seconds: float,
    on_poll: Callable[[Stage | None, BatchState], None] | None,
) -> Stage:
    lines = sorted(collector.lines.values(), key=lambda line: line.custom_id)
    digest = hashlib.sha256("\n".join(line.custom_id for line in lines).encode()).hexdigest()
    state = _load(state_path)
    pending = state.get("pending") or {}
    resumed = digest in pending
    if resumed:
        batch_id = str(pending[digest])
    else:
        file_id = await asyncio.to_thread(api.upload, lines)
        batch_id = (await asyncio.to_thread(api.create, file_id)).id
        _save(state_path, {**state, "pending": {**pending, digest: batch_id}})
    while True:
        found = await asyncio.to_thread(api.get, batch_id)
        if on_poll is not None:
            on_poll(None, found)
        if found.done:
            break
        await asyncio.sleep(poll_seconds)
    answered = await asyncio.to_thread(ingest_replies, api, found, collector, client)
    missing = [cid for cid in collector.lines if cid not in answered]
    for cid in missing:  # failed or expired lines: live, with the client's retries
        kind, request = collector.requests[cid]
        if kind == "chat":
            await client.chat(request)
        else:
            await client.yes_probability(request)
    stage = Stage(
        index, client.name, len(lines), batch_id, found.status, len(answered), len(missing), resumed
    )
    state = _load(state_path)
    left = {d: b for d, b in (state.get("pending") or {}).items() if d != digest}
    _save(state_path, {"stages": [*state.get("stages", []), asdict(stage)], "pending": left})
    return stage


def _load(path: Path) -> dict:  # type: ignore[type-arg]
    if not path.is_file():
        return {}
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(
            f"unreadable batch state ({error}); delete it to start over", source=str(path)
        ) from None
    return loaded if isinstance(loaded, dict) else {}


def _save(path: Path, state: dict) -> None:  # type: ignore[type-arg]
    write_lines(path, json.dumps(state, indent=1).splitlines())
