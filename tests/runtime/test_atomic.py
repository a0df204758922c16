"""Outputs written whole: devices written through, never replaced; modes as a user expects."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_judge.cli import main
from rag_judge.runtime.atomic import write_lines


@pytest.fixture
def null_device(tmp_path: Path) -> Path:
    """A character device like /dev/null (1, 3), made in a temporary folder (needs root)."""
    path = tmp_path / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def test_a_device_is_written_through_not_replaced(null_device: Path) -> None:
    write_lines(null_device, ["a", "b"])
    assert stat.S_ISCHR(null_device.stat().st_mode)  # still the device, not a regular file
    assert list(null_device.parent.iterdir()) == [null_device]  # and no temporary file left


def test_a_symlink_is_followed_and_kept(tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    write_lines(link, ["new"])
    assert link.is_symlink()
    assert target.read_text() == "new\n"


def test_a_new_file_follows_the_umask_and_a_rewritten_one_keeps_its_mode(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        fresh = write_lines(tmp_path / "fresh.jsonl", ["x"])
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.jsonl"
        kept.write_text("old\n")
        kept.chmod(0o640)
        write_lines(kept, ["new"])
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    finally:
        os.umask(previous)


def test_score_to_a_device_keeps_the_device_and_writes_no_partial_file(
    tmp_path: Path, null_device: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "1", "question": "Q?", "answer": "A", "reference": "A"}\n')
    args = ["score", str(rows), "-o", str(null_device), "--metrics", "exact_match,answer_f1"]
    run = CliRunner().invoke(main, args, env={"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache")})
    assert run.exit_code == 0, run.output
    assert stat.S_ISCHR(null_device.stat().st_mode)
    assert not (tmp_path / "null.partial").exists()
