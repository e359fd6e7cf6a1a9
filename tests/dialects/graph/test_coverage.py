"""Every graph op has what an op needs, found from the op classes the graph
dialect collects: an ONNX converter (or a stated reason for none), an
interpreter implementation, a te compute rule, a fusion kind, a round trip in
a FileCheck file, a verifier case and a pytest that builds it."""

import ast
import re
from pathlib import Path

import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Block
from xdsl.irdl import OptionalDef
from xdsl.irdl.constraints import VerificationContext

from xtc.dialects.graph import CATEGORIES, GRAPH_OPS, Graph
from xtc.dialects.graph.base import (
    GraphOp,
    OpPattern,
    declared_defaults,
    get_str,
    int_attr,
    op_props,
)
from xtc.dialects.graph.control import CONTROL_OPS
from xtc.dialects.graph.tensor import DepthToSpaceOp
from xtc.interp.graph import GRAPH_FUNCTIONS
from xtc.ops import load_builtin_compute_rules

ROOT = Path(__file__).resolve().parents[3]
FILECHECK = ROOT / "filecheck" / "dialects" / "graph"
OP_NAMES = sorted(op.name for op in Graph.operations)

NO_CONVERTER: dict[str, str] = {
    "graph.conv2d_u8s8": "graph-qdq-to-integer makes it from a quantized (QDQ) Conv or MatMul",
    "graph.layout_transform": "graph-block-activations puts it at the edges of blocked convs",
    "graph.winograd_conv2d": "graph-winograd makes it from a blocked 3x3 conv",
}
"""Graph ops no ONNX converter emits, by name, each with the reason (a pass
creates it, say). The control ops, graph.if, graph.loop and graph.yield,
come from If and Loop."""


NO_COMPUTE_RULE: dict[str, str] = {
    "graph.constant": "its value is data that the lowering passes on, not a kernel",
    "graph.if": "control flow: convert-te-to-tir lowers it to an scf.if around kernel calls",
    "graph.loop": "control flow: convert-te-to-tir lowers it to an scf.while around kernel calls",
    "graph.yield": "the terminator of graph.if and graph.loop regions",
}
"""Graph ops that never become a te kernel, by name, each with the reason."""


def _names_used_by_converters() -> set[str]:
    """The identifiers and attribute names the ONNX converters' source uses."""
    used: set[str] = set()
    for path in (ROOT / "frontend" / "converters").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.Name):
                used.add(node.id)
    return used


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


def test_the_dialect_holds_exactly_the_ops_its_modules_define() -> None:
    defined = {
        value
        for module in CATEGORIES
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, GraphOp)
        and value.__module__ == module.__name__
        and value.get_irdl_definition() is not None
    }
    assert len(GRAPH_OPS) == len(set(GRAPH_OPS))
    assert set(Graph.operations) == set(GRAPH_OPS) | set(CONTROL_OPS)
    assert set(GRAPH_OPS) == defined


@pytest.mark.parametrize("op", GRAPH_OPS, ids=lambda op: op.name)
def test_op_states_a_fusion_kind(op: type[GraphOp]) -> None:
    assert isinstance(op.FUSION_KIND, OpPattern)


def test_every_op_has_a_compute_rule() -> None:
    ruled = {op.name for op in load_builtin_compute_rules()}
    assert sorted(set(OP_NAMES) - ruled - set(NO_COMPUTE_RULE)) == []
    assert sorted(set(NO_COMPUTE_RULE) & ruled) == []


def test_every_op_has_an_onnx_converter_or_a_reason_for_none() -> None:
    used = _names_used_by_converters()
    converted = {op.name for op in (*GRAPH_OPS, *CONTROL_OPS) if op.__name__ in used}
    assert sorted(set(OP_NAMES) - converted - set(NO_CONVERTER)) == []
    # A reason for an op that has a converter (or no longer exists) is stale.
    assert sorted(set(NO_CONVERTER) & converted) == []
    assert sorted(set(NO_CONVERTER) - set(OP_NAMES)) == []


@pytest.mark.parametrize(
    "op", [op for op in GRAPH_OPS if declared_defaults(op)], ids=lambda op: op.name
)
def test_each_default_is_a_valid_value_of_an_optional_property(op: type[GraphOp]) -> None:
    properties = op.get_irdl_definition().properties
    for name, value in declared_defaults(op).items():
        assert isinstance(properties.get(name), OptionalDef), f"{op.name}: {name}"
        properties[name].constr.verify(value, VerificationContext())


def test_a_default_is_read_but_not_printed() -> None:
    block = Block(arg_types=[TensorType(f32, [1, 8, 2, 2])])
    op = DepthToSpaceOp.build_inferred([block.args[0]], {"blocksize": int_attr(2)})
    assert get_str(op_props(op), "mode") == "DCR"
    assert "mode" not in op.properties
    assert "mode" not in str(op)
