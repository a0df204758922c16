"""The one wrapper every model call goes through.

It adds, for every backend alike: a persistent cache (a finished call is never made twice),
bounded concurrency, a per-call timeout, retries of transient failures only (honouring
Retry-After), structured outputs validated against a pydantic model with one repair attempt,
and a ledger of calls, tokens and cost. Failures come back as a status, never as an exception
and never as a number.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
)

from rag_judge.backends.errors import BackendError, BackendRefusal, BackendTimeout
from rag_judge.backends.protocol import ChatBackend
from rag_judge.backends.provider import Provider
from rag_judge.backends.registry import provider_of
from rag_judge.backends.types import (
    CallStatus,
    ChatRequest,
    ChatResponse,
    Message,
    YesNoResponse,
    cache_key,
)
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.backends.wrapper.lockstep import (
    submit,
    take_seconds,
    taken_together,
    waiting_elsewhere,
)
from rag_judge.core.types import Usage

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)

LOG = logging.getLogger("rag_judge")
"""Said once per run on stderr (Python's last-resort handler, or the application's own)."""

PROSE_HINT = (
    "a server that ignores response_format does this: if it repeats, try --json-mode "
    "json_object, or a model that follows JSON instructions"
)

REPAIR_INSTRUCTION = (
    "Your previous reply could not be used: {error}\n"
    "Reply again with only a JSON object that matches the required schema."
)


@dataclass(frozen=True)
class CallPolicy:
    """How calls are made; none of this changes a reply, so none of it is in the cache key."""

    concurrency: int = 8
    """Calls in flight at once (per client)."""
    timeout: float = 120.0
    """Seconds one attempt may take."""
    max_attempts: int = 4
    """Attempts per call, the first included; only transient failures are retried."""
    initial_wait: float = 0.5
    """Scale of the back-off: before retry n, wait random in [0, initial_wait * 2^n]."""
    max_wait: float = 30.0
    """Longest wait between attempts; a server's Retry-After is honoured up to this."""


class CallResult(BaseModel):
    """The outcome of one chat call: a reply, or a status saying why there is none."""

    model_config = ConfigDict(frozen=True)

    status: CallStatus
    """``ok`` or why not."""
    text: str | None = None
    """The reply (None unless status is ok)."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens spent on this call (0 when answered from the cache)."""
    attempts: int = 0
    """Backend attempts made (0 when cached)."""
    cached: bool = False
    """Answered from the cache."""
    error: str | None = None
    """What went wrong, for the record."""


class StructuredResult(BaseModel, Generic[R]):
    """A structured call: the validated object, or ``parse_error``/a backend status."""

    model_config = ConfigDict(frozen=True)

    status: CallStatus
    value: R | None = None
    """The validated reply (None unless status is ok)."""
    raw: str | None = None
    """The last raw reply text, kept for diagnosis."""
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 0
    cached: bool = False
    repaired: bool = False
    """True when the first reply failed validation and the repair attempt was used."""
    error: str | None = None


class YesNoResult(BaseModel):
    """P(yes) for a yes/no question, or a status."""

    model_config = ConfigDict(frozen=True)

    status: CallStatus
    p_yes: float | None = None
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 0
    cached: bool = False
    error: str | None = None


class ModelClient:
    """Cache, limits, retries, validation and accounting around one chat backend."""

    def __init__(
        self,
        backend: ChatBackend,
        *,
        cache: ResponseCache | None = None,
        policy: CallPolicy | None = None,
        ledger: Ledger | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.backend = backend
        self.cache = cache
        policy = policy or CallPolicy()
        backend_limit = getattr(backend, "max_concurrency", None)
        if isinstance(backend_limit, int) and 0 < backend_limit < policy.concurrency:
            policy = dataclasses.replace(policy, concurrency=backend_limit)
        self.policy = policy
        self.ledger = ledger if ledger is not None else Ledger()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore = asyncio.Semaphore(self.policy.concurrency)
        self._flights: dict[str, asyncio.Future[tuple[Any, dict[str, Any]]]] = {}
        self._sleep = sleep
        self._prose_said = False
        self._overrides: dict[str, Any] = {}

    @property
    def name(self) -> str:
        """The backend's ``provider/model``."""
        return self.backend.name

    @property
    def provider(self) -> Provider | None:
        """The record of the backend's provider (None: a name outside the provider table)."""
        return provider_of(self.name)

    @property
    def logprobs_in_process(self) -> bool:
        """P(yes) comes with every call, with no probe: the backend says so (scripted ones
        do), else its provider's record."""
        said = getattr(self.backend, "logprobs_in_process", None)
        if said is not None:
            return bool(said)
        return self.provider is not None and self.provider.logprobs == "in-process"

    @property
    def default_mode(self) -> str:
        """The judges' path that suits this model, from its provider's record."""
        return self.provider.default_mode if self.provider is not None else "generate"

    def over(self, backend: ChatBackend) -> ModelClient:
        """A client with this one's cache and call policy over another backend (a batch
        stage's collector: same name and endpoint, so the same cache keys); its own ledger."""
        return ModelClient(backend, cache=self.cache, policy=self.policy)

    def repeat(self, index: int, *, temperature: float) -> ModelClient:
        """This client for repeat ``index`` of a judge-noise measurement: every request it
        sends is sampled at ``temperature`` with seed ``index`` (and ``sample_index`` ``index``,
        so each repeat has its own cache entries). Same backend, cache and ledger."""
        view = copy.copy(self)
        view._overrides = {"temperature": temperature, "seed": index, "sample_index": index}
        return view

    async def chat(self, request: ChatRequest) -> CallResult:
        """One chat call, from the cache when possible."""
        response, meta = await self._cached_call(
            "chat", request, ChatResponse, self.backend.complete
        )
        if response is None:
            return CallResult(**meta)
        return CallResult(text=response.text, usage=response.usage, **meta)

    async def structured(self, request: ChatRequest, output: type[T]) -> StructuredResult[T]:
        """A call whose reply must validate as ``output``; one repair attempt, then parse_error."""
        schema = output.model_json_schema()
        first = request.model_copy(update={"json_schema": schema})
        result = await self.chat(first)
        if result.status != "ok" or result.text is None:
            return StructuredResult[T](**_carry(result))
        value, error = parse_structured(result.text, output)
        if value is not None:
            return StructuredResult[T](value=value, raw=result.text, **_carry(result))
        prose = is_prose(result.text)
        if prose:
            error = f"{error}: the reply was prose, not JSON ({PROSE_HINT})"
            self._note_prose()
        repair = first.model_copy(
            update={
                "messages": (
                    *first.messages,
                    Message(role="assistant", content=result.text),
                    Message(role="user", content=REPAIR_INSTRUCTION.format(error=error)),
                )
            }
        )
        second = await self.chat(repair)
        usage, attempts = result.usage + second.usage, result.attempts + second.attempts
        if second.status != "ok" or second.text is None:
            merged = _carry(second) | {"usage": usage, "attempts": attempts}
            return StructuredResult[T](raw=result.text, repaired=True, **merged)
        value, error = parse_structured(second.text, output)
        return StructuredResult[T](
            status="ok" if value is not None else "parse_error",
            value=value,
            error=error,
            raw=second.text,
            usage=usage,
            attempts=attempts,
            cached=second.cached,
            repaired=True,
        )

    def _note_prose(self) -> None:
        """Count a prose reply in the ledger; say so on stderr the first time only."""
        self.ledger.note_prose(self.name)
        if not self._prose_said:
            self._prose_said = True
            LOG.warning(
                "warning: %s answered prose, not JSON, to a request for a JSON schema; each such "
                "reply is repaired once (the ledger counts them). %s",
                self.name,
                PROSE_HINT,
            )

    async def yes_probability(self, request: ChatRequest) -> YesNoResult:
        """P(yes) from the backend's log-probabilities (the backend must support them)."""
        call = getattr(self.backend, "yes_probability", None)
        if call is None:
            return YesNoResult(
                status="backend_error", error=f"{self.name} gives no log-probabilities"
            )
        response, meta = await self._cached_call("yes_no", request, YesNoResponse, call)
        if response is None:
            return YesNoResult(**meta)
        return YesNoResult(p_yes=response.p_yes, usage=response.usage, **meta)

    async def _cached_call(
        self,
        kind: str,
        request: ChatRequest,
        response_type: type[R],
        call: Callable[[ChatRequest], Awaitable[R]],
    ) -> tuple[R | None, dict[str, Any]]:
        if self._overrides:
            request = request.model_copy(update=self._overrides)
        # No cache, no key: hashing the request costs ~0.05 ms a call for nothing.
        key = (
            None
            if self.cache is None
            else cache_key(kind, self.name, self.backend.endpoint, request)
        )
        if self.cache is not None and key is not None and (stored := self.cache.get(key)):
            response = response_type.model_validate_json(stored)
            return response, self._shared_hit(in_flight=False)
        if key is None:
            return await self._call_backend(kind, None, request, call)
        # Single flight: an identical request already in flight is awaited, not repeated.
        flights = self._in_flight()
        if (pending := flights.get(key)) is not None:
            with waiting_elsewhere():
                shared, meta = await asyncio.shield(pending)
            return (
                (shared, self._shared_hit(in_flight=True)) if shared is not None else (None, meta)
            )
        flight: asyncio.Future[tuple[Any, dict[str, Any]]] = (
            asyncio.get_running_loop().create_future()
        )
        flights[key] = flight
        try:
            result = await self._call_backend(kind, key, request, call)
        except BaseException:
            flight.cancel()
            raise
        finally:
            flights.pop(key, None)
        flight.set_result(result)
        return result

    def _shared_hit(self, *, in_flight: bool) -> dict[str, Any]:
        """Record and describe a reply that needed no backend call (cache or a shared flight)."""
        self._record(Usage(), "ok", cached=True, attempts=0, seconds=0.0, shared=in_flight)
        return {"status": "ok", "cached": True, "attempts": 0}

    async def _call_backend(
        self,
        kind: str,
        key: str | None,
        request: ChatRequest,
        call: Callable[[ChatRequest], Awaitable[R]],
    ) -> tuple[R | None, dict[str, Any]]:
        """The backend call with retries; a success is cached, a failure is a status."""
        started = time.perf_counter()
        take_seconds()  # a share left by an earlier round is not this call's
        attempts = 1
        try:
            try:  # The common case, one attempt, skips building a retry loop.
                response = await self._attempt(kind, call, request)
            except BackendError as first:
                if not first.transient or self.policy.max_attempts <= 1:
                    raise
                await self._sleep(self._wait_seconds(first, 1))
                async for attempt in self._retrying():
                    with attempt:
                        attempts += 1
                        response = await self._attempt(kind, call, request)
        except BackendError as error:
            status: CallStatus = _status_of(error)
            seconds = take_seconds()
            seconds = _since(started) if seconds is None else seconds
            self._record(Usage(), status, cached=False, attempts=attempts, seconds=seconds)
            return None, {"status": status, "attempts": attempts, "error": _describe(error)}
        if self.cache is not None and key is not None:
            stored = self.cache.put(
                key, kind=kind, model=self.name, value=response.model_dump_json()
            )
            if not stored:
                self.ledger.record_uncached(self.name, self.cache.last_error)
        usage = getattr(response, "usage", Usage())
        seconds = take_seconds()  # a call made together: its share of its round's time
        seconds = _since(started) if seconds is None else seconds
        self._record(usage, "ok", cached=False, attempts=attempts, seconds=seconds)
        return response, {"status": "ok", "attempts": attempts}

    async def _attempt(
        self, kind: str, call: Callable[[ChatRequest], Awaitable[R]], request: ChatRequest
    ) -> R:
        if taken_together(self.backend, kind, request):  # answered with its round's other calls
            reply: R = await submit(self.backend, kind, request)
            return reply
        async with self._limit():
            try:
                async with asyncio.timeout(self.policy.timeout):
                    return await call(request)
            except TimeoutError:
                raise BackendTimeout(
                    f"no reply within {self.policy.timeout:g} s", transient=True
                ) from None

    def _limit(self) -> asyncio.Semaphore:
        """The concurrency limit for the running event loop (a client may outlive a loop)."""
        self._bind_loop()
        return self._semaphore

    def _in_flight(self) -> dict[str, asyncio.Future[tuple[Any, dict[str, Any]]]]:
        """Requests being answered right now on the running loop, by cache key."""
        self._bind_loop()
        return self._flights

    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._semaphore = loop, asyncio.Semaphore(self.policy.concurrency)
            self._flights = {}

    def _wait_seconds(self, error: BaseException | None, retry: int) -> float:
        """Before retry n: the server's Retry-After if given, else full-jitter back-off."""
        policy = self.policy
        if isinstance(error, BackendError) and error.retry_after is not None:
            return min(error.retry_after, policy.max_wait)
        return random.uniform(0.0, min(policy.max_wait, policy.initial_wait * 2.0**retry))

    def _retrying(self) -> AsyncRetrying:
        """Retries after the first failed attempt (which the caller has already waited for)."""

        def wait(state: RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome else None
            return self._wait_seconds(error, state.attempt_number + 1)

        return AsyncRetrying(
            stop=stop_after_attempt(self.policy.max_attempts - 1),
            wait=wait,
            retry=retry_if_exception(lambda e: isinstance(e, BackendError) and e.transient),
            reraise=True,
            sleep=self._sleep,
        )

    def _record(
        self,
        usage: Usage,
        status: CallStatus,
        *,
        cached: bool,
        attempts: int,
        seconds: float,
        shared: bool = False,
    ) -> None:
        self.ledger.record(
            self.name,
            usage=usage,
            status=status,
            cached=cached,
            attempts=attempts,
            seconds=seconds,
            shared=shared,
        )


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def is_prose(text: str) -> bool:
    """True when a reply holds no JSON object or array at all (the server ignored the schema)."""
    return "{" not in text and "[" not in text


def parse_structured(text: str, output: type[T]) -> tuple[T | None, str | None]:
    """Validate a reply as ``output`` (a surrounding ```json fence is tolerated)."""
    match = _FENCE.match(text)
    body = match.group(1) if match else text.strip()
    try:
        return output.model_validate(json.loads(body)), None
    except json.JSONDecodeError as error:
        return None, f"not valid JSON ({error.msg} at position {error.pos})"
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in error.errors()[:5]
        )
        return None, f"JSON does not match the schema ({problems})"


def _status_of(error: BackendError) -> CallStatus:
    if isinstance(error, BackendTimeout):
        return "timeout"
    if isinstance(error, BackendRefusal):
        return "refused"
    return "backend_error"


def _carry(result: CallResult) -> dict[str, Any]:
    return {
        "status": result.status,
        "usage": result.usage,
        "attempts": result.attempts,
        "cached": result.cached,
        "error": result.error,
    }


def _describe(error: BackendError) -> str:
    status = f"HTTP {error.status_code}: " if error.status_code is not None else ""
    return f"{status}{error}"


def _since(started: float) -> float:
    return time.perf_counter() - started
