"""Every path a command will write, checked before its first model call: a run that ends in
"permission denied" after an hour of judging, or that overwrites its own input, loses work."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from rag_judge.core.errors import InputError


def check_output_file(path: Path, *, inputs: Iterable[Path] = ()) -> None:
    """``path`` can be written as a file (now or by creating its folders) and is no input."""
    source = str(path)
    for given in inputs:
        if _same(path, given):
            raise InputError(f"the output would overwrite the input {str(given)!r}", source=source)
    if path.is_dir():
        raise InputError("is a directory; the output is a file", source=source)
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError("cannot write: permission denied", source=source)
    _check_parent(path.parent, source)


def check_output_folder(path: Path, *, what: str = "output folder") -> None:
    """``path`` is, or can be created as, a folder this process can write in."""
    source = str(path)
    if path.exists():
        if not path.is_dir():
            raise InputError(f"is a file; the {what} must be a folder", source=source)
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(f"cannot write in the {what}: permission denied", source=source)
        return
    _check_parent(path.parent, source)


def _check_parent(folder: Path, source: str) -> None:
    """The nearest existing ancestor must be a folder we may create entries in."""
    ancestor = folder.absolute()
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"cannot create folders under the file {str(ancestor)!r}", source=source)
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InputError(f"cannot write in {str(ancestor)!r}: permission denied", source=source)


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False
