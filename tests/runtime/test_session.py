"""The session builds one client per model: generator and judge share one when they are one."""

from __future__ import annotations

from pathlib import Path

import pytest

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


OTHER = "http://127.0.0.1:10/v1"


def test_generator_and_judge_each_reach_their_own_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A RAG's model on one server, the judge on another: each role's own base URL, else
    ``base_url``, else the provider's own environment variable; one model on two servers is two
    clients."""
    monkeypatch.setenv("OPENAI_BASE_URL", OTHER)

    def servers(**chosen: str) -> tuple[str | None, str | None]:
        settings = load_settings(
            {"model": "openai-compatible/m", "cache_dir": tmp_path, **chosen}, env={}
        )
        session = open_session(settings, cache=False)
        return session.generator.backend.endpoint, session.client.backend.endpoint  # type: ignore[attr-defined]

    assert servers(judge_base_url=URL) == (OTHER, URL)  # the generator: OPENAI_BASE_URL
    assert servers(generator_base_url=URL) == (URL, OTHER)
    assert servers(base_url=URL) == (URL, URL)
    assert servers(base_url=URL, judge_base_url=OTHER) == (URL, OTHER)
    settings = load_settings({"model": "openai-compatible/m", "base_url": URL}, env={})
    one = open_session(settings, cache=False)
    assert one.generator is one.client


def test_a_base_url_given_higher_replaces_the_roles_servers_set_below(tmp_path: Path) -> None:
    """``base_url`` is the shorthand for both servers, as ``model`` is for both models: given
    on the command line, it is not undone by a role's server from the environment."""
    env = {"RAG_JUDGE_JUDGE_BASE_URL": OTHER, "RAG_JUDGE_GENERATOR_BASE_URL": OTHER}
    from_env = load_settings({}, env=env)
    assert (from_env.generator_server, from_env.judge_server) == (OTHER, OTHER)
    given = load_settings({"base_url": URL}, env=env)
    assert (given.generator_server, given.judge_server) == (URL, URL)
    both = load_settings({"base_url": URL, "judge_base_url": OTHER}, env=env)
    assert (both.generator_server, both.judge_server) == (URL, OTHER)


def test_a_ready_client_generates_too_unless_a_generator_is_named(tmp_path: Path) -> None:
    ready = ModelClient(ScriptedBackend(["x"]))
    plain = open_session(load_settings({"cache_dir": tmp_path}, env={}), client=ready, cache=False)
    assert plain.generator is ready
    writer = ModelClient(ScriptedBackend(["y"], name="scripted/writer"))
    split = open_session(client=ready, generator=writer, cache=False)
    assert (split.client, split.generator) == (ready, writer)


def test_a_scripted_model_named_in_settings_is_built_like_any_other(tmp_path: Path) -> None:
    from rag_judge.backends.errors import BackendUnavailable
    from rag_judge.backends.providers.scripted import register

    backend = ScriptedBackend(["Paris"], name="scripted/session-test")
    settings = load_settings({"model": register(backend), "cache_dir": tmp_path}, env={})
    session = open_session(settings, cache=False)
    assert session.client.backend is backend
    assert session.client.provider is not None
    assert session.client.provider.in_process
    unknown = load_settings({"model": "scripted/never-registered", "cache_dir": tmp_path}, env={})
    with pytest.raises(BackendUnavailable, match="no scripted chat backend registered"):
        _ = open_session(unknown, cache=False).client


def test_a_batch_stage_session_keeps_the_cache_ledger_and_embedders(tmp_path: Path) -> None:
    settings = load_settings({"cache_dir": tmp_path}, env={})
    session = open_session(settings, client=ModelClient(ScriptedBackend(["x"])), cache=False)
    view = ModelClient(ScriptedBackend(["y"], name="scripted/view"))
    stage = session.using(view)
    assert stage.client is view
    assert stage.generator is view
    assert stage.ledger is session.ledger
    assert stage.cache is session.cache
    assert stage.embedder_for("en") is session.embedder_for("en")
