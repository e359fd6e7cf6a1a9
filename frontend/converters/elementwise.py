"""ONNX converters: elementwise ops (unary math, binary arithmetic with
numpy broadcasting, comparisons, logic, select, casts)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph.base import GraphOp
from xtc.frontend.converters import Node, converts

UNARY: dict[str, type[GraphOp]] = {
    "Relu": ew.ReluOp,
}

BINARY: dict[str, type[GraphOp]] = {
    "Add": ew.AddOp,
}


@converts(*UNARY)
def convert_unary(node: Node) -> Sequence[SSAValue | None]:
    return node.emit(UNARY[node.op_type], [node.input(0)])


@converts(*BINARY)
def convert_binary(node: Node) -> Sequence[SSAValue | None]:
    return node.emit(BINARY[node.op_type], [node.input(0), node.input(1)])
