"""The README's first command: ``make demo`` says its plan for this machine, then runs the job."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_make_demo_plans_before_it_sweeps(tmp_path: Path) -> None:
    """Within its first minute the demo prints the dry run's minutes for this machine, and
    then sweeps with exactly the same arguments (``make -n`` prints, runs nothing)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for marker in (".installed", ".installed-local"):  # the set-up counts as done
        (venv / marker).touch()
    (venv / "bin" / "python").touch()
    printed = subprocess.run(
        ["make", "-n", "demo", f"VENV={venv}", "DEMO_LIMIT=7"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    sweeps = [line for line in printed.splitlines() if "rag-judge sweep" in line]
    assert len(sweeps) == 2, printed
    planned, swept = sweeps
    assert planned.endswith(" --dry-run")
    assert planned.removesuffix(" --dry-run") == swept
    assert "--limit 7" in swept
    assert "DEMO_LIMIT=10" in printed  # how to make it shorter
