"""An xtc op plugin in one file: ShuffleNet's channel shuffle, which ONNX
lacks, as the ONNX op `com.example.ChannelShuffle` (attribute `group`).

The channels of an N x C x ... tensor, seen as `group` rows of C / group,
are read column by column: output channel c is input channel
(c % group) * (C / group) + c // group. It lets grouped convolutions share
information across groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, AnyTensorTypeConstr, IntegerAttr
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from xtc.dialects.graph.base import (
    GraphOp,
    OpPattern,
    Props,
    ShapeError,
    as_tensor,
    get_int,
    int_attr,
    type_str,
)
from xtc.frontend.converters import Node
from xtc.ops.te_builder import Expr, KernelBuilder, Tensor
from xtc.plugins import compute_rule, converts, reference


@irdl_op_definition
class ChannelShuffleOp(GraphOp):
    """`example.channel_shuffle %x {group = G : i64} : (T) -> T` over the
    channels (axis 1) of a tensor of rank 2 or more."""

    name = "example.channel_shuffle"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    group = prop_def(IntegerAttr[I64])

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    # A pure reindexing: graph-fuse-ops fuses it with its neighbours.
    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x = as_tensor(cls.name, operand_types[0], "input")
        shape = x.get_shape()
        group = get_int(props, "group")
        if len(shape) < 2:
            raise ShapeError(f"{cls.name}: {type_str(x)} has no channel axis (rank < 2)")
        if group < 1 or shape[1] % group:
            raise ShapeError(
                f"{cls.name}: group {group} does not divide the {shape[1]} channels "
                f"of {type_str(x)}"
            )
        return [x]


Example = Dialect("example", [ChannelShuffleOp], [])


@converts("ChannelShuffle", domain="com.example")
def convert_channel_shuffle(node: Node) -> list[SSAValue]:
    group = node.attr("group")
    if not isinstance(group, int):
        node.fail("the integer attribute 'group' is required")
    return [node.emit1(ChannelShuffleOp, [node.input(0)], {"group": int_attr(group)})]


@reference(ChannelShuffleOp)
def channel_shuffle(x: np.ndarray, *, group: int) -> np.ndarray:
    """The numpy definition: rows of channels transposed into columns."""
    n, channels, *rest = x.shape
    grouped = x.reshape(n, group, channels // group, *rest)
    return grouped.swapaxes(1, 2).reshape(x.shape)


@compute_rule(ChannelShuffleOp)
def channel_shuffle_compute(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[n, c, ...] = in[n, (c % group) * (C / group) + c // group, ...]."""
    (x,) = inputs
    group = get_int(op.properties, "group")
    per_group = x.shape[1] // group

    def body(n: Expr, c: Expr, *rest: Expr) -> Expr:
        return x[[n, (c % group) * per_group + c // group, *rest]]

    return [k.compute(x.shape, x.element_type, body)]
