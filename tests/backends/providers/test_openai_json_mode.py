"""Servers that refuse OpenAI's ``json_schema`` response format (llama.cpp's servers do, with
400 or, llama-cpp-python's, 500) get ``json_object`` with the schema instead, switched once,
over real HTTP, on every backend; a 5xx that names the request's fields is never retried."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fake_openai_server import (  # noqa: F401
    LLAMA_CPP_PYTHON_JSON_SCHEMA_500,
    FakeOpenAIServer,
    fake_openai,
)
from pydantic import BaseModel

from rag_judge.backends.errors import BackendError, classify_status, format_rejected
from rag_judge.backends.providers.http_backend import HTTPChat
from rag_judge.backends.providers.litellm_backend import LiteLLMChat
from rag_judge.backends.providers.openai_backend import OpenAIChat
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient


class City(BaseModel):
    city: str


def refuse_json_schema(body: dict[str, Any]) -> str | None:
    wants_schema = (body.get("response_format") or {}).get("type") == "json_schema"
    return "rejects_json_schema_400" if wants_schema else None


def refuse_like_llama_cpp_python(body: dict[str, Any]) -> str | None:
    wants_schema = (body.get("response_format") or {}).get("type") == "json_schema"
    return "llama_cpp_python_json_schema" if wants_schema else None


def _litellm(model: str, *, base_url: str, api_key: str) -> LiteLLMChat:
    return LiteLLMChat(f"openai/{model}", api_base=base_url, api_key=api_key)


BACKENDS = [OpenAIChat, HTTPChat, _litellm]
FAST = CallPolicy(concurrency=2, timeout=10.0, max_attempts=3, initial_wait=0.001, max_wait=0.01)


@pytest.mark.parametrize("refuse", [refuse_json_schema, refuse_like_llama_cpp_python])
@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
def test_falls_back_to_json_object_once(
    make: Any,
    refuse: Any,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = lambda body: '{"city": "Paris"}'
    fake_openai.fail_when = refuse
    backend = make("m", base_url=fake_openai.base_url, api_key="k")
    client = ModelClient(backend, policy=FAST)

    async def two_calls() -> list[Any]:
        return [
            await client.structured(ChatRequest.of(("user", f"capital {i}?")), City)
            for i in range(2)
        ]

    first, second = asyncio.run(two_calls())
    assert first.status == second.status == "ok"
    assert first.value == City(city="Paris")
    sent = [body.get("response_format") for _, body, _ in fake_openai.requests]
    # refused once, then json_object with the schema for this and every later call
    assert [f["type"] for f in sent] == ["json_schema", "json_object", "json_object"]
    assert sent[1]["schema"]["properties"] == {"city": {"title": "City", "type": "string"}}
    assert backend.json_mode == "json_object"


@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
def test_a_server_that_takes_json_schema_keeps_it(
    make: Any,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = lambda body: '{"city": "Paris"}'
    backend = make("m", base_url=fake_openai.base_url, api_key="k")
    result = asyncio.run(ModelClient(backend).structured(ChatRequest.of(("user", "?")), City))
    assert result.status == "ok"
    assert backend.json_mode == "auto"
    assert fake_openai.total_calls == 1
    assert fake_openai.requests[0][1]["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
def test_a_500_naming_the_request_is_not_retried(
    make: Any,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    """Without a schema nothing falls back: the 500 is recorded after one attempt, not three."""
    fake_openai.default_behaviour = "llama_cpp_python_json_schema"
    backend = make("m", base_url=fake_openai.base_url, api_key="k")
    result = asyncio.run(ModelClient(backend, policy=FAST).chat(ChatRequest.of(("user", "?"))))
    assert result.status == "backend_error"
    assert "response_format" in (result.error or "")
    assert fake_openai.total_calls == 1


@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
def test_a_plain_500_is_still_retried(
    make: Any,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = lambda body: "fine"
    fake_openai.script("500")
    backend = make("m", base_url=fake_openai.base_url, api_key="k")
    result = asyncio.run(ModelClient(backend, policy=FAST).chat(ChatRequest.of(("user", "?"))))
    assert result.status == "ok"
    assert fake_openai.total_calls == 2


def test_what_counts_as_a_refused_format() -> None:
    def error(status: int | None, text: str) -> BackendError:
        return BackendError(text, transient=False, status_code=status)

    assert format_rejected(error(500, LLAMA_CPP_PYTHON_JSON_SCHEMA_500))
    assert format_rejected(error(400, "response_format.type json_schema is not supported"))
    assert format_rejected(error(422, "Unsupported: json_schema"))
    assert not format_rejected(error(500, "CUDA out of memory"))
    assert not format_rejected(error(None, "connection reset; response_format"))
    assert not format_rejected(error(429, "rate limited"))  # no field named
    assert not format_rejected(error(400, "maximum context length exceeded"))
    assert classify_status(503)
    assert not classify_status(503, "logprobs are not supported")
    assert not classify_status(400)


@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
@pytest.mark.parametrize(
    ("mode", "sent"),
    [("json_object", "json_object"), ("json_schema", "json_schema"), ("none", None)],
)
def test_a_json_mode_set_by_the_user_is_the_only_form_sent(
    make: Any,
    mode: str,
    sent: str | None,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = lambda body: '{"city": "Paris"}'
    backend = chat_backend_for(make, fake_openai, mode)
    result = asyncio.run(ModelClient(backend).structured(ChatRequest.of(("user", "?")), City))
    assert result.status == "ok"
    form = fake_openai.requests[0][1].get("response_format")
    assert (None if form is None else form["type"]) == sent


@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
def test_a_forced_json_schema_refused_is_an_error_not_a_switch(
    make: Any,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.fail_when = refuse_like_llama_cpp_python
    backend = chat_backend_for(make, fake_openai, "json_schema")
    client = ModelClient(backend, policy=FAST)
    result = asyncio.run(client.structured(ChatRequest.of(("user", "?")), City))
    assert result.status == "backend_error"
    assert "response_format" in (result.error or "")
    assert fake_openai.total_calls == 1


def chat_backend_for(make: Any, server: FakeOpenAIServer, mode: str) -> Any:
    backend = make("m", base_url=server.base_url, api_key="k")
    backend.json_mode = mode
    return backend


@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
def test_prose_instead_of_json_is_repaired_counted_and_said_once(
    make: Any,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server that ignores response_format answers prose; the repair turn gets JSON."""
    fake_openai.respond = lambda body: (
        '{"city": "Paris"}' if len(body["messages"]) > 1 else "The capital is Paris."
    )
    backend = make("m", base_url=fake_openai.base_url, api_key="k")
    client = ModelClient(backend, policy=FAST)

    async def two_rows() -> list[Any]:
        return [
            await client.structured(ChatRequest.of(("user", f"capital {i}?")), City)
            for i in range(2)
        ]

    with caplog.at_level("WARNING", logger="rag_judge"):
        results = asyncio.run(two_rows())
    assert [(r.status, r.repaired, r.value) for r in results] == [
        ("ok", True, City(city="Paris"))
    ] * 2
    assert client.ledger.models[backend.name].prose == 2
    assert "2 replies in prose, not JSON" in client.ledger.describe(backend.name)
    said = [r.getMessage() for r in caplog.records if "answered prose" in r.getMessage()]
    assert len(said) == 1
    assert "--json-mode" in said[0]
