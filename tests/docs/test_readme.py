"""The README stays short, shows the demo's decision as Getting started does, and links right."""

from __future__ import annotations

import re

from docs_site import DOCS, ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_has_at_most_200_lines() -> None:
    assert len(README.splitlines()) <= 200


def test_the_readme_shows_the_demo_decision_as_getting_started_does() -> None:
    ours = re.search(r"```\n(# cmrc2018_zh_chunked k-sweep\n.*?)```", README, re.S)
    assert ours, "the README lost the demo's summary block"
    block = ours.group(1)
    fresh = ROOT / "benchmarks" / "results" / "demo_fresh" / "summary.md"
    assert fresh.read_text(encoding="utf-8").startswith(block), "not the timed run's summary"
    assert "probability about" in block
    assert "## The decision per k" in block
    full = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    assert block in full, "the README's summary is not the start of Getting started's"


def test_the_readme_links_to_files_that_exist() -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target
