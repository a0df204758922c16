"""Every measured figure the manual quotes from a results file says which one, and agrees with it.

A figure is marked where it is quoted, by an HTML comment right after the number (invisible on
the site)::

    the job took 425.7 s<!-- fig benchmarks/results/demo_fresh/run.json timed.job_seconds -->

The path is a results file in the repository; the selector walks it: ``a.b`` for keys (``make
demo*`` for the one key that starts with ``make demo``), ``[3]`` for a list's element,
``[set=cmrc2018_zh_chunked;spending=pocock]`` for the one element of a list whose fields have
these values; ``mean``, ``max`` or ``min`` before the selector combine every element they match.
``A over B`` is the ratio of two selectors' values (a speed-up the text derives), ``A minus B``
their difference; B may name another results file first. ``*100`` after
the selector scales a fraction to the percent the text shows, ``/60`` seconds to
minutes, ``*-1`` a difference the text states as "below". The number checked is the last one
before the comment on its line; it must equal the file's value rounded to the decimals shown
(``1,733`` and ``0.92`` alike), so a re-run that changes the figure fails here until the page
says the new one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from docs_site import DOCS, ROOT

MARKER = re.compile(
    r"<!-- fig (?P<path>\S+) (?P<selector>.+?)(?: (?P<scale>[*/]-?\d+(?:\.\d+)?))? -->"
)
NUMBER = re.compile(r"[-+−]?\d[\d,]*(?:\.\d+)?")
SEGMENT = re.compile(r"\[(?P<inside>[^\]]*)\]|(?P<key>[^.\[\]]+)")
PAGES = (ROOT / "README.md", *sorted(DOCS.rglob("*.md")))


@dataclass(frozen=True)
class Figure:
    """One marked figure: where it is quoted, the number shown, and where it comes from."""

    page: Path
    line: int
    shown: str
    path: str
    selector: str
    scale: float

    def __str__(self) -> str:
        where = f"{self.page.relative_to(ROOT)}:{self.line}"
        return f"{where}: {self.shown} <- {self.path} {self.selector}"


def figures(page: Path) -> list[Figure]:
    """The marked figures of one page."""
    found = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        for marker in MARKER.finditer(line):
            numbers = NUMBER.findall(line[: marker.start()])
            assert numbers, f"{page.relative_to(ROOT)}:{number}: no number before {marker[0]}"
            scale = _scale(marker["scale"])
            found.append(
                Figure(page, number, numbers[-1], marker["path"], marker["selector"], scale)
            )
    return found


def _scale(text: str | None) -> float:
    """``*100`` (a fraction shown as a percent), ``/60`` (seconds shown as minutes), or 1."""
    if not text:
        return 1.0
    return float(text[1:]) if text[0] == "*" else 1.0 / float(text[1:])


@cache
def _results(path: str) -> Any:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def select(data: Any, selector: str) -> Any:
    """The value ``selector`` names in ``data`` (see the module docstring); ``mean``, ``max`` or
    ``min`` before a selector whose filters match several elements combines their values.

    >>> rows = {"rows": [{"k": 1, "v": 0.5}, {"k": 2, "v": 0.7}, {"k": 2, "v": 0.9}]}
    >>> select(rows, "rows[k=1].v"), select(rows, "mean rows[k=2].v")
    (0.5, 0.8)

    ``A over B`` is a ratio the text derives from two values of the file (``3.74×``):

    >>> round(select(rows, "rows[k=1].v over mean rows[k=2].v"), 4)
    0.625

    ``A minus B`` is a difference it derives (``rose by 0.03``); either side may name another
    results file before its selector (``A over benchmarks/results/other.json B``):

    >>> round(select(rows, "rows[k=1].v minus mean rows[k=2].v"), 4)
    -0.3
    """
    for word, combine in DERIVED.items():
        if word in selector:  # a figure the text derives from two values
            left, right = selector.split(word, 1)
            return combine(_operand(data, left), _operand(data, right))
    how, _, rest = selector.partition(" ")
    if how in AGGREGATES:
        return AGGREGATES[how](_walk(data, rest))
    values = _walk(data, selector)
    assert len(values) == 1, f"{selector} selects {len(values)} values, not one"
    return values[0]


DERIVED = {" over ": lambda a, b: a / b, " minus ": lambda a, b: a - b}
"""The figures a text derives from two values: a ratio, a difference."""


def _operand(data: Any, selector: str) -> Any:
    """One side of a derived figure: from ``data``, or from the results file it names first."""
    if selector.startswith("benchmarks/results/"):
        path, rest = selector.split(" ", 1)
        return select(_results(path), rest)
    return select(data, selector)


AGGREGATES = {"mean": lambda v: sum(v) / len(v), "max": max, "min": min}
"""What a selector may start with to combine the values its filters match."""


def _walk(data: Any, selector: str) -> list[Any]:
    """Every value the selector reaches (a filter may match several elements)."""
    found = [data]
    for part in SEGMENT.finditer(selector):
        if part["key"] is not None:
            key = part["key"]
            if key.endswith("*"):
                found = [d[next(k for k in d if k.startswith(key[:-1]))] for d in found]
            else:
                found = [d[key] for d in found]
            continue
        inside = part["inside"]
        if inside.lstrip("-").isdigit():
            found = [d[int(inside)] for d in found]
            continue
        wanted = dict(condition.split("=", 1) for condition in inside.split(";"))
        found = [
            item for d in found for item in d
            if all(_text(item.get(key)) == value for key, value in wanted.items())
        ]  # fmt: skip
        assert found, f"[{inside}] matches no element"
    return found


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def agrees(shown: str, value: float, scale: float = 1.0) -> bool:
    """True when ``value`` (times ``scale``), rounded to the decimals shown, is the number shown.

    >>> agrees("1,733", 1733), agrees("0.92", 0.9163), agrees("4.7", 0.047, 100)
    (True, True, True)
    >>> agrees("0.9", 0.96)
    False
    """
    text = shown.replace(",", "").replace("−", "-").lstrip("+")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(value * scale - float(text)) <= 0.5 * 10**-decimals + 1e-9


MARKED = [figure for page in PAGES for figure in figures(page)]


def test_the_manual_marks_its_figures() -> None:
    """The mechanism is in use: the pages quoting measured figures mark them."""
    assert len(MARKED) >= 20
    assert {f.page.name for f in MARKED} >= {"README.md", "limits.md", "getting-started.md"}


@pytest.mark.parametrize("figure", MARKED, ids=str)
def test_a_quoted_figure_is_the_one_in_its_results_file(figure: Figure) -> None:
    assert figure.path.startswith("benchmarks/results/"), "figures come from committed results"
    value = select(_results(figure.path), figure.selector)
    assert isinstance(value, int | float), f"{figure}: selects {value!r}, not a number"
    assert agrees(figure.shown, value, figure.scale), f"{figure}: the file says {value}"
