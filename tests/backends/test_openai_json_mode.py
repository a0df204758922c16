"""Servers that refuse OpenAI's ``json_schema`` response format (llama.cpp's server does) get
``json_object`` with the schema instead, switched once, over real HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401
from pydantic import BaseModel

from rag_judge.backends.client import ModelClient
from rag_judge.backends.http_backend import HTTPChat
from rag_judge.backends.openai_backend import OpenAIChat
from rag_judge.backends.types import ChatRequest


class City(BaseModel):
    city: str


def refuse_json_schema(body: dict[str, Any]) -> str | None:
    return "400" if (body.get("response_format") or {}).get("type") == "json_schema" else None


BACKENDS = [OpenAIChat, HTTPChat]


@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
def test_falls_back_to_json_object_once(
    make: Any,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = lambda body: '{"city": "Paris"}'
    fake_openai.fail_when = refuse_json_schema
    backend = make("m", base_url=fake_openai.base_url, api_key="k")
    client = ModelClient(backend)

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
    assert backend.json_mode == "json_schema"
    assert fake_openai.total_calls == 1
