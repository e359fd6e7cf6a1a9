"""graph-fold-scale-axis: a constant per-channel scale folded into the
constant weights of the conv2d, dense or matmul beside it (TVM's
FoldScaleAxis), backward (a scale of the output) and forward (a scale of a
conv2d's input)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xtc.dialects.graph.base import elem, get_int, op_props, shape_of
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.elementwise import AddOp, MulOp
from xtc.dialects.graph.nn import BiasAddOp, Conv2dOp, DenseOp, MatmulOp, kernel_layout
from xtc.passes.graph_simplify_inference import constant_value, only_user_is

WeightedOp = Conv2dOp | DenseOp | MatmulOp
"""The ops whose constant weight takes a scale of their output."""


# ------------------------------------------------------------- the scale


def has_exact_numpy_dtype(value: SSAValue) -> bool:
    """f16, f32 or f64: a float whose constants numpy computes and stores in
    the same type (bf16 would come back as f32; integers may overflow)."""
    return isinstance(elem(value.type), Float16Type | Float32Type | Float64Type)


def split_constant(op: MulOp | AddOp) -> tuple[SSAValue, np.ndarray] | None:
    """(the other operand, the constant) of a binary op with a
    `graph.constant` operand (the right-hand one when both are)."""
    lhs, rhs = op.operands
    for value, other in ((rhs, lhs), (lhs, rhs)):
        array = constant_value(value)
        if array is not None:
            return other, array
    return None


def keeps_shape(op: Operation, value: SSAValue) -> bool:
    """The binary op `op` broadcasts its constant into `value`'s shape
    without widening it."""
    return op.results[0].type == value.type


def factors_along(scale: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """The `shape[axis]` finite factors that `scale` multiplies a tensor of
    `shape` by, when it broadcasts into `shape` (no wider) and varies along
    `axis` only; else None."""
    rank = len(shape)
    if scale.ndim > rank or not np.all(np.isfinite(scale)):
        return None
    aligned = scale.reshape((1,) * (rank - scale.ndim) + scale.shape)
    for i, size in enumerate(aligned.shape):
        if size != 1 and (i != axis or size != shape[axis]):
            return None
    return np.broadcast_to(aligned.reshape(-1), (shape[axis],))


def scaled(weight: np.ndarray, factors: np.ndarray) -> np.ndarray:
    """weight * factors (shaped to broadcast), computed in f64 and stored
    in the weight's dtype."""
    return (weight.astype(np.float64) * factors).astype(weight.dtype)


# ------------------------------------------------------- backward folding


@dataclass(frozen=True)
class ScaledOutput:
    """`mul(producer(x, W) [+ bias], scale)` as found: the weighted op, its
    constant weight, the op adding a constant bias (or None) and that
    bias, and one factor per output channel."""

    producer: WeightedOp
    weight: np.ndarray
    bias_op: AddOp | BiasAddOp | None
    bias: np.ndarray | None
    factors: np.ndarray


def output_channel_axis(producer: WeightedOp) -> int:
    """Axis 1 of a conv2d's NCHW output, the last axis of a dense or matmul's."""
    return 1 if isinstance(producer, Conv2dOp) else len(shape_of(producer.output.type)) - 1


def producer_through_bias(
    value: SSAValue,
) -> tuple[SSAValue, AddOp | BiasAddOp | None, np.ndarray | None] | None:
    """`value`, or what a constant bias is added to to make it: (the
    unbiased value, the adding op or None, the bias or None). None when a
    bias is not constant or widens the shape, or the unbiased value has
    other users."""
    owner = value.owner
    if isinstance(owner, AddOp):
        found = split_constant(owner)
        if found is None or not keeps_shape(owner, found[0]):
            return None
        inner, bias = found
    elif isinstance(owner, BiasAddOp):
        inner, bias = owner.input, constant_value(owner.bias)
        if bias is None:
            return None
    else:
        return value, None, None
    if not only_user_is(inner, owner):
        return None
    return inner, owner, bias


def bias_add_axis(op: BiasAddOp) -> int:
    return get_int(op_props(op), "axis") % len(shape_of(op.input.type))


def match_scaled_output(mul: MulOp, producer_type: type[WeightedOp]) -> ScaledOutput | None:
    """`mul` as a per-output-channel constant scale of a `producer_type`
    op with a constant weight, through an optional constant bias (a
    bias_add on that axis or an add), each intermediate value used by the
    next op only."""
    found = split_constant(mul)
    if found is None or not has_exact_numpy_dtype(mul.output):
        return None
    value, scale = found
    if not only_user_is(value, mul) or not keeps_shape(mul, value):
        return None
    through = producer_through_bias(value)
    if through is None:
        return None
    inner, bias_op, bias = through
    producer = inner.owner
    if not isinstance(producer, producer_type):
        return None
    axis = output_channel_axis(producer)
    if isinstance(bias_op, BiasAddOp) and bias_add_axis(bias_op) != axis:
        return None
    factors = factors_along(scale, shape_of(value.type), axis)
    weight = constant_value(producer.operands[1])
    if factors is None or weight is None:
        return None
    return ScaledOutput(producer, weight, bias_op, bias, factors)


def replace_scaled_output(
    rewriter: PatternRewriter, mul: MulOp, found: ScaledOutput, new_weight: np.ndarray
) -> None:
    """mul -> producer(x, new_weight) [+ bias * scale]; the old producer and
    bias op are erased."""
    weight_op = ConstantOp.from_array(new_weight, "scaled_weight")
    producer = found.producer
    new_producer = type(producer).build_inferred(
        [producer.operands[0], weight_op], producer.properties
    )
    new_ops: list[Operation] = [weight_op, new_producer]
    if found.bias_op is not None and found.bias is not None:
        factors = found.factors
        if isinstance(found.bias_op, AddOp):
            # Shaped like the output's channel axis, so any bias shape broadcasts.
            rank = len(shape_of(mul.output.type))
            axis = output_channel_axis(producer)
            factors = factors.reshape((-1,) + (1,) * (rank - axis - 1))
        bias_op = ConstantOp.from_array(scaled(found.bias, factors), "scaled_bias")
        add = type(found.bias_op).build_inferred([new_producer, bias_op], found.bias_op.properties)
        new_ops += [bias_op, add]
    rewriter.replace(mul, new_ops)
    if found.bias_op is not None:
        rewriter.erase(found.bias_op)
    rewriter.erase(producer)


class FoldOutputScaleIntoConv2d(RewritePattern):
    """mul(conv2d(x, W) [+ b], s), W constant OIHW, s constant per output
    channel -> conv2d(x, W * s[o]) [+ b * s]."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter) -> None:
        found = match_scaled_output(mul, Conv2dOp)
        if found is None or kernel_layout(found.producer.properties) != "OIHW":
            return
        new_weight = scaled(found.weight, found.factors.reshape(-1, 1, 1, 1))
        replace_scaled_output(rewriter, mul, found, new_weight)


class FoldOutputScaleIntoDense(RewritePattern):
    """mul(dense(x, W) [+ b], s), W constant N×K, s constant along the last
    axis -> dense(x, W * s[:, None]) [+ b * s]."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter) -> None:
        found = match_scaled_output(mul, DenseOp)
        if found is None:
            return
        new_weight = scaled(found.weight, found.factors.reshape(-1, 1))
        replace_scaled_output(rewriter, mul, found, new_weight)


class FoldOutputScaleIntoMatmul(RewritePattern):
    """mul(matmul(x, W) [+ b], s), W a constant K×N matrix, s constant along
    the last axis -> matmul(x, W * s[None, :]) [+ b * s]."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter) -> None:
        found = match_scaled_output(mul, MatmulOp)
        if found is None or found.weight.ndim != 2:
            return
        new_weight = scaled(found.weight, found.factors.reshape(1, -1))
        replace_scaled_output(rewriter, mul, found, new_weight)


# -------------------------------------------------------- forward folding


class FoldInputScaleIntoConv2d(RewritePattern):
    """conv2d(mul(x, s), W), groups 1, W constant OIHW, s constant per input
    channel -> conv2d(x, W * s[c]). Zero padding commutes with the scale
    (pad(x) * s = pad(x * s) since 0 * s = 0 for a finite s), so padded
    convolutions fold too."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: Conv2dOp, rewriter: PatternRewriter) -> None:
        mul = conv.input.owner
        if not isinstance(mul, MulOp) or not only_user_is(conv.input, conv):
            return
        if get_int(op_props(conv), "groups") != 1 or kernel_layout(conv.properties) != "OIHW":
            return
        found = split_constant(mul)
        weight = constant_value(conv.weight)
        if found is None or weight is None or not has_exact_numpy_dtype(conv.input):
            return
        x, scale = found
        factors = factors_along(scale, shape_of(x.type), 1)
        if factors is None or not keeps_shape(mul, x):
            return
        weight_op = ConstantOp.from_array(
            scaled(weight, factors.reshape(1, -1, 1, 1)), "scaled_weight"
        )
        new_conv = Conv2dOp.build_inferred([x, weight_op], conv.properties)
        rewriter.replace(conv, [weight_op, new_conv])
        rewriter.erase(mul)


@dataclass(frozen=True)
class GraphFoldScaleAxis(ModulePass):
    """Folds constant per-channel scales into constant weights.

    Expects: a graph module in the import layout (conv2d weights OIHW, so
    before graph-alter-layout), best after graph-simplify-inference (whose
    expanded batch norms give such scales). Produces, repeatedly:
    - backward: `mul(conv2d(x, W), s)` with s varying along the output
      channels only (shape [O,1,1], [1,O,1,1], or a scalar) becomes
      `conv2d(x, W * s[o])`; with a constant bias between
      (`bias_add` on the scaled axis or `add` of a constant that does not
      widen the shape) the bias becomes `b * s`. Likewise `dense(x, W)` (W N×K) and
      `matmul(x, W)` (W K×N) with s along the last axis.
    - forward: `conv2d(mul(x, s), W)` with groups 1 and s varying along the
      input channels only becomes `conv2d(x, W * s[c])`; zero padding is no
      obstacle since pad(x * s) = pad(x) * s.
    The new weights and biases are new constants computed with numpy in
    f64 and stored in the weight's dtype (f16, f32 or f64); the old
    constants become dead (run `dce`).

    Leaves alone (never an error): a scale or weight that is not a
    `graph.constant`, a scale that varies along another axis, widens the
    shape or holds inf or nan, an intermediate value with other users, a
    kernel layout other than OIHW, forward folding into a grouped conv2d,
    an `add` before a conv2d (zero padding would not commute with it),
    integer and bf16 tensors.
    """

    name = "graph-fold-scale-axis"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    FoldOutputScaleIntoConv2d(),
                    FoldOutputScaleIntoDense(),
                    FoldOutputScaleIntoMatmul(),
                    FoldInputScaleIntoConv2d(),
                ]
            ),
            apply_recursively=True,
        )
        walker.rewrite_module(op)
