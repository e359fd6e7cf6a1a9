"""convert-tir-to-llvm is a pipeline of registered passes: running its
stages one by one gives what it gives, each stage is registered under its
name, and the lowering modules import one another without a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from xtc.lowering.convert_tir_to_llvm import STAGE_NAMES, STAGES
from xtc.tools.pipelines import apply_pipeline
from xtc.tools.textual_ir import module_to_text, parse_module
from xtc.tools.universe import XTC_UNIVERSE

ROOT = Path(__file__).resolve().parents[2]
CASES = [
    case
    for case in (ROOT / "filecheck" / "lowering" / "convert-tir-to-llvm.mlir")
    .read_text()
    .split("// -----")
    if "CHECK: convert-tir-to-llvm:" not in case  # the cases that are errors
]


def test_the_stages_are_registered_in_order() -> None:
    assert STAGE_NAMES == (
        "tir-lower-parallel",
        "tir-lower-unrolled",
        "tir-lower-vectorized",
        "convert-tir-to-cf",
        "convert-to-llvm",
    )
    for name, stage in zip(STAGE_NAMES, STAGES, strict=True):
        assert XTC_UNIVERSE.all_passes[name]() is stage


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_stages_one_by_one_lower_as_the_whole(case: int) -> None:
    whole = apply_pipeline(parse_module(CASES[case]), "convert-tir-to-llvm")
    module = parse_module(CASES[case])
    for name in STAGE_NAMES:
        # each stage's output is valid IR that prints and parses back
        module = parse_module(module_to_text(apply_pipeline(module, name)))
    assert module_to_text(module) == module_to_text(whole)


def _lowering_imports(path: Path) -> set[str]:
    """The lowering modules a file imports (at any depth, lazily or not)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("xtc.lowering."):
                names.add(node.module.removeprefix("xtc.lowering.").split(".")[0])
            elif node.module == "xtc.lowering":
                names.update(alias.name for alias in node.names)
    return names


def import_circle(folder: Path) -> str | None:
    """An import circle among the modules of `folder`, as `a -> b -> a`, or None."""
    graph = {path.stem: _lowering_imports(path) for path in folder.glob("*.py")}
    done: set[str] = set()

    def circle_from(name: str, path: tuple[str, ...]) -> str | None:
        if name in path:
            return " -> ".join((*path, name))
        if name in done:
            return None
        for imported in sorted(graph.get(name, ())):
            found = circle_from(imported, (*path, name))
            if found is not None:
                return found
        done.add(name)
        return None

    for name in sorted(graph):
        found = circle_from(name, ())
        if found is not None:
            return found
    return None


def test_no_import_circle_among_lowering_modules() -> None:
    assert import_circle(ROOT / "lowering") is None


def test_an_import_circle_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from xtc.lowering.b import f\n")
    (tmp_path / "b.py").write_text("def g():\n    from xtc.lowering.a import f\n")
    assert import_circle(tmp_path) == "a -> b -> a"
