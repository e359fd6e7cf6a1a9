"""ONNX converters: elementwise ops (unary math, binary arithmetic with numpy
broadcasting, comparisons, logic, bitwise ops, select, casts).

Ops with a graph op of their own map one to one (the tables below); the
activations ONNX defines as formulas (Elu, Selu, Mish, PRelu, Shrink, ...) are
written here with the basic graph ops, their constants in the input's type.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    IntegerType,
    Signedness,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph.base import (
    GraphOp,
    bool_attr,
    elem,
    float_attr,
    is_float,
    str_attr,
)
from xtc.dialects.graph.constant import numpy_dtype
from xtc.dialects.graph.elementwise import E8M0_ROUND_MODES
from xtc.frontend.converters import Node, StringValue, Value, converts

UNARY: dict[str, type[GraphOp]] = {
    "Relu": ew.ReluOp,
    "Sigmoid": ew.SigmoidOp,
    "Tanh": ew.TanhOp,
    "Erf": ew.ErfOp,
    "Exp": ew.ExpOp,
    "Log": ew.LogOp,
    "Sqrt": ew.SqrtOp,
    "Abs": ew.AbsOp,
    "Neg": ew.NegOp,
    "Floor": ew.FloorOp,
    "Ceil": ew.CeilOp,
    "Round": ew.RoundOp,
    "Sign": ew.SignOp,
    "Reciprocal": ew.ReciprocalOp,
    "Sin": ew.SinOp,
    "Cos": ew.CosOp,
    "Tan": ew.TanOp,
    "Asin": ew.AsinOp,
    "Acos": ew.AcosOp,
    "Atan": ew.AtanOp,
    "Sinh": ew.SinhOp,
    "Cosh": ew.CoshOp,
    "Asinh": ew.AsinhOp,
    "Acosh": ew.AcoshOp,
    "Atanh": ew.AtanhOp,
    "Softplus": ew.SoftplusOp,
    "Not": ew.NotOp,
    "BitwiseNot": ew.BitwiseNotOp,
    "Identity": ew.IdentityOp,
}

BINARY: dict[str, type[GraphOp]] = {
    "Add": ew.AddOp,
    "Sub": ew.SubOp,
    "Mul": ew.MulOp,
    "Div": ew.DivOp,
    "Pow": ew.PowOp,
    "And": ew.AndOp,
    "Or": ew.OrOp,
    "Xor": ew.XorOp,
    "BitwiseAnd": ew.BitwiseAndOp,
    "BitwiseOr": ew.BitwiseOrOp,
    "BitwiseXor": ew.BitwiseXorOp,
    "Equal": ew.EqualOp,
    "Greater": ew.GreaterOp,
    "Less": ew.LessOp,
    "GreaterOrEqual": ew.GreaterEqualOp,
    "LessOrEqual": ew.LessEqualOp,
}

VARIADIC: dict[str, type[GraphOp]] = {
    "Max": ew.MaxOp,
    "Min": ew.MinOp,
    "Sum": ew.AddOp,
}

ONNX_ELEMENT_TYPES: dict[int, Attribute] = {
    onnx.TensorProto.FLOAT: f32,
    onnx.TensorProto.DOUBLE: f64,
    onnx.TensorProto.FLOAT16: f16,
    onnx.TensorProto.BFLOAT16: BFloat16Type(),
    onnx.TensorProto.BOOL: i1,
    onnx.TensorProto.INT8: i8,
    onnx.TensorProto.INT16: i16,
    onnx.TensorProto.INT32: i32,
    onnx.TensorProto.INT64: i64,
    onnx.TensorProto.UINT8: IntegerType(8, Signedness.UNSIGNED),
    onnx.TensorProto.UINT16: IntegerType(16, Signedness.UNSIGNED),
    onnx.TensorProto.UINT32: IntegerType(32, Signedness.UNSIGNED),
    onnx.TensorProto.UINT64: IntegerType(64, Signedness.UNSIGNED),
    onnx.TensorProto.FLOAT8E4M3FN: Float8E4M3FNType(),
    onnx.TensorProto.FLOAT8E4M3FNUZ: Float8E4M3FNUZType(),
    onnx.TensorProto.FLOAT8E5M2: Float8E5M2Type(),
    onnx.TensorProto.FLOAT8E5M2FNUZ: Float8E5M2FNUZType(),
    onnx.TensorProto.FLOAT8E8M0: Float8E8M0FNUType(),
    onnx.TensorProto.FLOAT4E2M1: Float4E2M1FNType(),
    onnx.TensorProto.INT4: IntegerType(4),
    onnx.TensorProto.UINT4: IntegerType(4, Signedness.UNSIGNED),
    onnx.TensorProto.INT2: IntegerType(2),
    onnx.TensorProto.UINT2: IntegerType(2, Signedness.UNSIGNED),
}

SATURATING_TYPES = (Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type, Float8E5M2FNUZType)
"""The targets of Cast's `saturate` attribute (default 1): out of range gives
the largest finite value rather than inf or NaN."""


def scalar(node: Node, value: float, like: SSAValue) -> SSAValue:
    """A rank-0 constant of `like`'s element type."""
    with np.errstate(over="ignore"):
        return node.constant(np.array(value).astype(numpy_dtype(elem(like.type))))


def float_input(node: Node, i: int) -> SSAValue:
    """Input `i`, refused unless it has a float element type."""
    x = node.input(i)
    if not is_float(elem(x.type)):
        node.fail(f"input {i} {node.type_str(i)} must have a float element type")
    return x


# ---------------------------------------------------------------------------
# One-to-one ops.


@converts(*UNARY)
def convert_unary(node: Node) -> Sequence[Value | None]:
    if node.op_type == "Identity" and not isinstance(node.value(0), SSAValue):
        return [node.value(0)]  # a sequence or an optional passes as it is
    return node.emit(UNARY[node.op_type], [node.input(0)])


@converts(*BINARY)
def convert_binary(node: Node) -> Sequence[Value | None]:
    if node.op_type == "Equal" and isinstance(node.value(0), StringValue):
        from xtc.frontend.converters.strings import equal_strings

        return [equal_strings(node)]
    return node.emit(BINARY[node.op_type], [node.input(0), node.input(1)])


@converts(*VARIADIC)
def convert_variadic(node: Node) -> Sequence[SSAValue | None]:
    return [fold_inputs(node, VARIADIC[node.op_type])]


def fold_inputs(node: Node, op_class: type[GraphOp]) -> SSAValue:
    """op(op(x0, x1), x2)...; one input is passed through as its identity."""
    values = node.inputs()
    if not values:
        node.fail("needs at least one input")
    if len(values) == 1:
        return node.emit1(ew.IdentityOp, values)
    result = values[0]
    for value in values[1:]:
        result = node.emit1(op_class, [result, value])
    return result


@converts("Mean")
def convert_mean(node: Node) -> Sequence[SSAValue | None]:
    total = fold_inputs(node, ew.AddOp)
    count = len(node.inputs())
    if count == 1:
        return [total]
    return node.emit(ew.DivOp, [total, scalar(node, count, total)])


@converts("Mod")
def convert_mod(node: Node) -> Sequence[SSAValue | None]:
    props = {"fmod": bool_attr(True)} if node.attr("fmod", 0) else {}
    return node.emit(ew.ModOp, [node.input(0), node.input(1)], props)


@converts("Where")
def convert_where(node: Node) -> Sequence[SSAValue | None]:
    return node.emit(ew.WhereOp, [node.input(0), node.input(1), node.input(2)])


@converts("BitShift")
def convert_bit_shift(node: Node) -> Sequence[SSAValue | None]:
    direction = node.attr("direction")
    ops = {"LEFT": ew.ShiftLeftOp, "RIGHT": ew.ShiftRightOp}
    if direction not in ops:
        node.fail(f'direction is {direction!r}, expected "LEFT" or "RIGHT"')
    return node.emit(ops[direction], [node.input(0), node.input(1)])


# ---------------------------------------------------------------------------
# Activations with attributes.


@converts("LeakyRelu")
def convert_leaky_relu(node: Node) -> Sequence[SSAValue | None]:
    alpha = float_attr(node.attr("alpha", 0.01))
    return node.emit(ew.LeakyReluOp, [node.input(0)], {"alpha": alpha})


@converts("HardSigmoid")
def convert_hard_sigmoid(node: Node) -> Sequence[SSAValue | None]:
    props = {
        "alpha": float_attr(node.attr("alpha", 0.2)),
        "beta": float_attr(node.attr("beta", 0.5)),
    }
    return node.emit(ew.HardSigmoidOp, [node.input(0)], props)


@converts("HardSwish")
def convert_hard_swish(node: Node) -> Sequence[SSAValue | None]:
    x = node.input(0)
    props = {"alpha": float_attr(1.0 / 6.0), "beta": float_attr(0.5)}
    gate = node.emit1(ew.HardSigmoidOp, [x], props)
    return node.emit(ew.MulOp, [x, gate])


@converts("Gelu")
def convert_gelu(node: Node) -> Sequence[SSAValue | None]:
    approximate = node.attr("approximate", "none")
    props: dict[str, Attribute] = {}
    if approximate != "none":
        props["approximate"] = str_attr(approximate)
    return node.emit(ew.GeluOp, [node.input(0)], props)


@converts("PRelu")
def convert_prelu(node: Node) -> Sequence[SSAValue | None]:
    x, slope = node.input(0), node.input(1)
    try:
        shape = np.broadcast_shapes(node.shape(0), node.shape(1))
    except ValueError:
        shape = None
    if shape != node.shape(0):
        node.fail(f"slope {node.type_str(1)} does not broadcast to the input {node.type_str(0)}")
    negative = node.emit1(ew.LessOp, [x, scalar(node, 0, x)])
    scaled = node.emit1(ew.MulOp, [x, slope])
    return node.emit(ew.WhereOp, [negative, scaled, x])


@converts("Elu")
def convert_elu(node: Node) -> Sequence[SSAValue | None]:
    # alpha (exp(x) - 1) below 0, x above.
    x = float_input(node, 0)
    alpha = node.attr("alpha", 1.0)
    expm1 = node.emit1(ew.SubOp, [node.emit1(ew.ExpOp, [x]), scalar(node, 1, x)])
    scaled = node.emit1(ew.MulOp, [expm1, scalar(node, alpha, x)])
    negative = node.emit1(ew.LessOp, [x, scalar(node, 0, x)])
    return node.emit(ew.WhereOp, [negative, scaled, x])


@converts("Selu")
def convert_selu(node: Node) -> Sequence[SSAValue | None]:
    # gamma x above 0, gamma alpha (exp(x) - 1) below.
    x = float_input(node, 0)
    alpha = node.attr("alpha", 1.67326319217681884765625)
    gamma = node.attr("gamma", 1.05070102214813232421875)
    expm1 = node.emit1(ew.SubOp, [node.emit1(ew.ExpOp, [x]), scalar(node, 1, x)])
    below = node.emit1(ew.MulOp, [expm1, scalar(node, alpha * gamma, x)])
    above = node.emit1(ew.MulOp, [x, scalar(node, gamma, x)])
    positive = node.emit1(ew.GreaterOp, [x, scalar(node, 0, x)])
    return node.emit(ew.WhereOp, [positive, above, below])


@converts("Celu")
def convert_celu(node: Node) -> Sequence[SSAValue | None]:
    # max(0, x) + min(0, alpha (exp(x / alpha) - 1)).
    x = float_input(node, 0)
    alpha = scalar(node, node.attr("alpha", 1.0), x)
    exp = node.emit1(ew.ExpOp, [node.emit1(ew.DivOp, [x, alpha])])
    expm1 = node.emit1(ew.SubOp, [exp, scalar(node, 1, x)])
    below = node.emit1(ew.MinOp, [node.emit1(ew.MulOp, [expm1, alpha]), scalar(node, 0, x)])
    return node.emit(ew.AddOp, [node.emit1(ew.ReluOp, [x]), below])


@converts("ThresholdedRelu")
def convert_thresholded_relu(node: Node) -> Sequence[SSAValue | None]:
    x = node.input(0)
    above = node.emit1(ew.GreaterOp, [x, scalar(node, node.attr("alpha", 1.0), x)])
    return node.emit(ew.WhereOp, [above, x, scalar(node, 0, x)])


@converts("Softsign")
def convert_softsign(node: Node) -> Sequence[SSAValue | None]:
    x = float_input(node, 0)
    denominator = node.emit1(ew.AddOp, [node.emit1(ew.AbsOp, [x]), scalar(node, 1, x)])
    return node.emit(ew.DivOp, [x, denominator])


@converts("Mish")
def convert_mish(node: Node) -> Sequence[SSAValue | None]:
    x = node.input(0)
    gate = node.emit1(ew.TanhOp, [node.emit1(ew.SoftplusOp, [x])])
    return node.emit(ew.MulOp, [x, gate])


@converts("Swish")
def convert_swish(node: Node) -> Sequence[SSAValue | None]:
    alpha = float_attr(node.attr("alpha", 1.0))
    return node.emit(ew.SwishOp, [float_input(node, 0)], {"alpha": alpha})


@converts("BitCast")
def convert_bitcast(node: Node) -> Sequence[SSAValue | None]:
    to = int(node.attr("to", 0))
    if to not in ONNX_ELEMENT_TYPES:
        node.fail(f"'to' {to} is not an element type xtc supports")
    return node.emit(ew.BitcastOp, [node.input(0)], {"to": ONNX_ELEMENT_TYPES[to]})


@converts("SwiGLU")
def convert_swiglu(node: Node) -> Sequence[SSAValue | None]:
    """Swish_alpha(A) * B, A and B of one shape (no broadcasting)."""
    if node.shape(0) != node.shape(1):
        node.fail(f"A {node.type_str(0)} and B {node.type_str(1)} must have one shape")
    alpha = float_attr(node.attr("alpha", 1.0))
    gate = node.emit1(ew.SwishOp, [float_input(node, 0)], {"alpha": alpha})
    return node.emit(ew.MulOp, [gate, node.input(1)])


@converts("Shrink")
def convert_shrink(node: Node) -> Sequence[SSAValue | None]:
    # x + bias below -lambd, x - bias above lambd, else 0.
    x = node.input(0)
    lambd = float(node.attr("lambd", 0.5))
    bias = float(node.attr("bias", 0.0))
    dtype = node.dtype(0)
    upper, lower = lambd, -lambd
    if dtype.kind in "iu":  # the same test against the nearest integers
        upper, lower = math.floor(lambd), math.ceil(-lambd)
    above = node.emit1(ew.GreaterOp, [x, scalar(node, upper, x)])
    result = node.emit1(
        ew.WhereOp, [above, node.emit1(ew.SubOp, [x, scalar(node, bias, x)]), scalar(node, 0, x)]
    )
    if dtype.kind == "u" and lower <= 0:
        return [result]  # no unsigned value lies below a non-positive bound
    below = node.emit1(ew.LessOp, [x, scalar(node, lower, x)])
    shifted = node.emit1(ew.AddOp, [x, scalar(node, bias, x)])
    return node.emit(ew.WhereOp, [below, shifted, result])


# ---------------------------------------------------------------------------
# Clip.


@converts("Clip")
def convert_clip(node: Node) -> Sequence[SSAValue | None]:
    """A `graph.clip` when both bounds are constants that f32 properties hold
    exactly, else max(x, min) then min(., max) on tensors."""
    x = node.input(0)
    if node.opset < 11:
        given: list[tuple[float | None, SSAValue | None]] = [
            (node.attr("min"), None),
            (node.attr("max"), None),
        ]
    else:
        given = [input_bound(node, 1, "min"), input_bound(node, 2, "max")]
    bounds = [
        bound(node, x, value, tensor, what)
        for (value, tensor), what in zip(given, ("min", "max"), strict=True)
    ]
    if not any(isinstance(b, SSAValue) for b in bounds):
        props = {
            name: float_attr(b)
            for name, b in zip(("min", "max"), bounds, strict=True)
            if isinstance(b, float | int)
        }
        return node.emit(ew.ClipOp, [x], props)
    result = x
    for op_class, b in zip((ew.MaxOp, ew.MinOp), bounds, strict=True):
        if b is not None:
            tensor = b if isinstance(b, SSAValue) else scalar(node, b, x)
            result = node.emit1(op_class, [result, tensor])
    return [result]


def input_bound(node: Node, i: int, what: str) -> tuple[float | None, SSAValue | None]:
    """(constant value or None, input or None) of an optional bound input."""
    if not node.has_input(i):
        return None, None
    value = node.const(i)
    if value is None:
        return None, node.input(i)
    if value.size != 1:
        node.fail(f"{what} (input {i}) must be a scalar, got shape {list(value.shape)}")
    return value.reshape(()).item(), node.input(i)


def bound(
    node: Node, x: SSAValue, value: float | None, tensor: SSAValue | None, what: str
) -> float | SSAValue | None:
    """A clip bound as the number of an f32 property when one holds it exactly,
    else as a tensor; None when there is no bound."""
    if value is None:
        return tensor
    if value == (-math.inf if what == "min" else math.inf):
        return None
    if fits_f32(value):
        return value
    return tensor if tensor is not None else scalar(node, value, x)


def fits_f32(value: float) -> bool:
    """An f32 property holds `value` exactly (and prints and parses it back)."""
    return math.isfinite(value) and float(np.float32(value)) == value


# ---------------------------------------------------------------------------
# Casts and tests.


def onnx_element_type(node: Node, onnx_type: int) -> Attribute:
    if onnx_type not in ONNX_ELEMENT_TYPES:
        name = onnx.TensorProto.DataType.Name(onnx_type) if onnx_type else "UNDEFINED"
        node.fail(f"casting to {name} is not supported")
    return ONNX_ELEMENT_TYPES[onnx_type]


@converts("Cast")
def convert_cast(node: Node) -> Sequence[SSAValue | None]:
    to = node.attr("to")
    if to is None:
        node.fail("the attribute 'to' is required")
    return emit_cast(node, onnx_element_type(node, to))


@converts("CastLike")
def convert_cast_like(node: Node) -> Sequence[SSAValue | None]:
    return emit_cast(node, elem(node.input(1).type))


def emit_cast(node: Node, to: Attribute) -> Sequence[SSAValue | None]:
    """A graph.cast to `to`, saturating for the float8 types unless the
    node says `saturate = 0`; to FLOAT8E8M0 with the node's round_mode."""
    props: dict[str, Attribute] = {"to": to}
    if isinstance(to, Float8E8M0FNUType):
        round_mode = node.attr("round_mode", "up")
        if round_mode not in E8M0_ROUND_MODES:
            node.fail(f"round_mode '{round_mode}' is not one of {', '.join(E8M0_ROUND_MODES)}")
        props["round_mode"] = str_attr(round_mode)
    if isinstance(to, (*SATURATING_TYPES, Float8E8M0FNUType)) and node.attr("saturate", 1):
        props["saturate"] = bool_attr(True)
    return node.emit(ew.CastOp, [node.input(0)], props)


@converts("IsNaN")
def convert_is_nan(node: Node) -> Sequence[SSAValue | None]:
    x = float_input(node, 0)
    return node.emit(ew.NotEqualOp, [x, x])  # NaN is the only value unequal to itself


@converts("IsInf")
def convert_is_inf(node: Node) -> Sequence[SSAValue | None]:
    x = float_input(node, 0)
    negative = bool(node.attr("detect_negative", 1))
    positive = bool(node.attr("detect_positive", 1))
    if negative and positive:
        return node.emit(ew.EqualOp, [node.emit1(ew.AbsOp, [x]), scalar(node, math.inf, x)])
    if negative or positive:
        infinity = scalar(node, -math.inf if negative else math.inf, x)
        return node.emit(ew.EqualOp, [x, infinity])
    return [node.constant(np.zeros(node.shape(0), np.bool_))]


