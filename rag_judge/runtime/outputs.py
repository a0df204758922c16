"""Every path a command will write, checked before its first model call: a run that ends in
"permission denied" after an hour of judging, or that overwrites its own input, loses work."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
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


OTHER_FORMATS = frozenset({".csv", ".tsv", ".parquet", ".json", ".xlsx", ".xls", ".md", ".html"})
"""Suffixes that promise another format than the JSON Lines ``score`` writes."""


def check_jsonl_output(path: Path) -> None:
    """``score -o`` writes JSON Lines: ``-`` (not a file name here) and a path whose suffix
    promises another format are refused rather than written wrongly."""
    if str(path) == "-":
        raise InputError(
            "'-' is not standard output here: give a .jsonl file, or -o /dev/stdout",
            field="-o",
        )
    if path.suffix.lower() in OTHER_FORMATS:
        raise InputError(
            f"the output is JSON Lines, not {path.suffix}: give a .jsonl path",
            source=str(path),
            field="-o",
        )


def check_distinct(reads: Mapping[str, Path | None], writes: Mapping[str, Path | None]) -> None:
    """Every file a command writes differs from every file it reads and from every other file
    it writes (the same path, or one file through a link), named by their options. Devices
    (``/dev/null``, ``/dev/stdout``) are left out: writing one twice loses nothing.

    >>> check_distinct({"--baseline": Path("b.jsonl")}, {"-o": Path("o.jsonl"),
    ...                                                  "--junit": Path("./b.jsonl")})
    Traceback (most recent call last):
    ...
    rag_judge.core.errors.InputError: --junit would overwrite --baseline ('b.jsonl'); give
    another path
    """
    written: list[tuple[str, Path]] = []
    for name, path in writes.items():
        if path is None or _is_device(path):
            continue
        for other, read in reads.items():
            if read is not None and _same(path, read):
                raise InputError(
                    f"{name} would overwrite {other} ({str(read)!r}); give another path"
                )
        for other, earlier in written:
            if _same(path, earlier):
                raise InputError(f"{name} and {other} are the same file ({str(path)!r})")
        written.append((name, path))


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
    """One file: the same path once links and ``..`` are resolved, or the same inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _is_device(path: Path) -> bool:
    try:
        mode = Path(os.path.realpath(path)).stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
