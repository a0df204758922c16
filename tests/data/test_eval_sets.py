"""Every bundled eval set has a manifest whose sha256 sums match its files, and a licence."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

EVAL_SETS = sorted(p for p in (Path(__file__).parents[2] / "eval_sets").iterdir() if p.is_dir())
NOT_DATA = {"manifest.json", "LICENSE.md", "README.md"}


@pytest.mark.parametrize("folder", EVAL_SETS, ids=lambda p: p.name)
def test_manifest_matches_files(folder: Path) -> None:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["name"] == folder.name
    for key in ("description", "source", "licence", "files"):
        assert manifest[key], f"{folder.name}: manifest lacks {key}"
    for name, entry in manifest["files"].items():
        digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        assert digest == entry["sha256"], f"{folder.name}/{name} changed: update its manifest"
        assert entry["fields"]
    data = {p.name for p in folder.iterdir() if p.is_file() and p.name not in NOT_DATA}
    assert data == set(manifest["files"]), "every data file is listed in the manifest"
    assert (folder / "LICENSE.md").is_file()
