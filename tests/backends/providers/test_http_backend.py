"""The openai-compatible (aiohttp) backend: configuration, key handling, the request it sends,
faults below HTTP (truncated bodies, resets, refused connections), and session lifetime.

The fault-injection suite it shares with the SDK backends is in test_backends_wire.py.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401

from rag_judge.backends.availability import list_models
from rag_judge.backends.errors import BackendError, BackendTimeout, BackendUnavailable
from rag_judge.backends.provider import BuildArgs
from rag_judge.backends.providers import http_backend
from rag_judge.backends.providers.http_backend import HTTPChat, HTTPEmbedder
from rag_judge.backends.providers.openai_backend import OpenAIChat
from rag_judge.backends.providers.openai_shapes import response_format
from rag_judge.backends.registry import chat_backend, embedding_backend
from rag_judge.backends.types import ChatRequest, cache_key
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient

KEY = "sk-test-SECRET-7f3a9c1e5b"
FAST = CallPolicy(concurrency=8, timeout=5.0, max_attempts=3, initial_wait=0.001, max_wait=0.01)


@pytest.fixture
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Neither OPENAI_API_KEY nor OPENAI_BASE_URL set."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return monkeypatch


def ask(text: str = "is the sky blue?", **fields: Any) -> ChatRequest:
    return ChatRequest.of(("system", "You are a judge."), ("user", text), **fields)


@asynccontextmanager
async def raw_server(reply: bytes, *, reset: bool = False) -> AsyncIterator[str]:
    """A one-shot HTTP server on this loop that answers any request with ``reply`` bytes, then
    closes (``reset``: aborts the connection instead); yields its base URL."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await reader.readexactly(length)
        if reset:
            writer.transport.abort()
            return
        writer.write(reply)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


def http_reply(status: str, body: bytes, *headers: str, length: int | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", *headers]
    lines.append(f"Content-Length: {len(body) if length is None else length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def complete_against(reply: bytes, *, reset: bool = False) -> BackendError:
    """The BackendError one call against a raw server raises."""
    async with raw_server(reply, reset=reset) as url:
        backend = HTTPChat("m", base_url=url, api_key=KEY, timeout=2.0)
        try:
            await backend.complete(ask())
        except BackendError as error:
            return error
        finally:
            await backend.aclose()
    raise AssertionError("no BackendError")


def test_base_url_from_argument_then_env_then_default(no_openai_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(BackendUnavailable, match="OPENAI_API_KEY"):
        HTTPChat("gpt-4o-mini")
    no_openai_env.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1/")
    local = HTTPChat("llama")
    assert (local.name, local.endpoint) == ("openai-compatible/llama", "http://localhost:8000/v1")
    chosen = HTTPChat("llama", base_url="http://10.0.0.2:9000/v1")
    assert chosen.endpoint == "http://10.0.0.2:9000/v1"
    no_openai_env.delenv("OPENAI_BASE_URL")
    no_openai_env.setenv("OPENAI_API_KEY", KEY)
    hosted = HTTPEmbedder("text-embedding-3-small")
    assert hosted.endpoint == "https://api.openai.com/v1"
    assert hosted.name == "openai-compatible/text-embedding-3-small"


def test_key_never_in_name_endpoint_repr_or_cache_key(no_openai_env: pytest.MonkeyPatch) -> None:
    no_openai_env.setenv("OPENAI_API_KEY", KEY)
    for backend in (HTTPChat("gpt-4o-mini"), HTTPEmbedder("e", base_url="http://h/v1")):
        assert backend.endpoint is not None
        texts = [backend.name, backend.endpoint, repr(backend), str(backend)]
        assert not any(KEY in t for t in texts)
        assert KEY not in cache_key("chat", backend.name, backend.endpoint, ask())
    same = cache_key("chat", "openai-compatible/m", "http://h/v1", ask())
    no_openai_env.setenv("OPENAI_API_KEY", "sk-another-key-entirely")
    assert cache_key("chat", HTTPChat("m", base_url="http://h/v1").name, "http://h/v1", ask()) == (
        same
    )  # the key does not change the cache key: a rotated key keeps the cache


def test_key_is_sent_only_as_a_header(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    no_openai_env: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    with_key = HTTPChat("m", base_url=fake_openai.base_url, api_key=KEY)
    keyless = HTTPChat("m", base_url=fake_openai.base_url)  # a local server needs none
    assert asyncio.run(with_key.complete(ask())).text == "echo: is the sky blue?"
    asyncio.run(keyless.complete(ask()))
    (_, body, headers), (_, _, no_headers) = fake_openai.requests
    assert headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in json.dumps(body)
    assert "authorization" not in no_headers
    fake_openai.script("401")
    with pytest.raises(BackendError) as raised:
        asyncio.run(with_key.complete(ask()))
    assert "Incorrect API key provided: ***" in str(raised.value)
    assert KEY not in caplog.text


def test_credentials_in_the_base_url_are_sent_as_basic_auth_and_shown_nowhere(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    no_openai_env: pytest.MonkeyPatch,
) -> None:
    with_credentials = fake_openai.base_url.replace("http://", "http://me:p%40ss@")
    backend = HTTPChat("m", base_url=with_credentials)
    assert backend.endpoint == fake_openai.base_url  # no user or password kept in it
    assert "p%40ss" not in repr(backend)
    asyncio.run(backend.complete(ask()))  # aiohttp refused such a URL beside a header
    [(_, _, headers)] = fake_openai.requests
    assert headers["authorization"] == "Basic bWU6cEBzcw=="  # me:p@ss
    no_openai_env.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(BackendUnavailable, match="carries a user name and password, and an API"):
        HTTPChat("m", base_url=with_credentials)  # two Authorization headers: say so at once


def test_request_body_matches_the_openai_wire_format(
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    backend = HTTPChat("m", base_url=fake_openai.base_url, api_key=KEY)
    schema = {"title": "Verdict", "type": "object"}
    asyncio.run(backend.complete(ask("héllo", seed=7, max_tokens=30, json_schema=schema)))
    asyncio.run(backend.complete(ask("plain")))
    full, plain = fake_openai.bodies()
    assert full == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "You are a judge."},
            {"role": "user", "content": "héllo"},
        ],
        "temperature": 0.0,
        "seed": 7,
        "max_tokens": 30,
        "response_format": response_format(schema),
    }
    assert set(plain) == {"model", "messages", "temperature"}  # nothing unset is sent


def test_registry_and_availability(no_openai_env: pytest.MonkeyPatch) -> None:
    chat = chat_backend("openai-compatible/llama", BuildArgs(base_url="http://h/v1"))
    embedder = embedding_backend("openai-compatible/nomic", BuildArgs(base_url="http://h/v1"))
    assert isinstance(chat, HTTPChat)
    assert isinstance(embedder, HTTPEmbedder)
    assert isinstance(chat_backend("openai/llama", BuildArgs(base_url="http://h/v1")), OpenAIChat)
    rows = {(a.name, a.kind): a for a in list_models(env={"OPENAI_BASE_URL": "http://h/v1"})}
    assert rows["openai-compatible/*", "chat"].available
    assert rows["openai-compatible/*", "embeddings"].available
    keyless = {(a.name, a.kind): a for a in list_models(env={})}
    assert "OPENAI_API_KEY" in str(keyless["openai-compatible/*", "chat"].reason)


def test_missing_aiohttp_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aiohttp", None)  # import aiohttp now raises ImportError
    with pytest.raises(BackendUnavailable, match=r"pip install 'rag-judge\[openai\]'"):
        HTTPChat("m", base_url="http://h/v1")


def test_refusal_is_recorded_as_refused(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    def refuse(body: dict[str, Any], behaviour: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}

    monkeypatch.setattr(fake_openai, "_chat", refuse)
    backend = HTTPChat("m", base_url=fake_openai.base_url, api_key=KEY)
    client = ModelClient(backend, cache=ResponseCache(tmp_path / "c.sqlite"), policy=FAST)
    result = asyncio.run(client.chat(ask()))
    assert (result.status, result.attempts, fake_openai.total_calls) == ("refused", 1, 1)


def test_yes_no_without_logprobs_is_recorded_once(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that ignores ``logprobs`` gives a backend_error at once, not four retries."""

    def plain(body: dict[str, Any], behaviour: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": "yes"}
        choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
        return {"choices": [choice], "usage": {"prompt_tokens": 9, "completion_tokens": 1}}

    monkeypatch.setattr(fake_openai, "_chat", plain)
    backend = HTTPChat("m", base_url=fake_openai.base_url, api_key=KEY)
    result = asyncio.run(ModelClient(backend, policy=FAST).yes_probability(ask()))
    assert (result.status, result.attempts, fake_openai.total_calls) == ("backend_error", 1, 1)
    assert result.error is not None
    assert "no log-probabilities" in result.error


def test_usage_absent_or_odd_is_unreported_not_free(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    usages = iter([None, "n/a", {"prompt_tokens": 7, "completion_tokens": None}])

    def reply(body: dict[str, Any], behaviour: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": "fine"}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return {"choices": [choice], "usage": next(usages)}

    monkeypatch.setattr(fake_openai, "_chat", reply)
    backend = HTTPChat("m", base_url=fake_openai.base_url, api_key=KEY)
    client = ModelClient(backend, policy=FAST)

    async def three() -> list[tuple[int, int, bool]]:
        results = [await client.chat(ask(f"q{i}")) for i in range(3)]
        assert all(r.status == "ok" and r.text == "fine" for r in results)
        return [
            (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.reported) for r in results
        ]

    assert asyncio.run(three()) == [(0, 0, False), (0, 0, False), (7, 0, True)]
    # Two of three replies said nothing of their tokens: the spend is unknown, not $0.
    assert client.ledger.models["openai-compatible/m"].unreported == 2
    assert client.ledger.cost_usd("openai-compatible/m") is None
    assert "(not reported for 2 of the calls)" in client.ledger.describe("openai-compatible/m")


@pytest.mark.parametrize(
    ("reply", "status", "transient", "words"),
    [
        (http_reply("200 OK", b'{"choices": []}', length=500), None, True, "ClientPayloadError"),
        (http_reply("200 OK", b"[]"), None, True, "malformed reply"),
        (http_reply("200 OK", b"null"), None, True, "malformed reply"),
        (http_reply("200 OK", b"<html>"), None, True, "malformed response body"),
        (http_reply("502 Bad Gateway", b"<html>proxy</html>"), 502, True, "502 proxy"),
        (http_reply("404 Not Found", b'{"error": {"message": "no"}}'), 404, False, "404 no"),
    ],
    ids=["truncated-body", "no-choices", "null", "not-json", "html-502", "404"],
)
def test_faults_below_and_around_http(
    reply: bytes, status: int | None, transient: bool, words: str
) -> None:
    error = asyncio.run(complete_against(reply))
    assert (error.status_code, error.transient) == (status, transient)
    assert words in str(error)
    assert KEY not in f"{error} {error.__cause__!r}"


def test_connection_reset_and_refused_are_transient() -> None:
    reset = asyncio.run(complete_against(b"", reset=True))
    assert (reset.transient, reset.status_code) == (True, None)
    assert "connection failed" in str(reset)

    async def refused() -> BackendError:
        async with raw_server(b"") as url:
            pass  # closed again: nothing listens on the port now
        with pytest.raises(BackendError) as raised:
            await HTTPChat("m", base_url=url, api_key=KEY).complete(ask())
        return raised.value

    error = asyncio.run(refused())
    assert (error.transient, error.status_code) == (True, None)


def test_retry_after_ms_wins_over_retry_after() -> None:
    reply = http_reply("429 Too Many Requests", b"{}", "Retry-After: 3", "retry-after-ms: 250")
    error = asyncio.run(complete_against(reply))
    assert (error.transient, error.status_code, error.retry_after) == (True, 429, 0.25)


def test_own_timeout_is_a_backend_timeout(
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.slow_seconds = 1.0
    fake_openai.script("slow")
    backend = HTTPChat("m", base_url=fake_openai.base_url, api_key=KEY, timeout=0.2)
    with pytest.raises(BackendTimeout, match=r"timed out after 0\.2 s"):
        asyncio.run(backend.complete(ask()))


def test_one_pooled_session_per_loop_closed_with_the_loop(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = HTTPChat("m", base_url=fake_openai.base_url, api_key=KEY, connections=64)

    async def calls() -> Any:
        await asyncio.gather(*(backend.complete(ask(f"q{i}")) for i in range(40)))
        session = backend._session
        assert session is not None
        assert session.connector is not None
        assert session.connector.limit == 64
        return session

    first = asyncio.run(calls())
    assert first.closed  # asyncio.run finalised it before closing its loop
    second = asyncio.run(calls())
    assert second is not first
    assert second.closed

    async def explicit() -> bool:
        await backend.complete(ask())
        session = backend._session
        await backend.aclose()
        return session is not None and session.closed and backend._session is None

    assert asyncio.run(explicit())
    gc.collect()
    assert "Unclosed" not in caplog.text


def test_embeddings_malformed_reply_is_transient(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fake_openai, "_embeddings", lambda body: {"object": "list"})
    embedder = HTTPEmbedder("e", base_url=fake_openai.base_url, api_key=KEY)
    with pytest.raises(BackendError, match="expected 2 vectors, got 0") as raised:
        asyncio.run(embedder.embed(["a", "b"]))
    assert raised.value.transient


def test_json_codec_agrees_with_the_stdlib() -> None:
    payload = {"model": "m", "messages": [{"role": "user", "content": "héllo ✓"}], "n": 1.5}
    encoded = http_backend._dumps(payload)
    assert json.loads(encoded) == payload == http_backend._loads(encoded)
    assert json.loads(http_backend._stdlib_dumps(payload)) == payload


def test_proxy_from_the_environment_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("https_proxy", "http://proxy.internal:3128")
    assert http_backend._env_proxy("https://api.openai.com/v1") == "http://proxy.internal:3128"
    assert http_backend._env_proxy("http://127.0.0.1:8000/v1") is None
    monkeypatch.setenv("no_proxy", "api.openai.com")
    assert http_backend._env_proxy("https://api.openai.com/v1") is None


def test_an_html_error_page_is_named_by_its_title() -> None:
    """A web server or proxy in front of the model answers with a page: the error says its
    title in one line, not the page's markup."""
    from html_error_server import HTML_404

    error = asyncio.run(complete_against(http_reply("404 Not Found", HTML_404)))
    assert "HTTP error: 404 404 Not Found" in str(error)
    assert "<" not in str(error)
    assert "\n" not in str(error)
    assert error.status_code == 404
