"""Reading a data-set folder (eval sets, calibration sets): finding it by name or path, its
``manifest.json`` and the sha256 of every listed file. Its lines are read by
:mod:`rag_judge.data.readers`, so every error names the file, the line and the field."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_judge.core.errors import InputError
from rag_judge.data.readers import Where


def bad(message: str, where: Where | Path, field: str | None = None) -> InputError:
    """An InputError at a file (and line, and field)."""
    if isinstance(where, Where):
        return InputError(message, source=where.source, line=where.line, field=field)
    return InputError(message, source=str(where), field=field)


def complete_folders(root: Path, data_files: Sequence[str]) -> list[str]:
    """Names of the folders under ``root`` that hold ``manifest.json`` and every data file."""
    if not root.is_dir():
        return []
    names = ("manifest.json", *data_files)
    return sorted(p.name for p in root.iterdir() if all((p / f).is_file() for f in names))


def resolve_folder(
    name_or_path: str | Path, *, bundled: Path, available: Sequence[str], kind: str
) -> Path:
    """A bundled set's folder by name, or a folder path; else an error listing the names.

    ``kind`` names the sort of set in the message and the field (``eval set`` -> ``eval_set``).
    """
    text = str(name_or_path)
    is_path = isinstance(name_or_path, Path) or "/" in text or "\\" in text
    if not is_path and text in available:
        return bundled / text
    if Path(text).is_dir():
        return Path(text)
    hint = f"bundled sets: {', '.join(available) or 'none'} (or give the path of a set folder)"
    raise InputError(f"no {kind} '{text}'; {hint}", field=kind.replace(" ", "_"))


def read_manifest(folder: Path, *, kind: str) -> dict[str, Any]:
    """``manifest.json`` as an object with a ``files`` object (the caller checks the rest)."""
    path = folder / "manifest.json"
    if not path.is_file():
        raise bad(f"no manifest.json: not {_article(kind)} {kind} folder", folder)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(
            f"invalid JSON: {error.msg}", source=str(path), line=error.lineno
        ) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise bad("expected an object with 'files'", path, "files")
    return manifest


def verify_files(
    folder: Path,
    manifest: Mapping[str, Any],
    *,
    required: Sequence[str],
    modified: str,
    sha256_required: bool,
) -> None:
    """The ``required`` files are listed, and every listed file exists and matches its sha256
    (which ``sha256_required`` makes mandatory); ``modified`` says how to repair a mismatch."""
    files: Mapping[str, Any] = manifest["files"]
    for name in required:
        if name not in files:
            raise bad(f"does not list {name}", folder / "manifest.json", "files")
    for name, entry in files.items():
        path = folder / name
        if not path.is_file():
            raise bad("listed in manifest.json but missing", path)
        expected = entry.get("sha256") if isinstance(entry, dict) else None
        if expected is None and not sha256_required:
            continue
        if not isinstance(expected, str):
            raise bad(f"no sha256 for {name}", folder / "manifest.json", "files")
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != expected:
            raise bad(f"{modified} (sha256 {actual}, manifest {expected})", path, "sha256")


def unique(seen: dict[str, Where], key: str, where: Where, field: str) -> None:
    """Record ``key`` as seen here; a second sighting is an error naming the first."""
    if key in seen:
        raise bad(f"duplicate id '{key}' (first on {seen[key]})", where, field)
    seen[key] = where


def _article(kind: str) -> str:
    return "an" if kind[:1] in "aeiou" else "a"
