"""Make docs/label_page.png: `rag-judge label` on WiCE dev rows, in headless Chromium at a
laptop's size (1366 x 768), after a few rows are labelled and one claim of the row shown.

    .venv/bin/python docs/label_page.py

Needs Debian's chromium and Playwright (the dev extra); writes its labels to a temporary file.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
SCORES = ROOT / "benchmarks/results/calibration_local/score_wice_dev/scores.jsonl"
OUT = ROOT / "docs/label_page.png"
RUN = "import sys; from rag_judge.cli import main; sys.exit(main())"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        labels = Path(tmp) / "labels.jsonl"
        args = [str(SCORES.relative_to(ROOT)), "-o", str(labels), "--sample", "40", "--seed", "3"]
        server = subprocess.Popen(
            [sys.executable, "-c", RUN, "label", *args, "--annotator", "alice", "--no-browser"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stderr is not None
            url = next(m.group(1) for line in server.stderr if (m := re.search(r"(http\S+/)", line)))
            shoot(url)
        finally:
            server.terminate()
            server.wait(timeout=60)


def shoot(url: str) -> None:
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(url)
        row_id = page.locator("#row-id")
        expect(row_id).not_to_be_empty(timeout=60_000)
        keys = iter("snssnsnss" * 4)
        while page.locator("#claims li.claim").count() < 3:  # on to a row with a few claims
            shown = row_id.text_content()
            page.keyboard.press(next(keys))
            expect(row_id).not_to_have_text(shown or "", timeout=60_000)
        page.keyboard.press("c")
        page.keyboard.press("s")  # the first claim labelled; focus on the second
        page.screenshot(path=str(OUT))
        browser.close()
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
