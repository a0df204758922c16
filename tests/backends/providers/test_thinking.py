"""A reasoning model's thinking (its own field, or <think> tags in the content) is never read as
the answer, and its tokens are counted in the ledger; over real HTTP on every backend."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fake_openai_server import FAKE_THINKING, FakeOpenAIServer, fake_openai  # noqa: F401
from pydantic import BaseModel

from rag_judge.backends.providers.http_backend import HTTPChat
from rag_judge.backends.providers.litellm_backend import LiteLLMChat
from rag_judge.backends.providers.openai_backend import OpenAIChat
from rag_judge.backends.providers.thinking import split_thinking
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.types import Usage


class Verdict(BaseModel):
    verdict: str


def _litellm(model: str, *, base_url: str, api_key: str) -> LiteLLMChat:
    return LiteLLMChat(f"openai/{model}", api_base=base_url, api_key=api_key)


BACKENDS = [OpenAIChat, HTTPChat, _litellm]


@pytest.mark.parametrize("shape", ["reasoning_content", "think_tags"])
@pytest.mark.parametrize("make", BACKENDS, ids=lambda b: b.__name__)
def test_the_verdict_is_read_from_the_answer_and_thinking_is_counted(
    make: Any,
    shape: str,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = lambda body: '{"verdict": "supported"}'
    fake_openai.default_behaviour = shape
    backend = make("m", base_url=fake_openai.base_url, api_key="k")
    client = ModelClient(backend)
    result = asyncio.run(client.structured(ChatRequest.of(("user", "?")), Verdict))
    assert (result.status, result.repaired) == ("ok", False)
    assert result.value == Verdict(verdict="supported")
    assert result.raw == '{"verdict": "supported"}'
    tally = client.ledger.models[backend.name]
    assert 0 < tally.reasoning_tokens < tally.completion_tokens
    if shape == "reasoning_content":  # as reported: the fake counts words of its thinking
        assert tally.reasoning_tokens == len(FAKE_THINKING.split())
    assert f"({tally.reasoning_tokens} of them thinking)" in client.ledger.describe(backend.name)


def test_thinking_cut_off_by_the_token_limit_is_no_answer() -> None:
    assert split_thinking("<think>\nStill weighing the passage") == (
        "",
        "Still weighing the passage",
    )
    assert split_thinking("  <think>a</think>yes") == ("yes", "a")
    assert split_thinking("The answer mentions <think> later.")[1] == ""


def test_usage_adds_thinking_tokens() -> None:
    total = Usage(completion_tokens=10, reasoning_tokens=4) + Usage(completion_tokens=3)
    assert (total.completion_tokens, total.reasoning_tokens) == (13, 4)
