"""Files written whole or not at all: a reader (or a run killed mid-write) never sees half a
line. Text goes to a temporary file beside the target, then replaces it in one rename.

Only a regular file (or a path that does not exist yet) is replaced that way. Anything else,
``/dev/null``, ``/dev/stdout``, a named pipe, is written through in place: renaming over a
device would replace it with a regular file (as root, ``-o /dev/null`` would break the system's
``/dev/null``). A symbolic link is followed, so the link stays and its target is rewritten. A
new file gets the usual mode (0666 less the umask); a rewritten one keeps its own.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_lines(path: Path, lines: Iterable[str]) -> Path:
    """Write ``lines`` (each without its newline) to ``path`` atomically, UTF-8."""
    return write_bytes(path, "".join(line + "\n" for line in lines).encode("utf-8"))


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically, UTF-8, newlines as given."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path``: atomically for a regular file, in place for a device."""
    target = Path(os.path.realpath(path))
    try:
        found = target.stat()
    except FileNotFoundError:
        found = None
    if found is not None and not stat.S_ISREG(found.st_mode):
        with open(target, "wb") as out:  # a device or a pipe: never replace it
            out.write(data)
        return path
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(found.st_mode) if found is not None else _new_file_mode()
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def is_device(path: Path) -> bool:
    """The path exists and is not a regular file or folder (a device, a pipe, a socket)."""
    try:
        found = Path(os.path.realpath(path)).stat()
    except OSError:
        return False
    return not (stat.S_ISREG(found.st_mode) or stat.S_ISDIR(found.st_mode))


def _new_file_mode() -> int:
    """0666 less the process's umask, as ``open()`` would create a file."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask
