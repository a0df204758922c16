"""Content-addressed on-disk cache for retrieval indexes: ``<cache_dir>/indexes/<kind>-<key>/``.

The key is a sha256 over everything that changes the index: the chunk ids and texts in
order, and the builder's settings (tokeniser, library version, embedder name). Change any
chunk's text and the key changes, so a stale index is never loaded; nothing else (paths,
timestamps) is in the key. An index directory is written under a temporary name and renamed
into place, so a reader never sees half an index; each holds a ``manifest.json`` naming what
it was built from, checked again when it is loaded.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from rag_judge.core.errors import InputError
from rag_judge.pipeline.chunking import Chunk

MANIFEST: Final = "manifest.json"
"""File in every index directory recording its key and settings."""
KEY_CHARS: Final = 16
"""Hex digits of the key used in directory names (64 bits; the manifest keeps all 64)."""


def check_chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    """The chunks as a list; an empty corpus or a repeated chunk id is an InputError."""
    batch = list(chunks)
    if not batch:
        raise InputError("cannot build an index over an empty corpus (no chunks)", field="chunks")
    seen: set[str] = set()
    for chunk in batch:
        if not isinstance(chunk, Chunk):
            raise InputError(f"expected Chunk values, got {type(chunk).__name__}", field="chunks")
        if chunk.id in seen:
            raise InputError(f"chunk id '{chunk.id}' appears twice", field="chunks")
        seen.add(chunk.id)
    return batch


def index_key(kind: str, settings: Mapping[str, Any], chunks: Sequence[Chunk]) -> str:
    """sha256 (hex) of the index kind, its settings and every chunk's id and text, in order."""
    digest = hashlib.sha256()
    digest.update(json.dumps([kind, dict(settings)], sort_keys=True).encode())
    for chunk in chunks:
        digest.update(b"\n" + json.dumps([chunk.id, chunk.text], ensure_ascii=False).encode())
    return digest.hexdigest()


def index_dir(cache_dir: Path, kind: str, key: str) -> Path:
    """Where the index of this kind and key lives under ``cache_dir``."""
    return Path(cache_dir) / "indexes" / f"{kind}-{key[:KEY_CHARS]}"


def read_manifest(directory: Path, key: str) -> dict[str, Any] | None:
    """The manifest of a stored index, or None when absent, unreadable or for another key."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("key") != key:
        return None
    return manifest


def store(
    directory: Path, key: str, info: Mapping[str, Any], write: Callable[[Path], None]
) -> None:
    """Write an index with ``write(tmp_dir)`` plus its manifest, then move it to ``directory``.

    Whatever is at ``directory`` is replaced: callers store only after failing to load it, so
    it is missing or broken. If another process stores the same key meanwhile, its copy stays.
    """
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", dir=directory.parent))
    try:
        write(tmp)
        manifest = {"key": key, **info}
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
        if directory.exists():
            shutil.rmtree(directory, ignore_errors=True)
        try:
            tmp.rename(directory)
        except OSError:  # another process stored it between our check and the rename
            if read_manifest(directory, key) is None:
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
