"""graph-simplify-inference: batch norm folded into the producing conv2d or
dense, the rest expanded to a multiply-add; dropout and identity removed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xtc.dialects.graph.base import get_float, get_int, int_attr, op_props, shape_of
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.elementwise import AddOp, DropoutOp, IdentityOp, MulOp
from xtc.dialects.graph.nn import (
    BatchNormOp,
    BiasAddOp,
    Conv2dOp,
    DenseOp,
    kernel_layout,
    output_block,
)


def constant_value(value: SSAValue) -> np.ndarray | None:
    owner = value.owner
    return owner.to_array() if isinstance(owner, ConstantOp) else None


def batch_norm_scale_shift(bn: BatchNormOp) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, shift) with bn(x) = x * scale + shift along the channel axis,
    or None when a parameter is not constant."""
    params = [constant_value(v) for v in bn.operands[1:]]
    if any(p is None for p in params):
        return None
    gamma, beta, mean, variance = (cast(np.ndarray, p).astype(np.float64) for p in params)
    epsilon = get_float(op_props(bn), "epsilon")
    scale = gamma / np.sqrt(variance + epsilon)
    return scale, beta - mean * scale


def channel_axis(bn: BatchNormOp) -> int:
    rank = len(shape_of(bn.operands[0].type))
    return get_int(op_props(bn), "axis") % rank


def only_user_is(value: SSAValue, op: Operation) -> bool:
    return all(use.operation is op for use in value.uses)


def producer_with_bias(
    bn: BatchNormOp,
) -> tuple[Operation, np.ndarray | None, list[Operation]] | None:
    """The op that feeds the batch norm, through an optional constant
    bias_add on the same axis: (producer, bias or None, ops to erase)."""
    value = bn.operands[0]
    if not only_user_is(value, bn):
        return None
    owner = value.owner
    if isinstance(owner, BiasAddOp):
        bias = constant_value(owner.operands[1])
        rank = len(shape_of(owner.operands[0].type))
        same_axis = get_int(op_props(owner), "axis") % rank == channel_axis(bn)
        inner = owner.operands[0]
        if bias is None or not same_axis or not only_user_is(inner, owner):
            return None
        if not isinstance(inner.owner, Operation):
            return None
        return inner.owner, bias, [owner, inner.owner]
    if isinstance(owner, Operation):
        return owner, None, [owner]
    return None


def replace_with_folded(
    rewriter: PatternRewriter,
    bn: BatchNormOp,
    producer: Conv2dOp | DenseOp,
    weight: np.ndarray,
    bias: np.ndarray,
    bias_axis: int,
    dead: list[Operation],
) -> None:
    dtype = weight.dtype
    new_weight = ConstantOp.from_array(weight.astype(dtype, copy=False), "folded_weight")
    new_bias = ConstantOp.from_array(bias.astype(dtype), "folded_bias")
    new_producer = type(producer).build_inferred(
        [producer.operands[0], new_weight], producer.properties
    )
    with_bias = BiasAddOp.build_inferred([new_producer, new_bias], {"axis": int_attr(bias_axis)})
    rewriter.replace(bn, [new_weight, new_bias, new_producer, with_bias])
    for op in dead:
        rewriter.erase(op)


def _per_output_channel(scale: np.ndarray, layout: str) -> np.ndarray:
    """`scale` (one value per output channel) shaped to multiply a conv2d
    weight of `layout` (see graph.conv2d)."""
    block = output_block(layout)
    if layout == "IHWO":
        return scale.reshape(1, 1, 1, -1)
    if block is not None:
        return scale.reshape(-1, 1, 1, 1, block)
    return scale.reshape(-1, 1, 1, 1)


def _scaled(weight: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """weight * scale in float64, rounded once to the weight's type, as
    `(weight * scale).astype(weight.dtype)` is, without the float64
    product in memory (twice the weight's bytes)."""
    scaled = np.empty(np.broadcast_shapes(weight.shape, scale.shape), dtype=weight.dtype)
    np.multiply(weight, scale, out=scaled, dtype=np.float64, casting="unsafe")
    return scaled


class FoldBatchNormIntoConv2d(RewritePattern):
    """batch_norm(conv2d(x, W) [+ b]) on the channel axis, W and the batch-norm
    parameters constant -> bias_add(conv2d(x, W * scale), (b - mean) * scale + beta)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: BatchNormOp, rewriter: PatternRewriter) -> None:
        found = producer_with_bias(bn)
        folded = batch_norm_scale_shift(bn)
        if found is None or folded is None or channel_axis(bn) != 1:
            return
        conv, bias, dead = found
        if not isinstance(conv, Conv2dOp) or (weight := constant_value(conv.operands[1])) is None:
            return
        scale, shift = folded
        new_weight = _scaled(weight, _per_output_channel(scale, kernel_layout(conv.properties)))
        new_bias = (0.0 if bias is None else bias) * scale + shift
        replace_with_folded(rewriter, bn, conv, new_weight, new_bias, 1, dead)


class FoldBatchNormIntoDense(RewritePattern):
    """batch_norm(dense(x, W) [+ b]) on the last axis, W (N×K) and the
    parameters constant -> bias_add(dense(x, W * scale[:, None]), ...)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: BatchNormOp, rewriter: PatternRewriter) -> None:
        found = producer_with_bias(bn)
        folded = batch_norm_scale_shift(bn)
        rank = len(shape_of(bn.operands[0].type))
        if found is None or folded is None or channel_axis(bn) != rank - 1:
            return
        dense, bias, dead = found
        if not isinstance(dense, DenseOp) or (weight := constant_value(dense.operands[1])) is None:
            return
        scale, shift = folded
        new_weight = _scaled(weight, scale.reshape(-1, 1))
        new_bias = (0.0 if bias is None else bias) * scale + shift
        replace_with_folded(rewriter, bn, dense, new_weight, new_bias, rank - 1, dead)


class ExpandBatchNorm(RewritePattern):
    """A batch norm with constant parameters that feeds from nothing foldable
    -> x * scale + shift, the constants shaped to broadcast on the channel axis."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: BatchNormOp, rewriter: PatternRewriter) -> None:
        folded = batch_norm_scale_shift(bn)
        if folded is None:
            return
        x = bn.operands[0]
        rank = len(shape_of(x.type))
        trailing = (1,) * (rank - channel_axis(bn) - 1)
        dtype = cast(np.ndarray, constant_value(bn.operands[1])).dtype
        scale, shift = (
            ConstantOp.from_array(v.reshape(v.shape + trailing).astype(dtype), name)
            for v, name in zip(folded, ("bn_scale", "bn_shift"), strict=True)
        )
        scaled = MulOp.build_inferred([x, scale])
        shifted = AddOp.build_inferred([scaled, shift])
        rewriter.replace(bn, [scale, shift, scaled, shifted])


class RemoveDropoutAndIdentity(RewritePattern):
    """dropout(x) -> x and identity(x) -> x (inference)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, DropoutOp | IdentityOp):
            rewriter.replace(op, [], [op.operands[0]])


@dataclass(frozen=True)
class GraphSimplifyInference(ModulePass):
    """Rewrites a graph for inference.

    Expects: a graph module whose batch-norm parameters are constants (as an
    imported model's are). Produces: no `graph.dropout` or `graph.identity`;
    each `graph.batch_norm` that follows a conv2d (channel axis 1) or a dense
    (last axis) with constant weights folded into new constant weights and a
    `graph.bias_add`; the other batch norms with constant parameters become
    `graph.mul` + `graph.add` with constant scale and shift. Batch norms with
    non-constant parameters stay. Old constants become dead (run `dce`).
    """

    name = "graph-simplify-inference"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    RemoveDropoutAndIdentity(),
                    FoldBatchNormIntoConv2d(),
                    FoldBatchNormIntoDense(),
                ]
            ),
            apply_recursively=True,
        )
        walker.rewrite_module(op)
        # Expansion runs after folding so it only sees what could not fold.
        PatternRewriteWalker(ExpandBatchNorm(), apply_recursively=False).rewrite_module(op)
