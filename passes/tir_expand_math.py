"""tir-expand-math: f32 `math.exp`, `math.erf` and `math.tanh` as
polynomials in arith ops, so that a vectorized loop computes them in vector
registers instead of calling libm once per lane (softmax, GELU, LSTM gates).

- exp(x): x clamped to [-104, 88.75] (no upper clamp where x is never
  positive, below); t = x·log2(e) + 1.5·2^23 rounds x·log2(e) to the nearest
  integer n, whose i32 is the low bits of t (no floor, no fptosi, whose
  saturating form x86 does lane by lane) and whose f32 is t - 1.5·2^23;
  r = x - n·ln2 (ln2 in two parts, Cody and Waite, as multiply-adds); e^r by
  a polynomial of degree 6 (|r| <= ln2/2; relative error 3.9e-9 in exact
  arithmetic, a least-squares fit of e^r with the first two Taylor
  coefficients kept, iterated toward equal ripple); times 2^(n - h)·2^h,
  h = n >> 1, each power built from its exponent bits (so subnormal results
  and the overflow to +inf come out right). Where x is never positive
  (-|y|, -y·y or min(y, c <= 0): sigmoid, softplus, erf, tanh, softmax), n
  is in [-150, 0] and the scale is 2^(n + 64)·2^-64 instead, one exponent
  to build (5 vector ops fewer; the same single rounding of subnormal
  results, so the same bits). Relative error under 1.0e-7 for normal
  results against the exact e^x (measured natively, vectorized: every f32
  in ±[0.5, 1) and 2^24 points evenly over [-87.3, 88.7]; as the Taylor
  polynomial of degree 7 did), NaN stays NaN.
- erf(x): |x| < 1: x·P(x²), P of degree 6; else sign(x)·(1 - e^(-a²)·Q(t)),
  a = min(|x|, 4), t = 1 / (1 + a/2), Q of degree 9. P and Q are least-squares
  fits (numpy, double precision, on Chebyshev nodes) of erf(x)/x over
  x² in [0, 1] and of erfc(a)·e^(a²) over a in [1, 4]; absolute error under
  1.5e-7 (relative 1.8e-7 from 1e-3 on) against the exact erf.
- tanh(x): |x| < 0.625: x + x³·P(x²), P of degree 4, a least-squares fit
  (numpy, double precision, on Chebyshev nodes, weighted for relative
  error) of (tanh(x) - x)/x³ over x² in [0, 0.390625] (relative error
  4.7e-9 in exact arithmetic); else (1 - e)/(1 + e), e = e^(-|2x|) <= 0.29
  (no cancellation); either signed by x. ±inf give ±1, NaN stays NaN, ±0
  stays ±0. Relative error under 1.6e-7 (1.5 ulp; libm's 1.6e-7) against
  the exact tanh (measured natively, vectorized).

Expects: tir-level functions. Produces: the same functions with every
`math.exp`, `math.erf` and `math.tanh` of f32 replaced (other element types keep their
libm call). Command line: `tir-expand-math`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

LOG2_E = 1.4426950408889634
LN2_HIGH = 0.693359375
"""ln 2 rounded to 10 significant bits: n·LN2_HIGH is exact for |n| <= 256."""
LN2_LOW = -2.1219444005469057e-04
"""ln 2 - LN2_HIGH."""
EXP_RANGE = (-104.0, 88.75)
"""Below, e^x is 0 in f32; above, +inf."""
EXP_POLYNOMIAL = (
    1.0,
    1.0,
    0.49999993329996056,
    0.16666518989923193,
    0.041668409069447354,
    0.008368915150350813,
    0.0013814087703119208,
)
"""e^r for |r| <= ln2/2 (lowest degree first): degree 6, where Taylor's
needs 7 for the same error."""

NEGATIVE_EXP_LIFT = 64
"""An exp of a never-positive x scales by 2^(n + 64) (normal for n in
[-150, 0]) and then by 2^-64: one exponent built, not two."""

ROUNDING_SHIFT = 12582912.0
"""1.5·2^23: for an integral |n| < 2^22, the bits of n + this are those of
the shift plus n."""
ROUNDING_SHIFT_BITS = 0x4B400000

ERF_SMALL = (
    1.1283791658833286,
    -0.37612626907891855,
    0.11283597491551157,
    -0.02685432953783617,
    0.005189312811644466,
    -0.0008018859005864422,
    7.882500416282044e-05,
)
"""erf(x) / x as a polynomial in x², |x| < 1 (lowest degree first)."""
ERF_LARGE = (
    7.963661255712284e-06,
    0.28187502871117875,
    0.2847453110282862,
    0.22833591110830526,
    0.259151248188024,
    -0.16429534986466132,
    0.4926878142689834,
    -0.6941365154491866,
    0.396932964787044,
    -0.08533332191158066,
)
"""erfc(a)·e^(a²) as a polynomial in t = 1 / (1 + a/2), 1 <= a <= 4."""
TANH_POLYNOMIAL = (
    -0.33333279208370586,
    0.1333138135436035,
    -0.05373531884945765,
    0.020626291823308766,
    -0.005691985663239599,
)
"""(tanh(x) - x) / x³ as a polynomial in x², |x| < TANH_SMALL (lowest degree
first)."""
TANH_SMALL = 0.625
"""Below, tanh by its odd polynomial; from here on, by e^(-|2x|) <= 0.29,
which leaves 1 - e without cancellation."""
ERF_CLAMP = 4.0
"""From here on erf(x) rounds to ±1 in f32."""


class _Builder:
    """Appends f32/i32 arith ops to a list; each method returns the value."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def const(self, value: float) -> SSAValue:
        return self.add(arith.ConstantOp(FloatAttr(value, f32)))

    def int_const(self, value: int) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(value, i32)))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.MulfOp(a, b))

    def plus(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.AddfOp(a, b))

    def minus(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.SubfOp(a, b))

    def polynomial(self, coefficients: Sequence[float], x: SSAValue) -> SSAValue:
        """Σ coefficients[k]·x^k by Horner's rule."""
        result = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            result = self.plus(self.mul(result, x), self.const(c))
        return result

    def power_of_two(self, n: SSAValue) -> SSAValue:
        """2^n for an i32 n in [-126, 127], from its exponent bits."""
        biased = self.add(arith.AddiOp(n, self.int_const(127)))
        bits = self.add(arith.ShLIOp(biased, self.int_const(23)))
        return self.add(arith.BitcastOp(bits, f32))

    def exp(self, x: SSAValue) -> SSAValue:
        low, high = EXP_RANGE
        never_positive = _never_positive(x)
        clamped = self.add(arith.MaximumfOp(x, self.const(low)))
        if not never_positive:
            clamped = self.add(arith.MinimumfOp(clamped, self.const(high)))
        # t's low bits hold the nearest integer n (a NaN gives some integer,
        # never poison: the NaN in r carries through).
        shifted = self.plus(self.mul(clamped, self.const(LOG2_E)), self.const(ROUNDING_SHIFT))
        n = self.minus(shifted, self.const(ROUNDING_SHIFT))
        # r = x - n·ln2 as multiply-adds: n·LN2_HIGH is exact, fused or not.
        r = self.plus(self.mul(n, self.const(-LN2_HIGH)), clamped)
        r = self.plus(self.mul(n, self.const(-LN2_LOW)), r)
        whole = self.add(
            arith.SubiOp(
                self.add(arith.BitcastOp(shifted, i32)), self.int_const(ROUNDING_SHIFT_BITS)
            )
        )
        if never_positive:
            # n in [-150, 0]: 2^(n + 64) is normal; the exact product is
            # rounded once, by the multiply with 2^-64, as the halves' is.
            value = self.polynomial(EXP_POLYNOMIAL, r)
            lifted = self.add(arith.AddiOp(whole, self.int_const(NEGATIVE_EXP_LIFT)))
            value = self.mul(value, self.power_of_two(lifted))
            return self.mul(value, self.const(2.0**-NEGATIVE_EXP_LIFT))
        half = self.add(arith.ShRSIOp(whole, self.int_const(1)))
        rest = self.add(arith.SubiOp(whole, half))
        value = self.mul(self.polynomial(EXP_POLYNOMIAL, r), self.power_of_two(half))
        return self.mul(value, self.power_of_two(rest))

    def erf(self, x: SSAValue) -> SSAValue:
        small = self.mul(x, self.polynomial(ERF_SMALL, self.mul(x, x)))
        magnitude = self.add(math.AbsFOp(x))
        a = self.add(arith.MinimumfOp(magnitude, self.const(ERF_CLAMP)))
        t = self.add(
            arith.DivfOp(self.const(1.0), self.plus(self.const(1.0), self.mul(a, self.const(0.5))))
        )
        tail = self.mul(
            self.exp(self.add(arith.NegfOp(self.mul(a, a)))), self.polynomial(ERF_LARGE, t)
        )
        large = self.add(math.CopySignOp(self.minus(self.const(1.0), tail), x))
        inside = self.add(arith.CmpfOp(magnitude, self.const(1.0), "olt"))
        return self.add(arith.SelectOp(inside, small, large))

    def tanh(self, x: SSAValue) -> SSAValue:
        square = self.mul(x, x)
        cube = self.mul(x, square)
        small = self.plus(self.mul(cube, self.polynomial(TANH_POLYNOMIAL, square)), x)
        # -|2x|, not -2|x|: exp sees -|y| and needs no upper clamp.
        e = self.exp(self.add(arith.NegfOp(self.add(math.AbsFOp(self.plus(x, x))))))
        one = self.const(1.0)
        ratio = self.add(arith.DivfOp(self.minus(one, e), self.plus(one, e)))
        magnitude = self.add(math.AbsFOp(x))
        inside = self.add(arith.CmpfOp(magnitude, self.const(TANH_SMALL), "olt"))
        # The sign of x on both pieces: the ratio's, and -0's (+0 + -0 is +0).
        return self.add(math.CopySignOp(self.add(arith.SelectOp(inside, small, ratio)), x))


def _never_positive(x: SSAValue) -> bool:
    """x is -|y| (sigmoid's and softplus's exp argument), -y·y (erf's) or
    the minimum of y and a constant <= 0 (softmax's x - max): at most 0, or
    NaN."""
    if isinstance(x.owner, arith.MinimumfOp):
        return any(_constant_at_most_zero(bound) for bound in x.owner.operands)
    negation = x.owner
    if not isinstance(negation, arith.NegfOp):
        return False
    inner = negation.operand.owner
    is_square = isinstance(inner, arith.MulfOp) and inner.lhs == inner.rhs
    return is_square or isinstance(inner, math.AbsFOp)


def _constant_at_most_zero(value: SSAValue) -> bool:
    constant = value.owner
    return (
        isinstance(constant, arith.ConstantOp)
        and isinstance(constant.value, FloatAttr)
        and constant.value.value.data <= 0.0
    )


def _replace_f32(
    op: Operation, expand: Callable[[_Builder, SSAValue], SSAValue], rewriter: PatternRewriter
) -> None:
    """Replaces a unary f32 op by what `expand` builds from its operand."""
    if op.results[0].type != f32:
        return
    build = _Builder()
    value = expand(build, op.operands[0])
    rewriter.replace(op, build.ops, [value])


class ExpandExp(RewritePattern):
    """math.exp (f32) -> range reduction and a polynomial."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.ExpOp, rewriter: PatternRewriter) -> None:
        _replace_f32(op, _Builder.exp, rewriter)


class ExpandTanh(RewritePattern):
    """math.tanh (f32) -> an odd polynomial near 0, a ratio of exps beyond."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.TanhOp, rewriter: PatternRewriter) -> None:
        _replace_f32(op, _Builder.tanh, rewriter)


class ExpandErf(RewritePattern):
    """math.erf (f32) -> two polynomial pieces and an exp."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.ErfOp, rewriter: PatternRewriter) -> None:
        _replace_f32(op, _Builder.erf, rewriter)


@dataclass(frozen=True)
class TirExpandMath(ModulePass):
    """f32 exp, erf and tanh as arith polynomials (see the module docstring)."""

    name = "tir-expand-math"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([ExpandExp(), ExpandErf(), ExpandTanh()])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
