"""The compiler-rt helpers that LLVM calls for f16 on a CPU without the
instructions, defined in the module itself.

LLVM lowers f16 conversions to instructions where the CPU has them (F16C:
f16 <-> f32; AVX512-FP16: f16 <-> f64 too) and otherwise to calls of
compiler-rt's `__extendhfsf2`, `__truncsfhf2` and `__truncdfhf2`. Neither the
Python process nor a plain `cc -shared` link guarantees those symbols, and
MCJIT binds a symbol it cannot find to address 0. So every JIT module and
every library gets its own definitions (hidden, kept through optimization
by `llvm.compiler.used`; a few hundred bytes of code): integer code,
correctly rounded to nearest even, for any x86-64 CPU. A library's kernel
objects built apart (runtime/library.py) do not carry them: their calls
bind, at link time, to the model object's, compiled once per library.

    ref = llvm_binding.parse_assembly(text)
    link_float_builtins(ref)
"""

from __future__ import annotations

import llvmlite.binding as llvm_binding

FLOAT_BUILTINS = ("__extendhfsf2", "__truncsfhf2", "__truncdfhf2")

_IR = r"""
@llvm.compiler.used = appending global [3 x ptr]
  [ptr @__extendhfsf2, ptr @__truncsfhf2, ptr @__truncdfhf2], section "llvm.metadata"

declare double @llvm.fabs.f64(double)

; f16 -> f32, exact: normals rebias the exponent, subnormals are mantissa * 2^-24.
define hidden float @__extendhfsf2(half %h) {
entry:
  %raw = bitcast half %h to i16
  %x = zext i16 %raw to i32
  %sign = and i32 %x, 32768
  %sign32 = shl i32 %sign, 16
  %exponent = and i32 %x, 31744
  %mantissa = and i32 %x, 1023
  %magnitude = and i32 %x, 32767
  %shifted = shl i32 %magnitude, 13
  %normal = add i32 %shifted, 939524096
  %special = or i32 %shifted, 2139095040
  %m = uitofp i32 %mantissa to float
  %small = fmul float %m, 0x3E70000000000000
  %small_bits = bitcast float %small to i32
  %is_special = icmp eq i32 %exponent, 31744
  %is_small = icmp eq i32 %exponent, 0
  %large = select i1 %is_special, i32 %special, i32 %normal
  %unsigned = select i1 %is_small, i32 %small_bits, i32 %large
  %bits = or i32 %unsigned, %sign32
  %r = bitcast i32 %bits to float
  ret float %r
}

; f32 -> f16, rounded to nearest even: NaN stays a (quiet) NaN, 65520 and up
; is infinity, normals round their 13 dropped bits, subnormals are
; |x| * 2^24 rounded to an integer by adding and removing 2^23.
define hidden half @__truncsfhf2(float %f) {
entry:
  %x = bitcast float %f to i32
  %high = lshr i32 %x, 16
  %sign = and i32 %high, 32768
  %abs = and i32 %x, 2147483647
  %payload = lshr i32 %abs, 13
  %payload_bits = and i32 %payload, 1023
  %nan = or i32 %payload_bits, 32256
  %rebased = sub i32 %abs, 939524096
  %kept = lshr i32 %rebased, 13
  %kept_odd = and i32 %kept, 1
  %half_below = add i32 %rebased, 4095
  %rounding = add i32 %half_below, %kept_odd
  %normal = lshr i32 %rounding, 13
  %abs_float = bitcast i32 %abs to float
  %scaled = fmul float %abs_float, 0x4170000000000000
  %shifted = fadd float %scaled, 0x4160000000000000
  %integral = fsub float %shifted, 0x4160000000000000
  %small = fptoui float %integral to i32
  %is_nan = icmp ugt i32 %abs, 2139095040
  %is_infinite = icmp uge i32 %abs, 1199566848
  %is_normal = icmp uge i32 %abs, 947912704
  %finite = select i1 %is_normal, i32 %normal, i32 %small
  %saturated = select i1 %is_infinite, i32 31744, i32 %finite
  %unsigned = select i1 %is_nan, i32 %nan, i32 %saturated
  %bits32 = or i32 %unsigned, %sign
  %bits = trunc i32 %bits32 to i16
  %r = bitcast i16 %bits to half
  ret half %r
}

; f64 -> f16, rounded once: f32 rounded to odd first (f32's 24 bits are more
; than twice f16's 11, so rounding that to f16 is exact), then f32 -> f16.
define hidden half @__truncdfhf2(double %d) {
entry:
  %nearest = fptrunc double %d to float
  %back = fpext float %nearest to double
  %inexact = fcmp one double %back, %d
  %magnitude_back = call double @llvm.fabs.f64(double %back)
  %magnitude = call double @llvm.fabs.f64(double %d)
  %overshot = fcmp ogt double %magnitude_back, %magnitude
  %bits = bitcast float %nearest to i32
  %down = zext i1 %overshot to i32
  %odd_bit = zext i1 %inexact to i32
  %toward_zero = sub i32 %bits, %down
  %odd = or i32 %toward_zero, %odd_bit
  %rounded_to_odd = bitcast i32 %odd to float
  %r = fptrunc float %rounded_to_odd to half
  ret half %r
}
"""


def link_float_builtins(ref: llvm_binding.ModuleRef) -> None:
    """Adds the definitions of FLOAT_BUILTINS to `ref` (which must not define
    them itself), before it is optimized."""
    builtins = llvm_binding.parse_assembly(_IR)
    builtins.triple = ref.triple
    builtins.data_layout = ref.data_layout
    ref.link_in(builtins)
