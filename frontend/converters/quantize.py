"""ONNX converters: linear quantization (QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear) and integer products (MatMulInteger, ConvInteger,
QLinearMatMul, QLinearConv), written with the basic graph ops.

Quantizing divides by the scale, rounds half to even, adds the zero point and
saturates in f32 before the cast: every in-range value of an 8- or 16-bit
type is an integer f32 holds exactly, and a value past 2^24 saturates either
way. Integer products subtract the zero points in i32 and multiply or
convolve in i32 (graph.matmul and graph.conv2d on i32), so the accumulation
is exact; the QLinear ops then requantize the i32 result through f32, like
onnxruntime. Scales and zero points are per tensor, per axis or (opset 21+)
per block of `block_size` along the axis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
import onnx
from xdsl.dialects.builtin import f16, f32, f64, i32
from xdsl.ir import Attribute, SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph import reduce as rd
from xtc.dialects.graph import tensor as tn
from xtc.dialects.graph.base import (
    bool_attr,
    elem,
    float_attr,
    int_attr,
    ints_attr,
    is_float,
    shape_of,
    type_str,
)
from xtc.dialects.graph.constant import numpy_dtype
from xtc.frontend.converters import Node, converts
from xtc.frontend.converters.elementwise import ONNX_ELEMENT_TYPES, SATURATING_TYPES
from xtc.frontend.converters.nn import (
    along,
    bias_add,
    cast,
    conv,
    kernel_of,
    matmul,
    normalized_axis,
    reshape,
    spatial_input,
    window_attrs,
)

Outputs = Sequence[SSAValue | None]

INTEGER_QUANTIZED_TYPES = (
    onnx.TensorProto.INT8,
    onnx.TensorProto.UINT8,
    onnx.TensorProto.INT16,
    onnx.TensorProto.UINT16,
    onnx.TensorProto.INT4,
    onnx.TensorProto.UINT4,
    onnx.TensorProto.INT2,
    onnx.TensorProto.UINT2,
)
FLOAT_QUANTIZED_TYPES = (
    onnx.TensorProto.FLOAT8E4M3FN,
    onnx.TensorProto.FLOAT8E4M3FNUZ,
    onnx.TensorProto.FLOAT8E5M2,
    onnx.TensorProto.FLOAT8E5M2FNUZ,
    onnx.TensorProto.FLOAT4E2M1,
)
QUANTIZED_TYPES = INTEGER_QUANTIZED_TYPES + FLOAT_QUANTIZED_TYPES
"""The ONNX types xtc quantizes to."""

DEQUANTIZED_DTYPES = (
    np.int8,
    np.uint8,
    np.int16,
    np.uint16,
    np.int32,
    *(numpy_dtype(ONNX_ELEMENT_TYPES[t]) for t in QUANTIZED_TYPES[4:]),
)
"""The numpy types DequantizeLinear takes."""

FLOAT_WIDTHS = {np.dtype(np.float16): 16, np.dtype(np.float32): 32, np.dtype(np.float64): 64}
FLOAT_TYPES: dict[int, Attribute] = {16: f16, 32: f32, 64: f64}


# ---------------------------------------------------------------------------
# Element types.


def type_name(onnx_type: int) -> str:
    return onnx.TensorProto.DataType.Name(onnx_type) if onnx_type else "UNDEFINED"


def quantized_type(node: Node, onnx_type: int, what: str) -> Attribute:
    """The element type of a quantized ONNX type, refused unless 8 or 16 bits wide."""
    if onnx_type not in QUANTIZED_TYPES:
        node.fail(
            f"{what} has element type {type_name(onnx_type)}, which xtc does not support "
            "(it quantizes to 2- to 16-bit integers, float8 and float4)"
        )
    return ONNX_ELEMENT_TYPES[onnx_type]


def onnx_type_of(value: SSAValue) -> int:
    return onnx.helper.np_dtype_to_tensor_dtype(numpy_dtype(elem(value.type)))


def integer_input(node: Node, i: int, dtypes: Sequence[type], what: str) -> SSAValue:
    """Input `i`, refused unless its numpy type is one of `dtypes`."""
    value = node.input(i)
    if node.dtype(i) not in [np.dtype(d) for d in dtypes]:
        names = ", ".join(np.dtype(d).name for d in dtypes)
        node.fail(f"{what} (input {i}) {node.type_str(i)} must have element type {names}")
    return value


def float_operand(node: Node, i: int, what: str) -> SSAValue:
    value = node.input(i)
    if not is_float(elem(value.type)):
        node.fail(f"{what} (input {i}) {node.type_str(i)} must have a float element type")
    return value


def wider_float(*values: SSAValue) -> Attribute:
    """The float type numpy computes `values` in: the widest float among
    them, f64 for an integer operand (numpy's int32 / f32)."""
    widest = max(FLOAT_WIDTHS.get(numpy_dtype(elem(v.type)), 64) for v in values)
    return FLOAT_TYPES[widest]


# ---------------------------------------------------------------------------
# Scales and zero points broadcast against the quantized tensor.


def broadcast_param(
    node: Node, i: int, x_shape: tuple[int, ...], axis: int, block_size: int, what: str
) -> SSAValue:
    """Input `i` (a scale or zero point) shaped to broadcast against an input
    of shape `x_shape`: one value for the whole tensor, one per index of
    `axis`, or (block_size > 0) one per block of `block_size` indices along it.
    The axis is checked only where it is used."""
    value = node.input(i)
    shape = node.shape(i)
    if int(np.prod(shape)) == 1:
        return reshape(node, value, ())
    axis = normalized_axis(node, axis, len(x_shape))
    if block_size > 0:
        return blocked_param(node, value, x_shape, axis, block_size, what)
    if len(shape) != 1 or shape[0] != x_shape[axis]:
        node.fail(
            f"{what} {type_str(value.type)} must be a scalar or have {x_shape[axis]} values, "
            f"one per index of axis {axis} of the input {list(x_shape)}"
        )
    return along(node, value, axis, len(x_shape))


def blocked_param(
    node: Node, value: SSAValue, x_shape: tuple[int, ...], axis: int, block_size: int, what: str
) -> SSAValue:
    """A blocked scale or zero point repeated to the input's shape along
    `axis`: element j of the axis takes block j // block_size."""
    blocks = -(-x_shape[axis] // block_size)
    expected = (*x_shape[:axis], blocks, *x_shape[axis + 1 :])
    if shape_of(value.type) != expected:
        node.fail(
            f"{what} {type_str(value.type)} must have shape {list(expected)}: the input "
            f"{list(x_shape)} in blocks of {block_size} along axis {axis}"
        )
    indices = node.constant(np.arange(x_shape[axis], dtype=np.int64) // block_size)
    return node.emit1(tn.GatherOp, [value, indices], {"axis": int_attr(axis)})


def quantization_axis(node: Node) -> tuple[int, int]:
    """The node's (axis, block_size) attributes."""
    block_size = int(node.attr("block_size", 0))
    if block_size < 0:
        node.fail(f"block_size {block_size} must not be negative")
    return int(node.attr("axis", 1)), block_size


# ---------------------------------------------------------------------------
# The shared tail: round, add the zero point, saturate, cast.


def saturate(node: Node, value: SSAValue, zero_point: SSAValue | None, to: Attribute) -> SSAValue:
    """round(value) + zero_point (halves to even), clamped to the range of
    the integer type `to` and cast to it; for a float type `to` (float8,
    float4), value + zero_point cast to it, rounding to nearest even and
    saturating unless the node says `saturate = 0`. `value` is a float
    tensor."""
    if is_float(to):
        shifted = cast(node, value, f32)
        if zero_point is not None:
            shifted = node.emit1(ew.AddOp, [shifted, cast(node, zero_point, f32)])
        props: dict[str, Attribute] = {"to": to}
        if node.attr("saturate", 1) and isinstance(to, SATURATING_TYPES):
            props["saturate"] = bool_attr(True)
        return node.emit1(ew.CastOp, [shifted], props)
    rounded = cast(node, node.emit1(ew.RoundOp, [value]), f32)
    if zero_point is not None:
        rounded = node.emit1(ew.AddOp, [rounded, cast(node, zero_point, f32)])
    limits = ml_dtypes.iinfo(numpy_dtype(to))
    props = {"min": float_attr(float(limits.min)), "max": float_attr(float(limits.max))}
    return cast(node, node.emit1(ew.ClipOp, [rounded], props), to)


def zero_point_type(node: Node, i: int, default: Attribute) -> Attribute:
    """The quantized type a zero point input names, or `default` when absent."""
    if not node.has_input(i):
        return default
    return quantized_type(node, onnx_type_of(node.input(i)), f"zero point (input {i})")


# ---------------------------------------------------------------------------
# QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.


@converts("QuantizeLinear")
def convert_quantize_linear(node: Node) -> Outputs:
    """y = saturate(round(x / y_scale) + y_zero_point)."""
    x = node.input(0)
    if not (is_float(elem(x.type)) or node.dtype(0) == np.int32):
        node.fail(f"input {node.type_str(0)} must have a float or int32 element type")
    x_shape = node.shape(0)
    axis, block_size = quantization_axis(node)
    scale = float_operand(node, 1, "y_scale")
    output_dtype = int(node.attr("output_dtype", 0))
    default = quantized_type(node, output_dtype, "output_dtype") if output_dtype else None
    to = zero_point_type(node, 2, default or ONNX_ELEMENT_TYPES[onnx.TensorProto.UINT8])
    if default is not None and to != default:
        node.fail(f"output_dtype {type_name(output_dtype)} differs from the zero point's type")
    scale = broadcast_param(node, 1, x_shape, axis, block_size, "y_scale")
    precision = int(node.attr("precision", 0))
    if precision:
        if precision not in ONNX_ELEMENT_TYPES or not is_float(ONNX_ELEMENT_TYPES[precision]):
            node.fail(f"precision {type_name(precision)} is not a float type xtc supports")
        computed = ONNX_ELEMENT_TYPES[precision]
    else:
        computed = wider_float(x, scale)
    quotient = node.emit1(ew.DivOp, [cast(node, x, computed), cast(node, scale, computed)])
    zero_point = (
        broadcast_param(node, 2, x_shape, axis, block_size, "y_zero_point")
        if node.has_input(2)
        else None
    )
    return [saturate(node, quotient, zero_point, to)]


@converts("DequantizeLinear")
def convert_dequantize_linear(node: Node) -> Outputs:
    """y = (x - x_zero_point) * x_scale, in f32 (f64 for an f64 scale)."""
    x = integer_input(node, 0, DEQUANTIZED_DTYPES, "x")
    x_shape = node.shape(0)
    axis, block_size = quantization_axis(node)
    scale_value = float_operand(node, 1, "x_scale")
    if node.has_input(2) and node.dtype(2) != node.dtype(0):
        node.fail(
            f"x_zero_point {node.type_str(2)} must have the element type of x {node.type_str(0)}"
        )
    output_dtype = int(node.attr("output_dtype", 0))
    if output_dtype:
        if output_dtype not in ONNX_ELEMENT_TYPES or not is_float(ONNX_ELEMENT_TYPES[output_dtype]):
            node.fail(f"output_dtype {type_name(output_dtype)} is not a float type xtc supports")
        to = ONNX_ELEMENT_TYPES[output_dtype]
    else:
        to = elem(scale_value.type)
    computed = f64 if elem(scale_value.type) == f64 else f32
    # Constant 8-bit weights stay quantized for graph-qdq-to-integer;
    # graph-fold-constants folds what it leaves.
    fold = node.const(0) is None or node.dtype(0) not in (np.int8, np.uint8)
    shifted = node.emit1(ew.CastOp, [x], {"to": computed}, fold)
    if node.has_input(2):
        zero_point = broadcast_param(node, 2, x_shape, axis, block_size, "x_zero_point")
        shifted = node.emit1(ew.SubOp, [shifted, cast(node, zero_point, computed)], fold=fold)
    scale = cast(node, broadcast_param(node, 1, x_shape, axis, block_size, "x_scale"), computed)
    return [cast(node, node.emit1(ew.MulOp, [shifted, scale], fold=fold), to)]


@converts("DynamicQuantizeLinear")
def convert_dynamic_quantize_linear(node: Node) -> Outputs:
    """uint8 quantization over the range of x widened to include 0:
    scale = (max - min) / 255 (1 when x is all zeros), zero point =
    round(clamp(-min / scale, 0, 255))."""
    x = node.input(0)
    if node.dtype(0) != np.float32:
        node.fail(f"input {node.type_str(0)} must have element type f32")
    everything = {"axes": ints_attr(()), "keepdims": bool_attr(False)}
    zero = node.constant(np.float32(0))
    high = node.emit1(ew.MaxOp, [node.emit1(rd.ReduceMaxOp, [x], everything), zero])
    low = node.emit1(ew.MinOp, [node.emit1(rd.ReduceMinOp, [x], everything), zero])
    span = node.emit1(ew.SubOp, [high, low])
    empty = node.emit1(ew.EqualOp, [high, low])
    span = node.emit1(ew.WhereOp, [empty, node.constant(np.float32(1)), span])
    scale = node.emit1(ew.DivOp, [span, node.constant(np.float32(255))])
    initial = node.emit1(ew.DivOp, [node.emit1(ew.NegOp, [low]), scale])
    u8 = ONNX_ELEMENT_TYPES[onnx.TensorProto.UINT8]
    zero_point = saturate(node, initial, None, u8)
    y = saturate(node, node.emit1(ew.DivOp, [x, scale]), zero_point, u8)
    return [y, scale, zero_point]


# ---------------------------------------------------------------------------
# Integer products: zero points subtracted in i32, exact i32 accumulation.

EIGHT_BIT = (np.int8, np.uint8)


def eight_bit_input(node: Node, i: int, zero_point: int, what: str) -> SSAValue:
    """Input `i` (int8 or uint8), its zero point input `zero_point` checked
    to have the same element type when given."""
    value = integer_input(node, i, EIGHT_BIT, what)
    if node.has_input(zero_point) and node.dtype(zero_point) != node.dtype(i):
        node.fail(
            f"the zero point of {what} (input {zero_point}) {node.type_str(zero_point)} must "
            f"have the element type of {what} {node.type_str(i)}"
        )
    return value


def widened(node: Node, x: SSAValue, zero_point: SSAValue | None) -> SSAValue:
    """x in i32 minus its zero point (shaped to broadcast against x)."""
    wide = cast(node, x, i32)
    if zero_point is None:
        return wide
    return node.emit1(ew.SubOp, [wide, cast(node, zero_point, i32)])


def matrix_param(node: Node, i: int, operand: tuple[int, ...], kept: int, what: str) -> SSAValue:
    """A matrix operand's scale or zero point (input `i`): one value, or one
    per row (kept = -2: M values, or …×M×1) or per column (kept = -1: N
    values, or …×1×N), shaped to broadcast against the operand."""
    value = node.input(i)
    shape = node.shape(i)
    if int(np.prod(shape)) == 1:
        return reshape(node, value, ())
    if len(operand) >= 2 and len(shape) == 1 and shape[0] == operand[kept]:
        return reshape(node, value, (shape[0], 1)) if kept == -2 else value
    other = -1 if kept == -2 else -2
    if (
        len(operand) >= 2
        and len(shape) == len(operand)
        and shape[other] == 1
        and np.broadcast_shapes(shape, operand) == operand
    ):
        return value
    side = "row" if kept == -2 else "column"
    node.fail(
        f"{what} (input {i}) {node.type_str(i)} must be a scalar or have one value per {side} "
        f"of {list(operand)}"
    )


def channel_param(node: Node, i: int, channels: int, axis: int, rank: int, what: str) -> SSAValue:
    """A scale or zero point (input `i`) with one value, or one per output
    channel, shaped to broadcast along `axis` of a rank-`rank` tensor."""
    value = node.input(i)
    shape = node.shape(i)
    if int(np.prod(shape)) == 1:
        return reshape(node, value, ())
    if shape != (channels,):
        node.fail(
            f"{what} (input {i}) {node.type_str(i)} must be a scalar or have {channels} "
            "values, one per output channel"
        )
    return along(node, value, axis, rank)


def scalar_param(node: Node, i: int, what: str) -> SSAValue:
    """A per-tensor scale or zero point (input `i`) as a rank-0 value."""
    if int(np.prod(node.shape(i))) != 1:
        node.fail(f"{what} (input {i}) {node.type_str(i)} must be a scalar")
    return reshape(node, node.input(i), ())


def optional(node: Node, i: int, build: Callable[[], SSAValue]) -> SSAValue | None:
    return build() if node.has_input(i) else None


def integer_matmul(node: Node, a_index: int, a_zero: int, b_index: int, b_zero: int) -> SSAValue:
    """(A - a_zero_point) @ (B - b_zero_point) in i32."""
    a = eight_bit_input(node, a_index, a_zero, "A")
    b = eight_bit_input(node, b_index, b_zero, "B")
    a_shape, b_shape = node.shape(a_index), node.shape(b_index)
    a_zp = optional(node, a_zero, lambda: matrix_param(node, a_zero, a_shape, -2, "a_zero_point"))
    b_zp = optional(node, b_zero, lambda: matrix_param(node, b_zero, b_shape, -1, "b_zero_point"))
    return matmul(node, widened(node, a, a_zp), widened(node, b, b_zp))


def integer_conv(node: Node, x_index: int, x_zero: int, w_index: int, w_zero: int) -> SSAValue:
    """ONNX Conv of (x - x_zero_point) and (w - w_zero_point) in i32; the
    padding is zero after the shift, i.e. the zero point before it."""
    x, x_shape = spatial_input(node, x_index, "x")
    eight_bit_input(node, x_index, x_zero, "x")
    w = eight_bit_input(node, w_index, w_zero, "w")
    w_shape = node.shape(w_index)
    kernel = kernel_of(node, w, len(x_shape) - 2)
    window = window_attrs(node, x_shape[2:], kernel)
    x_zp = optional(node, x_zero, lambda: scalar_param(node, x_zero, "x_zero_point"))
    w_zp = optional(
        node,
        w_zero,
        lambda: channel_param(node, w_zero, w_shape[0], 0, len(w_shape), "w_zero_point"),
    )
    groups = int(node.attr("group", 1))
    return conv(node, widened(node, x, x_zp), widened(node, w, w_zp), window, groups)


def requantize(
    node: Node,
    accumulator: SSAValue,
    scales: tuple[SSAValue, SSAValue, SSAValue],
    zero_point: int,
    default: Attribute,
) -> SSAValue:
    """saturate(round(accumulator · a_scale · b_scale / y_scale) + y_zero_point):
    the multiplier in the scales' type (like onnx.reference), the product in f32."""
    a_scale, b_scale, y_scale = scales
    computed = wider_float(*scales)
    product = node.emit1(ew.MulOp, [cast(node, a_scale, computed), cast(node, b_scale, computed)])
    multiplier = cast(node, node.emit1(ew.DivOp, [product, cast(node, y_scale, computed)]), f32)
    value = node.emit1(ew.MulOp, [cast(node, accumulator, f32), multiplier])
    to = zero_point_type(node, zero_point, default)
    y_zp = optional(node, zero_point, lambda: scalar_param(node, zero_point, "y_zero_point"))
    return saturate(node, value, y_zp, to)


@converts("MatMulInteger")
def convert_matmul_integer(node: Node) -> Outputs:
    return [integer_matmul(node, 0, 2, 1, 3)]


@converts("ConvInteger")
def convert_conv_integer(node: Node) -> Outputs:
    return [integer_conv(node, 0, 2, 1, 3)]


@converts("QLinearMatMul")
def convert_qlinear_matmul(node: Node) -> Outputs:
    """Inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
    y_zero_point; scales and zero points of a per row, of b per column."""
    accumulator = integer_matmul(node, 0, 2, 3, 5)
    a_shape, b_shape = node.shape(0), node.shape(3)
    scales = (
        matrix_param(node, 1, a_shape, -2, "a_scale"),
        matrix_param(node, 4, b_shape, -1, "b_scale"),
        scalar_param(node, 6, "y_scale"),
    )
    for i in (1, 4, 6):
        float_operand(node, i, "scale")
    return [requantize(node, accumulator, scales, 7, elem(node.input(0).type))]


@converts("QLinearConv")
def convert_qlinear_conv(node: Node) -> Outputs:
    """Inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
    y_zero_point, B (i32 bias); w's scale and zero point per output channel."""
    accumulator = integer_conv(node, 0, 2, 3, 5)
    if node.has_input(8) and node.dtype(8) != np.int32:
        node.fail(f"bias B (input 8) {node.type_str(8)} must have element type int32")
    accumulator = bias_add(node, accumulator, node.optional_input(8))
    channels, rank = node.shape(3)[0], len(shape_of(accumulator.type))
    scales = (
        scalar_param(node, 1, "x_scale"),
        channel_param(node, 4, channels, 1, rank, "w_scale"),
        scalar_param(node, 6, "y_scale"),
    )
    for i in (1, 4, 6):
        float_operand(node, i, "scale")
    return [requantize(node, accumulator, scales, 7, elem(node.input(0).type))]
