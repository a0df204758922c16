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
    """The environment of a ``rag-judge`` run: the cache ``tmp_path/cache``, an empty config."""
    config = tmp_path / "empty.toml"
    config.write_text("", encoding="utf-8")
    return {"RAG_JUDGE_CACHE_DIR": str(tmp_path / cache), "RAG_JUDGE_CONFIG": str(config)}
