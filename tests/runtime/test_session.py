"""The session builds one client per model: generator and judge share one when they are one."""

from __future__ import annotations

from pathlib import Path

from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import load_settings

URL = "http://127.0.0.1:9/v1"
"""Never called: building a client opens no connection."""


def test_one_model_gives_one_client_for_generating_and_judging(tmp_path: Path) -> None:
    chosen = {"model": "openai-compatible/one", "base_url": URL, "cache_dir": tmp_path}
    settings = load_settings(chosen, env={})
    session = open_session(settings, cache=False)
    assert session.generator is session.client
    assert session.client.name == "openai-compatible/one"


def test_a_separate_judge_gets_its_own_client_on_the_same_ledger(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "generator": "openai-compatible/writer",
            "judge": "openai-compatible/critic",
            "base_url": URL,
            "cache_dir": tmp_path,
        },
        env={},
    )
    session = open_session(settings, cache=False)
    names = (session.generator.name, session.client.name)
    assert names == ("openai-compatible/writer", "openai-compatible/critic")
    assert session.generator.ledger is session.client.ledger is session.ledger


def test_a_ready_client_generates_too_unless_a_generator_is_named(tmp_path: Path) -> None:
    ready = ModelClient(ScriptedBackend(["x"]))
    plain = open_session(load_settings({"cache_dir": tmp_path}, env={}), client=ready, cache=False)
    assert plain.generator is ready
    writer = ModelClient(ScriptedBackend(["y"], name="scripted/writer"))
    split = open_session(client=ready, generator=writer, cache=False)
    assert (split.client, split.generator) == (ready, writer)
