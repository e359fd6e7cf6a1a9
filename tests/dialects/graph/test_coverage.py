"""Every graph op round-trips in a FileCheck file, has a verifier case, an
interpreter implementation and a pytest that builds it."""

import re
from pathlib import Path

import pytest

from xtc.dialects.graph import Graph
from xtc.interp.graph import GRAPH_FUNCTIONS

ROOT = Path(__file__).resolve().parents[3]
FILECHECK = ROOT / "filecheck" / "dialects" / "graph"
OP_NAMES = sorted(op.name for op in Graph.operations)


def _text(pattern: str) -> str:
    return "\n".join(p.read_text() for p in sorted(FILECHECK.glob(pattern)))


def _mentions(text: str, op_name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(op_name)}(?![\w])", text) is not None


@pytest.mark.parametrize("op_name", OP_NAMES)
def test_op_round_trips_in_a_filecheck_file(op_name: str) -> None:
    assert _mentions(_text("ops*.mlir"), op_name)


@pytest.mark.parametrize("op_name", [n for n in OP_NAMES if n != "graph.constant"])
def test_op_has_a_verifier_case(op_name: str) -> None:
    assert _mentions(_text("invalid*.mlir"), op_name)


def test_every_op_has_an_interpreter_implementation() -> None:
    implemented = {
        op_type.name
        for functions in GRAPH_FUNCTIONS
        for op_type, _ in functions._impls()  # pyright: ignore[reportPrivateUsage]
    }
    assert sorted(set(OP_NAMES) - implemented) == []


def test_every_op_class_is_used_in_a_pytest() -> None:
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    unused = [op.__name__ for op in Graph.operations if not re.search(rf"\b{op.__name__}\b", tests)]
    assert unused == []
