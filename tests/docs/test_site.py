"""The manual builds with ``mkdocs build --strict``, its CLI and settings references miss nothing,
and its pages fit a desktop's and a phone's screen in a real browser."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import click
import pytest
from docs_site import commands, options

from rag_judge.cli import main


def undocumented(group: click.Command, page: str) -> list[str]:
    """Each command or option of ``group`` that the rendered page does not name."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    missing = []
    for name, command in commands(group):
        if name and not re.search(rf"rag-judge {re.escape(name)}\b", text):
            missing.append(f"rag-judge {name}")
        missing += [
            f"rag-judge {name} {opt}".replace("  ", " ")
            for opt in sorted(options(command) - {"-h", "--help"})
            if not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text)
        ]
    return missing


def test_the_site_builds_strictly(built_site: Path) -> None:
    assert (built_site / "index.html").is_file()
    assert (built_site / "reference" / "python-api" / "index.html").is_file()


def test_every_command_and_option_is_in_the_cli_reference(built_site: Path) -> None:
    page = (built_site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert undocumented(main, page) == []


def test_a_missing_option_is_found() -> None:
    @click.group()
    def tool() -> None: ...

    @tool.command()
    @click.option("--shown")
    @click.option("--forgotten", "-f")
    def run(shown: str, forgotten: str) -> None: ...

    page = "<h2>rag-judge run</h2><code>--shown</code> <code>--forgotten-not</code>"
    assert undocumented(tool, page) == ["rag-judge run --forgotten", "rag-judge run -f"]


def test_the_site_fetches_nothing_at_view_time(built_site: Path) -> None:
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert not re.search(
        r"""(src|href)=["']https?://""", index.replace('href="https://squidfunk', "")
    )
    assert "fonts.googleapis" not in index


def test_the_cli_reference_shows_no_sentinel(built_site: Path) -> None:
    page = (built_site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "Sentinel" not in page
    assert "UNSET" not in page


def test_the_python_api_page_shows_no_sphinx_roles(built_site: Path) -> None:
    page = (built_site / "reference" / "python-api" / "index.html").read_text(encoding="utf-8")
    assert "evaluate" in page
    assert not re.search(r":(func|class|mod|meth|attr):<code>", page)


def test_docstring_doctests_show_as_code_on_the_api_page(built_site: Path) -> None:
    page = (built_site / "reference" / "python-api" / "index.html").read_text(encoding="utf-8")
    assert re.search(r"<code><span class=\"o\">&gt;&gt;&gt;</span>", page)


def test_no_list_item_is_swallowed_by_a_paragraph(built_site: Path) -> None:
    """Python-Markdown nests a list only at 4 spaces: a 2-space item after a paragraph inside a
    list item is printed as part of the paragraph, "- " and all, so look for that on every page."""
    swallowed = [
        f"{page.relative_to(built_site).parent}: {line.strip()[:60]}"
        for page in sorted(built_site.rglob("index.html"))
        for paragraph in re.findall(r"<p>(.*?)</p>", page.read_text(encoding="utf-8"), re.S)
        for line in paragraph.splitlines()[1:]
        if re.match(r"\s*[-*] \S", line)
    ]
    assert swallowed == []


def test_the_settings_reference_lists_every_setting_and_extra(built_site: Path) -> None:
    """The table is generated from the settings' definition; the extras' table is written by
    hand, so a new extra in pyproject.toml that it lacks fails here."""
    import dataclasses
    import tomllib

    from docs_site import ROOT

    from rag_judge.runtime.settings import ENV_PREFIX, Settings

    page = (built_site / "reference" / "settings" / "index.html").read_text(encoding="utf-8")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    for field in dataclasses.fields(Settings):
        assert f"{ENV_PREFIX}{field.name.upper()}" in text, field.name
    assert "settings table" not in page  # the placeholder was replaced
    assert "The generator's server, when it is not base_url" in text  # a field's docstring
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for extra in extras["project"]["optional-dependencies"]:
        if extra not in ("dev", "docs", "bench"):
            assert re.search(rf"\b{extra}\b", text), f"extra {extra} is not in the table"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MEASURE = """<script>
window.addEventListener("load", () => {
  document.body.setAttribute("data-measured",
    `page=${document.documentElement.scrollWidth} view=${window.innerWidth} ` +
    `tables=${document.querySelectorAll("article table").length}`);
  if (window.parent !== window) {
    window.parent.postMessage(document.body.getAttribute("data-measured"), "*");
  }
});
</script></body>"""


NARROWEST = 500
"""Headless Chromium lays a window out no narrower than this (a phone held sideways)."""
UPRIGHT = 390
"""A phone held upright: the page is opened in a frame this wide inside the narrowest window, so
it is laid out (media queries and all) at a phone's width without device emulation."""
FRAME = """<html><body style="margin:0">
<iframe src="{src}" style="width:{width}px;height:844px;border:0"></iframe>
<script>
window.addEventListener("message", (e) => document.body.setAttribute("data-measured", e.data));
</script></body></html>"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make test does)")
@pytest.mark.parametrize(
    "width", [1280, NARROWEST, UPRIGHT], ids=["desktop", "phone-sideways", "phone-upright"]
)
@pytest.mark.parametrize(
    "page",
    ["getting-started", "install", "reference/settings", "reference/glossary", "measurements",
     "how-to/judge-models"],
)  # fmt: skip
def test_a_page_fits_the_screen_in_a_real_browser(
    built_site: Path, tmp_path: Path, page: str, width: int
) -> None:
    """Opened in headless Chromium at a desktop's width, a phone's held sideways and upright,
    the page is no wider than the screen (a wide table scrolls inside its own box, as the theme
    wraps it), and its tables are there."""
    source = built_site / page / "index.html"
    probe = source.with_name("probe.html")
    probe.write_text(source.read_text(encoding="utf-8").replace("</body>", MEASURE, 1))
    opened = probe
    if width < NARROWEST:
        opened = source.with_name("phone.html")
        opened.write_text(FRAME.format(src=probe.name, width=width), encoding="utf-8")
    assert CHROMIUM is not None
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={max(width, NARROWEST)},900", "--virtual-time-budget=5000",
         "--dump-dom", opened.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    found = re.search(r'data-measured="page=(\d+) view=(\d+) tables=(\d+)"', dom)
    assert found is not None, dom[:300]
    page_width, view, tables = map(int, found.groups())
    assert view == width
    assert page_width <= view, f"{page} is {page_width} px wide on a {view} px screen"
    if page != "reference/glossary":
        assert tables > 0
