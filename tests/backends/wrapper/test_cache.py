"""The response cache when another process holds its file: one wait, one notice, then the run
goes on without caching (each later reply counted as uncached at once)."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from rag_judge.backends.wrapper import cache as cache_module
from rag_judge.backends.wrapper.cache import ResponseCache


def test_a_locked_file_is_waited_for_once_then_writes_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(cache_module, "BUSY_SECONDS", 0.1)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    assert cache.put("a", kind="chat", model="m", value="1")
    attempts: list[str] = []
    real_connection = cache._db
    holder = sqlite3.connect(cache.path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process's write lock, held throughout
    try:
        with caplog.at_level(logging.WARNING, logger=cache_module.__name__):
            cache._db = _Counting(real_connection, attempts)  # type: ignore[assignment]
            stored = [cache.put(key, kind="chat", model="m", value="2") for key in "bcde"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        cache._db = real_connection
    assert stored == [False] * 4
    assert cache.writes_stopped
    assert cache.failures == 4
    assert len([a for a in attempts if a.startswith("INSERT")]) == 1  # one wait, not four
    notices = [r for r in caplog.records if "locked by another process" in r.getMessage()]
    assert len(notices) == 1
    assert cache.get("a") == "1"  # reads go on


class _Counting:
    """A connection that records the statements it is asked to run."""

    def __init__(self, connection: sqlite3.Connection, seen: list[str]) -> None:
        self.connection = connection
        self.seen = seen

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        self.seen.append(sql.strip())
        return self.connection.execute(sql, *args)

    def commit(self) -> None:
        self.connection.commit()

    def rollback(self) -> None:
        self.connection.rollback()
