"""The k-sweep's HTML report in a real browser (headless Chromium) at a laptop's width.

``make test`` installs Debian's ``chromium``; without it these tests are skipped, saying so.
The page is opened as a user opens it (a local file); a copy with one measuring script added
reports the widths the browser laid out.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from sweep_toy import RESAMPLES, toy_sweep

from rag_judge.report.sweep_report import write_sweep_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LAPTOP = (1366, 768)
MEASURE = """<script>
window.addEventListener("load", () => {
  const wide = [...document.querySelectorAll("table")].filter(
    (t) => t.getBoundingClientRect().right > window.innerWidth);
  const boxes = [...document.querySelectorAll("table")].filter(
    (b) => b.scrollWidth > b.clientWidth);
  document.body.setAttribute("data-measured",
    `page=${document.documentElement.scrollWidth} view=${window.innerWidth} ` +
    `tables_past_edge=${wide.length} scrolling_boxes=${boxes.length}`);
});
</script></body>"""

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make test does)")


def measured(html_path: Path, tmp_path: Path, width: int, height: int) -> dict[str, int]:
    """Lay the page out in headless Chromium at ``width`` x ``height``; its measured widths."""
    probe = tmp_path / "probe.html"
    probe.write_text(html_path.read_text(encoding="utf-8").replace("</body>", MEASURE, 1))
    assert CHROMIUM is not None
    dom = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found is not None, dom[:500]
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", found.group(1))}


def test_every_table_of_the_report_fits_a_laptop_screen(tmp_path: Path) -> None:
    result = toy_sweep()[0]
    written = write_sweep_report(result, tmp_path / "report", title="toy", n_resamples=RESAMPLES)
    widths = measured(written.html_path, tmp_path, *LAPTOP)
    assert widths["view"] == LAPTOP[0]
    assert widths["page"] <= widths["view"], widths  # no sideways scrolling of the page
    assert widths["tables_past_edge"] == 0, widths
    assert widths["scrolling_boxes"] == 0, widths  # no table needs its own scrollbar


def test_a_narrow_window_scrolls_the_table_not_the_page(tmp_path: Path) -> None:
    result = toy_sweep()[0]
    written = write_sweep_report(result, tmp_path / "report", title="toy", n_resamples=RESAMPLES)
    widths = measured(written.html_path, tmp_path, 480, 800)
    assert widths["page"] <= widths["view"], widths
    assert widths["tables_past_edge"] == 0, widths
    assert widths["scrolling_boxes"] >= 1, widths  # the wide tables scroll within themselves


def test_the_grid_report_fits_a_laptop_and_scrolls_its_tables_when_narrow(tmp_path: Path) -> None:
    from rag_judge.backends.providers.scripted import ScriptedBackend, register
    from rag_judge.jobs.grid.job import sweep_grid
    from rag_judge.report.grid_report import write_grid_report

    model = register(ScriptedBackend(respond=lambda r: "光荣和ω-force", name="scripted/grid"))
    grid = sweep_grid(
        "cmrc2018_zh", grid=["chunk=set,200/1,400/1"], limit=12, ks="1-10",
        metrics=["exact_match"], model=model, cache=False,
    )  # fmt: skip
    written = write_grid_report(grid, tmp_path / "grid", title="toy grid")
    html = written.out_dir / "report.html"
    wide = measured(html, tmp_path, *LAPTOP)
    assert wide["page"] <= wide["view"], wide
    assert wide["tables_past_edge"] == 0, wide
    assert wide["scrolling_boxes"] == 0, wide
    narrow = measured(html, tmp_path, 480, 800)
    assert narrow["page"] <= narrow["view"], narrow
    assert narrow["tables_past_edge"] == 0, narrow
