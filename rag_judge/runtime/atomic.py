"""Files written whole or not at all: a reader (or a run killed mid-write) never sees half a
line. Text goes to a temporary file beside the target, then replaces it in one rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_lines(path: Path, lines: Iterable[str]) -> Path:
    """Write ``lines`` (each without its newline) to ``path`` atomically, UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
