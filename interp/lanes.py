"""`arith` and `math` on lanes: the semantics of interp/scalar.py, with each
value either one numpy scalar (uniform: the same in every lane) or a numpy
array holding one element per lane. The lockstep GPU interpreter
(interp/gpu_lockstep.py) runs a kernel's threads as the lanes of these
arrays.

Every value has its type's numpy dtype: int64 for index, intN for a
signless iN (bool for i1), the float's dtype for a float; so numpy
computes in the type's precision and wraps integers at its width, as
native code does. An unsigned op reads the same bits as uintN (a view).
Division by zero and shifts past the width give 0 here too, and a float
to integer cast out of range what x86 gives (scalar.float_to_int).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable
from typing import Any

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
from xdsl.ir import Attribute, Operation

from xtc.interp.scalar import FLOAT_UNARY, float_dtype

Lanes = Any
"""A numpy scalar (uniform) or a 1-D array with one element per lane."""


class NotLaneWise(Exception):
    """An op or type the lane semantics do not cover (the caller falls back
    to one thread at a time)."""


def dtype_of(t: Attribute) -> np.dtype[Any]:
    """The numpy dtype a value of type `t` has on lanes."""
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            kind = "u" if t.signedness.data == Signedness.UNSIGNED else "i"
            return np.dtype(f"{kind}{width // 8}")
        raise NotLaneWise(f"{t}")
    if isinstance(t, AnyFloat):
        return float_dtype(t)
    raise NotLaneWise(f"{t}")


def _unsigned(x: Lanes) -> Lanes:
    """The same bits read as unsigned (bool stays bool)."""
    return x if x.dtype == np.bool_ else x.view(f"u{x.dtype.itemsize}")


def _signed(x: Lanes, dtype: np.dtype[Any]) -> Lanes:
    return x if x.dtype == dtype else x.view(dtype)


def _width(x: Lanes) -> int:
    return 1 if x.dtype == np.bool_ else x.dtype.itemsize * 8


def _unsigned_op(fn: Callable[[Lanes, Lanes], Lanes]) -> Callable[[Lanes, Lanes], Lanes]:
    return lambda a, b: _signed(fn(_unsigned(a), _unsigned(b)), a.dtype)


def _truncating_div(a: Lanes, b: Lanes) -> Lanes:
    # a - fmod(a, b) is a multiple of b; numpy gives 0 for a zero divisor.
    return (a - np.fmod(a, b)) // b


def _shift_left(a: Lanes, b: Lanes) -> Lanes:
    amount = _unsigned(b)
    width = _width(a)
    shifted = np.left_shift(a, np.minimum(amount, width - 1).astype(a.dtype))
    return np.where(amount < width, shifted, a.dtype.type(0))


def _shift_right_signed(a: Lanes, b: Lanes) -> Lanes:
    return np.right_shift(a, np.minimum(_unsigned(b), _width(a) - 1).astype(a.dtype))


def _shift_right_unsigned(a: Lanes, b: Lanes) -> Lanes:
    amount = _unsigned(b)
    width = _width(a)
    shifted = np.right_shift(_unsigned(a), np.minimum(amount, width - 1).astype(amount.dtype))
    return _signed(np.where(amount < width, shifted, shifted.dtype.type(0)), a.dtype)


def maximumf(a: Lanes, b: Lanes) -> Lanes:
    """max propagating NaN, +0 above -0 (arith.maximumf)."""
    both_zero = (a == 0) & (b == 0)
    return np.where(both_zero, np.where(np.signbit(a), b, a), np.maximum(a, b))


def minimumf(a: Lanes, b: Lanes) -> Lanes:
    """min propagating NaN, -0 below +0 (arith.minimumf)."""
    both_zero = (a == 0) & (b == 0)
    return np.where(both_zero, np.where(np.signbit(a), a, b), np.minimum(a, b))


def maxnumf(a: Lanes, b: Lanes) -> Lanes:
    """max ignoring a NaN; of equal values (+0, -0) the first."""
    return np.where(np.isnan(a), b, np.where(np.isnan(b) | (b <= a), a, b))


def minnumf(a: Lanes, b: Lanes) -> Lanes:
    """min ignoring a NaN; of equal values (+0, -0) the first."""
    return np.where(np.isnan(a), b, np.where(np.isnan(b) | (b >= a), a, b))


def powf(a: Lanes, b: Lanes) -> Lanes:
    """C's pow lane by lane, as interp/scalar.powf: numpy's power with one
    exponent for all (a scalar, or a broadcast one) takes a path that is
    sqrt for 0.5 (pow(-inf, 0.5) would be nan, not inf), so both operands
    go to its loop as whole arrays."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    base, exponent = (np.array(x) for x in np.broadcast_arrays(np.atleast_1d(a), np.atleast_1d(b)))
    return np.power(base, exponent).reshape(shape)


BINARY: dict[type[Operation], Callable[[Lanes, Lanes], Lanes]] = {
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.DivSIOp: _truncating_div,
    arith.DivUIOp: _unsigned_op(np.floor_divide),
    arith.FloorDivSIOp: np.floor_divide,
    arith.RemSIOp: np.fmod,
    arith.RemUIOp: _unsigned_op(np.remainder),
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.MaxUIOp: _unsigned_op(np.maximum),
    arith.MinUIOp: _unsigned_op(np.minimum),
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.ShLIOp: _shift_left,
    arith.ShRSIOp: _shift_right_signed,
    arith.ShRUIOp: _shift_right_unsigned,
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.MaximumfOp: maximumf,
    arith.MinimumfOp: minimumf,
    arith.MaxnumfOp: maxnumf,
    arith.MinnumfOp: minnumf,
    math.PowFOp: powf,
    math.CopySignOp: np.copysign,
    math.Atan2Op: np.arctan2,
}


def _round_half_away(x: Lanes) -> Lanes:
    magnitude = np.abs(x)
    whole = np.floor(magnitude)
    rounded = np.where(magnitude - whole >= 0.5, whole + 1, whole)
    return np.where(np.isfinite(x), np.copysign(rounded, x), x)


_erf = np.frompyfunc(lambda v: pymath.erf(float(v)), 1, 1)

UNARY: dict[type[Operation], Callable[[Lanes], Lanes]] = {
    **{op: fn for op, fn in FLOAT_UNARY.items() if isinstance(fn, np.ufunc)},
    arith.NegfOp: np.negative,
    math.RsqrtOp: lambda x: 1 / np.sqrt(x),
    math.ErfOp: _erf,
    math.RoundOp: _round_half_away,
}


def cmpi(predicate: int, a: Lanes, b: Lanes) -> Lanes:
    """arith.cmpi: eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge (0 to 9)."""
    if predicate >= 6:
        a, b = _unsigned(a), _unsigned(b)
    compare = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)
    return compare[predicate if predicate < 6 else predicate - 4](a, b)


def cmpf(predicate: int, x: Lanes, y: Lanes) -> Lanes:
    """arith.cmpf: predicates 1-6 ordered (false on NaN), 8-13 unordered."""
    unordered = np.isnan(x) | np.isnan(y)
    if predicate in (0, 15):  # always false, always true
        return unordered | True if predicate == 15 else unordered & False
    if predicate == 7:
        return ~unordered
    if predicate == 14:
        return unordered
    compare = (np.equal, np.greater, np.greater_equal, np.less, np.less_equal, np.not_equal)
    result = compare[(predicate - 1) % 7](x, y)
    return result | unordered if predicate >= 8 else result & ~unordered


def float_to_int(x: Lanes, dtype: np.dtype[Any], unsigned: bool) -> Lanes:
    """fptosi / fptoui as x86-64 computes them (scalar.float_to_int)."""
    width = 1 if dtype == np.bool_ else dtype.itemsize * 8
    if unsigned and width == 64:
        high = x >= 2.0**63
        low_part = float_to_int(np.where(high, x - 2.0**63, x), np.dtype(np.int64), False)
        return np.where(high, low_part ^ np.int64(-(1 << 63)), low_part)
    convert_width = 64 if width > 32 or (unsigned and width == 32) else 32
    low, high_value = -(1 << (convert_width - 1)), (1 << (convert_width - 1)) - 1
    whole = np.trunc(np.asarray(x, np.float64))
    fits = np.isfinite(whole) & (whole >= low) & (whole <= high_value)
    value = np.where(fits, whole, low).astype(np.int64)
    return value.astype(dtype) if dtype != np.bool_ else (value & 1).astype(np.bool_)


def constant(op: arith.ConstantOp) -> Lanes:
    value, dtype = op.value, dtype_of(op.result.type)
    if isinstance(value, FloatAttr | IntegerAttr):
        number = value.value.data
        if dtype == np.bool_:
            return np.bool_(int(number) & 1)
        if dtype.kind == "i":  # the low bits, read as signed
            bits = int(number) & ((1 << dtype.itemsize * 8) - 1)
            return np.array([bits], dtype=f"u{dtype.itemsize}").view(dtype)[0]
        return dtype.type(number)
    raise NotLaneWise(f"arith.constant of {value}")


def convert(op: Operation, x: Lanes) -> Lanes:
    """The casts: int <-> float, int widths, float widths, bitcasts."""
    source, result = dtype_of(op.operands[0].type), dtype_of(op.results[0].type)
    if isinstance(op, arith.SIToFPOp | arith.ExtFOp | arith.TruncFOp):
        return x.astype(result)
    if isinstance(op, arith.UIToFPOp):
        return _unsigned(x).astype(result)
    if isinstance(op, arith.FPToSIOp | arith.FPToUIOp):
        return float_to_int(x, result, isinstance(op, arith.FPToUIOp))
    if isinstance(op, arith.ExtSIOp | arith.IndexCastOp | arith.TruncIOp):
        if source == np.bool_:  # i1 sign-extends to 0 / -1
            return -(x.astype(result))
        if result == np.bool_:
            return (x & 1).astype(np.bool_)
        return x.astype(result)
    if isinstance(op, arith.ExtUIOp):
        return _unsigned(x).astype(result) if result != np.bool_ else (x & 1).astype(np.bool_)
    if isinstance(op, arith.BitcastOp | UnrealizedConversionCastOp):
        return x.view(result)  # iN <-> uiN: the same bits
    raise NotLaneWise(op.name)


CONVERSIONS = (
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    arith.IndexCastOp,
    arith.ExtFOp,
    arith.TruncFOp,
    arith.BitcastOp,
    UnrealizedConversionCastOp,
)


def evaluate(op: Operation, args: list[Lanes]) -> Lanes:
    """The result of an `arith` / `math` op on lanes; NotLaneWise for others."""
    return _as_result(_evaluate(op, args), op)


def _evaluate(op: Operation, args: list[Lanes]) -> Lanes:
    binary = BINARY.get(type(op))
    if binary is not None:
        return binary(args[0], args[1])
    unary = UNARY.get(type(op))
    if unary is not None:
        return unary(args[0])
    if isinstance(op, arith.CmpiOp):
        return cmpi(op.predicate.value.data, args[0], args[1])
    if isinstance(op, arith.CmpfOp):
        return cmpf(op.predicate.value.data, args[0], args[1])
    if isinstance(op, arith.SelectOp):
        condition, if_true, if_false = args
        if np.ndim(condition) == 0:
            return if_true if condition else if_false
        return np.where(condition, if_true, if_false)
    if isinstance(op, CONVERSIONS):
        return convert(op, args[0])
    if isinstance(op, math.FmaOp):
        a, b, c = (np.asarray(v, np.float64) for v in args)
        return a * b + c
    raise NotLaneWise(op.name)


def is_lane_wise(op: Operation) -> bool:
    """Whether `evaluate` computes `op` (its types included)."""
    known = (
        type(op) in BINARY
        or type(op) in UNARY
        or isinstance(op, (arith.CmpiOp, arith.CmpfOp, arith.SelectOp, math.FmaOp, *CONVERSIONS))
    )
    if not known:
        return False
    try:
        dtypes = [dtype_of(value.type) for value in (*op.operands, *op.results)]
    except NotLaneWise:
        return False
    if isinstance(op, UnrealizedConversionCastOp) and (
        len(op.operands) != 1
        or not all(isinstance(v.type, IntegerType) for v in (*op.operands, *op.results))
        or dtypes[0].itemsize != dtypes[1].itemsize
    ):
        return False  # only iN <-> uiN
    bitwise = (arith.AndIOp, arith.OrIOp, arith.XOrIOp, arith.SelectOp, arith.CmpiOp, *CONVERSIONS)
    # numpy's bool arithmetic is not i1's (its add is an or, not a xor)
    return isinstance(op, bitwise) or dtypes[0] != np.bool_


def _as_result(value: Lanes, op: Operation) -> Lanes:
    """`value` in the result type's dtype (numpy may have widened it, or
    made an object array for erf), a numpy scalar where it is uniform."""
    dtype = dtype_of(op.results[0].type)
    if np.ndim(value) == 0:
        value = np.asarray(value)[()]
        return value if value.dtype == dtype else dtype.type(value)
    return value if value.dtype == dtype else value.astype(dtype)
