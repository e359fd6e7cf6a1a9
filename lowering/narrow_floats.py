"""The float types LLVM has no arithmetic for here (bf16, the float8 types,
f4E2M1FN), as integer arithmetic on their bits.

In lowered code such a value is its bits (i16 for bf16, i8 for the others;
f4 in the low four bits of its byte): loads, stores, selects and constants
move the bits, and every conversion goes through f32. `decode` turns the
bits into the f32 of the same value (exact); `encode` rounds an f32 to the
nearest value of the type, ties to even, as ml_dtypes' `astype` does: out of
range gives inf where the type has one, else NaN (f4E2M1FN, which has
neither, saturates). ONNX's `saturate` is a clamp before the rounding (see
ops/elementwise.py), not part of the conversion.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    FloatAttr,
    IntegerType,
    f32,
    i1,
    i32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation

from xtc.dialects.graph.constant import numpy_dtype
from xtc.lowering.llvm_emit import Emitter

F32_MANTISSA = 23
F32_BIAS = 127
F32_INF = 0x7F800000
F32_QUIET_NAN = 0x7FC00000


class Specials(Enum):
    """Where a type keeps its infinities and NaNs."""

    IEEE = "an all-ones exponent: inf with a zero mantissa, else NaN"
    ALL_ONES_NAN = "the all-ones magnitude is NaN; no inf"
    UNSIGNED_ZERO = "the negative-zero pattern is the one NaN; no inf, no -0"
    NONE = "no inf, no NaN"
    EXPONENT_ONLY = "no sign, no mantissa: 2^(e - 127); all ones is NaN"


@dataclass(frozen=True)
class NarrowFloat:
    width: int
    """Bits of the value (its storage is `storage_bits`)."""
    mantissa: int
    bias: int
    specials: Specials
    max_code: int
    """The largest finite magnitude, as bits without the sign."""
    nan_code: int
    """The bits ml_dtypes gives NaN (the sign is added where the type has one)."""

    @property
    def storage_bits(self) -> int:
        return 16 if self.width == 16 else 8

    @property
    def shift(self) -> int:
        return F32_MANTISSA - self.mantissa

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def has_subnormals_below_f32(self) -> bool:
        """Its subnormals are f32 normals (every type but bf16, whose exponent is f32's)."""
        return self.bias < F32_BIAS


FORMATS: dict[type[Attribute], NarrowFloat] = {
    BFloat16Type: NarrowFloat(16, 7, 127, Specials.IEEE, 0x7F7F, 0x7FC0),
    Float8E4M3FNType: NarrowFloat(8, 3, 7, Specials.ALL_ONES_NAN, 0x7E, 0x7F),
    Float8E4M3FNUZType: NarrowFloat(8, 3, 8, Specials.UNSIGNED_ZERO, 0x7F, 0x80),
    Float8E5M2Type: NarrowFloat(8, 2, 15, Specials.IEEE, 0x7B, 0x7E),
    Float8E5M2FNUZType: NarrowFloat(8, 2, 16, Specials.UNSIGNED_ZERO, 0x7F, 0x80),
    Float8E8M0FNUType: NarrowFloat(8, 0, 127, Specials.EXPONENT_ONLY, 0xFE, 0xFF),
    Float4E2M1FNType: NarrowFloat(4, 1, 1, Specials.NONE, 0x7, 0x8),
}


def narrow_format(t: Attribute) -> NarrowFloat | None:
    """The format of a float type lowered to its bits; None for any other type."""
    return FORMATS.get(type(t))


def storage_type(fmt: NarrowFloat) -> IntegerType:
    return IntegerType(fmt.storage_bits)


def narrow_bits(value: FloatAttr) -> int:
    """The bits of a narrow-float constant (rounded as `encode` rounds)."""
    dtype = numpy_dtype(value.type)
    bits = np.array(value.value.data, np.float32).astype(dtype)
    return int(bits.view(np.uint16 if dtype.itemsize == 2 else np.uint8))


class _Ints:
    """i32 arithmetic through an Emitter, in a few words."""

    def __init__(self, emit: Emitter) -> None:
        self.emit = emit

    def const(self, value: int) -> SSAValue:
        return self.emit.int_const(value, i32)

    def binary(self, op: type[IRDLOperation], a: SSAValue, b: SSAValue | int) -> SSAValue:
        other = self.const(b) if isinstance(b, int) else b
        return self.emit.create(op, [a, other], i32)

    def select(self, cond: SSAValue, then: SSAValue | int, other: SSAValue | int) -> SSAValue:
        then_value = self.const(then) if isinstance(then, int) else then
        other_value = self.const(other) if isinstance(other, int) else other
        return self.emit.select(cond, then_value, other_value, i32)

    def compare(self, predicate: str, a: SSAValue, b: int) -> SSAValue:
        return self.emit.icmp(predicate, a, self.const(b))

    def either(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit.create(llvm.OrOp, [a, b], i1)


def decode(emit: Emitter, bits: SSAValue, fmt: NarrowFloat) -> SSAValue:
    """The f32 whose value the bits (i8 or i16) of a `fmt` value stand for."""
    n = _Ints(emit)
    b = emit.create(llvm.ZExtOp, [bits], i32)
    if fmt.width < fmt.storage_bits:
        b = n.binary(llvm.AndOp, b, (1 << fmt.width) - 1)
    if fmt.specials is Specials.EXPONENT_ONLY:
        normal = n.binary(llvm.ShlOp, b, F32_MANTISSA)
        smallest = n.select(n.compare("eq", b, 0), 1 << (F32_MANTISSA - 1), normal)  # 2^-127
        result = n.select(n.compare("eq", b, fmt.nan_code), F32_QUIET_NAN, smallest)
        return emit.create(llvm.BitcastOp, [result], f32)
    magnitude = n.binary(llvm.AndOp, b, fmt.sign_bit - 1)
    rebias = (F32_BIAS - fmt.bias) << F32_MANTISSA
    value = n.binary(llvm.AddOp, n.binary(llvm.ShlOp, magnitude, fmt.shift), rebias)
    if fmt.has_subnormals_below_f32:
        # exponent 0: mantissa * 2^(1 - bias - mantissa bits), exact in f32
        scale = emit.float_const(2.0 ** (1 - fmt.bias - fmt.mantissa), f32)
        as_float = emit.create(llvm.SIToFPOp, [magnitude], f32)
        scaled = emit.create(llvm.FMulOp, [as_float, scale], f32)
        subnormal = emit.create(llvm.BitcastOp, [scaled], i32)
        value = n.select(n.compare("ult", magnitude, 1 << fmt.mantissa), subnormal, value)
    all_ones_exponent = ((1 << (fmt.width - 1 - fmt.mantissa)) - 1) << fmt.mantissa
    match fmt.specials:
        case Specials.IEEE:
            mantissa = n.binary(llvm.AndOp, magnitude, (1 << fmt.mantissa) - 1)
            special = n.binary(llvm.OrOp, n.binary(llvm.ShlOp, mantissa, fmt.shift), F32_INF)
            value = n.select(n.compare("uge", magnitude, all_ones_exponent), special, value)
        case Specials.ALL_ONES_NAN:
            value = n.select(n.compare("eq", magnitude, fmt.nan_code), F32_QUIET_NAN, value)
        case _:
            pass
    sign = n.binary(llvm.ShlOp, n.binary(llvm.LShrOp, b, fmt.width - 1), 31)
    result = n.binary(llvm.OrOp, value, sign)
    if fmt.specials is Specials.UNSIGNED_ZERO:
        result = n.select(n.compare("eq", b, fmt.nan_code), F32_QUIET_NAN, result)
    return emit.create(llvm.BitcastOp, [result], f32)


def encode(emit: Emitter, x: SSAValue, fmt: NarrowFloat) -> SSAValue:
    """The bits (i8 or i16) of the `fmt` value nearest the f32 `x`, ties to
    even; see the module's docstring for what is out of range."""
    if fmt.specials is Specials.EXPONENT_ONLY:
        raise ValueError("f8E8M0FNU has no round-to-nearest encoding here")
    n = _Ints(emit)
    bits = emit.create(llvm.BitcastOp, [x], i32)
    magnitude = n.binary(llvm.AndOp, bits, 0x7FFFFFFF)
    # Round the f32 mantissa to the type's, ties to even, then rebias.
    odd = n.binary(llvm.AndOp, n.binary(llvm.LShrOp, magnitude, fmt.shift), 1)
    rounded = n.binary(llvm.AddOp, magnitude, n.binary(llvm.AddOp, odd, (1 << (fmt.shift - 1)) - 1))
    code = n.binary(
        llvm.SubOp,
        n.binary(llvm.LShrOp, rounded, fmt.shift),
        (F32_BIAS - fmt.bias) << fmt.mantissa,
    )
    if fmt.has_subnormals_below_f32:
        # Below the smallest normal: the mantissa is |x| / 2^(1 - bias - mantissa
        # bits) rounded to an integer, ties to even (2^mantissa: the smallest normal).
        smallest_normal = (F32_BIAS + 1 - fmt.bias) << F32_MANTISSA
        unsigned = emit.create(llvm.BitcastOp, [magnitude], f32)
        scale = emit.float_const(2.0 ** (fmt.bias - 1 + fmt.mantissa), f32)
        scaled = emit.create(llvm.FMulOp, [unsigned, scale], f32)
        even = emit.value_intrinsic("llvm.roundeven.f32", [scaled], f32)
        subnormal = emit.value_intrinsic("llvm.fptosi.sat.i32.f32", [even], i32)
        code = n.select(n.compare("ult", magnitude, smallest_normal), subnormal, code)
    over = n.compare("ugt", code, fmt.max_code)
    nan = n.compare("ugt", magnitude, F32_INF)
    sign = n.binary(llvm.ShlOp, n.binary(llvm.LShrOp, bits, 31), fmt.width - 1)
    match fmt.specials:
        case Specials.IEEE:  # NaN is the quiet one, its payload dropped
            infinity = fmt.max_code + 1
            limited = n.select(over, infinity, code)
            signed = n.binary(llvm.OrOp, n.select(nan, fmt.nan_code, limited), sign)
        case Specials.ALL_ONES_NAN:
            signed = n.binary(llvm.OrOp, n.select(n.either(over, nan), fmt.nan_code, code), sign)
        case Specials.UNSIGNED_ZERO:
            with_sign = n.select(n.compare("eq", code, 0), 0, n.binary(llvm.OrOp, code, sign))
            signed = n.select(n.either(over, nan), fmt.nan_code, with_sign)
        case _:  # no NaN: ml_dtypes gives NaN the bits of -0, +0 for a negative NaN
            saturated = n.binary(llvm.OrOp, n.select(over, fmt.max_code, code), sign)
            signed = n.select(nan, n.binary(llvm.XOrOp, sign, fmt.nan_code), saturated)
    return emit.create(llvm.TruncOp, [signed], storage_type(fmt))
