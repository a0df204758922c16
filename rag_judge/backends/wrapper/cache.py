"""A persistent response cache in SQLite: safe for concurrent writers, never holds errors.

Keys come from :func:`rag_judge.backends.types.cache_key` (everything that changes the
output, nothing that does not). Values are the JSON of a successful response. Several
processes may share one file: SQLite's WAL mode and a busy timeout serialise the writers.

The cache serves the run, never ends it: once open, a read that fails (the file locked by
another process past the busy timeout, a damaged file) is a miss, and a write that fails (the
same, or a full disk) leaves that reply uncached; both are counted (:attr:`failures`) and said
on stderr by the command, and the reply still reaches the results. A write that finds the file
locked by another process waits out the busy timeout once: from then on the cache stops writing
(each reply counted as uncached, at once, instead of another minute's wait each), says so once
on stderr, and the run goes on. Only opening the cache can fail a run, and that happens before
the first model call.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from pathlib import Path

from rag_judge.core.errors import InputError

BUSY_SECONDS = 60.0
"""How long a writer waits for another process's lock on the file (once: see the module)."""

_LOG = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    model TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class CacheError(InputError):
    """The response cache cannot be opened (locked past the busy timeout, disk full, not a
    database): said before any model call, with the way out."""


class ResponseCache:
    """Successful model responses by request key, persisted in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.failures = 0
        """Reads and writes that failed since the cache was opened (each a miss, or a reply
        left uncached)."""
        self.last_error = ""
        """The last such failure, as SQLite or the OS said it."""
        self.writes_stopped = False
        """True once a write found the file locked by another process past the busy timeout:
        later replies are not written (nor waited for)."""
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, check_same_thread=False)
            with self._lock:
                self._set_up()
        except (sqlite3.Error, OSError) as error:
            raise CacheError(
                f"cannot open the response cache: {error}; free the file (or the disk), or run "
                "with --no-cache",
                source=str(self.path),
            ) from None

    def _set_up(self) -> None:
        """WAL mode and the table. Switching to WAL (and recovering a WAL that a killed process
        left) takes a lock that SQLite's busy timeout does not wait for: "database is locked"
        at once while another process opens the same file. So the setup is retried until
        ``BUSY_SECONDS`` have passed, as the timeout would have waited."""
        deadline = time.monotonic() + BUSY_SECONDS
        pause = 0.01
        while True:
            try:
                if self._db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute(_SCHEMA)
                self._db.commit()
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def get(self, key: str) -> str | None:
        """The stored JSON for a key, or None (also when the read failed: a miss)."""
        with self._lock:
            try:
                found = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,))
                row = found.fetchone()
            except (sqlite3.Error, OSError) as error:
                self._failed(error)
                return None
        return None if row is None else str(row[0])

    def put(self, key: str, *, kind: str, model: str, value: str) -> bool:
        """Store a successful response (the last writer wins; equal keys mean equal requests);
        False when it could not be stored (counted, and the reply is used all the same)."""
        with self._lock:
            if self.writes_stopped:
                self.failures += 1
                return False
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO responses (key, kind, model, value, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (key, kind, model, value, time.time()),
                )
                self._db.commit()
            except (sqlite3.Error, OSError) as error:
                self._failed(error)
                with contextlib.suppress(sqlite3.Error):  # the write may never have started
                    self._db.rollback()
                if "locked" in str(error) or "busy" in str(error):
                    self._stop_writing(error)
                return False
        return True

    def _stop_writing(self, error: BaseException) -> None:
        """Another process holds the file: say so once, and write nothing more this run."""
        self.writes_stopped = True
        _LOG.warning(
            "rag_judge: the response cache %s is locked by another process (%s) after a %.0f s "
            "wait: this run goes on without caching its replies (they still reach the results; "
            "a re-run asks for them again)",
            self.path,
            error,
            BUSY_SECONDS,
        )

    def _failed(self, error: BaseException) -> None:
        self.failures += 1
        self.last_error = str(error)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the connection (the file stays)."""
        with self._lock:
            self._db.close()
