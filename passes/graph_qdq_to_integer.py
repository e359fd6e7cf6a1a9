"""graph-qdq-to-integer: a matmul or conv2d of dequantized 8-bit operands
becomes the same product in i32, dequantized after it (QLinearMatMul and
QLinearConv semantics: the quantize that follows stays); u8 data by a
constant i8 weight becomes the packed u8 x i8 kernel (VNNI)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, Signedness, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xtc.dialects.graph.base import (
    elem,
    float_attr,
    get_int,
    get_ints,
    ints_attr,
    op_props,
    shape_of,
)
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.elementwise import CastOp, MulOp, SubOp
from xtc.dialects.graph.nn import (
    DOT_DEPTH,
    DOT_LANES,
    Conv2dOp,
    Conv2dU8S8Op,
    MatmulOp,
    PadOp,
    kernel_layout,
)
from xtc.dialects.graph.tensor import ReshapeOp, SliceOp, TransposeOp

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
    cast(matmul(a - za, b - zb) in i32, f32) · (sa · sb). With `packed`, a
    u8 a (one constant za) by a constant b (b - zb within i8) is the packed
    u8 x i8 product instead (`u8s8_matmul`)."""

    def __init__(self, packed: bool) -> None:
        self.packed = packed

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
        packable = (
            u8s8_matmul_operands(a.source, a.zero_point, b.source, b.zero_point)
            if self.packed
            else None
        )
        if packable is not None:
            integer = u8s8_matmul(ops, a.source, *packable)
        else:
            lhs, rhs = integer_operand(ops, a), integer_operand(ops, b)
            integer = MatmulOp.build_inferred([lhs, rhs])
        sa, sb = (reshaped(ops, s, ()) if one_value(s) else s for s in (a.scale, b.scale))
        scale = add(ops, MulOp.build_inferred([sa, sb]))
        dequantize_after(rewriter, op, ops, integer, scale)


class PackedIntegerMatmul(RewritePattern):
    """matmul(cast(a, i32) - za, b) in i32, a u8, za one constant value (or
    none), b a constant whose values fit in i8 (what MatMulInteger and
    QLinearMatMul import as, their weight's zero point folded in) -> the
    packed u8 x i8 product (`u8s8_matmul`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter) -> None:
        lhs = widened_eight_bit(op.operands[0])
        if elem(op.results[0].type) != i32 or lhs is None:
            return
        packable = u8s8_matmul_operands(*lhs, op.operands[1], None)
        if packable is None:
            return
        ops: list[Operation] = []
        add(ops, u8s8_matmul(ops, lhs[0], *packable))
        rewriter.replace(op, ops)


def widened_eight_bit(value: SSAValue) -> tuple[SSAValue, SSAValue | None] | None:
    """(q, zero point) of a value written cast(q, i32) or cast(q, i32) - z,
    q an 8-bit tensor."""
    zero_point: SSAValue | None = None
    if isinstance(value.owner, SubOp):
        value, zero_point = value.owner.operands
    cast = value.owner
    if not isinstance(cast, CastOp) or not is_eight_bit(cast.operands[0]):
        return None
    return cast.operands[0], zero_point


I8_RANGE = (-128, 127)


def whole_within(values: np.ndarray, bounds: tuple[int, int]) -> bool:
    """Every value is a whole number within `bounds` (inclusive)."""
    low, high = bounds
    return bool(
        values.size
        and np.all(values == np.round(values))
        and values.min() >= low
        and values.max() <= high
    )


def u8s8_matmul_operands(
    x: SSAValue, x_zero: SSAValue | None, w: SSAValue, w_zero: SSAValue | None
) -> tuple[int, np.ndarray] | None:
    """(x's zero point, the i8 K×N weight w - w_zero) when matmul(x - x_zero,
    w - w_zero) can run as a packed u8 x i8 product: x u8 of rank 2 or
    more, x_zero one constant value, w - w_zero a constant K×N matrix of
    whole numbers within i8, K at most MAX_DEPTH."""
    if elem(x.type) != UI8 or len(shape_of(x.type)) < 2:
        return None
    zero_point = np.zeros(()) if x_zero is None else constant_array(x_zero)
    weight = constant_array(w)
    if zero_point is None or zero_point.size != 1 or weight is None or weight.ndim != 2:
        return None
    if not whole_within(zero_point, (0, 255)):
        return None
    if w_zero is not None:
        weight_zero = constant_array(w_zero)
        if weight_zero is None:
            return None
        weight = weight.astype(np.float64) - weight_zero.astype(np.float64)
    if not whole_within(weight, I8_RANGE):
        return None
    if weight.shape[0] > MAX_DEPTH:
        return None
    return int(zero_point.reshape(-1)[0]), weight.astype(np.int8)


def u8s8_matmul(
    ops: list[Operation], x: SSAValue, zero_point: int, weight: np.ndarray
) -> Operation:
    """matmul(x - zx, w) in i32 for x[..., M, K] u8 and w K×N i8, as a 1×1
    conv2d_u8s8: the rows of x flattened into the width of one NHWC image
    [1, 1, rows, K] (K padded with zeros to a multiple of 4), w a 1×1 OIHW
    weight with N padded to a multiple of 16 by zero output channels; the
    output [1, 1, rows, N'] read as rows×N (the padded channels
    dropped) minus the constant zx · Σ_k w[k, n], then reshaped to [..., M, N]."""
    shape = shape_of(x.type)
    depth, columns = weight.shape
    rows = int(np.prod(shape[:-1]))
    image = reshaped(ops, x, (1, 1, rows, depth))
    extra = -depth % DOT_DEPTH
    if extra:
        pads = ints_attr((0, 0, 0, 0, 0, 0, 0, extra))
        image = add(ops, PadOp.build_inferred([image], {"pads": pads}))
    lanes = -(-columns // DOT_LANES) * DOT_LANES
    oihw = np.zeros((lanes, depth, 1, 1), np.int8)
    oihw[:columns, :, 0, 0] = weight.T
    packed = add(ops, ConstantOp.from_array(packed_u8s8_weight(oihw), "weight_u8s8"))
    product = add(ops, Conv2dU8S8Op.build_inferred([image, packed]))
    by_row = reshaped(ops, product, (rows, lanes))
    if lanes != columns:
        kept = {"starts": ints_attr((0,)), "ends": ints_attr((columns,)), "axes": ints_attr((1,))}
        by_row = add(ops, SliceOp.build_inferred([by_row], kept))
    sums = weight.astype(np.int64).sum(axis=0)
    correction = (zero_point * sums).astype(np.int32)
    offset = add(ops, ConstantOp.from_array(correction, "zero_point_correction"))
    result = SubOp.build_inferred([by_row, offset])
    out_shape = (*shape[:-1], columns)
    if out_shape == (rows, columns):
        return result
    add(ops, result)
    return ReshapeOp.build_inferred([result.results[0]], {"shape": ints_attr(out_shape)})


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a constant, or of reshapes of one and casts of one to
    i32 or f32 (which hold every 8-bit value as it is), as numpy; None for
    another value. The callers check that the values fit 8 bits."""
    owner = value.owner
    while isinstance(owner, ReshapeOp) or (
        isinstance(owner, CastOp) and elem(owner.results[0].type) in (i32, f32)
    ):
        owner = owner.operands[0].owner
    if not isinstance(owner, ConstantOp):
        return None
    return owner.to_array().reshape(shape_of(value.type))


def packed_u8s8_weight(weight: np.ndarray) -> np.ndarray:
    """An O×C×KH×KW i8 weight (O a multiple of 16) in conv2d_u8s8's layout
    (O/16)×(C/4)×KH×KW×16×4, the channels padded with zeros to a multiple of 4."""
    o, c, kh, kw = weight.shape
    c4 = -(-c // DOT_DEPTH)
    padded = np.zeros((o, c4 * DOT_DEPTH, kh, kw), np.int8)
    padded[:, :c] = weight
    blocked = padded.reshape(o // DOT_LANES, DOT_LANES, c4, DOT_DEPTH, kh, kw)
    return np.ascontiguousarray(blocked.transpose(0, 2, 4, 5, 1, 3))


def u8s8_operands(op: Conv2dOp, x: Dequantized, w: Dequantized) -> tuple[int, np.ndarray] | None:
    """(the data's zero point, the i8 OIHW weight) when the conv can run as
    conv2d_u8s8: u8 data with a constant zero point, a constant i8 weight
    with zero points of 0 (symmetric, as quantize_static makes it), one
    group and output channels in whole blocks of 16."""
    if elem(x.source.type) != UI8 or get_int(op_props(op), "groups") != 1:
        return None
    zero_point = 0 if x.zero_point is None else constant_array(x.zero_point)
    weight = constant_array(w.source)
    if zero_point is None or weight is None or weight.dtype != np.int8:
        return None
    if w.zero_point is not None:
        weight_zero = constant_array(w.zero_point)
        if weight_zero is None or np.any(weight_zero != 0):
            return None
    if weight.shape[0] % DOT_LANES:
        return None
    return int(np.asarray(zero_point).reshape(-1)[0]), weight


def u8s8_product(
    ops: list[Operation], op: Conv2dOp, x: Dequantized, zero_point: int, weight: np.ndarray
) -> Operation:
    """conv2d(x - zx, w) in i32 as conv2d_u8s8 on x padded with zx (so that
    the padding still counts 0), laid out NHWC with its channels padded to a
    multiple of 4, minus the constant zx · Σ w of each output channel, its
    NHWC output transposed back to NCHW (graph-sink-transpose moves that
    transpose down to the next conv's, where the two cancel)."""
    channels = shape_of(x.source.type)[1]
    top, left, bottom, right = get_ints(op_props(op), "padding")
    extra = -channels % DOT_DEPTH
    pads = ints_attr((0, 0, top, left, 0, extra, bottom, right))
    padded = add(
        ops, PadOp.build_inferred([x.source], {"pads": pads, "value": float_attr(zero_point)})
    )
    nhwc = add(ops, TransposeOp.build_inferred([padded], {"perm": ints_attr((0, 2, 3, 1))}))
    packed = add(ops, ConstantOp.from_array(packed_u8s8_weight(weight), "weight_u8s8"))
    props = {name: op.properties[name] for name in ("strides", "dilation") if name in op.properties}
    product = add(ops, Conv2dU8S8Op.build_inferred([nhwc, packed], props))
    sums = weight.astype(np.int64).sum(axis=(1, 2, 3))
    correction = (zero_point * sums).astype(np.int32)
    offset = add(ops, ConstantOp.from_array(correction, "zero_point_correction"))
    corrected = add(ops, SubOp.build_inferred([product, offset]))
    return TransposeOp.build_inferred([corrected], {"perm": ints_attr(NHWC_TO_NCHW)})


NHWC_TO_NCHW = (0, 3, 1, 2)


UI8 = IntegerType(8, Signedness.UNSIGNED)


class Conv2dOfDequantized(RewritePattern):
    """conv2d((x - zx) · sx, (w - zw) · sw), x and w 8-bit, zx and sx one
    value, zw and sw one value or one per output channel, weight OIHW ->
    cast(conv2d(x - zx, w - zw) in i32, f32) · (sx · sw) (the padding is 0
    after the shift on both sides). With `packed`, a u8 x by a constant i8
    w (zw = 0, 16k output channels, one group) is conv2d_u8s8 instead
    (`u8s8_product`): 8-bit operands in memory, four products per i32 lane."""

    def __init__(self, packed: bool) -> None:
        self.packed = packed

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
        packable = u8s8_operands(op, x, w) if self.packed else None
        if packable is not None:
            integer = u8s8_product(ops, op, x, *packable)
        else:
            data, weight = integer_operand(ops, x), integer_operand(ops, w)
            integer = Conv2dOp.build_inferred([data, weight], op.properties)
        sx = reshaped(ops, x.scale, ())
        sw = reshaped(ops, w.scale, () if one_value(w.scale) else (channels, 1, 1))
        scale = add(ops, MulOp.build_inferred([sx, sw]))
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
    untouched; the old dequantize ops become dead (run `dce`). With
    `packed` (the default), a conv of u8 data by a constant symmetric i8
    weight is a `graph.conv2d_u8s8` of the data padded and made NHWC and
    the weight packed by 4 input channels, minus its zero-point correction,
    transposed back to NCHW;
    a matmul of u8 data x[..., M, K] (one constant zero point) by a
    constant K×N weight (less its zero points, within i8) is the same op
    as a 1×1 conv over the M' = prod(...)·M rows, read as [..., M, N] —
    for a dequantized matmul, and for an i32 matmul of such operands
    (MatMulInteger, QLinearMatMul) too.
    """

    name = "graph-qdq-to-integer"

    packed: bool = True
    """Convs and matmuls of u8 data by constant i8 weights become
    `graph.conv2d_u8s8` (8-bit operands, VNNI where the CPU has it);
    false keeps every product an i32 `graph.conv2d` / `graph.matmul`."""

    def patterns(self) -> list[RewritePattern]:
        integer: list[RewritePattern] = [PackedIntegerMatmul()] if self.packed else []
        return [MatmulOfDequantized(self.packed), Conv2dOfDequantized(self.packed), *integer]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(self.patterns()),
            apply_recursively=False,
        ).rewrite_module(op)
