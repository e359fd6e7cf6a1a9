"""The rooms of the package stack in floors: a module imports only from its
own room or the rooms on the floors below (its lazy imports included), and
no modules import each other in a circle. README's Layout section names the
same rooms."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FLOORS: list[set[str]] = [
    {"dialects", "plugin_hooks", "remarks", "dtypes", "plugin_warnings"},
    {"analysis"},
    {"interp"},
    {"passes", "ops"},
    {"lowering"},
    {"frontend", "runtime"},
    {"driver"},
    {"plugins"},
    {"tune", "testing"},
    {"tools"},
    {"__init__"},
]
"""Bottom to top. `plugin_hooks` lets the rooms below `plugins` reach the op
plugins (the package's `__init__` hands it the provider); `dtypes` and
`plugin_warnings` import neither xDSL nor ONNX, so that `xtc run` and a
compile-cache hit need neither."""

NOT_PACKAGE = {"tests", "bench", "examples", "docs", "filecheck", "build"}


def floor_of(room: str) -> int:
    return next(i for i, rooms in enumerate(FLOORS) if room in rooms)


def source_files() -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if parts[0] in NOT_PACKAGE or parts[0].startswith(".") or "__pycache__" in parts:
            continue
        if parts[0].endswith(".egg-info"):
            continue
        yield path


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["xtc", *parts])


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The xtc modules `path` imports, anywhere in it (TYPE_CHECKING blocks too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name in known:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in source_files()}
    known = set(paths)
    graph = {m: imported_modules(p, known) - {m} for m, p in paths.items()}
    # a package's __init__ runs before any of its modules: importing
    # `xtc.a.b` imports `xtc.a`, which is no edge of the module's own
    return {m: {t for t in targets if not m.startswith(t + ".")} for m, targets in graph.items()}


def test_every_room_has_a_floor() -> None:
    rooms = {room_of(m) for m in import_graph()}
    assert rooms == set().union(*FLOORS)


def test_no_room_imports_a_room_above_it() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in targets
        if floor_of(room_of(target)) > floor_of(room_of(module))
    )
    assert upward == []


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_no_import_circles() -> None:
    assert strongly_connected(import_graph()) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def test_readme_layout_names_every_room() -> None:
    readme = (ROOT / "README.md").read_text()
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z_]+)(?:/|\.py)`", layout))
    rooms = set().union(*FLOORS) - {"__init__"}
    assert rooms <= named, sorted(rooms - named)
