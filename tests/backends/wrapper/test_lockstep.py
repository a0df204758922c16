"""Lockstep: concurrent tasks' calls answered in rounds, each round's calls made together, with
the cache, single flight, retries and the ledger still per call."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lockstep_scripted import LockstepScripted
from pydantic import BaseModel

from rag_judge.backends.errors import BackendError
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.types import ChatRequest
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient
from rag_judge.backends.wrapper.lockstep import Lockstep, can_run_together


def ask(text: str, **fields: object) -> ChatRequest:
    return ChatRequest.of(("user", text), **fields)


def echo(request: ChatRequest) -> str:
    """ "re: <the question>"; a check ("is ...?") is answered yes."""
    text = request.messages[-1].content
    return "yes" if text.startswith("is ") else f"re: {text}"


def client_of(backend: ScriptedBackend, **kwargs: object) -> ModelClient:
    policy = CallPolicy(concurrency=1, initial_wait=0.0)
    return ModelClient(backend, policy=policy, **kwargs)  # type: ignore[arg-type]


async def answer_then_check(client: ModelClient, name: str) -> tuple[str | None, float | None]:
    said = await client.chat(ask(name))
    checked = await client.yes_probability(ask(f"is {said.text} right? yes"))
    return said.text, checked.p_yes


def test_each_round_of_calls_goes_together_in_task_order() -> None:
    backend = LockstepScripted(respond=echo)
    client = client_of(backend)
    names = ["a", "b", "c"]
    got = asyncio.run(Lockstep().gather([answer_then_check(client, n) for n in names]))
    assert got == [(f"re: {n}", 1.0) for n in names]
    kinds = [[kind for kind, _ in sent] for sent in backend.rounds_sent]
    assert kinds == [["chat"] * 3, ["yes_no"] * 3]
    assert [r.messages[0].content for _, r in backend.rounds_sent[0]] == names
    assert client.ledger.summary()[client.name]["calls"] == 6


def test_outside_a_lockstep_and_for_other_backends_calls_are_one_by_one() -> None:
    together = LockstepScripted(respond=echo)
    assert asyncio.run(answer_then_check(client_of(together), "a")) == ("re: a", 1.0)
    assert together.rounds_sent == []  # no lockstep
    plain = ScriptedBackend(respond=echo)
    assert not can_run_together(plain)
    client = client_of(plain)
    got = asyncio.run(Lockstep().gather([answer_then_check(client, n) for n in "ab"]))
    assert got == [("re: a", 1.0), ("re: b", 1.0)]


def test_cache_hits_are_not_sent_and_a_rerun_sends_nothing(tmp_path: Path) -> None:
    backend = LockstepScripted(respond=echo)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    client = client_of(backend, cache=cache)
    asyncio.run(client.chat(ask("b")))  # b's answer is cached before the lockstep
    got = asyncio.run(Lockstep().gather([answer_then_check(client, n) for n in "abc"]))
    assert [text for text, _ in got] == ["re: a", "re: b", "re: c"]
    kinds = [[kind for kind, _ in sent] for sent in backend.rounds_sent]
    assert kinds == [["chat", "yes_no", "chat"], ["yes_no", "yes_no"]]  # b's hit costs no round
    backend.rounds_sent.clear()
    again = asyncio.run(Lockstep().gather([answer_then_check(client, n) for n in "abc"]))
    assert again == got
    assert backend.rounds_sent == []
    cache.close()


def test_a_failed_call_of_a_round_is_retried_alone_and_a_permanent_one_is_a_status() -> None:
    failures = {
        "b": [BackendError("busy", transient=True)],
        "c": [BackendError("no", transient=False)],
    }

    def respond(request: ChatRequest) -> str | BaseException:
        left = failures.get(request.messages[-1].content, [])
        return left.pop(0) if left else echo(request)

    backend = LockstepScripted(respond=respond)
    client = client_of(backend)

    async def say(name: str) -> tuple[str, str | None, int]:
        result = await client.chat(ask(name))
        return result.status, result.text, result.attempts

    got = asyncio.run(Lockstep().gather([say(n) for n in "abc"]))
    assert got == [("ok", "re: a", 1), ("ok", "re: b", 2), ("backend_error", None, 1)]
    assert [len(sent) for sent in backend.rounds_sent] == [3, 1]  # b again, on its own


class Pick(BaseModel):
    choice: str


def test_a_call_the_backend_cannot_take_together_is_made_alone_while_the_others_wait() -> None:
    backend = LockstepScripted(
        respond=lambda r: '{"choice": "x"}' if r.json_schema else echo(r), delay=0.01
    )

    async def structured_then_chat() -> str | None:
        picked = await client.structured(ask("pick"), Pick)
        assert picked.value == Pick(choice="x")
        return (await client.chat(ask("after"))).text

    client = client_of(backend)
    got = asyncio.run(
        Lockstep().gather([structured_then_chat(), client.chat(ask("b")), client.chat(ask("c"))])
    )
    assert got[0] == "re: after"
    assert [r.text for r in got[1:]] == ["re: b", "re: c"]  # type: ignore[union-attr]
    (sent,) = backend.rounds_sent  # b and c waited for the structured call, then one round
    assert [r.messages[-1].content for _, r in sent] == ["after", "b", "c"]
    assert sum(1 for r in backend.requests if r.json_schema) == 1


def test_identical_calls_of_two_tasks_are_one_flight_and_do_not_stall_the_lockstep(
    tmp_path: Path,
) -> None:
    backend = LockstepScripted(respond=echo)
    client = client_of(backend, cache=ResponseCache(tmp_path / "cache.sqlite"))
    got = asyncio.run(
        asyncio.wait_for(
            Lockstep().gather([client.chat(ask("same")), client.chat(ask("same"))]), 10
        )
    )
    assert [r.text for r in got] == ["re: same", "re: same"]
    assert sum(len(sent) for sent in backend.rounds_sent) == 1
    assert [r.cached for r in got] == [False, True]


def test_a_task_that_raises_ends_the_lockstep_and_cancels_the_others() -> None:
    backend = LockstepScripted(respond=echo)
    client = client_of(backend)

    async def broken() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        asyncio.run(asyncio.wait_for(Lockstep().gather([broken(), client.chat(ask("a"))]), 10))


def test_a_round_that_fails_as_a_whole_fails_each_call_with_its_status() -> None:
    class Broken(LockstepScripted):
        async def run_together(self, calls: list[tuple[str, ChatRequest]]) -> list[object]:  # type: ignore[override]
            self.rounds_sent.append(list(calls))
            raise BackendError("decode failed", transient=False)

    backend = Broken(respond=echo)
    client = client_of(backend)
    got = asyncio.run(Lockstep().gather([client.chat(ask(n)) for n in "ab"]))
    assert [(r.status, r.error) for r in got] == [("backend_error", "decode failed")] * 2


def test_tasks_sharing_one_judging_step_do_not_stall_the_lockstep() -> None:
    """Two once-per-question judges in one lockstep may need the same memoised step of a sample
    (``SampleWork``): the task that did not start it waits on it, and counts as waiting."""
    from rag_judge.core.types import RagSample
    from rag_judge.judges import JudgeOptions, SampleWork

    backend = LockstepScripted(respond=echo)
    client = client_of(backend)
    sample = RagSample(id="q", question="q?", contexts=("p",), answer="a", reference="r")
    work = SampleWork(sample, language="en", client=client, embedder=None, options=JudgeOptions())

    async def shared() -> str | None:
        return (await client.chat(ask("shared"))).text

    async def judge(name: str) -> tuple[str | None, str | None]:
        first = await work._once("shared", shared)
        return first, (await client.chat(ask(name))).text

    got = asyncio.run(asyncio.wait_for(Lockstep().gather([judge("x"), judge("y")]), 10))
    assert got == [("re: shared", "re: x"), ("re: shared", "re: y")]
    assert [len(sent) for sent in backend.rounds_sent] == [1, 2]
