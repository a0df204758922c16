"""``rag-judge label`` in a real browser (headless Chromium): keys, a kill, a resume, markup.

The server runs as a user runs it (the command, in its own process, on a free port); the page
is driven by the keyboard through Playwright over Debian's ``chromium`` (``make test``
installs it; without it, or without Playwright, these tests are skipped, saying so). Every
wait is on a condition (the page's text, the log's lines), with generous timeouts, never a
sleep.
"""

from __future__ import annotations

import json
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from label_toy import XSS, write_scores

from rag_judge.calibration.label_log import read_label_log

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright not installed (dev)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make test does)")

WAIT = 60.0
"""Seconds any one condition may take on a busy machine."""
RUN = "import sys; from rag_judge.cli import main; sys.exit(main())"


class Server:
    """``rag-judge label`` in a subprocess; its stderr read line by line as it comes."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", RUN, "label", *args, "--no-browser"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.said: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self.wait_for(r"label at (http://127\.0\.0\.1:\d+/\S+/)").group(1)

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line)

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first line the server said, or says within :data:`WAIT`, that matches."""
        for line in self.said:
            if found := re.search(pattern, line):
                return found
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                if self.process.poll() is not None and self.lines.empty():
                    break
                continue
            self.said.append(line)
            if found := re.search(pattern, line):
                return found
        raise AssertionError(f"the server never said {pattern!r}; it said {self.said}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)  # polling a file, not waiting on the clock for an outcome


def events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


def test_label_with_the_keyboard_through_a_kill_and_a_resume(
    tmp_path: Path, browser: Any, servers: list[Server]
) -> None:
    expect = playwright.expect
    scores, labels = write_scores(tmp_path / "scores.jsonl"), tmp_path / "labels.jsonl"
    args = (str(scores), "-o", str(labels), "--annotator", "tester")
    servers.append(Server(*args))
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(servers[0].url)
    row_id, progress = page.locator("#row-id"), page.locator("#progress")

    expect(row_id).to_have_text("r1", timeout=WAIT * 1000)
    expect(page.locator("#passages li.cited")).to_have_count(1)  # claim 1 cites passage 2
    page.keyboard.press("c")  # to the first claim: s labels the claim, not the row
    page.keyboard.press("s")
    expect(page.locator("#claims li.labelled-yes")).to_have_count(1)
    page.keyboard.press("s")  # the claims done, focus is back on the row
    expect(row_id).to_have_text("r2", timeout=WAIT * 1000)

    # markup in a row is text: no element made of it, no script run
    expect(page.locator("#answer")).to_have_text(XSS)
    assert page.locator("#claims .claim-text").first.text_content() == XSS
    assert page.locator("#claims .reason").first.text_content() == "<b>bold</b> reason"
    assert page.evaluate("document.querySelectorAll('img, b, #answer *').length") == 0
    assert page.evaluate("[...document.scripts].map(s => s.src.split('/').pop())") == ["label.js"]
    assert "pwned" not in page.title()

    page.keyboard.press("t")  # a note: its letters are text, not keys
    page.keyboard.type("looks made up: s n k u 1 0")
    page.keyboard.press("Escape")
    assert events(labels) == events(labels)[:1]  # nothing labelled by the note's letters
    expect(row_id).to_have_text("r2")
    page.keyboard.press("n")
    expect(row_id).to_have_text("r4", timeout=WAIT * 1000)
    page.keyboard.press("t")
    page.keyboard.type("unsure")
    page.keyboard.press("Escape")
    page.keyboard.press("k")  # skip
    expect(row_id).to_have_text("r5", timeout=WAIT * 1000)
    expect(page.locator("#note")).to_have_value("")
    page.keyboard.press("u")  # undo the skip: back to r4, its note offered again
    expect(row_id).to_have_text("r4", timeout=WAIT * 1000)
    expect(page.locator("#note")).to_have_value("unsure")
    expect(progress).to_contain_text("2 of 4 labelled")
    page.keyboard.press("1")
    expect(row_id).to_have_text("r5", timeout=WAIT * 1000)
    wait_until(lambda: len(events(labels)) == 5, "five events in the log")

    servers[0].process.send_signal(signal.SIGKILL)  # no chance to say goodbye
    servers[0].process.wait(timeout=WAIT)
    servers.append(Server(*args))
    servers[1].wait_for(r"resuming .*: 3 of 4 labelled, 0 skipped")
    page.goto(servers[1].url)
    expect(row_id).to_have_text("r5", timeout=WAIT * 1000)
    expect(progress).to_contain_text("3 of 4 labelled")
    page.keyboard.press("0")
    expect(page.locator("#finished")).to_be_visible(timeout=WAIT * 1000)
    expect(progress).to_contain_text("4 of 4 labelled")

    log = read_label_log(labels)
    assert log.labels == {"r1": 1, "r2": 0, "r4": 1, "r5": 0}
    assert log.notes == {"r2": "looks made up: s n k u 1 0", "r4": "unsure"}
    assert [(c.claim, c.label) for c in log.rows[0].claims] == [(0, 1)]
    assert [e.get("undo") for e in events(labels)] == [None, None, None, True, None, None]
    assert log.annotator == "tester"
    assert dialogs == []

    base = servers[1].url.rsplit("/", 2)[0]
    with pytest.raises(urllib.error.HTTPError) as forbidden:
        urllib.request.urlopen(base + "/api/state", timeout=WAIT)
    assert forbidden.value.code == 403

    servers[1].process.send_signal(signal.SIGINT)  # Ctrl-C: a clean stop
    assert servers[1].process.wait(timeout=WAIT) == 0
    servers[1].wait_for(r"stopped: 4 of 4 labelled")
