"""Compute rules: elementwise graph ops.

Each op is one `te.compute` over its result: every operand is read at the
result element's position under numpy broadcasting, then one scalar is
computed with the graph interpreter's semantics (interp/graph/elementwise.py):
integer division truncates toward zero (INT_MIN / -1 wraps to INT_MIN, as
onnxruntime gives), and an integer Div or Mod by zero is a run-time fault (a
`tir.assert` naming the node, as onnxruntime refuses it; the division itself
never traps), max and min propagate NaN, round sends halves to even, a shift
by an amount outside [0, width) gives 0 (or -1), casts follow numpy's
`astype`, Mod is Python's modulo unless `fmod`. Math on f16 and bf16 runs in f32 and rounds once, as
the interpreter computes in float64 and rounds once.

The helpers above the rules (broadcast reads, casts, integer division) are
shared by the other rule files.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E8M0FNUType,
    Float16Type,
    IntegerType,
    Signedness,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph.base import (
    GraphOp,
    division_fault,
    elem,
    get_bool,
    get_float,
    get_str,
    op_props,
    shape_of,
)
from xtc.dialects.graph.constant import numpy_dtype
from xtc.ops import compute_rule
from xtc.ops.te_builder import (
    Expr,
    ExprLike,
    KernelBuilder,
    Tensor,
    absolute,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atanh,
    cast_width,
    ceil,
    check,
    constant,
    convert,
    cos,
    cosh,
    erf,
    exp,
    floor,
    is_float,
    log,
    log1p,
    maximum,
    minimum,
    power,
    round_even,
    select,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
)

ScalarFn = Callable[..., Expr]

# ---------------------------------------------------------------------------
# Shared helpers.


def broadcast_read(t: Tensor, indices: Sequence[Expr]) -> Expr:
    """t's element at the result position `indices` under numpy broadcasting
    (t's axes align with the last ones; a size-1 axis is read at 0)."""
    offset = len(indices) - t.rank
    return t[[0 if d == 1 else indices[offset + a] for a, d in enumerate(t.shape)]]


def elementwise(
    k: KernelBuilder, op: GraphOp, inputs: Sequence[Tensor], scalar: ScalarFn
) -> list[Tensor]:
    """The op's result as one compute: `scalar` of the broadcast operands."""
    result_type = op.results[0].type
    shape = shape_of(result_type)

    def body(*indices: Expr) -> Expr:
        return scalar(*[broadcast_read(t, indices) for t in inputs])

    return [k.compute(shape, elem(result_type), body)]


def like(x: Expr, value: ExprLike) -> Expr:
    """`value` as a constant of x's type and signedness."""
    if isinstance(value, Expr):
        return value
    return Expr(constant(value, x.type).value, x.unsigned)


def is_half(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type)


def in_f32(fn: Callable[[Expr], Expr]) -> Callable[[Expr], Expr]:
    """fn computed in f32 for f16 and bf16 operands, then rounded once."""

    def apply(x: Expr) -> Expr:
        if is_half(x.type):
            return convert(fn(convert(x, f32)), x.type)
        return fn(x)

    return apply


def is_nan(x: Expr) -> Expr:
    return Expr(arith.CmpfOp(x.value, x.value, "uno").result)


def trunc(x: Expr) -> Expr:
    return Expr(xmath.TruncOp(x.value).result)


def int_bounds(t: Attribute, unsigned: bool) -> tuple[int, int]:
    width = cast_width(t)
    if unsigned:
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def float_to_int(x: Expr, to: Attribute) -> Expr:
    """A float converted to the integer type `to` as numpy's astype does on
    this machine: truncated toward zero; narrower than 64 bits through i64
    (so out-of-range values wrap rather than being undefined)."""
    if isinstance(to, IntegerType) and 1 < to.width.data < 64:
        return convert(convert(x, i64), to)
    return convert(x, to)


def cast_value(x: Expr, to: Attribute) -> Expr:
    """numpy `astype`: floats to integers truncate, anything to i1 is `!= 0`."""
    if is_float(x.type) and isinstance(to, IntegerType):
        return float_to_int(x, to)
    return convert(x, to)


def safe_divisor(x: Expr, y: Expr) -> tuple[Expr, Expr, Expr | None]:
    """(divisor, y == 0, y == -1 or None if unsigned): y with 0 and -1
    replaced by 1, so that the division cannot trap (x / 0 and INT_MIN / -1
    do in native code)."""
    zero = y.eq(0)
    if x.unsigned:
        return select(zero, 1, y), zero, None
    minus_one = y.eq(-1)
    return select(zero | minus_one, 1, y), zero, minus_one


def int_divide(x: Expr, y: Expr) -> Expr:
    """x / y truncated toward zero; 0 where y is 0; -x (wrapping) where y is -1."""
    divisor, zero, minus_one = safe_divisor(x, y)
    quotient = x / divisor
    if minus_one is not None:
        quotient = select(minus_one, -x, quotient)
    return select(zero, 0, quotient)


def int_remainder(x: Expr, y: Expr) -> Expr:
    """C `%` (sign of x); 0 where y is 0 (and x % -1 is 0)."""
    divisor, zero, _ = safe_divisor(x, y)
    return select(zero, 0, x % divisor)


def split(a: Expr) -> tuple[Expr, Expr]:
    """(hi, lo) with a = hi + lo exactly and each half of a's significand
    (Veltkamp's split of a double)."""
    c = a * 134217729.0  # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def exact_product(a: Expr, b: Expr) -> tuple[Expr, Expr]:
    """(p, e) with p + e = a * b exactly (Dekker's two-product: plain
    multiplies and adds, so every backend agrees on it)."""
    (a_hi, a_lo), (b_hi, b_lo) = split(a), split(b)
    p = a * b
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def float_fmod(x: Expr, y: Expr) -> Expr:
    """C fmod (sign of x), exact while |x / y| < 2^100 (f32 and narrower run
    in f64). Each step takes q * y off r with q = trunc(r / y): the product
    is exact as a sum of two doubles, the difference then too, and the
    quotient shrinks by about 2^50. A last quotient rounded up to an integer
    leaves r with the wrong sign: one y puts it back."""
    wide = f64 if cast_width(x.type) <= 32 else x.type
    xw, yw = convert(x, wide), convert(y, wide)
    r = xw
    for _ in range(2):
        quotient = trunc(r / yw)
        product, error = exact_product(quotient, yw)
        # A zero quotient leaves r (0 * inf would make fmod(x, inf) NaN).
        r = select(quotient.eq(0.0), r, (r - product) - error)
    overshot = r.ne(0.0) & ((r < 0.0) ^ (xw < 0.0))
    r = select(overshot, r + select((xw < 0.0) ^ (yw < 0.0), -yw, yw), r)
    return convert(r, x.type)


def python_mod(x: Expr, y: Expr, remainder: Expr) -> Expr:
    """The remainder moved to the sign of y (Python's and numpy's mod)."""
    zero = 0.0 if is_float(x.type) else 0
    if x.unsigned:
        return remainder
    adjust = remainder.ne(zero) & ((remainder < zero) ^ (y < zero))
    return select(adjust, remainder + y, remainder)


# ---------------------------------------------------------------------------
# Unary ops.


def sigmoid(x: Expr) -> Expr:
    # exp of -|x| only: no overflow for large |x|, as the interpreter; one
    # division for both signs, 1 / (1 + e) or e / (1 + e), its numerator
    # picked first.
    e = exp(-absolute(x))
    return select(x >= 0.0, 1.0, e) / (1.0 + e)


def softplus(x: Expr) -> Expr:
    """log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), stable for any x."""
    return maximum(x, 0.0) + log1p(exp(-absolute(x)))


def sign(x: Expr) -> Expr:
    if is_float(x.type):
        # 0 and NaN are their own sign.
        return select(x > 0.0, 1.0, select(x < 0.0, -1.0, x))
    return select(x > like(x, 0), like(x, 1), select(x < like(x, 0), like(x, -1), like(x, 0)))


def abs_value(x: Expr) -> Expr:
    return x if x.unsigned else absolute(x)


FLOAT_MATH: dict[type[GraphOp], Callable[[Expr], Expr]] = {
    ew.SigmoidOp: sigmoid,
    ew.TanhOp: tanh,
    ew.ErfOp: erf,
    ew.ExpOp: exp,
    ew.LogOp: log,
    ew.SqrtOp: sqrt,
    ew.FloorOp: floor,
    ew.CeilOp: ceil,
    ew.RoundOp: round_even,
    ew.ReciprocalOp: lambda x: 1.0 / x,
    ew.SinOp: sin,
    ew.CosOp: cos,
    ew.TanOp: tan,
    ew.AsinOp: asin,
    ew.AcosOp: acos,
    ew.AtanOp: atan,
    ew.SinhOp: sinh,
    ew.CoshOp: cosh,
    ew.AsinhOp: asinh,
    ew.AcoshOp: acosh,
    ew.AtanhOp: atanh,
    ew.SoftplusOp: softplus,
}

OTHER_UNARY: dict[type[GraphOp], Callable[[Expr], Expr]] = {
    ew.ReluOp: lambda x: maximum(x, like(x, 0)),
    ew.AbsOp: abs_value,
    ew.NegOp: lambda x: -x,
    ew.SignOp: sign,
    ew.NotOp: lambda x: x ^ 1,
    ew.BitwiseNotOp: lambda x: x ^ like(x, -1),
    ew.IdentityOp: lambda x: x,
    ew.DropoutOp: lambda x: x,
}


def register_elementwise(op_class: type[GraphOp], scalar: ScalarFn) -> None:
    """Registers `elementwise(..., scalar)` as the op's rule."""

    def rule(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
        return elementwise(k, op, inputs, scalar)

    rule.__name__ = op_class.name.removeprefix("graph.")
    compute_rule(op_class)(rule)


for _op_class, _fn in FLOAT_MATH.items():
    register_elementwise(_op_class, in_f32(_fn))
for _op_class, _fn in OTHER_UNARY.items():
    register_elementwise(_op_class, _fn)


@compute_rule(ew.GeluOp)
def gelu(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    if get_str(op_props(op), "approximate") == "tanh":

        def scalar(x: Expr) -> Expr:
            inner = pymath.sqrt(2.0 / pymath.pi) * (x + 0.044715 * (x * x * x))
            return 0.5 * x * (1.0 + tanh(inner))
    else:

        def scalar(x: Expr) -> Expr:
            return 0.5 * x * (1.0 + erf(x / pymath.sqrt(2.0)))

    return elementwise(k, op, inputs, in_f32(scalar))


@compute_rule(ew.LeakyReluOp)
def leaky_relu(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    alpha = get_float(op_props(op), "alpha")
    return elementwise(k, op, inputs, in_f32(lambda x: select(x >= 0.0, x, x * alpha)))


@compute_rule(ew.SwishOp)
def swish(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    alpha = get_float(op_props(op), "alpha")
    return elementwise(k, op, inputs, in_f32(lambda x: x * sigmoid(x * alpha)))


@compute_rule(ew.HardSigmoidOp)
def hard_sigmoid(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    alpha = get_float(op_props(op), "alpha")
    beta = get_float(op_props(op), "beta")

    def scalar(x: Expr) -> Expr:
        return minimum(maximum(x * alpha + beta, 0.0), 1.0)

    return elementwise(k, op, inputs, in_f32(scalar))


def clip_bounds(t: Attribute, unsigned: bool, low: float, high: float) -> tuple[float, float]:
    """The bounds as values of the element type: rounded to it for floats;
    rounded inward and limited to the type's range for integers."""
    if is_float(t):
        dtype = numpy_dtype(t)
        return float(np.array(low).astype(dtype)), float(np.array(high).astype(dtype))
    type_low, type_high = int_bounds(t, unsigned)
    lo = type_low if low == -pymath.inf else max(pymath.ceil(low), type_low)
    hi = type_high if high == pymath.inf else min(pymath.floor(high), type_high)
    return min(lo, type_high), max(hi, type_low)


@compute_rule(ew.ClipOp)
def clip(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    (x,) = inputs
    lo, hi = clip_bounds(
        x.element_type,
        x.unsigned,
        get_float(op_props(op), "min"),
        get_float(op_props(op), "max"),
    )
    floats = is_float(x.element_type)
    type_low, type_high = (
        (-pymath.inf, pymath.inf) if floats else int_bounds(x.element_type, x.unsigned)
    )

    def scalar(v: Expr) -> Expr:
        # min(max(x, lo), hi): when lo > hi everything becomes hi (ONNX).
        if lo > type_low:
            v = maximum(v, like(v, lo))
        if hi < type_high:
            v = minimum(v, like(v, hi))
        return v

    return elementwise(k, op, inputs, scalar)


@compute_rule(ew.BitcastOp)
def bitcast(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    to = elem(op.results[0].type)
    return elementwise(k, op, inputs, lambda x: bitcast_value(x, to))


def bitcast_value(x: Expr, to: Attribute) -> Expr:
    """x's bits as `to`: integers of one width (i1 widened to a byte) keep
    their value's bits; a float and an integer, or two floats, go through
    arith.bitcast."""
    if not is_float(x.type) and not is_float(to):
        return convert(x, to)
    if isinstance(to, IntegerType):
        signless = IntegerType(to.width.data)
        unsigned = to.signedness.data == Signedness.UNSIGNED
        return Expr(arith.BitcastOp(x.value, signless).result, unsigned)
    return Expr(arith.BitcastOp(x.value, to).result)


@compute_rule(ew.CastOp)
def cast(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    to = elem(op.results[0].type)
    if isinstance(to, Float8E8M0FNUType):
        round_mode = get_str(op_props(op), "round_mode", "up")
        saturate = get_bool(op_props(op), "saturate", False)
        return elementwise(k, op, inputs, lambda x: to_e8m0(x, round_mode, saturate))
    if get_bool(op_props(op), "saturate", False):
        return elementwise(k, op, inputs, lambda x: cast_value(clamp_to_finite(x, to), to))
    return elementwise(k, op, inputs, lambda x: cast_value(x, to))


def to_e8m0(x: Expr, round_mode: str, saturate: bool) -> Expr:
    """x as f8E8M0FNU by ONNX's rule (interp/graph/elementwise.py's
    `to_e8m0`), on the bits of x as f32: the exponent field, plus one where
    the round mode rounds up; the code's byte then read as f8E8M0FNU."""
    bits = Expr(arith.BitcastOp(convert(x, f32).value, i32).result)
    exponent = Expr(arith.ShRUIOp(bits.value, constant(23, i32).value).result) & 0xFF
    if round_mode == "up":
        rounds_up = (bits & 0x7FFFFF).ne(0)
    elif round_mode == "nearest":
        below_half = (bits & 0x3FFFFF).ne(0) | exponent.ne(0)
        rounds_up = (bits & 0x400000).ne(0) & below_half
    else:
        rounds_up = constant(0, i1)
    if saturate:
        rounds_up = rounds_up & exponent.ne(0xFE)
    rounded = exponent + convert(rounds_up, i32)
    code = convert(select(exponent.eq(0xFF), 0xFF, rounded), i8)
    return Expr(arith.BitcastOp(code.value, Float8E8M0FNUType()).result)


def clamp_to_finite(x: Expr, to: Attribute) -> Expr:
    """x limited to the finite range of the float type `to` (NaN stays), in
    f64 for an f64 x, else in f32 (where f16, bf16 and the float8 types are exact)."""
    if is_float(x.type) and x.type != f64:
        x = convert(x, f32)
    elif not is_float(x.type):
        x = convert(x, f64)
    largest = float(ml_dtypes.finfo(numpy_dtype(to)).max)
    return minimum(maximum(x, -largest), largest)


# ---------------------------------------------------------------------------
# Binary ops.


def divide(x: Expr, y: Expr) -> Expr:
    return x / y if is_float(x.type) else int_divide(x, y)


def shift_left(x: Expr, amount: Expr) -> Expr:
    """x << amount; 0 where the amount is outside [0, width)."""
    valid = in_shift_range(x, amount)
    safe = select(valid, amount, 0)
    shifted = Expr(arith.ShLIOp(x.value, safe.value).result, x.unsigned)
    return select(valid, shifted, 0)


def shift_right(x: Expr, amount: Expr) -> Expr:
    """x >> amount, arithmetic when signed; where the amount is outside
    [0, width), 0, or -1 for a negative x."""
    valid = in_shift_range(x, amount)
    safe = select(valid, amount, 0)
    op = arith.ShRUIOp if x.unsigned else arith.ShRSIOp
    shifted = Expr(op(x.value, safe.value).result, x.unsigned)
    saturated = like(x, 0) if x.unsigned else select(x < 0, like(x, -1), like(x, 0))
    return select(valid, shifted, saturated)


def in_shift_range(x: Expr, amount: Expr) -> Expr:
    below_width = amount < like(amount, cast_width(x.type))
    return below_width if amount.unsigned else (amount >= 0) & below_width


def mod(c_fmod: bool) -> ScalarFn:
    def scalar(x: Expr, y: Expr) -> Expr:
        remainder = float_fmod(x, y) if is_float(x.type) else int_remainder(x, y)
        return remainder if c_fmod else python_mod(x, y, remainder)

    return scalar


def int_power(base: Expr, exponent: Expr) -> Expr:
    """Integer base ** integer exponent, wrapping (binary exponentiation over
    every bit of the exponent); a negative exponent gives 1 / base**n
    truncated toward zero: ±1 for a base of ±1, else 0."""
    e = convert(exponent, i64, exponent.unsigned)
    bits = cast_width(exponent.type) - (0 if exponent.unsigned else 1)
    negative = None if exponent.unsigned else e < 0
    if negative is not None:
        e = select(negative, 0, e)
    result, square = like(base, 1), base
    for bit in range(bits):
        set_ = (Expr(arith.ShRUIOp(e.value, constant(bit, i64).value).result) & 1).ne(0)
        result = select(set_, result * square, result)
        if bit + 1 < bits:
            square = square * square
    if negative is None:
        return result
    one_over = select(base.eq(like(base, 1)), like(base, 1), like(base, 0))
    if not base.unsigned:
        odd = (exponent & 1).ne(0)
        minus_one_power = select(odd, like(base, -1), like(base, 1))
        one_over = select(base.eq(like(base, -1)), minus_one_power, one_over)
    return select(negative, one_over, result)


def pow_(x: Expr, y: Expr) -> Expr:
    """x ** y with the result in x's type (ONNX Pow); mixed float types
    compute in the wider one, an integer base with a float exponent in f64."""
    if is_float(x.type):
        wide = f64 if f64 in (x.type, y.type) else (x.type if not is_half(x.type) else f32)
        return convert(power(convert(x, wide), convert(y, wide)), x.type)
    if is_float(y.type):
        result = power(convert(x, f64), convert(y, f64))
        to = IntegerType(cast_width(x.type), Signedness.UNSIGNED) if x.unsigned else x.type
        return float_to_int(result, to)
    return int_power(x, y)


BINARY: dict[type[GraphOp], ScalarFn] = {
    ew.AddOp: lambda x, y: x + y,
    ew.SubOp: lambda x, y: x - y,
    ew.MulOp: lambda x, y: x * y,
    ew.PowOp: pow_,
    ew.MaxOp: maximum,
    ew.MinOp: minimum,
    ew.AndOp: lambda x, y: x & y,
    ew.OrOp: lambda x, y: x | y,
    ew.XorOp: lambda x, y: x ^ y,
    ew.BitwiseAndOp: lambda x, y: x & y,
    ew.BitwiseOrOp: lambda x, y: x | y,
    ew.BitwiseXorOp: lambda x, y: x ^ y,
    ew.ShiftLeftOp: shift_left,
    ew.ShiftRightOp: shift_right,
    ew.EqualOp: lambda x, y: x.eq(y),
    ew.NotEqualOp: lambda x, y: x.ne(y),
    ew.LessOp: lambda x, y: x < y,
    ew.LessEqualOp: lambda x, y: x <= y,
    ew.GreaterOp: lambda x, y: x > y,
    ew.GreaterEqualOp: lambda x, y: x >= y,
    ew.WhereOp: lambda c, x, y: select(c, x, y),
}


for _op_class, _scalar in BINARY.items():
    register_elementwise(_op_class, _scalar)


def check_divisor(op: GraphOp, y: Expr) -> None:
    """A run-time check that an integer divisor is not zero (onnxruntime
    refuses an integer Div or Mod by zero too); floats divide by zero."""
    if not is_float(y.type):
        check(y.ne(0), division_fault(op))


@compute_rule(ew.DivOp)
def div_rule(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    def scalar(x: Expr, y: Expr) -> Expr:
        check_divisor(op, y)
        return divide(x, y)

    return elementwise(k, op, inputs, scalar)


@compute_rule(ew.ModOp)
def mod_rule(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    remainder = mod(get_bool(op_props(op), "fmod"))

    def scalar(x: Expr, y: Expr) -> Expr:
        check_divisor(op, y)
        return remainder(x, y)

    return elementwise(k, op, inputs, scalar)
