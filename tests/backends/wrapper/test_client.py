"""The shared wrapper, exercised through the scripted backend: cache, retries, limits, repair."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from rag_judge.backends import (
    CallPolicy,
    CallResult,
    ChatRequest,
    Ledger,
    ModelClient,
    ResponseCache,
)
from rag_judge.backends.errors import BackendError
from rag_judge.backends.providers.scripted import ScriptedBackend, ScriptedEmbedder
from rag_judge.backends.types import ChatResponse, cache_key
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.core.types import Usage

FAST = CallPolicy(concurrency=4, timeout=0.5, max_attempts=3, initial_wait=0.0, max_wait=0.0)


class Verdict(BaseModel):
    label: str
    score: float


def ask(text: str, **fields: object) -> ChatRequest:
    return ChatRequest.of(("user", text), **fields)  # type: ignore[arg-type]


def client(backend: ScriptedBackend, tmp_path: Path | None = None, **kw: object) -> ModelClient:
    cache = ResponseCache(tmp_path / "cache.sqlite") if tmp_path else None
    return ModelClient(backend, cache=cache, policy=kw.pop("policy", FAST), **kw)  # type: ignore[arg-type]


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_transient_errors_are_retried_then_succeed() -> None:
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    backend = ScriptedBackend(
        [
            BackendError("rate limited", transient=True, status_code=429, retry_after=0.25),
            BackendError("bad gateway", transient=True, status_code=502),
            "fine",
        ]
    )
    policy = CallPolicy(max_attempts=3, initial_wait=0.0, max_wait=5.0)
    result = run(client(backend, sleep=fake_sleep, policy=policy).chat(ask("hi")))
    assert result.status == "ok"
    assert result.text == "fine"
    assert result.attempts == 3
    assert sleeps[0] == 0.25  # Retry-After honoured


def test_permanent_errors_are_not_retried() -> None:
    backend = ScriptedBackend([BackendError("bad request", transient=False, status_code=400)])
    result = run(client(backend).chat(ask("hi")))
    assert result.status == "backend_error"
    assert result.attempts == 1
    assert result.error == "HTTP 400: bad request"
    assert result.text is None


def test_retries_give_up_with_a_recorded_status() -> None:
    backend = ScriptedBackend(
        respond=lambda r: BackendError("down", transient=True, status_code=503)
    )
    ledger = Ledger()
    result = run(client(backend, ledger=ledger).chat(ask("hi")))
    assert result.status == "backend_error"
    assert result.attempts == FAST.max_attempts
    assert ledger.summary()["scripted/test"]["statuses"] == {"backend_error": 1}


def test_slow_replies_time_out_without_hanging() -> None:
    backend = ScriptedBackend(respond=lambda r: "late", delay=5.0)
    policy = CallPolicy(timeout=0.05, max_attempts=2, initial_wait=0.0, max_wait=0.0)
    result = run(client(backend, policy=policy).chat(ask("hi")))
    assert result.status == "timeout"
    assert result.attempts == 2
    assert len(backend.requests) == 2


def test_cache_makes_a_rerun_free_and_never_stores_failures(tmp_path: Path) -> None:
    backend = ScriptedBackend(respond=lambda r: f"echo {r.messages[-1].content}")
    first = client(backend, tmp_path)
    requests = [ask(f"q{i}") for i in range(10)]

    async def batch(c: ModelClient) -> list[object]:
        return await asyncio.gather(*(c.chat(r) for r in requests))

    before = run(batch(first))
    assert len(backend.requests) == 10
    again = client(backend, tmp_path)
    after = run(batch(again))
    assert len(backend.requests) == 10  # zero new calls
    assert [a.text for a in after] == [b.text for b in before]  # type: ignore[attr-defined]
    assert all(a.cached for a in after)  # type: ignore[attr-defined]
    failing = ScriptedBackend([BackendError("no", transient=False)])
    run(client(failing, tmp_path).chat(ask("fails")))
    assert len(ResponseCache(tmp_path / "cache.sqlite")) == 10


def test_interrupted_batch_resumes_with_only_the_missing_calls(tmp_path: Path) -> None:
    requests = [ask(f"q{i}") for i in range(12)]
    half = ScriptedBackend(
        respond=lambda r: (
            "a" if int(r.messages[0].content[1:]) < 6 else BackendError("killed", transient=False)
        )
    )

    async def batch(c: ModelClient) -> list[object]:
        return await asyncio.gather(*(c.chat(r) for r in requests))

    results = run(batch(client(half, tmp_path)))
    assert sum(r.status == "ok" for r in results) == 6  # type: ignore[attr-defined]
    healthy = ScriptedBackend(respond=lambda r: "a")
    run(batch(client(healthy, tmp_path)))
    assert {r.messages[0].content for r in healthy.requests} == {f"q{i}" for i in range(6, 12)}
    assert len(healthy.requests) == 6


def test_concurrency_is_bounded() -> None:
    in_flight = 0
    peak = 0

    class Counting(ScriptedBackend):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            return ChatResponse(text="x")

    c = client(Counting(), policy=CallPolicy(concurrency=3, timeout=1.0))

    async def many() -> None:
        await asyncio.gather(*(c.chat(ask(str(i))) for i in range(20)))

    run(many())
    assert peak == 3


def test_structured_output_validates_repairs_once_then_parse_error() -> None:
    ok = run(
        client(ScriptedBackend(['{"label": "yes", "score": 0.9}'])).structured(ask("x"), Verdict)
    )
    assert ok.status == "ok"
    assert ok.value == Verdict(label="yes", score=0.9)
    assert not ok.repaired
    fenced = run(
        client(ScriptedBackend(['```json\n{"label": "a", "score": 1}\n```'])).structured(
            ask("x"), Verdict
        )
    )
    assert fenced.value == Verdict(label="a", score=1.0)
    backend = ScriptedBackend(['{"label": "yes"}', '{"label": "yes", "score": 0.5}'])
    repaired = run(client(backend).structured(ask("x"), Verdict))
    assert repaired.status == "ok"
    assert repaired.repaired
    assert "score: Field required" in backend.requests[1].messages[-1].content
    assert backend.requests[0].json_schema == Verdict.model_json_schema()
    broken = ScriptedBackend(["not json", "still {not json"])
    failed = run(client(broken).structured(ask("x"), Verdict))
    assert failed.status == "parse_error"
    assert failed.value is None
    assert failed.raw == "still {not json"
    assert len(broken.requests) == 2


def test_yes_probability_from_the_backend_and_its_cache(tmp_path: Path) -> None:
    backend = ScriptedBackend([0.8])
    first = run(client(backend, tmp_path).yes_probability(ask("Is the sky blue?")))
    assert first.p_yes == 0.8
    second = run(client(backend, tmp_path).yes_probability(ask("Is the sky blue?")))
    assert second.cached
    assert second.p_yes == 0.8


def test_cache_key_covers_what_changes_output_and_nothing_else() -> None:
    base = ask("hi")
    key = cache_key("chat", "openai/m", "http://x", base)
    assert key == cache_key("chat", "openai/m", "http://x", ask("hi"))
    for other in (
        cache_key("chat", "openai/other", "http://x", base),
        cache_key("chat", "openai/m", "http://y", base),
        cache_key("yes_no", "openai/m", "http://x", base),
        cache_key("chat", "openai/m", "http://x", ask("hi", temperature=0.7)),
        cache_key("chat", "openai/m", "http://x", ask("hi", sample_index=1)),
        cache_key("chat", "openai/m", "http://x", ask("hi", seed=3)),
        cache_key("chat", "openai/m", "http://x", ask("hi", json_schema={"type": "object"})),
        cache_key("chat", "openai/m", "http://x", ask("hi", prompt_id="p@2#ab")),
    ):
        assert other != key


def test_ledger_counts_tokens_calls_and_cache_hits(tmp_path: Path) -> None:
    ledger = Ledger()
    backend = ScriptedBackend(
        [ChatResponse(text="ok", usage=Usage(prompt_tokens=7, completion_tokens=2))]
    )
    run(client(backend, tmp_path, ledger=ledger).chat(ask("hi")))
    run(client(backend, tmp_path, ledger=ledger).chat(ask("hi")))
    tally = ledger.summary()["scripted/test"]
    assert (
        tally["calls"],
        tally["cached"],
        tally["prompt_tokens"],
        tally["completion_tokens"],
    ) == (1, 1, 7, 2)
    assert tally["cost_usd"] == 0.0
    assert Ledger().cost_usd("openai/no-such-model-xyz") == 0.0  # nothing spent yet


def test_unreported_tokens_make_the_cost_unknown_not_zero() -> None:
    ledger = Ledger()
    ok = {"status": "ok", "cached": False, "attempts": 1, "seconds": 0.1}
    ledger.record("openai/gpt-4o-mini", usage=Usage(prompt_tokens=1000), **ok)  # type: ignore[arg-type]
    priced = ledger.cost_usd("openai/gpt-4o-mini")
    assert priced is not None  # litellm's bundled price map knows this model
    assert priced > 0
    assert ledger.describe("openai/gpt-4o-mini") == (
        f"openai/gpt-4o-mini: 1 call made, 0 answered from the cache; "
        f"1000 prompt + 0 completion tokens; ${priced:.4f}"
    )
    ledger.record("openai/gpt-4o-mini", usage=Usage(reported=False), **ok)  # type: ignore[arg-type]
    assert ledger.cost_usd("openai/gpt-4o-mini") is None
    assert ledger.summary()["openai/gpt-4o-mini"]["unreported_usage"] == 1
    assert ledger.describe("openai/gpt-4o-mini").endswith(
        "1000 prompt + 0 completion tokens (not reported for 1 of the calls); cost unknown"
    )
    # A failed call spent nothing we know of, and says so by its status, not as unreported.
    failed = {**ok, "status": "timeout"}
    ledger.record("local/qwen", usage=Usage(reported=False), **failed)  # type: ignore[arg-type]
    ledger.record("local/qwen", usage=Usage(reported=False), **ok)  # type: ignore[arg-type]
    assert ledger.models["local/qwen"].unreported == 1
    assert ledger.cost_usd("local/qwen") == 0.0  # in process: free whatever the tokens
    assert ledger.describe("local/qwen") == (
        "local/qwen: 2 calls made, 0 answered from the cache; tokens not reported; "
        "failed: 1 timeout"
    )
    assert ledger.cost_usd("sentence-transformers/all-MiniLM-L6-v2") == 0.0


@pytest.mark.parametrize("workers", [4])
def test_cache_is_safe_under_concurrent_writers(tmp_path: Path, workers: int) -> None:
    import threading

    path = tmp_path / "shared.sqlite"
    caches = [ResponseCache(path) for _ in range(workers)]

    def write(n: int) -> None:
        for i in range(50):
            caches[n].put(f"{n}-{i}", kind="chat", model="m", value='{"text": "x"}')

    threads = [threading.Thread(target=write, args=(n,)) for n in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ResponseCache(path)) == workers * 50


def test_a_client_survives_several_event_loops() -> None:
    backend = ScriptedBackend(respond=lambda r: "x", delay=0.001)
    c = client(backend, policy=CallPolicy(concurrency=1, timeout=1.0))

    async def two() -> None:
        await asyncio.gather(c.chat(ask("a")), c.chat(ask("b")))

    run(two())
    run(two())  # a semaphore bound to the first loop would fail here
    assert len(backend.requests) == 4


def test_refusals_are_recorded_as_refused_and_not_retried() -> None:
    from rag_judge.backends.errors import BackendRefusal

    backend = ScriptedBackend([BackendRefusal("I can't help with that")])
    result = run(client(backend).chat(ask("x")))
    assert result.status == "refused"
    assert result.attempts == 1


def test_a_backend_can_cap_the_concurrency() -> None:
    backend = ScriptedBackend(["x"])
    backend.max_concurrency = 1  # type: ignore[attr-defined]
    assert client(backend, policy=CallPolicy(concurrency=8)).policy.concurrency == 1


def test_identical_requests_in_flight_share_one_call(tmp_path: Path) -> None:
    # Two judges asking the same question at once: one backend call, both get its reply.
    backend = ScriptedBackend(["first", "second"], delay=0.05)
    client = ModelClient(backend, cache=ResponseCache(tmp_path / "c.sqlite"))
    same = ChatRequest.of(("user", "same question"))

    async def both() -> list[CallResult]:
        return list(await asyncio.gather(client.chat(same), client.chat(same)))

    first, second = asyncio.run(both())
    assert (first.text, second.text) == ("first", "first")
    assert len(backend.requests) == 1
    assert sorted([first.cached, second.cached]) == [False, True]
    # The ledger tells a shared flight from a cache read: on a first run nothing was cached.
    assert client.ledger.describe("scripted/test").startswith(
        "scripted/test: 1 call made, 1 shared with an identical request in flight;"
    )
    asyncio.run(client.chat(same))  # now from the cache
    tally = client.ledger.summary()["scripted/test"]
    assert (tally["calls"], tally["cached"], tally["shared"]) == (1, 2, 1)
    assert "1 answered from the cache and 1 shared" in client.ledger.describe("scripted/test")


def test_embeddings_are_cached_per_text_and_cache_hits_are_counted(tmp_path: Path) -> None:
    backend = ScriptedEmbedder()
    client = EmbeddingClient(backend, cache=ResponseCache(tmp_path / "c.sqlite"))
    first = run(client.embed(["a", "b"]))
    again = run(client.embed(["b", "a"]))  # every text cached: no backend call
    mixed = run(client.embed(["a", "c"]))  # only the new text reaches the backend
    assert backend.calls == [["a", "b"], ["c"]]
    assert (first.cached, again.cached, mixed.cached) == (0, 2, 1)
    assert again.vectors == (first.vectors[1], first.vectors[0])
    assert mixed.vectors[0] == first.vectors[0]
    tally = client.ledger.models["scripted/embedder"]
    assert (tally.calls, tally.cached, tally.unreported) == (2, 1, 2)  # no usage: unreported
    assert client.ledger.describe("scripted/embedder") == (
        "scripted/embedder: 2 calls made, 1 answered from the cache; tokens not reported"
    )
