"""numpy semantics of the elementwise graph ops.

This is the oracle: written for clarity, not speed. Transcendental functions
without a numpy ufunc, and the formulas built from several steps (gelu), are
evaluated in float64 and rounded once to the result type. IEEE special values
(inf, NaN) are results, not warnings: each op runs under
`np.errstate(all="ignore")`. An integer Div or Mod by zero is a
RunTimeFault naming the node, as in native code and onnxruntime; INT_MIN / -1
wraps to INT_MIN (and INT_MIN % -1 is 0), as onnxruntime gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph.base import division_fault, elem, get_bool, get_float, get_str, op_props
from xtc.dialects.graph.constant import numpy_dtype
from xtc.interp import RunTimeFault

Args = tuple[Any, ...]
Results = tuple[Any, ...]

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _result(op: Operation, value: Any) -> Results:
    """`value` as an array of the op's result element type."""
    dtype = numpy_dtype(elem(op.results[0].type))
    return (np.asarray(value).astype(dtype, copy=False),)


def _float64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _is_integer(x: np.ndarray) -> bool:
    return x.dtype.kind in "iu"


def gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    x64 = _float64(x)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64**3)
        return 0.5 * x64 * (1.0 + np.tanh(inner))
    return 0.5 * x64 * (1.0 + _erf(x64 / math.sqrt(2.0)))


def sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of -|x| only, so that large |x| neither overflows nor cancels.
    x64 = _float64(x)
    e = np.exp(-np.abs(x64))
    return np.where(x64 >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def swish(x: np.ndarray, alpha: float) -> np.ndarray:
    x64 = _float64(x)
    return x64 * sigmoid(alpha * x64)


def integer_bounds(dtype: np.dtype[Any], low: float, high: float) -> tuple[int, int]:
    """Float clip bounds as the integers of `dtype` they admit: rounded inward,
    then limited to the type's range."""
    info = np.iinfo(dtype)
    lo = info.min if low == -math.inf else max(math.ceil(low), int(info.min))
    hi = info.max if high == math.inf else min(math.floor(high), int(info.max))
    return int(min(lo, info.max)), int(max(hi, info.min))


def clip(x: np.ndarray, low: float, high: float) -> np.ndarray:
    if _is_integer(x):
        lo, hi = integer_bounds(x.dtype, low, high)
    else:
        lo, hi = low, high
    bounds = np.array([lo, hi]).astype(x.dtype)
    # min(max(x, lo), hi): when lo > hi everything becomes hi, as ONNX says.
    return np.minimum(np.maximum(x, bounds[0]), bounds[1])


def truncating_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer x / y rounded toward zero (C, ONNX); 0 where y is 0."""
    floor = np.floor_divide(x, y)
    inexact = np.remainder(x, y) != 0
    negative = (x < 0) != (y < 0)
    return floor + (inexact & negative).astype(floor.dtype)


def integer_power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Integer base ** integer exponent; a negative exponent gives 1 / base**n
    truncated toward zero: ±1 for a base of ±1, else 0."""
    wide = np.int64 if base.dtype.kind == "i" else np.uint64
    b = base.astype(wide)
    negative = exponent < 0
    e = np.where(negative, 0, exponent).astype(wide)
    positive_power = np.power(b, e)
    odd = (exponent % 2) != 0
    minus_one_power = np.where(odd, -1, 1)
    one_over = np.where(b == 1, 1, np.where(b == -1, minus_one_power, 0)).astype(wide)
    return np.where(negative, one_over, positive_power)


def power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    if _is_integer(base) and _is_integer(exponent):
        return integer_power(base, exponent)
    return np.power(_float64(base), _float64(exponent))


def refuse_zero_divisor(op: Operation, x: np.ndarray, y: np.ndarray) -> None:
    """A RunTimeFault when an integer division of x by y divides by zero
    (every element of y is used once the result has any)."""
    if _is_integer(x) and np.broadcast(x, y).size and bool(np.any(y == 0)):
        raise RunTimeFault(division_fault(op))


def divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return truncating_divide(x, y) if _is_integer(x) else np.divide(x, y)


def modulo(x: np.ndarray, y: np.ndarray, c_fmod: bool) -> np.ndarray:
    return np.fmod(x, y) if c_fmod else np.mod(x, y)


def _in_shift_range(x: np.ndarray, amount: np.ndarray) -> np.ndarray:
    return (amount >= 0) & (amount < x.dtype.itemsize * 8)


def shift_left(x: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """x << amount; 0 where the amount is outside [0, bit width)."""
    valid = _in_shift_range(x, amount)
    shifted = np.left_shift(x, np.where(valid, amount, 0).astype(x.dtype))
    return np.where(valid, shifted, np.zeros((), x.dtype))


def shift_right(x: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """x >> amount (arithmetic when signed); where the amount is outside
    [0, bit width), 0, or -1 for a negative x."""
    valid = _in_shift_range(x, amount)
    shifted = np.right_shift(x, np.where(valid, amount, 0).astype(x.dtype))
    saturated = np.where(x < 0, -1, 0).astype(x.dtype)
    return np.where(valid, shifted, saturated)


def cast(x: np.ndarray, to: Any, saturate: bool = False, round_mode: str = "up") -> np.ndarray:
    """numpy's astype (ml_dtypes' for the narrow types); `saturate`: out of
    range gives the largest finite value of that sign, NaN stays NaN. To
    f8E8M0FNU, ONNX's rule (`to_e8m0`)."""
    dtype = numpy_dtype(to)
    if dtype == np.bool_:
        return x != 0
    if dtype == ml_dtypes.float8_e8m0fnu:
        return to_e8m0(x, round_mode, saturate)
    if saturate:
        largest = float(ml_dtypes.finfo(dtype).max)
        return np.clip(x.astype(np.float64), -largest, largest).astype(dtype)
    return x.astype(dtype)


def to_e8m0(x: np.ndarray, round_mode: str, saturate: bool) -> np.ndarray:
    """x as f8E8M0FNU, as ONNX casts it: the exponent bits of the f32 value
    (its sign dropped), plus one where `round_mode` rounds the significand
    up ("up": any fraction; "nearest": half or more, exactly half of a
    subnormal rounding down; "down": never), except at exponent 254 when
    `saturate`; inf and NaN give NaN (all ones)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.int64)
    exponent = (bits >> 23) & 0xFF
    if round_mode == "up":
        rounds_up = (bits & 0x7FFFFF) != 0
    elif round_mode == "nearest":
        half = (bits & 0x400000) != 0
        rounds_up = half & (((bits & 0x3FFFFF) != 0) | (exponent > 0))
    else:
        rounds_up = np.zeros(bits.shape, np.bool_)
    if saturate:
        rounds_up &= exponent != 0xFE
    code = np.where(exponent == 0xFF, 0xFF, exponent + rounds_up)
    return code.astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)


def _unary(function: Callable[[np.ndarray], Any]) -> Callable[..., Results]:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: Args) -> Results:
        (x,) = args
        with np.errstate(all="ignore"):
            return _result(op, function(np.asarray(x)))

    return run


def _binary(
    function: Callable[[np.ndarray, np.ndarray], Any],
) -> Callable[..., Results]:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: Args) -> Results:
        x, y = args
        with np.errstate(all="ignore"):
            return _result(op, function(np.asarray(x), np.asarray(y)))

    return run


@register_impls
class ElementwiseFunctions(InterpreterFunctions):
    run_relu = impl(ew.ReluOp)(_unary(lambda x: np.maximum(x, np.zeros((), x.dtype))))
    run_sigmoid = impl(ew.SigmoidOp)(_unary(sigmoid))
    run_tanh = impl(ew.TanhOp)(_unary(np.tanh))
    run_erf = impl(ew.ErfOp)(_unary(lambda x: _erf(_float64(x))))
    run_exp = impl(ew.ExpOp)(_unary(np.exp))
    run_log = impl(ew.LogOp)(_unary(np.log))
    run_sqrt = impl(ew.SqrtOp)(_unary(np.sqrt))
    run_abs = impl(ew.AbsOp)(_unary(np.abs))
    run_neg = impl(ew.NegOp)(_unary(np.negative))
    run_floor = impl(ew.FloorOp)(_unary(np.floor))
    run_ceil = impl(ew.CeilOp)(_unary(np.ceil))
    run_round = impl(ew.RoundOp)(_unary(np.round))  # halves to even
    run_sign = impl(ew.SignOp)(_unary(np.sign))
    run_reciprocal = impl(ew.ReciprocalOp)(_unary(np.reciprocal))
    run_sin = impl(ew.SinOp)(_unary(np.sin))
    run_cos = impl(ew.CosOp)(_unary(np.cos))
    run_tan = impl(ew.TanOp)(_unary(np.tan))
    run_asin = impl(ew.AsinOp)(_unary(np.arcsin))
    run_acos = impl(ew.AcosOp)(_unary(np.arccos))
    run_atan = impl(ew.AtanOp)(_unary(np.arctan))
    run_sinh = impl(ew.SinhOp)(_unary(np.sinh))
    run_cosh = impl(ew.CoshOp)(_unary(np.cosh))
    run_asinh = impl(ew.AsinhOp)(_unary(np.arcsinh))
    run_acosh = impl(ew.AcoshOp)(_unary(np.arccosh))
    run_atanh = impl(ew.AtanhOp)(_unary(np.arctanh))
    run_softplus = impl(ew.SoftplusOp)(_unary(lambda x: np.logaddexp(0.0, _float64(x))))
    run_not = impl(ew.NotOp)(_unary(np.logical_not))
    run_bitwise_not = impl(ew.BitwiseNotOp)(_unary(np.invert))
    run_identity = impl(ew.IdentityOp)(_unary(lambda x: x))
    run_dropout = impl(ew.DropoutOp)(_unary(lambda x: x))

    run_add = impl(ew.AddOp)(_binary(np.add))
    run_sub = impl(ew.SubOp)(_binary(np.subtract))
    run_mul = impl(ew.MulOp)(_binary(np.multiply))

    @impl(ew.DivOp)
    def run_div(self, interpreter: Interpreter, op: ew.DivOp, args: Args) -> Results:
        x, y = np.asarray(args[0]), np.asarray(args[1])
        refuse_zero_divisor(op, x, y)
        with np.errstate(all="ignore"):
            return _result(op, divide(x, y))

    run_pow = impl(ew.PowOp)(_binary(power))
    run_max = impl(ew.MaxOp)(_binary(np.maximum))
    run_min = impl(ew.MinOp)(_binary(np.minimum))
    run_and = impl(ew.AndOp)(_binary(np.logical_and))
    run_or = impl(ew.OrOp)(_binary(np.logical_or))
    run_xor = impl(ew.XorOp)(_binary(np.logical_xor))
    run_bitwise_and = impl(ew.BitwiseAndOp)(_binary(np.bitwise_and))
    run_bitwise_or = impl(ew.BitwiseOrOp)(_binary(np.bitwise_or))
    run_bitwise_xor = impl(ew.BitwiseXorOp)(_binary(np.bitwise_xor))
    run_shift_left = impl(ew.ShiftLeftOp)(_binary(shift_left))
    run_shift_right = impl(ew.ShiftRightOp)(_binary(shift_right))
    run_equal = impl(ew.EqualOp)(_binary(np.equal))
    run_not_equal = impl(ew.NotEqualOp)(_binary(np.not_equal))
    run_less = impl(ew.LessOp)(_binary(np.less))
    run_less_equal = impl(ew.LessEqualOp)(_binary(np.less_equal))
    run_greater = impl(ew.GreaterOp)(_binary(np.greater))
    run_greater_equal = impl(ew.GreaterEqualOp)(_binary(np.greater_equal))

    @impl(ew.GeluOp)
    def run_gelu(self, interpreter: Interpreter, op: ew.GeluOp, args: Args) -> Results:
        approximate = get_str(op_props(op), "approximate")
        with np.errstate(all="ignore"):
            return _result(op, gelu(np.asarray(args[0]), approximate))

    @impl(ew.LeakyReluOp)
    def run_leaky_relu(self, interpreter: Interpreter, op: ew.LeakyReluOp, args: Args) -> Results:
        x = np.asarray(args[0])
        alpha = get_float(op_props(op), "alpha")
        return _result(op, np.where(x >= 0, x, _float64(x) * alpha))

    @impl(ew.SwishOp)
    def run_swish(self, interpreter: Interpreter, op: ew.SwishOp, args: Args) -> Results:
        alpha = get_float(op_props(op), "alpha")
        with np.errstate(all="ignore"):
            return _result(op, swish(np.asarray(args[0]), alpha))

    @impl(ew.HardSigmoidOp)
    def run_hard_sigmoid(
        self, interpreter: Interpreter, op: ew.HardSigmoidOp, args: Args
    ) -> Results:
        alpha = get_float(op_props(op), "alpha")
        beta = get_float(op_props(op), "beta")
        return _result(op, np.clip(alpha * _float64(args[0]) + beta, 0.0, 1.0))

    @impl(ew.ClipOp)
    def run_clip(self, interpreter: Interpreter, op: ew.ClipOp, args: Args) -> Results:
        low = get_float(op_props(op), "min")
        high = get_float(op_props(op), "max")
        return _result(op, clip(np.asarray(args[0]), low, high))

    @impl(ew.BitcastOp)
    def run_bitcast(self, interpreter: Interpreter, op: ew.BitcastOp, args: Args) -> Results:
        return _result(op, np.array(args[0]).view(numpy_dtype(op.to)))

    @impl(ew.CastOp)
    def run_cast(self, interpreter: Interpreter, op: ew.CastOp, args: Args) -> Results:
        with np.errstate(all="ignore"):
            saturate = get_bool(op_props(op), "saturate", False)
            round_mode = get_str(op_props(op), "round_mode", "up")
            return _result(op, cast(np.asarray(args[0]), op.to, saturate, round_mode))

    @impl(ew.ModOp)
    def run_mod(self, interpreter: Interpreter, op: ew.ModOp, args: Args) -> Results:
        c_fmod = get_bool(op_props(op), "fmod")
        x, y = np.asarray(args[0]), np.asarray(args[1])
        refuse_zero_divisor(op, x, y)
        with np.errstate(all="ignore"):
            return _result(op, modulo(x, y, c_fmod))

    @impl(ew.WhereOp)
    def run_where(self, interpreter: Interpreter, op: ew.WhereOp, args: Args) -> Results:
        condition, x, y = (np.asarray(a) for a in args)
        return _result(op, np.where(condition, x, y))
