"""The OpenAI shapes: one body per kind of call, and one reader per kind of reply that reads the
SDK's objects and decoded JSON alike."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from rag_judge.backends.errors import BackendError
from rag_judge.backends.providers.openai_shapes import (
    TOP_LOGPROBS,
    chat_body,
    chat_reply,
    embeddings_reply,
    usage_of,
    yes_no_body,
    yes_no_reply,
)
from rag_judge.backends.types import ChatRequest
from rag_judge.core.types import Usage

USAGE = {"prompt_tokens": 7, "completion_tokens": 2}
CHAT = {
    "choices": [{"message": {"content": "Paris", "refusal": None}, "finish_reason": "stop"}],
    "usage": USAGE,
}
YES_NO = {
    "choices": [
        {
            "logprobs": {
                "content": [
                    {
                        "top_logprobs": [
                            {"token": "Yes", "logprob": -0.1},
                            {"token": " no", "logprob": -2.4},
                        ]
                    }
                ]
            }
        }
    ],
    "usage": USAGE,
}
EMBEDDINGS = {
    "data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}],
    "usage": {"prompt_tokens": 4},
}


def as_objects(value: Any) -> Any:
    """The same reply as the SDK gives it: attributes, not keys."""
    return json.loads(json.dumps(value), object_hook=lambda d: SimpleNamespace(**d))


def test_bodies_hold_what_the_request_sets_in_one_order() -> None:
    plain = ChatRequest.of(("user", "hi"))
    assert chat_body(plain) == {
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": plain.temperature,
    }
    seeded = ChatRequest.of(("user", "hi"), seed=3, max_tokens=5)
    assert list(chat_body(seeded)) == ["messages", "temperature", "seed", "max_tokens"]
    probe = yes_no_body(seeded)
    assert list(probe) == [
        "messages",
        "temperature",
        "seed",
        "max_tokens",
        "logprobs",
        "top_logprobs",
    ]
    assert (probe["max_tokens"], probe["logprobs"], probe["top_logprobs"]) == (
        1,
        True,
        TOP_LOGPROBS,
    )


@pytest.mark.parametrize("shape", [dict, as_objects], ids=["json", "sdk"])
def test_replies_read_the_same_from_json_and_from_sdk_objects(shape: Any) -> None:
    reply = chat_reply(shape(CHAT))
    assert (reply.text, reply.finish_reason, reply.usage) == ("Paris", "stop", Usage(**USAGE))
    p_yes = yes_no_reply(shape(YES_NO)).p_yes
    assert p_yes == pytest.approx(1 / (1 + pow(2.718281828459045, -2.3)), rel=1e-6)
    vectors, usage = embeddings_reply(shape(EMBEDDINGS), 2)
    assert vectors == [[1.0, 0.0], [0.0, 1.0]]  # by index, not by list order
    assert usage == Usage(prompt_tokens=4)


@pytest.mark.parametrize("body", [[], None, "x", {"choices": []}, {"choices": [{}]}])
def test_a_reply_without_a_message_is_malformed(body: Any) -> None:
    with pytest.raises(BackendError, match="malformed reply"):
        chat_reply(body)
    with pytest.raises(BackendError, match="no log-probabilities"):
        yes_no_reply(body)


def test_absent_or_odd_usage_is_unreported() -> None:
    for raw in (None, "12", 12, [1]):
        assert usage_of(raw) == Usage(reported=False)
    assert usage_of({"completion_tokens_details": {"reasoning_tokens": 3}}).reasoning_tokens == 3
