"""Scalar semantics shared by the te and tir interpreters: `arith`, `math` and
the `builtin.unrealized_conversion_cast` between iN and uiN.

Scalars keep the precision native code computes in, so that the interpreter
and compiled kernels agree closely:
- a float is a numpy scalar of its type's dtype (np.float32 for f32), and every
  op rounds to it;
- a signless integer is a Python int in two's-complement signed form
  (xDSL's convention), an unsigned element (uiN) a Python int in [0, 2^N);
- an i1 is a Python bool; an index a 64-bit signed Python int.

xDSL's own ArithFunctions and MathFunctions compute floats in Python doubles,
keep i1 as -1/0, lack divf, the casts and most of math, and assert on a zero
divisor; these implementations replace them. Where native code is undefined
the value here is a fixed one, never an error, since `arith.select` evaluates
both of its branches: integer division by zero and a shift past the width
give 0, a float to integer cast out of range what x86 gives (float_to_int).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    UnrealizedConversionCastOp,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from xtc.dialects.graph.constant import numpy_dtype

Args = tuple[Any, ...]
Results = tuple[Any, ...]

INDEX_WIDTH = 64

_dtypes: dict[Attribute, np.dtype[Any]] = {}


def float_dtype(t: Attribute) -> np.dtype[Any]:
    """The numpy dtype a float type computes in (cached: called per op)."""
    dtype = _dtypes.get(t)
    if dtype is None:
        dtype = _dtypes[t] = numpy_dtype(t)
    return dtype


def to_float(t: Attribute, value: Any) -> Any:
    """`value` rounded to the float type `t`."""
    return float_dtype(t).type(value)


def width_of(t: Attribute) -> int:
    if isinstance(t, IndexType):
        return INDEX_WIDTH
    if isinstance(t, IntegerType):
        return t.width.data
    raise InterpretationError(f"{t} is not an integer type")


def is_unsigned_type(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def as_signed(value: Any, width: int) -> int:
    """The two's-complement signed reading of an integer's low `width` bits."""
    bits = int(value) & ((1 << width) - 1)
    return bits - (1 << width) if bits >> (width - 1) else bits


def as_unsigned(value: Any, width: int) -> int:
    return int(value) & ((1 << width) - 1)


def wrap(value: Any, t: Attribute) -> int | bool:
    """An integer as the canonical value of type `t` (bool for i1, [0, 2^N)
    for uiN, signed otherwise)."""
    width = width_of(t)
    if width == 1 and not is_unsigned_type(t):
        return bool(int(value) & 1)
    if is_unsigned_type(t):
        return as_unsigned(value, width)
    return as_signed(value, width)


def scalar_of_element(value: Any) -> Any:
    """An element read from a numpy array as an interpreter scalar."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def powf(a: Any, b: Any) -> Any:
    """C's pow, as LLVM's llvm.pow calls it: numpy's power of two scalars
    gives nan for pow(-inf, 0.5) where its array loop (and C) gives inf."""
    with np.errstate(all="ignore"):
        return np.power(np.asarray([a]), np.asarray([b]))[0]


def maximumf(a: Any, b: Any) -> Any:
    """max propagating NaN, +0 above -0 (arith.maximumf)."""
    if np.isnan(a) or np.isnan(b):
        return a if np.isnan(a) else b
    if a == b == 0:
        return b if np.signbit(a) else a
    return a if a > b else b


def minimumf(a: Any, b: Any) -> Any:
    """min propagating NaN, -0 below +0 (arith.minimumf)."""
    if np.isnan(a) or np.isnan(b):
        return a if np.isnan(a) else b
    if a == b == 0:
        return a if np.signbit(a) else b
    return a if a < b else b


def _truncating_div(a: int, b: int) -> int:
    if b == 0:
        return 0
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _ceil_div(a: int, b: int) -> int:
    return 0 if b == 0 else -((-a) // b)


def _floor_div(a: int, b: int) -> int:
    return 0 if b == 0 else a // b


def _unsigned_op(fn: Callable[[int, int], int]) -> Callable[[int, int, int], int]:
    def apply(a: int, b: int, width: int) -> int:
        return fn(as_unsigned(a, width), as_unsigned(b, width))

    return apply


def _signed_op(fn: Callable[[int, int], int]) -> Callable[[int, int, int], int]:
    def apply(a: int, b: int, width: int) -> int:
        return fn(as_signed(a, width), as_signed(b, width))

    return apply


def _shift_left(a: int, b: int, width: int) -> int:
    amount = as_unsigned(b, width)
    return as_unsigned(a, width) << amount if amount < width else 0


def _shift_right_signed(a: int, b: int, width: int) -> int:
    return as_signed(a, width) >> min(as_unsigned(b, width), width - 1)


def _shift_right_unsigned(a: int, b: int, width: int) -> int:
    amount = as_unsigned(b, width)
    return as_unsigned(a, width) >> amount if amount < width else 0


INT_BINARY: dict[type[Operation], Callable[[int, int, int], int]] = {
    arith.AddiOp: _signed_op(lambda a, b: a + b),
    arith.SubiOp: _signed_op(lambda a, b: a - b),
    arith.MuliOp: _signed_op(lambda a, b: a * b),
    arith.DivSIOp: _signed_op(_truncating_div),
    arith.DivUIOp: _unsigned_op(lambda a, b: a // b if b else 0),
    arith.FloorDivSIOp: _signed_op(_floor_div),
    arith.CeilDivSIOp: _signed_op(_ceil_div),
    arith.CeilDivUIOp: _unsigned_op(_ceil_div),
    arith.RemSIOp: _signed_op(lambda a, b: a - _truncating_div(a, b) * b if b else 0),
    arith.RemUIOp: _unsigned_op(lambda a, b: a % b if b else 0),
    arith.MaxSIOp: _signed_op(max),
    arith.MinSIOp: _signed_op(min),
    arith.MaxUIOp: _unsigned_op(max),
    arith.MinUIOp: _unsigned_op(min),
    arith.AndIOp: _unsigned_op(lambda a, b: a & b),
    arith.OrIOp: _unsigned_op(lambda a, b: a | b),
    arith.XOrIOp: _unsigned_op(lambda a, b: a ^ b),
    arith.ShLIOp: _shift_left,
    arith.ShRSIOp: _shift_right_signed,
    arith.ShRUIOp: _shift_right_unsigned,
}

FLOAT_BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddfOp: lambda a, b: a + b,
    arith.SubfOp: lambda a, b: a - b,
    arith.MulfOp: lambda a, b: a * b,
    arith.DivfOp: lambda a, b: a / b,
    arith.MaximumfOp: maximumf,
    arith.MinimumfOp: minimumf,
    arith.MaxnumfOp: lambda a, b: b if np.isnan(a) else a if np.isnan(b) else max(a, b),
    arith.MinnumfOp: lambda a, b: b if np.isnan(a) else a if np.isnan(b) else min(a, b),
    math.PowFOp: lambda a, b: powf(a, b),
    math.CopySignOp: np.copysign,
    math.Atan2Op: np.arctan2,
}


def _round_half_away(x: Any) -> Any:
    if not np.isfinite(x):
        return x
    magnitude = abs(float(x))
    whole = pymath.floor(magnitude)
    rounded = whole + 1 if magnitude - whole >= 0.5 else whole
    return pymath.copysign(rounded, float(x))


FLOAT_UNARY: dict[type[Operation], Callable[[Any], Any]] = {
    arith.NegfOp: lambda x: -x,
    math.AbsFOp: np.abs,
    math.ExpOp: np.exp,
    math.Exp2Op: np.exp2,
    math.ExpM1Op: np.expm1,
    math.LogOp: np.log,
    math.Log2Op: np.log2,
    math.Log10Op: np.log10,
    math.Log1pOp: np.log1p,
    math.SqrtOp: np.sqrt,
    math.RsqrtOp: lambda x: 1 / np.sqrt(x),
    math.CbrtOp: np.cbrt,
    math.ErfOp: lambda x: pymath.erf(float(x)),
    math.TanhOp: np.tanh,
    math.SinOp: np.sin,
    math.CosOp: np.cos,
    math.TanOp: np.tan,
    math.AsinOp: np.arcsin,
    math.AcosOp: np.arccos,
    math.AtanOp: np.arctan,
    math.SinhOp: np.sinh,
    math.CoshOp: np.cosh,
    math.AsinhOp: np.arcsinh,
    math.AcoshOp: np.arccosh,
    math.AtanhOp: np.arctanh,
    math.FloorOp: np.floor,
    math.CeilOp: np.ceil,
    math.TruncOp: np.trunc,
    math.RoundEvenOp: np.rint,
    math.RoundOp: _round_half_away,
}


def cmpi(predicate: int, a: int, b: int, width: int) -> bool:
    """arith.cmpi: eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge (0 to 9)."""
    signed = 2 <= predicate <= 5
    x, y = (as_signed(v, width) if signed else as_unsigned(v, width) for v in (a, b))
    return (x == y, x != y, x < y, x <= y, x > y, x >= y)[
        predicate if predicate < 6 else predicate - 4
    ]


def cmpf(predicate: int, x: Any, y: Any) -> bool:
    """arith.cmpf: predicates 1-6 ordered (false on NaN), 8-13 unordered."""
    unordered = bool(np.isnan(x) or np.isnan(y))
    if predicate in (0, 15):
        return predicate == 15
    if predicate == 7:
        return not unordered
    if predicate == 14:
        return unordered
    compare = (x == y, x > y, x >= y, x < y, x <= y, x != y)[(predicate - 1) % 7]
    if predicate >= 8:
        return bool(compare) or unordered
    return bool(compare) and not unordered


def _int_binary(fn: Callable[[int, int, int], int]) -> Callable[..., Results]:
    def run(_ft: Any, _interpreter: Interpreter, op: Operation, args: Args) -> Results:
        t = op.results[0].type
        return (wrap(fn(args[0], args[1], width_of(t)), t),)

    return run


def _float_binary(fn: Callable[[Any, Any], Any]) -> Callable[..., Results]:
    def run(_ft: Any, _interpreter: Interpreter, op: Operation, args: Args) -> Results:
        t = op.results[0].type
        # Operands are already scalars of `t`; the result is rounded to it.
        return (to_float(t, fn(args[0], args[1])),)

    return run


def _float_unary(fn: Callable[[Any], Any]) -> Callable[..., Results]:
    def run(_ft: Any, _interpreter: Interpreter, op: Operation, args: Args) -> Results:
        t = op.results[0].type
        return (to_float(t, fn(args[0])),)

    return run


def float_to_int(x: Any, width: int, unsigned: bool) -> int:
    """fptosi / fptoui as x86-64 computes them (and numpy's casts there): a
    truncating conversion to a signed 32-bit integer (64-bit for wider
    results, and for unsigned 32-bit ones), whose "integer indefinite" value
    (the lowest one) stands for NaN, +-inf and values out of its range; then
    the low `width` bits. An unsigned 64-bit result of 2^63 or more converts
    x - 2^63 and sets the top bit."""
    if unsigned and width == 64 and x >= 2.0**63:
        return float_to_int(x - 2.0**63, 64, False) ^ -(1 << 63)
    convert_width = 64 if width > 32 or (unsigned and width == 32) else 32
    low, high = -(1 << (convert_width - 1)), (1 << (convert_width - 1)) - 1
    value = int(x) if np.isfinite(x) else low
    return value if low <= value <= high else low


def _float_to_int(unsigned: bool) -> Callable[..., Results]:
    def run(_ft: Any, _interpreter: Interpreter, op: Operation, args: Args) -> Results:
        t = op.results[0].type
        return (wrap(float_to_int(args[0], width_of(t), unsigned), t),)

    return run


def _int_to_float(unsigned: bool) -> Callable[..., Results]:
    def run(_ft: Any, _interpreter: Interpreter, op: Operation, args: Args) -> Results:
        (x,) = args
        width = width_of(op.operands[0].type)
        value = as_unsigned(x, width) if unsigned else as_signed(x, width)
        return (to_float(op.results[0].type, value),)

    return run


def _int_resize(unsigned: bool) -> Callable[..., Results]:
    """extsi/extui/trunci/index_cast: read the source (signed or unsigned),
    then wrap to the result's width."""

    def run(_ft: Any, _interpreter: Interpreter, op: Operation, args: Args) -> Results:
        (x,) = args
        width = width_of(op.operands[0].type)
        value = as_unsigned(x, width) if unsigned else as_signed(x, width)
        return (wrap(value, op.results[0].type),)

    return run


def _float_resize(_ft: Any, _interpreter: Interpreter, op: Operation, args: Args) -> Results:
    return (to_float(op.results[0].type, args[0]),)


def _bitcast(_ft: Any, _interpreter: Interpreter, op: Operation, args: Args) -> Results:
    source, result = op.operands[0].type, op.results[0].type
    if isinstance(source, AnyFloat):
        bits = np.array([to_float(source, args[0])]).view(
            f"u{cast(AnyFloat, source).bitwidth // 8}"
        )
        return (wrap(int(bits[0]), result),)
    width = width_of(source)
    raw = np.array([as_unsigned(args[0], width)], dtype=f"u{width // 8}")
    return (scalar_of_element(raw.view(float_dtype(result))[0]),)


class ScalarFunctions(InterpreterFunctions):
    """arith, math and iN <-> uiN casts on typed scalars (the ops that follow
    one pattern are added from the tables below the class)."""

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: Args) -> Results:
        value, t = op.value, op.result.type
        if isinstance(value, FloatAttr):
            return (to_float(t, cast(FloatAttr[AnyFloat], value).value.data),)
        if isinstance(value, IntegerAttr):
            return (wrap(cast(IntegerAttr[IntegerType], value).value.data, t),)
        raise InterpretationError(f"arith.constant of {value} is not a scalar")

    @impl(arith.CmpiOp)
    def run_cmpi(self, interpreter: Interpreter, op: arith.CmpiOp, args: Args) -> Results:
        predicate = op.predicate.value.data
        return (cmpi(predicate, args[0], args[1], width_of(op.lhs.type)),)

    @impl(arith.CmpfOp)
    def run_cmpf(self, interpreter: Interpreter, op: arith.CmpfOp, args: Args) -> Results:
        return (cmpf(op.predicate.value.data, args[0], args[1]),)

    @impl(arith.SelectOp)
    def run_select(self, interpreter: Interpreter, op: arith.SelectOp, args: Args) -> Results:
        condition, if_true, if_false = args
        return (if_true if condition else if_false,)

    @impl(math.AbsIOp)
    def run_absi(self, interpreter: Interpreter, op: math.AbsIOp, args: Args) -> Results:
        t = op.result.type
        return (wrap(abs(as_signed(args[0], width_of(t))), t),)

    @impl(math.FmaOp)
    def run_fma(self, interpreter: Interpreter, op: math.FmaOp, args: Args) -> Results:
        a, b, c = (float(x) for x in args)
        return (to_float(op.result.type, a * b + c),)

    @impl(math.FPowIOp)
    def run_fpowi(self, interpreter: Interpreter, op: math.FPowIOp, args: Args) -> Results:
        t = op.result.type
        exponent = as_signed(args[1], width_of(op.operands[1].type))
        return (to_float(t, np.power(to_float(t, args[0]), to_float(t, exponent))),)

    @impl(math.IPowIOp)
    def run_ipowi(self, interpreter: Interpreter, op: math.IPowIOp, args: Args) -> Results:
        t = op.result.type
        width = width_of(t)
        base, exponent = as_signed(args[0], width), as_signed(args[1], width)
        if exponent < 0:
            value = 1 if base == 1 else (-1) ** (-exponent) if base == -1 else 0
        else:
            value = pow(base, exponent, 1 << width)
        return (wrap(value, t),)

    @impl(math.CountLeadingZerosOp)
    def run_ctlz(
        self, interpreter: Interpreter, op: math.CountLeadingZerosOp, args: Args
    ) -> Results:
        width = width_of(op.result.type)
        return (wrap(width - as_unsigned(args[0], width).bit_length(), op.result.type),)

    @impl(math.CountTrailingZerosOp)
    def run_cttz(
        self, interpreter: Interpreter, op: math.CountTrailingZerosOp, args: Args
    ) -> Results:
        width = width_of(op.result.type)
        bits = as_unsigned(args[0], width)
        count = width if bits == 0 else (bits & -bits).bit_length() - 1
        return (wrap(count, op.result.type),)

    @impl(math.CtPopOp)
    def run_ctpop(self, interpreter: Interpreter, op: math.CtPopOp, args: Args) -> Results:
        width = width_of(op.result.type)
        return (wrap(bin(as_unsigned(args[0], width)).count("1"), op.result.type),)

    @impl(UnrealizedConversionCastOp)
    def run_cast(
        self, interpreter: Interpreter, op: UnrealizedConversionCastOp, args: Args
    ) -> Results:
        results: list[Any] = []
        for source, result, value in zip(op.operands, op.results, args, strict=True):
            if source.type == result.type:
                results.append(value)
            elif isinstance(source.type, IntegerType) and isinstance(result.type, IntegerType):
                # iN <-> uiN: the same bits, read with the other signedness.
                results.append(wrap(value, result.type))
            else:
                raise InterpretationError(
                    f"unrealized_conversion_cast from {source.type} to {result.type}"
                )
        return tuple(results)


TABLE_IMPLS: dict[type[Operation], Callable[..., Results]] = {
    **{op: _int_binary(fn) for op, fn in INT_BINARY.items()},
    **{op: _float_binary(fn) for op, fn in FLOAT_BINARY.items()},
    **{op: _float_unary(fn) for op, fn in FLOAT_UNARY.items()},
    arith.FPToSIOp: _float_to_int(unsigned=False),
    arith.FPToUIOp: _float_to_int(unsigned=True),
    arith.SIToFPOp: _int_to_float(unsigned=False),
    arith.UIToFPOp: _int_to_float(unsigned=True),
    arith.ExtSIOp: _int_resize(unsigned=False),
    arith.ExtUIOp: _int_resize(unsigned=True),
    arith.TruncIOp: _int_resize(unsigned=False),
    arith.IndexCastOp: _int_resize(unsigned=False),
    arith.ExtFOp: _float_resize,
    arith.TruncFOp: _float_resize,
    arith.BitcastOp: _bitcast,
}
for _op, _fn in TABLE_IMPLS.items():
    setattr(ScalarFunctions, f"run_{_op.name.replace('.', '_')}", impl(_op)(_fn))
register_impls(ScalarFunctions)
