"""The OpenAI, OpenAI-compatible (aiohttp) and LiteLLM backends over real HTTP, through
ModelClient, against a fake server.

Every test runs for every backend: faults (429, 500, slow, malformed, 400, bad JSON replies)
must end as the same recorded statuses, the cache must make re-runs free, and the API key must
never leak into the cache or an error message.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any, Literal, TypeAlias

import pytest
from fake_openai_server import FakeOpenAIServer, fake_openai, fake_vector  # noqa: F401
from pydantic import BaseModel

from rag_judge.backends.errors import BackendError, BackendUnavailable
from rag_judge.backends.providers.http_backend import HTTPChat, HTTPEmbedder
from rag_judge.backends.providers.litellm_backend import LiteLLMChat, LiteLLMEmbedder
from rag_judge.backends.providers.openai_backend import OpenAIChat, OpenAIEmbedder
from rag_judge.backends.providers.openai_shapes import response_format
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import CallPolicy, CallResult, ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient

KEY = "sk-test-SECRET-7f3a9c1e5b"
CHAT = "/v1/chat/completions"
FAST = CallPolicy(concurrency=8, timeout=5.0, max_attempts=3, initial_wait=0.001, max_wait=1.0)

Chat: TypeAlias = OpenAIChat | HTTPChat | LiteLLMChat
KINDS = ["openai", "openai-compatible", "litellm"]


class Verdict(BaseModel):
    """The structured reply the tests ask for."""

    verdict: Literal["yes", "no"]
    reason: str


class Sleeps:
    """A fake ``sleep`` for ModelClient: records the back-off waits, barely waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def make_backend(kind: str, server: FakeOpenAIServer, timeout: float | None = None) -> Chat:
    """A chat backend of one kind, pointed at the fake server."""
    if kind == "openai":
        return OpenAIChat("fake-model", base_url=server.base_url, api_key=KEY, timeout=timeout)
    if kind == "openai-compatible":
        return HTTPChat("fake-model", base_url=server.base_url, api_key=KEY, timeout=timeout)
    return LiteLLMChat("openai/fake-model", api_base=server.base_url, api_key=KEY, timeout=timeout)


@pytest.fixture(params=KINDS)
def backend(request: pytest.FixtureRequest, fake_openai: FakeOpenAIServer) -> Chat:  # noqa: F811
    """Each chat backend, pointed at the fake server."""
    return make_backend(request.param, fake_openai)


def make_client(
    backend: Chat, tmp_path: Path, sleeps: Sleeps | None = None, **policy: Any
) -> ModelClient:
    """ModelClient with a cache in tmp_path and a fast policy."""
    fast = dataclasses.replace(FAST, **policy)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    return ModelClient(backend, cache=cache, policy=fast, sleep=sleeps or Sleeps())


def ask(text: str = "is the sky blue?") -> ChatRequest:
    return ChatRequest.of(("system", "You are a judge."), ("user", text))


def batch(client: ModelClient, n: int = 20, topic: str = "question") -> list[CallResult]:
    async def main() -> list[CallResult]:
        return list(await asyncio.gather(*(client.chat(ask(f"{topic} {i}")) for i in range(n))))

    return asyncio.run(main())


def test_rate_limit_is_retried_after_retry_after(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    sleeps = Sleeps()
    fake_openai.script("429")
    result = asyncio.run(make_client(backend, tmp_path, sleeps).chat(ask()))
    assert result.status == "ok"
    assert result.text == "echo: is the sky blue?"
    assert result.attempts == 2
    assert fake_openai.total_calls == 2
    assert sleeps.waits == [pytest.approx(0.1)]  # the server's Retry-After, not the back-off


def test_server_error_is_retried(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    sleeps = Sleeps()
    fake_openai.script("500", "503")
    result = asyncio.run(make_client(backend, tmp_path, sleeps).chat(ask()))
    assert (result.status, result.attempts, fake_openai.total_calls) == ("ok", 3, 3)
    assert len(sleeps.waits) == 2


def test_slow_reply_is_retried_then_times_out(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    client = make_client(backend, tmp_path, timeout=0.3)
    fake_openai.slow_seconds = 1.0
    asyncio.run(
        client.chat(ask("warm up"))
    )  # first-call imports must not count against the timeout
    fake_openai.script("slow")
    once = asyncio.run(client.chat(ask("slow once")))
    assert (once.status, once.attempts) == ("ok", 2)
    fake_openai.default_behaviour = "slow"
    started = time.perf_counter()
    always = asyncio.run(client.chat(ask("always slow")))
    assert (always.status, always.attempts) == ("timeout", 3)
    assert time.perf_counter() - started < 3 * 0.3 + 1.5  # three timeouts, no hang


@pytest.mark.parametrize("kind", KINDS)
def test_sdk_timeout_is_a_timeout_status(
    kind: str,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.slow_seconds = 1.0
    fake_openai.default_behaviour = "slow"
    backend = make_backend(kind, fake_openai, timeout=0.2)  # the SDK gives up before ModelClient
    result = asyncio.run(make_client(backend, tmp_path, max_attempts=2).chat(ask()))
    fake_openai.settle()  # an attempt the client gave up on may reach the server late
    assert (result.status, result.attempts, fake_openai.total_calls) == ("timeout", 2, 2)
    assert result.error is not None
    assert "timed out" in result.error


def test_malformed_body_is_recorded_not_raised(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    client = make_client(backend, tmp_path)
    fake_openai.script("malformed")
    once = asyncio.run(client.chat(ask("once")))
    assert (once.status, once.attempts) == ("ok", 2)  # an undecodable body is worth a retry
    fake_openai.default_behaviour = "malformed"
    always = asyncio.run(client.chat(ask("always")))
    assert (always.status, always.attempts) == ("backend_error", 3)
    assert always.error is not None
    assert "malformed" in always.error or "Unterminated" in always.error


def test_bad_request_is_not_retried(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.script("400")
    result = asyncio.run(make_client(backend, tmp_path).chat(ask()))
    assert (result.status, result.attempts, fake_openai.total_calls) == ("backend_error", 1, 1)
    assert result.error is not None
    assert result.error.startswith("HTTP 400")


def _valid_verdict(body: dict[str, Any]) -> str:
    return json.dumps({"verdict": "yes", "reason": "the passage says so"})


def test_structured_output_repair_and_parse_error(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.respond = _valid_verdict
    client = make_client(backend, tmp_path)

    fake_openai.script("schema_violation")
    repaired = asyncio.run(client.structured(ask("violates once"), Verdict))
    assert (repaired.status, repaired.repaired, fake_openai.total_calls) == ("ok", True, 2)
    assert repaired.value == Verdict(verdict="yes", reason="the passage says so")
    first, second = fake_openai.bodies()
    assert first["response_format"] == response_format(Verdict.model_json_schema())
    assert first["response_format"]["json_schema"]["name"] == "Verdict"
    assert second["messages"][-1]["content"].startswith("Your previous reply could not be used")

    fake_openai.script("truncated")
    cut = asyncio.run(client.structured(ask("truncated once"), Verdict))
    assert (cut.status, cut.repaired, fake_openai.total_calls) == ("ok", True, 4)

    fake_openai.default_behaviour = "schema_violation"
    failed = asyncio.run(client.structured(ask("always violates"), Verdict))
    assert (failed.status, failed.repaired, fake_openai.total_calls) == ("parse_error", True, 6)
    assert failed.value is None


def test_identical_batch_is_answered_from_the_cache(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    first = batch(make_client(backend, tmp_path))
    assert fake_openai.total_calls == 20
    again = batch(make_client(backend, tmp_path))  # new client, new event loop, same cache
    assert fake_openai.total_calls == 20
    assert [r.text for r in again] == [r.text for r in first]
    assert all(r.cached and r.status == "ok" for r in again)


def test_rerun_after_partial_failure_only_calls_the_missing(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    def odd_fails(body: dict[str, Any]) -> str | None:
        return "400" if int(body["messages"][-1]["content"].split()[-1]) % 2 else None

    fake_openai.fail_when = odd_fails
    first = batch(make_client(backend, tmp_path))
    assert [r.status for r in first] == ["ok", "backend_error"] * 10
    assert fake_openai.total_calls == 20
    fake_openai.fail_when = None
    second = batch(make_client(backend, tmp_path))
    assert fake_openai.total_calls == 30  # only the ten that failed were asked again
    assert all(r.status == "ok" for r in second)
    assert [r.cached for r in second] == [True, False] * 10


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")  # litellm's
def test_rerun_after_cancelled_batch_only_calls_the_missing(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.latency = 0.01
    client = make_client(backend, tmp_path, concurrency=4)

    async def killed_midway() -> None:
        tasks = [asyncio.ensure_future(client.chat(ask(f"question {i}"))) for i in range(20)]
        for done, next_done in enumerate(asyncio.as_completed(tasks), start=1):
            await next_done
            if done == 10:
                break
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(killed_midway())
    cache = ResponseCache(tmp_path / "cache.sqlite")
    finished = len(cache)
    assert 10 <= finished < 20
    fake_openai.settle()  # requests cancelled in flight may land late: count them first
    before = fake_openai.total_calls
    second = batch(make_client(backend, tmp_path))
    assert fake_openai.total_calls - before == 20 - finished
    assert all(r.status == "ok" for r in second)


def test_api_key_never_reaches_cache_or_errors(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    client = make_client(backend, tmp_path, max_attempts=1)
    ok = batch(client, 5)
    fake_openai.script("401", "400", "429", "malformed")
    failures = batch(client, 4, topic="failing")
    assert fake_openai.requests[0][2]["authorization"] == f"Bearer {KEY}"  # it was sent ...
    assert all(r.status == "ok" for r in ok)
    assert all(r.status == "backend_error" for r in failures)
    texts = [r.error or "" for r in failures] + [repr(backend)]
    assert any("Incorrect API key provided" in t for t in texts)  # ... and echoed back
    assert not any(KEY in t for t in texts)
    for path in tmp_path.glob("cache.sqlite*"):  # the database, its WAL and shm files
        assert KEY.encode() not in path.read_bytes()
    fake_openai.script("401")
    with pytest.raises(BackendError) as raised:
        asyncio.run(backend.complete(ask("direct")))
    assert KEY not in str(raised.value)
    assert raised.value.__cause__ is None  # a traceback cannot quote the key either
    assert (raised.value.transient, raised.value.status_code) == (False, 401)


def _embedder(
    kind: str, server: FakeOpenAIServer
) -> OpenAIEmbedder | HTTPEmbedder | LiteLLMEmbedder:
    """The fake server's embedder through one of the three API paths."""
    if kind == "openai":
        return OpenAIEmbedder("fake-embedder", base_url=server.base_url, api_key=KEY)
    if kind == "openai-compatible":
        return HTTPEmbedder("fake-embedder", base_url=server.base_url, api_key=KEY)
    return LiteLLMEmbedder("openai/fake-embedder", api_base=server.base_url)


@pytest.mark.parametrize("kind", KINDS)
def test_embeddings_come_back_in_input_order(
    kind: str,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    embedder = _embedder(kind, fake_openai)
    texts = ["alpha", "beta", "gamma"]
    vectors = asyncio.run(embedder.embed(texts))  # the server answers in reverse order
    assert vectors == [pytest.approx(fake_vector(t)) for t in texts]
    assert asyncio.run(embedder.embed([])) == []
    assert fake_openai.calls["/v1/embeddings"] == 1
    fake_openai.script("503")
    with pytest.raises(BackendError) as raised:
        asyncio.run(embedder.embed(texts))
    assert (raised.value.transient, raised.value.status_code) == (True, 503)
    assert fake_openai.calls["/v1/embeddings"] == 2  # one attempt: the SDK did not retry


@pytest.mark.parametrize("kind", KINDS)
def test_embedding_tokens_reach_the_ledger(
    kind: str,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    embedder = _embedder(kind, fake_openai)
    client = EmbeddingClient(embedder)
    result = asyncio.run(client.embed(["alpha beta", "gamma"]))
    assert result.status == "ok"
    tally = client.ledger.models[embedder.name]
    # The fake server counts words: hosted embeddings bill by these tokens.
    assert (tally.calls, tally.prompt_tokens, tally.unreported) == (1, 3, 0)


def test_yes_probability_from_top_logprobs(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_openai.top_logprobs = lambda body: [
        ("Yes", math.log(0.3)),
        (" YES", math.log(0.3)),
        ("no", math.log(0.1)),
        ("Maybe", math.log(0.2)),
    ]
    client = make_client(backend, tmp_path)
    result = asyncio.run(client.yes_probability(ask()))
    assert result.status == "ok"
    assert result.p_yes == pytest.approx(0.6 / 0.7)
    body = fake_openai.bodies()[0]
    assert (body["logprobs"], body["top_logprobs"], body["max_tokens"]) == (True, 20, 1)

    fake_openai.top_logprobs = lambda body: [("Maybe", -0.1), ("Perhaps", -2.0)]
    neither = asyncio.run(client.yes_probability(ask("neither")))
    assert (neither.status, neither.attempts) == ("backend_error", 1)


def test_empty_reply_is_transient(
    backend: Chat,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    replies = iter(["", "finally"])
    fake_openai.respond = lambda body: next(replies)
    result = asyncio.run(make_client(backend, tmp_path).chat(ask()))
    assert (result.status, result.text, result.attempts) == ("ok", "finally", 2)


def test_openai_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(BackendUnavailable, match="OPENAI_API_KEY"):
        OpenAIChat("gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1/")
    local = OpenAIChat("llama")
    assert (local.name, local.endpoint) == ("openai/llama", "http://localhost:8000/v1")
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    hosted = OpenAIChat("gpt-4o-mini")
    assert hosted.endpoint == "https://api.openai.com/v1"
    assert KEY not in repr(hosted)
    assert response_format({"title": "my schema!"})["json_schema"]["name"] == "my_schema_"
    assert LiteLLMChat("openai/gpt-4o-mini").name == "litellm/openai/gpt-4o-mini"


@pytest.mark.parametrize("kind", ["openai", "openai-compatible"])
def test_an_embedding_reply_without_usage_makes_the_cost_unknown(
    kind: str,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served = fake_openai._embeddings
    monkeypatch.setattr(fake_openai, "_embeddings", lambda body: {**served(body), "usage": None})
    embedder = _embedder(kind, fake_openai)
    client = EmbeddingClient(embedder)
    assert asyncio.run(client.embed(["alpha", "beta"])).status == "ok"
    assert client.ledger.models[embedder.name].unreported == 1
    assert client.ledger.cost_usd(embedder.name) is None  # not $0: the tokens are unknown
    assert client.ledger.describe(embedder.name).endswith("tokens not reported; cost unknown")
