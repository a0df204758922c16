"""The package's structure, as the manual's architecture page (docs/architecture.md) states it.

- The page's tree gives every top-level folder the floor this test enforces, and no other.
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

from rag_judge.backends.registry import PROVIDERS
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
    "synth": 4,
    "jobs": 5,
    "report": 6,
    "labelling": 6,  # rag-judge label's page and server, beside the report
    "integrations": 6,  # MLflow: runs logged to a tracking store, judges as scorers
    "": 6,  # rag_judge/__init__.py: the public API, lazily re-exported
    "cli": 7,
    "testing": 7,  # assert_judged and the pytest plugin: an interface, like the CLI
}
"""The floor of each top-level folder; docs/architecture.md lists the same."""


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


PREFIX = re.compile(r"\b(" + "|".join(map(re.escape, PROVIDERS)) + r")/")
"""A provider's prefix as a model name begins: ``local/``, ``openai/`` ..."""
KNOWS_PROVIDERS = ("rag_judge.backends", "rag_judge.runtime")


def _help_texts(tree: ast.AST) -> set[int]:
    """The string constants that are a command line's help prose: a ``help=`` value, an
    option group's per-option help (keywords of a call to ``*_options``), a ``*_HELP`` name."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "help":
            roots.append(node.value)
        elif isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else ""
            if called.endswith("_options"):
                roots.extend(k.value for k in node.keywords)
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id.endswith("_HELP") for target in node.targets
        ):
            roots.append(node.value)
    return {id(n) for root in roots for n in ast.walk(root) if isinstance(n, ast.Constant)}


def test_no_provider_prefix_is_spelled_outside_backends_and_runtime() -> None:
    """Code outside ``backends/`` and ``runtime/`` asks a provider's record, never its name;
    prose may name providers (docstrings, and the help texts the command line prints)."""
    spelled = []
    for module, path in MODULES.items():
        if module.startswith(KNOWS_PROVIDERS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = _help_texts(tree)
        spelled += [
            f"{path.relative_to(PACKAGE)}:{node.lineno}: {found.group(0)!r}"
            for node in _code_strings(tree)
            if id(node) not in prose and (found := PREFIX.search(node.value))
        ]
    assert spelled == []


def _calls(tree: ast.AST, name: str) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func
            if (isinstance(called, ast.Name) and called.id == name) or (
                isinstance(called, ast.Attribute) and called.attr == name
            ):
                yield node


def test_model_clients_are_built_only_in_the_composition_root() -> None:
    allowed = {"rag_judge.runtime.session", "rag_judge.backends.wrapper.client"}
    built = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for module, path in MODULES.items()
        if module not in allowed
        for node in _calls(ast.parse(path.read_text(encoding="utf-8")), "ModelClient")
    ]
    assert built == []


def _folder(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def _private_reads(module: str, path: Path) -> Iterator[str]:
    """Private names this module takes from another package: ``from x import _name`` across
    folders, ``getattr(obj, "_name")``, and ``obj._name`` where this module defines no
    ``_name`` (not ``self``'s, nor another library's)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    own |= {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
    }
    own |= {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    foreign = {  # names bound to other libraries' modules: their privates are theirs to keep
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        and not (getattr(node, "module", None) or "").startswith("rag_judge")
        for alias in node.names
        if not alias.name.startswith("rag_judge")
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rag_judge"):
            source = _resolve(node.module or "")
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and _folder(source) != _folder(module):
                    yield f"{path.relative_to(PACKAGE)}:{node.lineno}: {alias.name} from {source}"
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
            text = node.args[1] if len(node.args) > 1 else None
            if isinstance(text, ast.Constant) and re.match(r"_(?!_)", str(text.value)):
                yield f"{path.relative_to(PACKAGE)}:{node.lineno}: getattr {text.value!r}"
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            name = node.attr
            if not name.startswith("_") or name.startswith("__") or name in own:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls", *foreign):
                continue
            yield f"{path.relative_to(PACKAGE)}:{node.lineno}: .{name}"


def test_no_module_reads_another_packages_private_names() -> None:
    found = [line for module, path in MODULES.items() for line in _private_reads(module, path)]
    assert found == []


def _functions(module: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _entry_points() -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The job functions the command line calls: imported by name from ``rag_judge.jobs``, or
    called on a jobs module it imported (``calibration_run.calibrate_files``)."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for module, path in MODULES.items():
        if not module.startswith("rag_judge.cli"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                "rag_judge.jobs"
            ):
                continue
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                if target in MODULES:
                    aliases[alias.asname or alias.name] = target
                elif (node.module or "") in MODULES:
                    function = _functions(node.module or "").get(alias.name)
                    if function is not None:
                        found[f"{node.module}.{alias.name}"] = function
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                owner = aliases[node.value.id]
                function = _functions(owner).get(node.attr)
                if function is not None:
                    found[f"{owner}.{node.attr}"] = function
    return found


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    arguments = function.args
    return (
        len(arguments.posonlyargs)
        + len(arguments.args)
        + len(arguments.kwonlyargs)
        + (arguments.vararg is not None)
        + (arguments.kwarg is not None)
    )


def test_job_entry_points_take_a_session_and_options_not_loose_values() -> None:
    entries = _entry_points()
    assert {"rag_judge.jobs.score.job.score_job", "rag_judge.jobs.sweep.job.sweep_job"} <= set(
        entries
    )
    wide = {name: n for name, f in entries.items() if (n := _parameters(f)) > 8}
    assert wide == {}


def test_a_prefix_in_code_would_be_found() -> None:
    tree = ast.parse('if name.startswith("local/"):\n    pass\nx = f(help="for local/ models")\n')
    prose = _help_texts(tree)
    found = [n.value for n in _code_strings(tree) if id(n) not in prose and PREFIX.search(n.value)]
    assert found == ["local/"]


def test_the_architecture_page_gives_every_folder_its_floor() -> None:
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = page.split("```text\nrag_judge/\n", 1)[1].split("```", 1)[0]
    listed = {
        ("" if name == "__init__.py" else name.rstrip("/")): int(floor)
        for name, floor in re.findall(r"^  (\S+)\s+(\d)\s", tree, flags=re.M)
    }
    assert listed == FLOORS
