"""Elementwise graph ops: unary math, binary arithmetic with numpy
broadcasting, comparisons, select, cast and clip."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AnyTensorTypeConstr
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from xtc.dialects.graph.base import (
    GraphOp,
    Props,
    broadcast_shapes,
    same_element_type,
    tensor,
)


class UnaryOp(GraphOp):
    """`y = f(x)` elementwise; the result has the operand's type."""

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        return [operand_types[0]]


class BinaryOp(GraphOp):
    """`z = f(x, y)` elementwise with numpy broadcasting; same element types."""

    lhs = operand_def(AnyTensorTypeConstr)
    rhs = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        element_type = same_element_type(cls.name, *operand_types)
        return [tensor(broadcast_shapes(cls.name, *operand_types), element_type)]


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0)."""

    name = "graph.relu"


@irdl_op_definition
class AddOp(BinaryOp):
    """x + y."""

    name = "graph.add"


ELEMENTWISE_OPS: list[type[GraphOp]] = [ReluOp, AddOp]
