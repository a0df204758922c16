"""The package's structure, as the README's "Architecture" section states it.

- No import cycle: no module imports a module that imports it back, directly or through others
  (every import counts: at module level, inside functions, and under ``TYPE_CHECKING``).
- Imports run down the floors only: a folder imports folders on lower floors, never one on its
  own floor or above (``core`` imports nothing of rag_judge; ``cli`` may import everything).
- No judge's name is spelled outside ``judges/`` (docstrings aside): the sweep, the report and
  the CLI read a judge's facts from its record.
- The core types are light: importing them loads no backend and no HTTP or retry library.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_judge.judges import JUDGES

PACKAGE = Path(__file__).resolve().parents[1] / "rag_judge"

FLOORS = {
    "core": 0,
    "data": 1,
    "retrieval": 1,
    "backends": 1,
    "calibration": 2,
    "prompts": 2,
    "runtime": 2,
    "judges": 3,
    "pipeline": 3,
    "jobs": 4,
    "report": 5,
    "": 5,  # rag_judge/__init__.py: the public API, lazily re-exported
    "cli": 6,
    "testing": 6,  # assert_judged and the pytest plugin: an interface, like the CLI
}
"""The floor of each top-level folder; the README's architecture section lists the same."""


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str:
    """The module a dotted name lives in (``rag_judge.a.b.Name`` -> ``rag_judge.a.b``)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _imports(module: str, path: Path) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target.startswith("rag_judge"):
                yield _resolve(target)


GRAPH = {m: {t for t in _imports(m, p) if t != m} for m, p in MODULES.items()}


def _floor(module: str) -> tuple[str, int]:
    folder = module.split(".")[1] if "." in module else ""
    if folder not in FLOORS and "." not in module.removeprefix("rag_judge."):
        folder = ""  # a top-level module would sit with the public API (there is none)
    return folder, FLOORS[folder]


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(GRAPH.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_the_whole_package() -> None:
    assert len(MODULES) > 100
    assert "rag_judge.runtime.session" in GRAPH["rag_judge.jobs.score.run"]
    assert "rag_judge.core.types" in GRAPH["rag_judge.judges.base"]


def test_no_module_imports_a_module_that_imports_it_back() -> None:
    assert _cycles() == []


def test_a_cycle_would_be_found() -> None:
    GRAPH["rag_judge.core.errors"].add("rag_judge.core.types")
    GRAPH["rag_judge.core.types"].add("rag_judge.core.errors")
    try:
        assert ["rag_judge.core.errors", "rag_judge.core.types"] in _cycles()
    finally:
        GRAPH["rag_judge.core.errors"].discard("rag_judge.core.types")
        GRAPH["rag_judge.core.types"].discard("rag_judge.core.errors")


def test_every_folder_has_a_floor() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(FLOORS) - {""}
    top_level = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert top_level == [], "every module belongs to a folder"


def test_imports_run_down_the_floors() -> None:
    upward = []
    for module, targets in GRAPH.items():
        folder, floor = _floor(module)
        for target in targets:
            other, other_floor = _floor(target)
            if other != folder and other_floor >= floor:
                here, there = folder or "rag_judge", other or "rag_judge"
                upward.append(
                    f"{module} ({here}, {floor}) imports {target} ({there}, {other_floor})"
                )
    assert upward == []


JUDGE_NAME = re.compile(r"\b(" + "|".join(map(re.escape, JUDGES)) + r")\b")


def _code_strings(tree: ast.AST) -> Iterator[ast.Constant]:
    """Every string constant that is code, not prose: a string standing alone as a statement
    is a docstring (of a module, class, function or attribute) and is left out."""
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            yield node


def test_no_judge_name_is_spelled_outside_judges() -> None:
    spelled = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}: {found.group(0)!r}"
        for module, path in MODULES.items()
        if not module.startswith("rag_judge.judges")
        for node in _code_strings(ast.parse(path.read_text(encoding="utf-8")))
        if (found := JUDGE_NAME.search(node.value))
    ]
    assert spelled == []


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("rag_judge.core.types", ("rag_judge.backends", "tenacity", "pandas")),
        ("rag_judge.data.readers", ("rag_judge.backends", "pandas")),
        ("rag_judge.retrieval", ("rag_judge.backends", "rag_judge.judges", "tenacity")),
    ],
)
def test_lower_floors_stay_light(module: str, absent: tuple[str, ...]) -> None:
    code = (
        f"import sys, {module}\n"
        f"loaded = [m for m in sys.modules if m.split('.')[0] in {absent!r} "
        f"or any(m.startswith(a + '.') or m == a for a in {absent!r})]\n"
        "print(sorted(loaded))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"importing {module} loaded {out.stdout.strip()}"
