"""Elementwise graph ops: unary math, binary arithmetic with numpy
broadcasting, comparisons, logic, bitwise ops and shifts, select, cast and clip.

Each op family states which element types it takes (`OPERAND_KIND`): any,
numeric (integer or float but not i1), float only, integer only (not i1), or
i1 only. Binary ops need
equal element types except `graph.pow`, whose result takes the base's type.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AnyFloat,
    AnyTensorTypeConstr,
    BoolAttr,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerType,
    StringAttr,
    i1,
)
from xdsl.ir import Attribute, TypeAttribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)

from xtc.dialects.graph.base import (
    GraphOp,
    OpPattern,
    Props,
    ShapeError,
    bool_attr,
    broadcast_shapes,
    elem,
    float_attr,
    get_bool,
    get_float,
    get_str,
    is_float,
    is_integer,
    same_element_type,
    shape_of,
    str_attr,
    tensor,
    type_str,
)


class ElementKind(Enum):
    """The element types an operand accepts."""

    ANY = "any"
    NUMERIC = "an integer or float element type other than i1"
    FLOAT = "a float element type"
    INTEGER = "an integer element type other than i1"
    BOOL = "element type i1"


def is_bool(element_type: Attribute) -> bool:
    return element_type == i1


def check_element_kind(op_name: str, what: str, t: Attribute, kind: ElementKind) -> None:
    """Raises a ShapeError naming the operand when its element type is not of `kind`."""
    e = elem(t)
    accepted = {
        ElementKind.ANY: True,
        ElementKind.NUMERIC: is_float(e) or (is_integer(e) and not is_bool(e)),
        ElementKind.FLOAT: is_float(e),
        ElementKind.INTEGER: is_integer(e) and not is_bool(e),
        ElementKind.BOOL: is_bool(e),
    }[kind]
    if not accepted:
        raise ShapeError(f"{op_name}: {what} {type_str(t)} must have {kind.value}")


# ---------------------------------------------------------------------------
# Op families.


class UnaryOp(GraphOp):
    """`y = f(x)` elementwise; the result has the operand's type."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.ANY

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        check_element_kind(cls.name, "operand", operand_types[0], cls.OPERAND_KIND)
        return [operand_types[0]]


class FloatUnaryOp(UnaryOp):
    """A unary op defined on float tensors only."""

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.FLOAT


class NumericUnaryOp(UnaryOp):
    """A unary op defined on integer (not i1) and float tensors."""

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC


class IntegerUnaryOp(UnaryOp):
    """A unary op defined on integer tensors (not i1) only."""

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.INTEGER


class BinaryOp(GraphOp):
    """`z = f(x, y)` elementwise with numpy broadcasting; same element types."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC

    lhs = operand_def(AnyTensorTypeConstr)
    rhs = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def result_element_type(cls, operand_element_type: Attribute) -> Attribute:
        return operand_element_type

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        element_type = same_element_type(cls.name, *operand_types)
        check_element_kind(cls.name, "operand", operand_types[0], cls.OPERAND_KIND)
        shape = broadcast_shapes(cls.name, *operand_types)
        return [tensor(shape, cls.result_element_type(element_type))]


class LogicalOp(BinaryOp):
    """A binary op on i1 tensors."""

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.BOOL


class IntegerBinaryOp(BinaryOp):
    """A binary op on integer tensors (not i1): bitwise logic and shifts."""

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.INTEGER


class ComparisonOp(BinaryOp):
    """A binary predicate: broadcast like the arithmetic ops, i1 result."""

    @classmethod
    def result_element_type(cls, operand_element_type: Attribute) -> Attribute:
        return i1


# ---------------------------------------------------------------------------
# Unary ops.


@irdl_op_definition
class ReluOp(NumericUnaryOp):
    """max(x, 0)."""

    name = "graph.relu"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """1 / (1 + exp(-x))."""

    name = "graph.sigmoid"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """tanh(x)."""

    name = "graph.tanh"


GELU_APPROXIMATIONS = ("none", "tanh")


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """ONNX Gelu: x/2 (1 + erf(x/√2)), or with approximate = "tanh"
    x/2 (1 + tanh(√(2/π) (x + 0.044715 x³)))."""

    name = "graph.gelu"

    approximate = opt_prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {"approximate": str_attr("none")}

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        get_str(props, "approximate", choices=GELU_APPROXIMATIONS)
        return super().infer_types(operand_types, props)


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """The error function erf(x)."""

    name = "graph.erf"


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """exp(x)."""

    name = "graph.exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """Natural logarithm; NaN below 0, -inf at 0."""

    name = "graph.log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """Square root; NaN below 0."""

    name = "graph.sqrt"


@irdl_op_definition
class AbsOp(NumericUnaryOp):
    """|x| (integers wrap at the minimum, as in C)."""

    name = "graph.abs"


@irdl_op_definition
class NegOp(NumericUnaryOp):
    """-x."""

    name = "graph.neg"


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """Largest integer not above x."""

    name = "graph.floor"


@irdl_op_definition
class CeilOp(FloatUnaryOp):
    """Smallest integer not below x."""

    name = "graph.ceil"


@irdl_op_definition
class RoundOp(FloatUnaryOp):
    """Nearest integer, halves to even (ONNX Round, numpy round)."""

    name = "graph.round"


@irdl_op_definition
class SignOp(NumericUnaryOp):
    """-1, 0 or 1 by the sign of x (NaN stays NaN)."""

    name = "graph.sign"


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    """1 / x."""

    name = "graph.reciprocal"


@irdl_op_definition
class SinOp(FloatUnaryOp):
    """sin(x)."""

    name = "graph.sin"


@irdl_op_definition
class CosOp(FloatUnaryOp):
    """cos(x)."""

    name = "graph.cos"


@irdl_op_definition
class TanOp(FloatUnaryOp):
    """tan(x)."""

    name = "graph.tan"


@irdl_op_definition
class AsinOp(FloatUnaryOp):
    """arcsin(x); NaN outside [-1, 1]."""

    name = "graph.asin"


@irdl_op_definition
class AcosOp(FloatUnaryOp):
    """arccos(x); NaN outside [-1, 1]."""

    name = "graph.acos"


@irdl_op_definition
class AtanOp(FloatUnaryOp):
    """arctan(x)."""

    name = "graph.atan"


@irdl_op_definition
class SinhOp(FloatUnaryOp):
    """sinh(x)."""

    name = "graph.sinh"


@irdl_op_definition
class CoshOp(FloatUnaryOp):
    """cosh(x)."""

    name = "graph.cosh"


@irdl_op_definition
class AsinhOp(FloatUnaryOp):
    """arsinh(x)."""

    name = "graph.asinh"


@irdl_op_definition
class AcoshOp(FloatUnaryOp):
    """arcosh(x); NaN below 1."""

    name = "graph.acosh"


@irdl_op_definition
class AtanhOp(FloatUnaryOp):
    """artanh(x); ±inf at ±1, NaN outside [-1, 1]."""

    name = "graph.atanh"


@irdl_op_definition
class SoftplusOp(FloatUnaryOp):
    """log(1 + exp(x))."""

    name = "graph.softplus"


@irdl_op_definition
class SwishOp(FloatUnaryOp):
    """x * sigmoid(alpha * x) (ONNX Swish; alpha defaults to 1, giving SiLU)."""

    name = "graph.swish"

    alpha = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[Props] = {"alpha": float_attr(1.0)}


@irdl_op_definition
class NotOp(UnaryOp):
    """Logical not of an i1 tensor."""

    name = "graph.not"

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.BOOL


@irdl_op_definition
class BitwiseNotOp(IntegerUnaryOp):
    """~x, each bit flipped (ONNX BitwiseNot)."""

    name = "graph.bitwise_not"


@irdl_op_definition
class IdentityOp(UnaryOp):
    """x."""

    name = "graph.identity"


@irdl_op_definition
class DropoutOp(UnaryOp):
    """ONNX Dropout at inference: x unchanged; `ratio` in [0, 1) is kept for
    reference only."""

    name = "graph.dropout"

    ratio = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[Props] = {"ratio": float_attr(0.5)}

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        ratio = get_float(props, "ratio")
        if not 0.0 <= ratio < 1.0:
            raise ShapeError(f"{cls.name}: ratio {ratio} is outside [0, 1)")
        return super().infer_types(operand_types, props)


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    """x where x >= 0, else alpha * x (alpha defaults to 0.01, as ONNX)."""

    name = "graph.leaky_relu"

    alpha = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[Props] = {"alpha": float_attr(0.01)}


@irdl_op_definition
class HardSigmoidOp(FloatUnaryOp):
    """max(0, min(1, alpha * x + beta)); alpha 0.2 and beta 0.5 by default (ONNX)."""

    name = "graph.hard_sigmoid"

    alpha = opt_prop_def(FloatAttr)
    beta = opt_prop_def(FloatAttr)
    DEFAULTS: ClassVar[Props] = {"alpha": float_attr(0.2), "beta": float_attr(0.5)}


@irdl_op_definition
class ClipOp(NumericUnaryOp):
    """min(max(x, min), max), each bound optional (ONNX Clip; min > max gives
    max). Bounds are f32; on integer tensors they round inward to integers."""

    name = "graph.clip"

    min_value = opt_prop_def(FloatAttr, prop_name="min")
    max_value = opt_prop_def(FloatAttr, prop_name="max")
    DEFAULTS: ClassVar[Props] = {"min": float_attr(-math.inf), "max": float_attr(math.inf)}


E8M0_ROUND_MODES = ("up", "down", "nearest")
"""How graph.cast rounds to f8E8M0FNU (ONNX Cast's round_mode); "up" by default."""


@irdl_op_definition
class CastOp(GraphOp):
    """Converts each element to the type `to` (ONNX Cast): floats to integers
    truncate toward zero (and wrap to the width), anything nonzero to i1 is
    true, floats round to nearest even. Out of a float type's range gives inf
    where the type has one, else NaN; with `saturate = true`, the largest
    finite value of that sign (ONNX's rule for the float8 types; NaN stays).
    To f8E8M0FNU (powers of two, ONNX's rule): the f32 value's exponent,
    rounded by `round_mode` ("up", the default: any fraction rounds up;
    "nearest"; "down"), the sign dropped; inf and NaN give NaN, and so does
    rounding up past 2^127 unless `saturate = true`."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE

    name = "graph.cast"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    to = prop_def(TypeAttribute)
    saturate = opt_prop_def(BoolAttr)
    round_mode = opt_prop_def(StringAttr)

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        to = props.get("to")
        if to is None:
            raise ShapeError(f"{cls.name}: missing property 'to'")
        if not isinstance(to, IntegerType | AnyFloat):
            raise ShapeError(f"{cls.name}: target type {to} is not an integer or float type")
        if get_bool(props, "saturate", False) and not isinstance(to, AnyFloat):
            raise ShapeError(f"{cls.name}: 'saturate' needs a float target type, got {to}")
        if "round_mode" in props:
            if not isinstance(to, Float8E8M0FNUType):
                raise ShapeError(f"{cls.name}: 'round_mode' needs target type f8E8M0FNU, got {to}")
            get_str(props, "round_mode", choices=E8M0_ROUND_MODES)
        return [tensor(shape_of(operand_types[0]), to)]


BITCAST_TYPES = (Float16Type, Float32Type, Float64Type, IntegerType)
"""The element types graph.bitcast reinterprets (the narrow floats and
integers keep their own storage, lowering/narrow_floats.py)."""


def storage_bits(t: Attribute) -> int:
    """The bits an element occupies in a buffer (i1: a byte)."""
    if isinstance(t, IntegerType):
        return max(8, t.width.data)
    return cast(AnyFloat, t).bitwidth


@irdl_op_definition
class BitcastOp(GraphOp):
    """Reinterprets each element's bits as the type `to` of the same width
    (ONNX BitCast): f32 <-> i32, f64 <-> i64, i8 <-> ui8, i1 -> ui8 (a
    byte of 0 or 1)..."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE

    name = "graph.bitcast"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    to = prop_def(TypeAttribute)

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        to, source = props.get("to"), elem(operand_types[0])
        for t in (source, to):
            if not isinstance(t, BITCAST_TYPES) or (
                isinstance(t, IntegerType) and t.width.data not in (1, 8, 16, 32, 64)
            ):
                raise ShapeError(f"{cls.name}: cannot reinterpret the bits of {t}")
        if storage_bits(source) != storage_bits(to):
            raise ShapeError(
                f"{cls.name}: {source} and {to} have different widths "
                f"({storage_bits(source)} and {storage_bits(to)} bits)"
            )
        return [tensor(shape_of(operand_types[0]), to)]


# ---------------------------------------------------------------------------
# Binary ops.


@irdl_op_definition
class AddOp(BinaryOp):
    """x + y."""

    name = "graph.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """x - y."""

    name = "graph.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """x * y."""

    name = "graph.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """x / y; integer division truncates toward zero (ONNX Div, C)."""

    name = "graph.div"


@irdl_op_definition
class PowOp(BinaryOp):
    """x ** y (ONNX Pow): base and exponent may have different element types,
    the result has the base's; an integer to a negative integer power truncates
    toward zero."""

    name = "graph.pow"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        base, exponent = operand_types
        check_element_kind(cls.name, "base", base, ElementKind.NUMERIC)
        check_element_kind(cls.name, "exponent", exponent, ElementKind.NUMERIC)
        return [tensor(broadcast_shapes(cls.name, base, exponent), elem(base))]


@irdl_op_definition
class MaxOp(BinaryOp):
    """Elementwise maximum; NaN propagates."""

    name = "graph.max"


@irdl_op_definition
class MinOp(BinaryOp):
    """Elementwise minimum; NaN propagates."""

    name = "graph.min"


@irdl_op_definition
class ModOp(BinaryOp):
    """ONNX Mod: with `fmod` = true the C fmod remainder (sign of x), else
    the Python modulo (sign of y)."""

    name = "graph.mod"

    fmod = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {"fmod": bool_attr(False)}


@irdl_op_definition
class AndOp(LogicalOp):
    """Logical and of i1 tensors."""

    name = "graph.and"


@irdl_op_definition
class OrOp(LogicalOp):
    """Logical or of i1 tensors."""

    name = "graph.or"


@irdl_op_definition
class XorOp(LogicalOp):
    """Logical exclusive or of i1 tensors."""

    name = "graph.xor"


@irdl_op_definition
class BitwiseAndOp(IntegerBinaryOp):
    """x & y on integers (ONNX BitwiseAnd)."""

    name = "graph.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(IntegerBinaryOp):
    """x | y on integers (ONNX BitwiseOr)."""

    name = "graph.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(IntegerBinaryOp):
    """x ^ y on integers (ONNX BitwiseXor)."""

    name = "graph.bitwise_xor"


@irdl_op_definition
class ShiftLeftOp(IntegerBinaryOp):
    """x << y (ONNX BitShift LEFT); bits shifted out are lost, and a shift by
    an amount outside [0, bit width) gives 0."""

    name = "graph.shift_left"


@irdl_op_definition
class ShiftRightOp(IntegerBinaryOp):
    """x >> y (ONNX BitShift RIGHT): logical on unsigned types, arithmetic on
    signed ones; a shift by an amount outside [0, bit width) gives 0, or -1
    for a negative x."""

    name = "graph.shift_right"


@irdl_op_definition
class EqualOp(ComparisonOp):
    """x == y."""

    name = "graph.equal"

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.ANY


@irdl_op_definition
class NotEqualOp(ComparisonOp):
    """x != y."""

    name = "graph.not_equal"

    OPERAND_KIND: ClassVar[ElementKind] = ElementKind.ANY


@irdl_op_definition
class LessOp(ComparisonOp):
    """x < y."""

    name = "graph.less"


@irdl_op_definition
class LessEqualOp(ComparisonOp):
    """x <= y."""

    name = "graph.less_equal"


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """x > y."""

    name = "graph.greater"


@irdl_op_definition
class GreaterEqualOp(ComparisonOp):
    """x >= y."""

    name = "graph.greater_equal"


@irdl_op_definition
class WhereOp(GraphOp):
    """x where condition else y, the three broadcast together (ONNX Where)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE

    name = "graph.where"

    condition = operand_def(AnyTensorTypeConstr)
    x = operand_def(AnyTensorTypeConstr)
    y = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    assembly_format = "$condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        condition, x, y = operand_types
        check_element_kind(cls.name, "condition", condition, ElementKind.BOOL)
        element_type = same_element_type(cls.name, x, y)
        return [tensor(broadcast_shapes(cls.name, condition, x, y), element_type)]
