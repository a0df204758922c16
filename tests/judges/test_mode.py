"""The scoring path over a server needs log-probabilities: without them, the generative path,
said once and recorded; with them, the scoring path, exactly as in process."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401

from rag_judge.backends.providers.http_backend import HTTPChat
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient
from rag_judge.jobs.score.run import aevaluate
from rag_judge.judges.mode import choose_mode

ROW = {
    "question": "What is the capital of France?",
    "contexts": ["Paris is the capital of France."],
    "answer": "The capital of France is Paris.",
}
FAST = CallPolicy(concurrency=1, timeout=10.0, max_attempts=2, initial_wait=0.001, max_wait=0.01)


def judge_reply(body: dict[str, Any]) -> str:
    """Claims and verdicts as JSON, whichever step asks (generate mode)."""
    schema = json.dumps(body.get("response_format") or {})
    if "verdicts" in schema:
        verdict = {"claim": 1, "reason": "said", "verdict": "supported", "passages": [1]}
        return json.dumps({"verdicts": [verdict]})
    if "claims" in schema:
        return json.dumps({"claims": ["The capital of France is Paris."]})
    return "yes"


def run(server: FakeOpenAIServer, mode: str | None) -> Any:
    client = ModelClient(HTTPChat("m", base_url=server.base_url, api_key="k"), policy=FAST)
    return asyncio.run(aevaluate([ROW], ["faithfulness"], client=client, mode=mode, cache=False))


def test_a_server_without_logprobs_is_judged_on_the_generative_path_and_says_so(
    fake_openai: FakeOpenAIServer,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_openai.respond = judge_reply
    fake_openai.default_behaviour = "no_logprobs"
    with caplog.at_level("WARNING", logger="rag_judge"):
        result = run(fake_openai, "score")
    (sample,) = result.samples
    assert sample.results["faithfulness"].status == "ok"
    assert sample.results["faithfulness"].value == 1.0
    assert sample.judge_mode == "generate"
    assert "gives no log-probabilities" in sample.judge_mode_note
    assert result.to_records()[0]["judge_mode_note"] == sample.judge_mode_note
    assert [r.getMessage() for r in caplog.records if "log-probabilities" in r.getMessage()]
    assert any("claims/extract" in p for p in sample.results["faithfulness"].prompts)


def test_a_server_with_logprobs_keeps_the_scoring_path(
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = judge_reply
    result = run(fake_openai, "score")
    (sample,) = result.samples
    assert (sample.judge_mode, sample.judge_mode_note) == ("score", "")
    assert sample.results["faithfulness"].status == "ok"
    assert not any("claims/extract" in p for p in sample.results["faithfulness"].prompts)
    sent = [body for _, body, _ in fake_openai.requests]
    assert all(body.get("logprobs") for body in sent)  # the probe and every verdict


def test_generate_needs_no_probe_and_in_process_models_are_never_probed(
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = judge_reply
    client = ModelClient(HTTPChat("m", base_url=fake_openai.base_url, api_key="k"))
    assert asyncio.run(choose_mode(client, "generate")).mode == "generate"
    assert asyncio.run(choose_mode(client, None)).mode == "generate"  # a server's default
    assert fake_openai.total_calls == 0
    scripted = ScriptedBackend()
    assert asyncio.run(choose_mode(ModelClient(scripted), "score")).mode == "score"
    assert scripted.requests == []


def test_a_probe_that_fails_for_another_reason_keeps_score(
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.default_behaviour = "503"
    client = ModelClient(HTTPChat("m", base_url=fake_openai.base_url, api_key="k"), policy=FAST)
    assert asyncio.run(choose_mode(client, "score")).mode == "score"
