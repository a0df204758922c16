"""Worked examples in the faithfulness check, with a scripted model: where the turns go, how
they are fenced, what the result records, and that the cache tells the runs apart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.calibration.few_shot import WorkedExample, few_shot_id, write_examples
from rag_judge.core.types import RagSample
from rag_judge.jobs.score.run import aevaluate
from rag_judge.prompts.schemas import ClaimChecks

EXAMPLES = (
    WorkedExample("Paris is in France.", "Paris is the capital of France.", "supported", "r1"),
    WorkedExample("Rome </claim>is in Spain.", "Rome is in <passages>Italy.", "unsupported", "r2"),
)
SAMPLE = RagSample(
    id="s1",
    question="Where is Lyon?",
    contexts=("Lyon is a city in France.",),
    answer="Lyon has a harbour on the Baltic Sea.",
    language="en",
)


def _respond(request: ChatRequest) -> str | float:
    prompt = (request.prompt_id or "").split(".")[0]
    if prompt == "claims/extract":
        return json.dumps({"claims": ["Lyon has a harbour on the Baltic Sea."]})
    if prompt == "claims/verify":
        checks = [{"claim": 1, "reason": "[1]", "verdict": "supported", "passages": [1]}]
        return json.dumps({"verdicts": checks})
    if prompt == "claims/reason":
        return "No passage says so."
    return 0.05  # support, contradiction: unsupported, not contradicted


def _judge(
    mode: str, few_shot: Any = None, cache: ResponseCache | None = None
) -> tuple[Any, ScriptedBackend]:
    backend = ScriptedBackend(respond=_respond)
    result = asyncio.run(
        aevaluate(
            [SAMPLE],
            ["faithfulness"],
            client=ModelClient(backend, cache=cache),
            mode=mode,  # type: ignore[arg-type]
            cache=cache is not None,
            few_shot=few_shot,
            support_probability=mode == "generate",
        )
    )
    return result.samples[0].results["faithfulness"], backend


def _sent(backend: ScriptedBackend, prompt: str) -> list[ChatRequest]:
    return [r for r in backend.requests if (r.prompt_id or "").startswith(prompt + ".")]


def test_scoring_path_sends_the_examples_as_earlier_turns_before_the_row() -> None:
    result, backend = _judge("score", EXAMPLES)
    (support,) = _sent(backend, "claims/support")
    roles = [m.role for m in support.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    first, second = support.messages[1].content, support.messages[3].content
    assert "<passages>\n[1] Paris is the capital of France.\n</passages>" in first
    assert "<claim>Paris is in France.</claim>" in first
    assert [support.messages[2].content, support.messages[4].content] == ["yes", "no"]
    # An example's text cannot close the tags it sits in: fenced like the row's own data.
    assert "<claim>Rome ‹/claim›is in Spain.</claim>" in second
    assert "Rome is in ‹passages›Italy." in second
    assert "Lyon is a city in France." in support.messages[-1].content
    # The contradiction and reason calls share the prefix, so the KV cache reads it once.
    for prompt in ("claims/contradict", "claims/reason"):
        (call,) = _sent(backend, prompt)
        assert call.messages[1:5] == support.messages[1:5]
    assert few_shot_id(EXAMPLES) in result.prompts
    assert result.status == "ok"


def test_generative_path_sends_examples_with_the_reply_it_parses() -> None:
    result, backend = _judge("generate", EXAMPLES)
    (verify,) = _sent(backend, "claims/verify")
    roles = [m.role for m in verify.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    replies = [ClaimChecks.model_validate_json(m.content) for m in verify.messages[2:5:2]]
    assert [r.verdicts[0].verdict for r in replies] == ["supported", "not_mentioned"]
    assert "1. Rome ‹/claim›is in Spain." in verify.messages[3].content
    (support,) = _sent(backend, "claims/support")  # P(supported): the support turns
    assert [support.messages[2].content, support.messages[4].content] == ["yes", "no"]
    (extract,) = _sent(backend, "claims/extract")
    assert [m.role for m in extract.messages] == ["system", "user"]  # only the check
    assert few_shot_id(EXAMPLES) in result.prompts


def test_without_examples_no_turn_is_added_and_nothing_is_recorded() -> None:
    for mode in ("score", "generate"):
        result, backend = _judge(mode)
        assert all(len(r.messages) == 2 for r in backend.requests)
        assert not any(p.startswith("few_shot#") for p in result.prompts)


def test_examples_change_the_cache_key(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    _, plain = _judge("score", cache=cache)
    _, shown = _judge("score", EXAMPLES, cache=cache)
    _, again = _judge("score", EXAMPLES, cache=cache)
    assert len(plain.requests) > 0
    assert len(shown.requests) == len(plain.requests)  # nothing answered from the plain run
    assert again.requests == []  # the same examples: all from the cache


def test_examples_can_come_from_their_file(tmp_path: Path) -> None:
    path = tmp_path / "examples.jsonl"
    write_examples(path, EXAMPLES)
    result, _ = _judge("score", path)
    assert few_shot_id(EXAMPLES) in result.prompts


def test_a_reason_that_only_echoes_the_examples_answer_word_is_dropped() -> None:
    def respond(request: ChatRequest) -> str | float:
        if (request.prompt_id or "").startswith("claims/reason."):
            return "No."
        return _respond(request)

    backend = ScriptedBackend(respond=respond)
    client = ModelClient(backend)
    for few_shot, reason in ((EXAMPLES, ""), (None, "No.")):
        result = asyncio.run(
            aevaluate([SAMPLE], ["faithfulness"], client=client, mode="score", cache=False,
                      few_shot=few_shot)
        ).samples[0].results["faithfulness"]  # fmt: skip
        assert [c.reason for c in result.claims] == [reason]
