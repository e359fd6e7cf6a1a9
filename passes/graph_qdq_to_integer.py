"""graph-qdq-to-integer: a matmul or conv2d of dequantized 8-bit operands
becomes the same product in i32, dequantized after it (QLinearMatMul and
QLinearConv semantics: the quantize that follows stays)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xtc.dialects.graph.base import elem, ints_attr, shape_of
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.elementwise import CastOp, MulOp, SubOp
from xtc.dialects.graph.nn import Conv2dOp, MatmulOp, kernel_layout
from xtc.dialects.graph.tensor import ReshapeOp

MAX_DEPTH = 2**31 // (255 * 255)
"""The longest sum of 8-bit products an i32 holds whatever the values."""


@dataclass(frozen=True)
class Dequantized:
    """A value written (source - zero_point) * scale in f32, with source an
    8-bit integer tensor and zero_point integral (what the
    DequantizeLinear converter emits)."""

    source: SSAValue
    zero_point: SSAValue | None
    scale: SSAValue

    def varies_only_along(self, axis: int | None, rank: int) -> bool:
        """Scale and zero point are one value, or vary only along `axis` of
        a rank-`rank` operand."""
        return all(
            along(shape_of(v.type), axis, rank)
            for v in (self.scale, self.zero_point)
            if v is not None
        )


def along(shape: tuple[int, ...], axis: int | None, rank: int) -> bool:
    """Every dimension of `shape` is 1 but the one that lines up (numpy
    broadcasting) with `axis` of a rank-`rank` operand; all are for None."""
    if len(shape) > rank:
        return False
    padded = (1,) * (rank - len(shape)) + shape
    kept = None if axis is None else axis % rank
    return all(d == 1 for i, d in enumerate(padded) if i != kept)


def is_eight_bit(value: SSAValue) -> bool:
    t = elem(value.type)
    return isinstance(t, IntegerType) and t.width.data == 8


def is_integral(value: SSAValue) -> bool:
    """An f32 value known to hold integers: a cast from an integer type or a
    constant of whole numbers."""
    owner = value.owner
    if isinstance(owner, CastOp):
        return isinstance(elem(owner.operands[0].type), IntegerType)
    if isinstance(owner, ConstantOp):
        array = owner.to_array()
        return bool(np.all(np.isfinite(array)) and np.all(array == np.round(array)))
    return False


def dequantized(value: SSAValue) -> Dequantized | None:
    """The parts of `value` when it is a dequantized 8-bit tensor in f32."""
    mul = value.owner
    if not isinstance(mul, MulOp) or elem(value.type) != f32:
        return None
    shifted, scale = mul.operands
    zero_point: SSAValue | None = None
    if isinstance(shifted.owner, SubOp):
        shifted, zero_point = shifted.owner.operands
        if not is_integral(zero_point):
            return None
    cast = shifted.owner
    if not isinstance(cast, CastOp) or not is_eight_bit(cast.operands[0]):
        return None
    return Dequantized(cast.operands[0], zero_point, scale)


def add(ops: list[Operation], op: Operation) -> SSAValue:
    """Appends `op` to the replacement being built; its result."""
    ops.append(op)
    return op.results[0]


def integer_operand(ops: list[Operation], part: Dequantized) -> SSAValue:
    """source - zero_point in i32."""
    wide = add(ops, CastOp.build_inferred([part.source], {"to": i32}))
    if part.zero_point is None:
        return wide
    zero_point = add(ops, CastOp.build_inferred([part.zero_point], {"to": i32}))
    return add(ops, SubOp.build_inferred([wide, zero_point]))


def reshaped(ops: list[Operation], value: SSAValue, shape: tuple[int, ...]) -> SSAValue:
    if shape_of(value.type) == shape:
        return value
    return add(ops, ReshapeOp.build_inferred([value], {"shape": ints_attr(shape)}))


def one_value(value: SSAValue) -> bool:
    return int(np.prod(shape_of(value.type))) == 1


def dequantize_after(
    rewriter: PatternRewriter,
    product: Operation,
    ops: list[Operation],
    integer: Operation,
    scale: SSAValue,
) -> None:
    """Replaces the float `product` by cast(integer product, f32) · scale."""
    accumulator = add(ops, integer)
    as_float = add(ops, CastOp.build_inferred([accumulator], {"to": f32}))
    add(ops, MulOp.build_inferred([as_float, scale]))
    rewriter.replace(product, ops)


class MatmulOfDequantized(RewritePattern):
    """matmul((a - za) · sa, (b - zb) · sb), a and b 8-bit, za and sa one
    value or one per row, zb and sb one value or one per column ->
    cast(matmul(a - za, b - zb) in i32, f32) · (sa · sb)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter) -> None:
        a, b = (dequantized(v) for v in op.operands)
        a_shape, b_shape = (shape_of(v.type) for v in op.operands)
        if a is None or b is None or min(len(a_shape), len(b_shape)) < 2:
            return
        if a_shape[-1] > MAX_DEPTH:
            return
        if not (a.varies_only_along(-2, len(a_shape)) and b.varies_only_along(-1, len(b_shape))):
            return
        ops: list[Operation] = []
        lhs, rhs = integer_operand(ops, a), integer_operand(ops, b)
        sa, sb = (reshaped(ops, s, ()) if one_value(s) else s for s in (a.scale, b.scale))
        scale = add(ops, MulOp.build_inferred([sa, sb]))
        dequantize_after(rewriter, op, ops, MatmulOp.build_inferred([lhs, rhs]), scale)


class Conv2dOfDequantized(RewritePattern):
    """conv2d((x - zx) · sx, (w - zw) · sw), x and w 8-bit, zx and sx one
    value, zw and sw one value or one per output channel, weight OIHW ->
    cast(conv2d(x - zx, w - zw) in i32, f32) · (sx · sw) (the padding is 0
    after the shift on both sides)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        x, w = (dequantized(v) for v in op.operands)
        if x is None or w is None or kernel_layout(op.properties) != "OIHW":
            return
        channels, cg, kh, kw = shape_of(op.operands[1].type)
        if cg * kh * kw > MAX_DEPTH:
            return
        if not (x.varies_only_along(None, 4) and w.varies_only_along(0, 4)):
            return
        ops: list[Operation] = []
        data, weight = integer_operand(ops, x), integer_operand(ops, w)
        sx = reshaped(ops, x.scale, ())
        sw = reshaped(ops, w.scale, () if one_value(w.scale) else (channels, 1, 1))
        scale = add(ops, MulOp.build_inferred([sx, sw]))
        integer = Conv2dOp.build_inferred([data, weight], op.properties)
        dequantize_after(rewriter, op, ops, integer, scale)


@dataclass(frozen=True)
class GraphQdqToInteger(ModulePass):
    """Moves dequantization past matrix products and convolutions.

    Expects: a graph module where DequantizeLinear is written
    (cast(q, f32) - zero_point) · scale with q int8 or uint8 (as the ONNX
    importer writes it, constant weights included), before
    graph-fold-constants folds the constant ones. Produces: each
    `graph.matmul` / `graph.conv2d` (OIHW) of two such values whose scales
    factor out of the sum (per tensor, per row of the lhs, per column of the
    rhs, per output channel of the weight) computed on i32 operands
    q - zero_point with exact i32 accumulation, then cast to f32 and
    multiplied by the product of the scales. The quantize that follows is
    untouched; the old dequantize ops become dead (run `dce`).
    """

    name = "graph-qdq-to-integer"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([MatmulOfDequantized(), Conv2dOfDequantized()]),
            apply_recursively=False,
        ).rewrite_module(op)
