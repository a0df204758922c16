"""Runs cut off from this machine's settings: a cache of their own, no config file, no
environment. What the tests of one judge behind a fake server (``openai-compatible/m``) share."""

from __future__ import annotations

from pathlib import Path

from rag_judge.runtime.settings import Settings, load_settings

FAKE_MODEL = "openai-compatible/m"
"""The model name the fake servers answer to (any name would do; one is spelled here)."""


def server_settings(base_url: str, cache: Path) -> Settings:
    """Settings judging with the fake server at ``base_url``, caching under ``cache``."""
    return load_settings({"model": FAKE_MODEL, "base_url": base_url, "cache_dir": cache}, env={})


def cli_env(tmp_path: Path, cache: str = "cache") -> dict[str, str]:
    """The environment of a ``rag-judge`` run: the cache ``tmp_path/cache``, an empty config.

    The runs of one test share their retrieval indexes (``tmp_path/indexes``, linked into each
    cache; the index cache is content-addressed): a test's first run builds an index, its
    other runs load it whatever their response cache, instead of building it again.
    """
    config = tmp_path / "empty.toml"
    config.write_text("", encoding="utf-8")
    shared = tmp_path / "indexes"
    shared.mkdir(exist_ok=True)
    link = tmp_path / cache / "indexes"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(shared, target_is_directory=True)
    return {"RAG_JUDGE_CACHE_DIR": str(tmp_path / cache), "RAG_JUDGE_CONFIG": str(config)}
