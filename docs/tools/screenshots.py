"""Make docs/assets/screenshots/*.png: three pages of the built site in headless Chromium, at a
laptop's width (1366 x 768) and a phone's (390 x 844), to look at before a release.

    .venv/bin/python docs/tools/screenshots.py

Builds the site into a temporary folder, serves it on 127.0.0.1 and shoots the first screen of
each page. Needs Debian's chromium, fonts-noto-cjk for the Chinese text (`make browser`) and
Playwright (the dev extra).
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "assets" / "screenshots"
PAGES = {
    "getting-started": "getting-started/#what-it-prints",
    "sweep-your-rag": "tutorials/sweep-your-rag/",
    "cli-reference": "reference/cli/#rag-judge-sweep",
}
SIZES = {"desktop": (1366, 768), "phone": (390, 844)}


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:
        """Say nothing."""


def build(site: Path) -> None:
    """The site as `make docs` builds it, into ``site``."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)]
    subprocess.run(command, cwd=ROOT, env=env, check=True)


def shoot(base: str) -> None:
    """Every page at every size, each into its own file."""
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for size, (width, height) in SIZES.items():
            page = browser.new_page(viewport={"width": width, "height": height})
            for name, path in PAGES.items():
                page.goto(base + path, wait_until="networkidle")
                page.screenshot(path=str(OUT / f"{name}-{size}.png"))
            page.close()
        browser.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        build(site)
        handler = functools.partial(QuietHandler, directory=str(site))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            shoot(f"http://127.0.0.1:{server.server_address[1]}/")
        finally:
            server.shutdown()
    print(f"wrote {len(PAGES) * len(SIZES)} screenshots in {OUT}")


if __name__ == "__main__":
    main()
