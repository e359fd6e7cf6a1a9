"""Vectorized and unrolled tir loops (tir-lower-unrolled and tir-lower-vectorized,
stages of convert-tir-to-llvm): hand-written kernels run natively and through
the tir interpreter (which runs every loop serially, the oracle), and the
lowered IR is checked for the vector code or the serial fallback."""

from __future__ import annotations

import ctypes
import mmap
import re
from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import ModuleOp, VectorType, f32

from xtc import interp
from xtc.dialects import tir
from xtc.dialects.llvm_ext import ExtractElementOp, VectorFCmpOp
from xtc.lowering.tir_lower_vectorized import analyze_loop
from xtc.runtime.llvm_ir import llvm_ir
from xtc.runtime.llvm_jit import CpuTarget, aligned_copy, assembly_for, compile_module
from xtc.driver.compiler import compile_model
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module

RNG = np.random.default_rng(11)
NUMPY = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i32": np.int32,
    "i64": np.int64,
}


# ------------------------------------------------------------ helpers


def function(
    name: str,
    inputs: Sequence[tuple[str, str]],
    outputs: Sequence[tuple[str, str]],
    body: str,
    extra: str = "",
) -> str:
    """A module with `func @name(inputs..., outputs...)`, outputs marked."""
    args = [f"%{n}: {t}" for n, t in inputs]
    args += [f"%{n}: {t} {{graph.output = {k} : i64}}" for k, (n, t) in enumerate(outputs)]
    return (
        f"builtin.module {{\n{extra}\n  func.func @{name}({', '.join(args)}) {{\n{body}\n"
        "    func.return\n  }\n}\n"
    )


def lower(text: str) -> ModuleOp:
    module = parse_module(text)
    apply_pipeline(module, "convert-tir-to-llvm")
    return module


def vector_ops(module: ModuleOp) -> list[str]:
    """The names of the ops that produce a vector (after lowering)."""
    return [
        op.name
        for op in module.walk()
        if any(isinstance(result.type, VectorType) for result in op.results)
    ]


def intrinsic_calls(module: ModuleOp) -> list[str]:
    return [op.intrin.data for op in module.walk() if isinstance(op, llvm.CallIntrinsicOp)]


def check(
    text: str,
    inputs: Sequence[np.ndarray],
    *,
    name: str = "k",
    vectorized: bool = True,
    rtol: float = 1e-5,
) -> ModuleOp:
    """Runs `text` natively and through the interpreter, compares every
    output, checks whether vector code was emitted; returns the lowered
    module."""
    expected = interp.run(parse_module(text), list(inputs), name)
    module = lower(text)
    outputs = [aligned_copy(np.zeros_like(e)) for e in expected]
    compile_module(module).call(name, [aligned_copy(x) for x in inputs] + outputs)
    for position, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        message = f"output {position}"
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=message)
        else:
            np.testing.assert_array_equal(got, want, err_msg=message)
    assert bool(vector_ops(module)) == vectorized, vector_ops(module)
    return module


def floats(shape: int | tuple[int, ...], dtype: str = "f32", low: float = -2, high: float = 2):
    return RNG.uniform(low, high, size=shape).astype(NUMPY[dtype])


def vectorized_loop(text: str) -> tir.ForOp:
    module = parse_module(text)
    return next(
        op for op in module.walk() if isinstance(op, tir.ForOp) and op.kind.data == "vectorized"
    )


# ----------------------------------------------------- the micro-kernel

MICRO_KERNEL = function(
    "k",
    [("A", "memref<4x32xf32>"), ("B", "memref<32x16xf32>")],
    [("C", "memref<4x16xf32>")],
    """
    %acc = memref.alloca() {alignment = 64 : i64} : memref<4x16xf32>
    tir.for %i0 = 0 to 4 step 1 {name = "i0_z", kind = "unrolled"} {
      tir.for %i1 = 0 to 16 step 1 {name = "i1_z", kind = "vectorized"} {
        %z = arith.constant 0.0 : f32
        memref.store %z, %acc[%i0, %i1] : memref<4x16xf32>
      }
    }
    tir.for %r0 = 0 to 32 step 1 {name = "r0", kind = "serial"} {
      tir.for %i0 = 0 to 4 step 1 {name = "i0_i", kind = "unrolled"} {
        tir.for %i1 = 0 to 16 step 1 {name = "i1_i", kind = "vectorized"} {
          %a = memref.load %A[%i0, %r0] : memref<4x32xf32>
          %b = memref.load %B[%r0, %i1] : memref<32x16xf32>
          %p = arith.mulf %a, %b : f32
          %c = memref.load %acc[%i0, %i1] : memref<4x16xf32>
          %s = arith.addf %c, %p : f32
          memref.store %s, %acc[%i0, %i1] : memref<4x16xf32>
        }
      }
    }
    tir.for %i0 = 0 to 4 step 1 {name = "i0_w", kind = "unrolled"} {
      tir.for %i1 = 0 to 16 step 1 {name = "i1_w", kind = "vectorized"} {
        %v = memref.load %acc[%i0, %i1] : memref<4x16xf32>
        memref.store %v, %C[%i0, %i1] : memref<4x16xf32>
      }
    }""",
)


def test_micro_kernel_is_four_vector_fmas_per_step_with_the_tile_in_registers() -> None:
    a, b = floats((4, 32)), floats((32, 16))
    module = check(MICRO_KERNEL, [a, b])
    assert intrinsic_calls(module).count("llvm.fmuladd.v16f32") == 4
    optimized = compile_module(module).optimized_ir
    assert "alloca" not in optimized  # the 4x16 tile lives in 4 vector registers
    assert len(re.findall(r"phi <16 x float>", optimized)) == 4
    assert "fmuladd.v16f32" in optimized


# ------------------------------------------------------- elementwise ops

FLOAT_UNARY = [
    "arith.negf",
    "math.absf",
    "math.exp",
    "math.sqrt",
    "math.rsqrt",
    "math.log",
    "math.tanh",
    "math.floor",
    "math.roundeven",
    "math.sin",
    "math.erf",
    "math.cbrt",
]
FLOAT_BINARY = [
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.divf",
    "arith.maximumf",
    "arith.minnumf",
    "math.powf",
    "math.atan2",
    "math.copysign",
]


def _in_memory(t: str) -> str:
    return "i64" if t == "index" else t  # the interpreter has no index buffers


def elementwise(
    ops: Sequence[str], in_types: Sequence[str], out_type: str, n: int, props: str = ""
) -> str:
    """One output per op: out_k[i] = op_k(in_0[i], ...), i vectorized; index
    values are i64 in memory."""
    inputs = [(f"a{k}", f"memref<{n}x{_in_memory(t)}>") for k, t in enumerate(in_types)]
    outputs = [(f"o{k}", f"memref<{n}x{_in_memory(out_type)}>") for k in range(len(ops))]
    loads = "\n".join(
        f"        %m{k} = memref.load %a{k}[%i] : memref<{n}x{_in_memory(t)}>\n"
        f"        %x{k} = arith.index_cast %m{k} : i64 to index"
        if t == "index"
        else f"        %x{k} = memref.load %a{k}[%i] : memref<{n}x{t}>"
        for k, t in enumerate(in_types)
    )
    operands = ", ".join(f"%x{k}" for k in range(len(in_types)))
    signature = f"({', '.join(in_types)}) -> {out_type}"
    stored = "index_cast %r{k} : index to i64" if out_type == "index" else None
    computed = "\n".join(
        f'        %r{k} = "{op}"({operands}) {props} : {signature}\n'
        + (f"        %s{k} = arith.{stored.format(k=k)}\n" if stored else "")
        + f"        memref.store %{'s' if stored else 'r'}{k}, %o{k}[%i] "
        + f": memref<{n}x{_in_memory(out_type)}>"
        for k, op in enumerate(ops)
    )
    body = (
        f'    tir.for %i = 0 to {n} step 1 {{name = "i", kind = "vectorized"}} {{\n'
        f"{loads}\n{computed}\n    }}"
    )
    return function("k", inputs, outputs, body)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_float_math(dtype: str) -> None:
    positive = floats(16, dtype, 0.25, 3)
    check(elementwise(FLOAT_UNARY, [dtype], dtype, 16), [positive])
    check(elementwise(FLOAT_BINARY, [dtype, dtype], dtype, 16), [positive, floats(16, dtype)])
    fma = elementwise(["math.fma"], [dtype] * 3, dtype, 16)
    check(fma, [floats(16, dtype), floats(16, dtype), floats(16, dtype)])


def test_half_precision() -> None:
    a, b = floats(16, "f16"), floats(16, "f16")
    check(elementwise(["arith.addf", "arith.mulf"], ["f16", "f16"], "f16", 16), [a, b], rtol=1e-3)


def test_half_fma_is_computed_in_f32_and_rounded_back() -> None:
    """As onnxruntime does; LLVM's own f16 fma widens to f64 and rounds
    through __truncdfhf2, per lane."""
    fma = elementwise(["math.fma"], ["f16"] * 3, "f16", 16)
    module = check(fma, [floats(16, "f16") for _ in range(3)], rtol=1e-3)
    assert intrinsic_calls(module) == ["llvm.fma.v16f32"]


def test_double_to_half_rounds_once_per_lane() -> None:
    """f64 -> f16 goes through f32 rounded to odd, lane by lane, and gives
    numpy's correctly rounded halves (the other lanes' ops stay vectors)."""
    text = elementwise(["arith.truncf"], ["f64"], "f16", 16)
    halves = np.arange(0x3C00, 0x3C10, dtype=np.uint16).view(np.float16).astype(np.float64)
    between = halves + np.float64(2.0**-10) * RNG.choice([0.5, 0.5 + 2.0**-30, 0.5 - 2.0**-30], 16)
    module = check(text, [between], rtol=0)
    assert "llvm.fptrunc" in [op.name for op in module.walk()]


INT_BINARY = [
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.maxsi",
    "arith.minsi",
    "arith.maxui",
    "arith.minui",
    "arith.divsi",
    "arith.remsi",
    "arith.divui",
    "arith.floordivsi",
    "arith.ceildivsi",
]


@pytest.mark.parametrize("dtype", ["i8", "i32", "i64", "index"])
def test_integer_ops(dtype: str) -> None:
    numpy_type = NUMPY[_in_memory(dtype)]
    info = np.iinfo(numpy_type)
    a = RNG.integers(max(info.min, -1000), min(info.max, 1000), 16, dtype=numpy_type)
    b = RNG.integers(-5, 6, 16, dtype=numpy_type)  # zeros: division gives 0
    a[0], b[0] = info.min, -1
    module = check(elementwise(INT_BINARY, [dtype, dtype], dtype, 16), [a, b])
    assert "llvm.smax.v16" + ("i64" if dtype == "index" else dtype) in intrinsic_calls(module)
    if dtype != "index":
        unary = ["math.absi", "math.ctpop", "math.ctlz", "math.cttz"]
        check(elementwise(unary, [dtype], dtype, 16), [a])


CMPF = ["oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une"]
CMPF += ["uno", "false", "true"]
CMPF_NUMBER = {name: number for number, name in enumerate(arith.CMPF_COMPARISON_OPERATIONS)}


def test_float_compares_with_nans_into_a_bool_buffer() -> None:
    a, b = floats(16), floats(16)
    b[:4] = a[:4]
    a[5], b[6], a[7], b[7] = np.nan, np.nan, np.inf, -np.inf
    text = elementwise(["arith.cmpf"] * len(CMPF), ["f32", "f32"], "i1", 16)
    for k, predicate in enumerate(CMPF):
        text = text.replace(
            f'%r{k} = "arith.cmpf"(%x0, %x1) ',
            f'%r{k} = "arith.cmpf"(%x0, %x1) <{{predicate = {CMPF_NUMBER[predicate]} : i64}}> ',
        )
    module = check(text, [a, b])
    assert any(isinstance(op, VectorFCmpOp) and op.predicate.data == "olt" for op in module.walk())
    assert "fcmp uno <16 x float>" in llvm_ir(module)


SELECT_AND_CASTS = """
    %zero = arith.constant 0 : index
    %flag = memref.load %f[%zero] : memref<1xi1>
    tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
      %x = memref.load %a[%i] : memref<16xf32>
      %n = memref.load %b[%i] : memref<16xi32>
      %m = memref.load %m8[%i] : memref<16xi8>
      %p = memref.load %bools[%i] : memref<16xi1>
      %d = memref.load %wide[%i] : memref<16xi64>
      %n2 = arith.constant 3 : i32
      %c = arith.cmpi slt, %n, %n2 : i32
      %neg = arith.negf %x : f32
      %s = arith.select %c, %x, %neg : f32
      memref.store %s, %o_select[%i] : memref<16xf32>
      %u = arith.select %flag, %x, %neg : f32
      memref.store %u, %o_uniform[%i] : memref<16xf32>
      %q = arith.select %p, %n, %n2 : i32
      memref.store %q, %o_bool[%i] : memref<16xi32>
      %true = arith.constant true
      %not = arith.xori %p, %true : i1
      memref.store %not, %o_not[%i] : memref<16xi1>
      %t1 = arith.sitofp %n : i32 to f32
      memref.store %t1, %o_sitofp[%i] : memref<16xf32>
      %t2 = arith.uitofp %n : i32 to f32
      memref.store %t2, %o_uitofp[%i] : memref<16xf32>
      %t3 = arith.uitofp %d : i64 to f64
      memref.store %t3, %o_uitofp64[%i] : memref<16xf64>
      %r = memref.load %in_range[%i] : memref<16xf32>
      %t4 = arith.fptosi %r : f32 to i32
      memref.store %t4, %o_fptosi[%i] : memref<16xi32>
      %t5 = arith.fptoui %r : f32 to i32
      memref.store %t5, %o_fptoui[%i] : memref<16xi32>
      %t6 = arith.extf %x : f32 to f64
      %t7 = arith.truncf %t6 : f64 to f32
      memref.store %t7, %o_roundtrip[%i] : memref<16xf32>
      %t8 = arith.extsi %m : i8 to i32
      memref.store %t8, %o_extsi[%i] : memref<16xi32>
      %t9 = arith.extui %m : i8 to i32
      memref.store %t9, %o_extui[%i] : memref<16xi32>
      %t10 = arith.trunci %n : i32 to i8
      memref.store %t10, %o_trunci[%i] : memref<16xi8>
      %t11 = arith.index_cast %n : i32 to index
      %t13 = arith.index_cast %t11 : index to i64
      memref.store %t13, %o_index[%i] : memref<16xi64>
      %t12 = arith.bitcast %x : f32 to i32
      memref.store %t12, %o_bitcast[%i] : memref<16xi32>
    }"""


def test_selects_and_casts() -> None:
    inputs = [
        ("f", "memref<1xi1>"),
        ("a", "memref<16xf32>"),
        ("b", "memref<16xi32>"),
        ("m8", "memref<16xi8>"),
        ("bools", "memref<16xi1>"),
        ("wide", "memref<16xi64>"),
        ("in_range", "memref<16xf32>"),
    ]
    outputs = [
        ("o_select", "memref<16xf32>"),
        ("o_uniform", "memref<16xf32>"),
        ("o_bool", "memref<16xi32>"),
        ("o_not", "memref<16xi1>"),
        ("o_sitofp", "memref<16xf32>"),
        ("o_uitofp", "memref<16xf32>"),
        ("o_uitofp64", "memref<16xf64>"),
        ("o_fptosi", "memref<16xi32>"),
        ("o_fptoui", "memref<16xi32>"),
        ("o_roundtrip", "memref<16xf32>"),
        ("o_extsi", "memref<16xi32>"),
        ("o_extui", "memref<16xi32>"),
        ("o_trunci", "memref<16xi8>"),
        ("o_index", "memref<16xi64>"),
        ("o_bitcast", "memref<16xi32>"),
    ]
    text = function("k", inputs, outputs, SELECT_AND_CASTS)
    x = floats(16, "f32", -1e10, 1e10)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    ints = RNG.integers(-(2**31), 2**31 - 1, 16, dtype=np.int32)
    wide = RNG.integers(-(2**63), 2**63 - 1, 16, dtype=np.int64)
    bools = RNG.integers(0, 2, 16).astype(np.bool_)
    in_range = floats(16, "f32", 0, 2e9)  # where C's conversions are defined
    for flag in (True, False):
        check(text, [np.array([flag]), x, ints, ints.astype(np.int8), bools, wide, in_range])


SATURATING_CASTS = [
    (kind, target) for kind in ("fptosi", "fptoui") for target in ("i8", "i32", "i64")
]


def saturated(x: np.ndarray, kind: str, target: str) -> np.ndarray:
    """LLVM's fpto[su]i.sat: truncated toward zero, clamped to the target's
    range, NaN 0."""
    bits = int(target[1:])
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if kind == "fptosi" else (0, 2**bits - 1)
    wide = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
    exact = [
        min(max(int(v), low), high) if np.isfinite(v) else (high if v > 0 else low) for v in wide
    ]
    stored = [v - 2**bits if v >= 2 ** (bits - 1) else v for v in exact]  # the bits, signless
    return np.array(stored, NUMPY[target])


@pytest.mark.parametrize("lanes", [14, 16])
@pytest.mark.parametrize("source", ["f32", "f64"])
def test_saturating_float_to_int_vectors(lanes: int, source: str) -> None:
    """fptosi / fptoui of f32 and f64 lanes to i8, i32 and i64 saturate as
    the scalar lowering's intrinsic (NaN 0, out of range the bound), written
    as vector clamps and a plain conversion, not the `.sat` intrinsic that
    x86 does lane by lane; 14 lanes as a conv's NCHW write-back row."""
    stores = []
    outputs = []
    for k, (kind, target) in enumerate(SATURATING_CASTS):
        stores.append(
            f"      %c{k} = arith.{kind} %x : {source} to {target}\n"
            f"      memref.store %c{k}, %o{k}[%i] : memref<{lanes}x{target}>"
        )
        outputs.append((f"o{k}", f"memref<{lanes}x{target}>"))
    # a quantize: clipped to [0, 255] (NaN stays), cast through i64 to a
    # byte, and that byte back to a float
    quantize = (
        f"      %zero = arith.constant 0.0 : {source}\n"
        f"      %top = arith.constant 255.0 : {source}\n"
        f"      %low = arith.maximumf %x, %zero : {source}\n"
        f"      %clipped = arith.minimumf %low, %top : {source}\n"
        f"      %wide = arith.fptosi %clipped : {source} to i64\n"
        "      %byte = arith.trunci %wide : i64 to i8\n"
        f"      memref.store %byte, %q[%i] : memref<{lanes}xi8>\n"
        f"      %back = arith.uitofp %byte : i8 to {source}\n"
        f"      memref.store %back, %f[%i] : memref<{lanes}x{source}>"
    )
    outputs += [("q", f"memref<{lanes}xi8>"), ("f", f"memref<{lanes}x{source}>")]
    body = (
        f'    tir.for %i = 0 to {lanes} step 1 {{name = "i", kind = "vectorized"}} {{\n'
        f"      %x = memref.load %a[%i] : memref<{lanes}x{source}>\n"
        + "\n".join([*stores, quantize])
        + "\n    }"
    )
    text = function("k", [("a", f"memref<{lanes}x{source}>")], outputs, body)
    targets = [t for _, t in SATURATING_CASTS] + ["i8", source]
    special = [
        *(np.nan, np.inf, -np.inf, -0.0, -0.75, 127.9, 128.0, -129.0, 255.5, 256.0),
        *(2.0**31, -(2.0**31) - 4096, 2.0**63, 2.0**64),
    ]
    x = RNG.uniform(-3e2, 3e2, lanes).astype(NUMPY[source])
    x[: len(special)] = np.array(special[:lanes], NUMPY[source])
    module = lower(text)
    assert not any(".sat." in name for name in intrinsic_calls(module)), intrinsic_calls(module)
    outputs_got = [aligned_copy(np.zeros(lanes, NUMPY[t])) for t in targets]
    compile_module(module).call("k", [aligned_copy(x), *outputs_got])
    serial = lower(text.replace('kind = "vectorized"', 'kind = "serial"'))
    outputs_serial = [aligned_copy(np.zeros(lanes, NUMPY[t])) for t in targets]
    compile_module(serial).call("k", [aligned_copy(x), *outputs_serial])
    for (kind, target), got, scalar in zip(
        SATURATING_CASTS, outputs_got, outputs_serial, strict=False
    ):
        message = f"{kind} {source} to {target}"
        np.testing.assert_array_equal(got, saturated(x, kind, target), err_msg=message)
        np.testing.assert_array_equal(got, scalar, err_msg=message)
    clipped = np.clip(x, 0, 255)  # NaN stays NaN, then saturates to 0
    byte = saturated(clipped, "fptosi", "i64").astype(np.uint8).view(np.int8)
    np.testing.assert_array_equal(outputs_got[-2], byte, err_msg="quantize")
    np.testing.assert_array_equal(outputs_got[-1], byte.view(np.uint8).astype(NUMPY[source]))
    np.testing.assert_array_equal(outputs_got[-2], outputs_serial[-2])
    np.testing.assert_array_equal(outputs_got[-1], outputs_serial[-1])


def test_iota_from_the_induction_variable() -> None:
    body = """
    tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
      %c3 = arith.constant 3 : index
      %c1 = arith.constant 1 : index
      %t = arith.muli %i, %c3 : index
      %u = arith.addi %t, %c1 : index
      %w = arith.index_cast %u : index to i32
      %f = arith.sitofp %w : i32 to f32
      memref.store %f, %o[%i] : memref<16xf32>
      %v = arith.index_cast %u : index to i64
      memref.store %v, %p[%i] : memref<16xi64>
    }"""
    text = function("k", [], [("o", "memref<16xf32>"), ("p", "memref<16xi64>")], body)
    check(text, [])


# --------------------------------------------------- memory access kinds


def test_strided_gathered_and_indirect_loads() -> None:
    body = """
    tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
      %c2 = arith.constant 2 : index
      %c1 = arith.constant 1 : index
      %c15 = arith.constant 15 : index
      %s = arith.muli %i, %c2 : index
      %s1 = arith.addi %s, %c1 : index
      %strided = memref.load %a[%s1] : memref<40xf32>
      %column = memref.load %t[%i, %c1] : memref<16x3xf32>
      %half = arith.divui %i, %c2 : index
      %halves = memref.load %a[%half] : memref<40xf32>
      %back = arith.subi %c15, %i : index
      %reversed = memref.load %a[%back] : memref<40xf32>
      %k = memref.load %idx[%i] : memref<16xi64>
      %j = arith.index_cast %k : i64 to index
      %indirect = memref.load %a[%j] : memref<40xf32>
      %x = arith.addf %strided, %column : f32
      %y = arith.addf %x, %halves : f32
      %z = arith.addf %y, %reversed : f32
      %r = arith.addf %z, %indirect : f32
      memref.store %r, %o[%i] : memref<16xf32>
    }"""
    inputs = [("a", "memref<40xf32>"), ("t", "memref<16x3xf32>"), ("idx", "memref<16xi64>")]
    text = function("k", inputs, [("o", "memref<16xf32>")], body)
    module = check(text, [floats(40), floats((16, 3)), RNG.integers(0, 40, 16)])
    assert vector_ops(module).count("llvm.load") == 1  # idx: the only contiguous load


def test_strided_store_of_a_conv_write_back() -> None:
    """NCHW output written with the vectorized output channel (stride H*W)."""
    body = """
    %acc = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
    tir.for %h = 0 to 3 step 1 {name = "h", kind = "serial"} {
      tir.for %w = 0 to 5 step 1 {name = "w", kind = "serial"} {
        tir.for %c = 0 to 16 step 1 {name = "c", kind = "vectorized"} {
          %x = memref.load %in[%h, %w, %c] : memref<3x5x16xf32>
          %b = memref.load %bias[%c] : memref<16xf32>
          %s = arith.addf %x, %b : f32
          memref.store %s, %acc[%c] : memref<16xf32>
        }
        tir.for %c = 0 to 16 step 1 {name = "c_w", kind = "vectorized"} {
          %zero = arith.constant 0 : index
          %v = memref.load %acc[%c] : memref<16xf32>
          %z = arith.constant 0.0 : f32
          %r = arith.maximumf %v, %z : f32
          memref.store %r, %out[%zero, %c, %h, %w] : memref<1x16x3x5xf32>
        }
      }
    }"""
    inputs = [("in", "memref<3x5x16xf32>"), ("bias", "memref<16xf32>")]
    text = function("k", inputs, [("out", "memref<1x16x3x5xf32>")], body)
    module = check(text, [floats((3, 5, 16)), floats(16)])
    assert any(
        isinstance(op, ExtractElementOp) and op.vector.type == VectorType(f32, [16])
        for op in module.walk()
    )


@pytest.mark.parametrize(
    ("lower", "upper", "step"),
    [(0, 1, 1), (0, 3, 1), (0, 8, 1), (0, 16, 1), (0, 17, 1), (5, 22, 1), (2, 40, 3), (0, 64, 1)],
)
def test_extents_bounds_and_steps(lower: int, upper: int, step: int) -> None:
    body = f"""
    tir.for %i = {lower} to {upper} step {step} {{name = "i", kind = "vectorized"}} {{
      %x = memref.load %a[%i] : memref<{upper}xf64>
      %y = memref.load %b[%i] : memref<{upper}xi64>
      %f = arith.sitofp %y : i64 to f64
      %r = arith.mulf %x, %f : f64
      memref.store %r, %o[%i] : memref<{upper}xf64>
    }}"""
    inputs = [("a", f"memref<{upper}xf64>"), ("b", f"memref<{upper}xi64>")]
    text = function("k", inputs, [("o", f"memref<{upper}xf64>")], body)
    extent = len(range(lower, upper, step))
    ints = RNG.integers(-9, 9, upper)
    check(text, [floats(upper, "f64"), ints], vectorized=extent > 1)


@settings(max_examples=25, deadline=None)
@given(
    extent=st.integers(1, 33),
    load_stride=st.integers(1, 4),
    store_stride=st.integers(1, 3),
    offset=st.integers(0, 3),
    dtype=st.sampled_from(["f32", "i32"]),
)
def test_any_extent_and_strides(
    extent: int, load_stride: int, store_stride: int, offset: int, dtype: str
) -> None:
    size = extent * 4 + 4
    add = "arith.addf" if dtype == "f32" else "arith.addi"
    body = f"""
    tir.for %i = 0 to {extent} step 1 {{name = "i", kind = "vectorized"}} {{
      %ls = arith.constant {load_stride} : index
      %ss = arith.constant {store_stride} : index
      %off = arith.constant {offset} : index
      %l0 = arith.muli %i, %ls : index
      %l = arith.addi %l0, %off : index
      %s0 = arith.muli %ss, %i : index
      %s = arith.addi %off, %s0 : index
      %x = memref.load %a[%l] : memref<{size}x{dtype}>
      %y = memref.load %b[%i] : memref<{size}x{dtype}>
      %r = {add} %x, %y : {dtype}
      memref.store %r, %o[%s] : memref<{size}x{dtype}>
    }}"""
    memref_type = f"memref<{size}x{dtype}>"
    text = function("k", [("a", memref_type), ("b", memref_type)], [("o", memref_type)], body)
    if dtype == "f32":
        inputs = [floats(size), floats(size)]
    else:
        inputs = [RNG.integers(-100, 100, size, dtype=np.int32) for _ in range(2)]
    check(text, inputs, vectorized=extent > 1)


# ------------------------------------------------- small constant strides


def strided_read(n: int, lanes: int, stride: int, offset: int, dtype: str) -> str:
    """o[i] = a[offset + i * stride] + b[i] over `lanes` vectorized lanes, `a`
    of `n` elements."""
    add = "arith.addf" if dtype.startswith("f") else "arith.addi"
    body = f"""
    tir.for %i = 0 to {lanes} step 1 {{name = "i", kind = "vectorized"}} {{
      %stride = arith.constant {stride} : index
      %offset = arith.constant {offset} : index
      %t = arith.muli %i, %stride : index
      %k = arith.addi %t, %offset : index
      %x = memref.load %a[%k] : memref<{n}x{dtype}>
      %y = memref.load %b[%i] : memref<{lanes}x{dtype}>
      %r = {add} %x, %y : {dtype}
      memref.store %r, %o[%i] : memref<{lanes}x{dtype}>
    }}"""
    inputs = [("a", f"memref<{n}x{dtype}>"), ("b", f"memref<{lanes}x{dtype}>")]
    return function("k", inputs, [("o", f"memref<{lanes}x{dtype}>")], body)


def random_values(shape: int, dtype: str) -> np.ndarray:
    if dtype.startswith("f"):
        return floats(shape, dtype)
    if dtype == "i1":
        return RNG.integers(0, 2, shape).astype(np.bool_)
    return RNG.integers(-100, 100, shape).astype(NUMPY[dtype])


def masked_loads(module: ModuleOp) -> list[str]:
    return [name for name in intrinsic_calls(module) if name.startswith("llvm.masked.load")]


@pytest.mark.parametrize(
    ("stride", "dtype", "wide_load"),
    [
        (2, "f32", "llvm.masked.load.v32f32.p0"),
        (3, "f32", "llvm.masked.load.v48f32.p0"),
        (4, "f64", "llvm.masked.load.v64f64.p0"),
        (2, "i32", "llvm.masked.load.v32i32.p0"),
        (3, "i8", "llvm.masked.load.v48i8.p0"),
        (2, "f16", "llvm.masked.load.v32f16.p0"),
        (2, "i64", "llvm.masked.load.v32i64.p0"),
        (5, "f32", None),  # wider: a gather
        (-2, "f32", None),  # negative: a gather
        (2, "i1", None),  # a byte per element in memory: a gather
    ],
)
def test_a_small_constant_stride_is_one_masked_load_and_a_shuffle(
    stride: int, dtype: str, wide_load: str | None
) -> None:
    n = 15 * abs(stride) + 1
    offset = n - 1 if stride < 0 else 0
    text = strided_read(n, 16, stride, offset, dtype)
    module = check(text, [random_values(n, dtype), random_values(16, dtype)])
    assert masked_loads(module) == ([wide_load] if wide_load else [])
    shuffles = [op for op in module.walk() if isinstance(op, llvm.ShuffleVectorOp)]
    if wide_load:
        assert [list(op.mask.iter_values()) for op in shuffles] == [
            [lane * stride for lane in range(16)]
        ]


def test_a_non_affine_index_is_still_a_gather() -> None:
    """a[min(2 i, 20)]: no constant stride."""
    body = """
    tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
      %c2 = arith.constant 2 : index
      %c20 = arith.constant 20 : index
      %t = arith.muli %i, %c2 : index
      %k = arith.minsi %t, %c20 : index
      %x = memref.load %a[%k] : memref<32xf32>
      memref.store %x, %o[%i] : memref<16xf32>
    }"""
    text = function("k", [("a", "memref<32xf32>")], [("o", "memref<16xf32>")], body)
    module = check(text, [floats(32)])
    assert masked_loads(module) == []
    assert vector_ops(module).count("llvm.insertelement") == 16


@pytest.mark.parametrize("source", ["f32", "f64"])
def test_a_gather_at_a_float_index_converts_the_lanes_as_one_vector(source: str) -> None:
    """a[int(clip(x, 0, 7))] (Resize's source columns): the lanes' indices
    are extracted from the vector conversion, not converted one lane at a
    time by the saturating intrinsic."""
    body = f"""
    tir.for %i = 0 to 16 step 1 {{name = "i", kind = "vectorized"}} {{
      %v = memref.load %x[%i] : memref<16x{source}>
      %zero = arith.constant 0.0 : {source}
      %top = arith.constant 7.0 : {source}
      %low = arith.maximumf %v, %zero : {source}
      %clip = arith.minimumf %low, %top : {source}
      %w = arith.fptosi %clip : {source} to i64
      %k = arith.index_cast %w : i64 to index
      %g = memref.load %a[%k] : memref<8xf32>
      memref.store %g, %o[%i] : memref<16xf32>
    }}"""
    inputs = [("x", f"memref<16x{source}>"), ("a", "memref<8xf32>")]
    text = function("k", inputs, [("o", "memref<16xf32>")], body)
    module = check(text, [floats(16, source, -3, 11), floats(8)])
    assert not [name for name in intrinsic_calls(module) if ".sat." in name]


PAGE = mmap.PAGESIZE
PROT_NONE = 0  # <sys/mman.h>; Python's mmap module only names it from 3.13


def before_a_guard_page(values: np.ndarray) -> np.ndarray:
    """A copy of `values` whose last byte is the last of a page, the next
    page unreadable: a read past the last element faults. (Kept alive by
    the array; the mapping goes when the array does.)"""
    nbytes = values.nbytes
    pages = -(-nbytes // PAGE) + 1
    region = mmap.mmap(-1, pages * PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    raw = np.frombuffer(region, dtype=np.uint8)
    guard = raw.ctypes.data + (pages - 1) * PAGE
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mprotect(ctypes.c_void_p(guard), ctypes.c_size_t(PAGE), PROT_NONE) != 0:
        raise OSError(ctypes.get_errno(), "mprotect of the guard page failed")
    end = (pages - 1) * PAGE
    array = raw[end - nbytes : end].view(values.dtype).reshape(values.shape)
    array[...] = values
    return array


@settings(max_examples=30, deadline=None)
@given(
    lanes=st.integers(2, 33),
    stride=st.sampled_from([1, 2, 3, 4, 5, -2, -3]),
    extra=st.integers(0, 40),
    dtype=st.sampled_from(["f32", "f64", "i32"]),
)
def test_strided_loads_at_the_end_of_a_buffer_read_nothing_past_it(
    lanes: int, stride: int, extra: int, dtype: str
) -> None:
    """The last lane's element (the first lane's, for a negative stride) is
    the buffer's last, the page after it unreadable: the masked load must
    not touch the elements past the last lane's. Native equals the
    interpreter."""
    itemsize = np.dtype(NUMPY[dtype]).itemsize
    span = (lanes - 1) * abs(stride) + 1
    per_line = 64 // itemsize  # the JIT wants 64-byte aligned buffers
    n = -(-(span + extra) // per_line) * per_line
    offset = n - 1 if stride < 0 else n - span
    text = strided_read(n, lanes, stride, offset, dtype)
    a, b = random_values(n, dtype), random_values(lanes, dtype)
    expected = interp.run(parse_module(text), [a, b], "k")[0]
    module = lower(text)
    # a contiguous load (b's; a's at stride 1) is masked, to the next power
    # of two, when the lanes are not one
    uneven = lanes & (lanes - 1) != 0
    masked = int(2 <= stride <= 4) + int(uneven) + int(stride == 1 and uneven)
    assert len(masked_loads(module)) == masked
    guarded = before_a_guard_page(a)
    got = aligned_copy(np.zeros_like(expected))
    compile_module(module).call("k", [guarded, aligned_copy(b), got])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("cpu", ["skylake-avx512", "znver4"])
def test_the_masked_load_is_a_masked_vector_move_and_a_permute(cpu: str) -> None:
    """On AVX-512, a stride-2 load of 8 f32 lanes is one masked vmovups of 16
    floats (15 enabled) and permutes (Intel's tuning picks vpermps, Zen's
    vshufps + vpermpd), with no per-lane insert. Compiled for named CPUs, so
    it holds on any host."""
    module = lower(strided_read(15, 8, 2, 0, "f32"))
    assembly = assembly_for(module, CpuTarget(cpu))
    assert re.search(r"vmovups\s+\(%\w+\), %zmm\d+ \{%k\d\} \{z\}", assembly), assembly
    assert re.search(r"\bvperm(t2|i2)?p[sd]\b", assembly), assembly
    assert not re.search(r"vinsertps|vpinsrd|vmovss", assembly), assembly


def stride_two_model(op: str, channels: int, size: int) -> onnx.ModelProto:
    """A 3x3 stride-2 depthwise conv (+ bias, ReLU6) or max pool, padding 1."""
    out = (size - 1) // 2 + 1
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, out, out])
    if op == "depthwise":
        weights = RNG.standard_normal((channels, 1, 3, 3)).astype(np.float32)
        bias = RNG.standard_normal(channels).astype(np.float32)
        initializers = [
            numpy_helper.from_array(weights, "w"),
            numpy_helper.from_array(bias, "bias"),
            numpy_helper.from_array(np.array(0, np.float32), "low"),
            numpy_helper.from_array(np.array(6, np.float32), "high"),
        ]
        nodes = [
            helper.make_node(
                "Conv", ["x", "w", "bias"], ["c"], pads=[1] * 4, strides=[2, 2], group=channels
            ),
            helper.make_node("Clip", ["c", "low", "high"], ["y"]),
        ]
    else:
        initializers = []
        nodes = [
            helper.make_node(
                "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1] * 4, strides=[2, 2]
            )
        ]
    graph = helper.make_graph(nodes, op, [x], [y], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("op", "channels", "size"), [("depthwise", 8, 32), ("maxpool", 8, 32), ("maxpool", 4, 29)]
)
def test_stride_two_models_match_onnxruntime(op: str, channels: int, size: int) -> None:
    onnxruntime = pytest.importorskip("onnxruntime")
    model = stride_two_model(op, channels, size)
    x = RNG.standard_normal((1, channels, size, size)).astype(np.float32)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, {"x": x})[0]
    dumped: dict[str, str] = {}
    compiled = compile_model(
        model, dump=lambda stage, text: dumped.__setitem__(stage, text), dump_stages=("llvm",)
    )
    np.testing.assert_allclose(compiled.run({"x": x})[0], expected, rtol=1e-5, atol=1e-5)
    if op == "depthwise":  # its input row is read with stride 2
        assert "llvm.masked.load" in dumped["llvm"]


def stride_one_model(op: str, channels: int, size: int, kernel: int) -> onnx.ModelProto:
    """A kernel x kernel stride-1 'same' max pool or depthwise conv."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])
    pads = [kernel // 2] * 4
    initializers = []
    if op == "depthwise":
        weights = RNG.standard_normal((channels, 1, kernel, kernel)).astype(np.float32)
        initializers = [numpy_helper.from_array(weights, "w")]
        node = helper.make_node("Conv", ["x", "w"], ["y"], pads=pads, group=channels)
    else:
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[kernel] * 2, pads=pads)
    graph = helper.make_graph([node], op, [x], [y], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def max_pool_same(x: np.ndarray, kernel: int) -> np.ndarray:
    """numpy's stride-1 'same' max pool: a NaN in a window is the window's max."""
    half, size = kernel // 2, x.shape[-1]
    padded = np.pad(x, ((0, 0), (0, 0), (half, half), (half, half)), constant_values=-np.inf)
    taps = [padded[..., i : i + size, j : j + size] for i in range(kernel) for j in range(kernel)]
    return np.max(np.stack(taps), axis=0)


@settings(max_examples=8, deadline=None)
@given(
    op=st.sampled_from(["maxpool", "depthwise"]),
    channels=st.integers(1, 5),
    size=st.integers(3, 30),
    kernel=st.sampled_from([3, 5]),
)
def test_stride_one_windows_match_numpy_and_onnxruntime(
    op: str, channels: int, size: int, kernel: int
) -> None:
    """Rows of any width (vectors of 7, 14, 13 lanes: masked loads) and max
    as llvm.maximum nsz: a max pool equals numpy's, NaNs included (where
    onnxruntime drops some); a depthwise conv equals onnxruntime's."""
    onnxruntime = pytest.importorskip("onnxruntime")
    model = stride_one_model(op, channels, size, kernel)
    x = RNG.standard_normal((1, channels, size, size)).astype(np.float32)
    if op == "maxpool":
        x.flat[RNG.integers(0, x.size, max(1, x.size // 50))] = np.nan
        x.flat[RNG.integers(0, x.size, max(1, x.size // 50))] = np.inf
        expected = max_pool_same(x, kernel)
    else:
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        expected = session.run(None, {"x": x})[0]
    got = compile_model(model).run({"x": x})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------- serial fallbacks

FALLBACKS = [
    (
        "reduction into one element",
        """
        %zero = arith.constant 0 : index
        tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
          %x = memref.load %a[%i] : memref<16xf32>
          %s = memref.load %o[%zero] : memref<16xf32>
          %t = arith.addf %s, %x : f32
          memref.store %t, %o[%zero] : memref<16xf32>
        }""",
        "may hit the same element",
    ),
    (
        "loop-carried dependence",
        """
        tir.for %i = 0 to 15 step 1 {name = "i", kind = "vectorized"} {
          %c1 = arith.constant 1 : index
          %next = arith.addi %i, %c1 : index
          %x = memref.load %o[%i] : memref<16xf32>
          %y = memref.load %a[%i] : memref<16xf32>
          %t = arith.addf %x, %y : f32
          memref.store %t, %o[%next] : memref<16xf32>
        }""",
        "written and accessed at other indices",
    ),
    (
        "colliding scatter",
        """
        tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
          %c2 = arith.constant 2 : index
          %h = arith.divui %i, %c2 : index
          %x = memref.load %a[%i] : memref<16xf32>
          memref.store %x, %o[%h] : memref<16xf32>
        }""",
        "may hit the same element",
    ),
    (
        "nested loop",
        """
        tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
          tir.for %j = 0 to 2 step 1 {name = "j", kind = "serial"} {
            %x = memref.load %a[%i] : memref<16xf32>
            memref.store %x, %o[%i] : memref<16xf32>
          }
        }""",
        "'tir.for' has a region",
    ),
    (
        "call",
        """
        tir.for %i = 0 to 16 step 1 {name = "i", kind = "vectorized"} {
          %x = memref.load %a[%i] : memref<16xf32>
          %y = func.call @twice(%x) : (f32) -> f32
          memref.store %y, %o[%i] : memref<16xf32>
        }""",
        "'func.call' may have side effects",
    ),
]

TWICE = """
  func.func private @twice(%x: f32) -> f32 {
    %y = arith.addf %x, %x : f32
    func.return %y : f32
  }"""


@pytest.mark.parametrize(("case", "body", "reason"), FALLBACKS, ids=[c[0] for c in FALLBACKS])
def test_loops_that_stay_serial_are_still_right(case: str, body: str, reason: str) -> None:
    text = function("k", [("a", "memref<16xf32>")], [("o", "memref<16xf32>")], body, TWICE)
    blocker = analyze_loop(vectorized_loop(text))
    assert isinstance(blocker, str) and reason in blocker, blocker
    check(text, [floats(16)], vectorized=False)


def test_an_extent_above_64_stays_serial() -> None:
    text = elementwise(["arith.addf"], ["f32", "f32"], "f32", 100)
    assert analyze_loop(vectorized_loop(text)) == "its extent 100 is above 64"
    check(text, [floats(100), floats(100)], vectorized=False)


# --------------------------------------------------------------- unrolling


def test_unrolled_loops_are_copies_in_order() -> None:
    """A loop-carried prefix sum stays right unrolled; no branch is left."""
    body = """
    tir.for %i = 0 to 3 step 1 {name = "i", kind = "unrolled"} {
      tir.for %j = 1 to 5 step 2 {name = "j", kind = "unrolled"} {
        %c1 = arith.constant 1 : index
        %p = arith.subi %j, %c1 : index
        %prev = memref.load %o[%i, %p] : memref<3x5xf32>
        %x = memref.load %a[%i, %j] : memref<3x5xf32>
        %s = arith.addf %prev, %x : f32
        memref.store %s, %o[%i, %j] : memref<3x5xf32>
        memref.store %s, %o[%i, %j] : memref<3x5xf32>
        %n = arith.addi %j, %c1 : index
        memref.store %s, %o[%i, %n] : memref<3x5xf32>
      }
    }"""
    text = function("k", [("a", "memref<3x5xf32>")], [("o", "memref<3x5xf32>")], body)
    module = check(text, [floats((3, 5))], vectorized=False)
    branches = [op for op in module.walk() if isinstance(op, llvm.BrOp | llvm.CondBrOp)]
    assert branches == []


def test_an_unrolled_loop_around_a_serial_loop() -> None:
    body = """
    tir.for %i = 0 to 2 step 1 {name = "i", kind = "unrolled"} {
      tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
        %x = memref.load %a[%i, %j] : memref<2x4xf32>
        %y = arith.mulf %x, %x : f32
        memref.store %y, %o[%i, %j] : memref<2x4xf32>
      }
    }"""
    text = function("k", [("a", "memref<2x4xf32>")], [("o", "memref<2x4xf32>")], body)
    check(text, [floats((2, 4))], vectorized=False)


@settings(max_examples=12, deadline=None)
@given(
    rows=st.integers(1, 4),
    lanes=st.sampled_from([4, 8, 16]),
    blocks=st.integers(1, 3),
)
def test_the_rows_of_an_unrolled_tile_share_their_invariant_values(
    rows: int, lanes: int, blocks: int
) -> None:
    """A register tile's rows (an unrolled loop around a vectorized one)
    each read the block's weight row and an activation row at an offset
    computed from the outer loop's variable: tir-lower-unrolled computes the
    offset once, before the copies, and tir-lower-vectorized loads the
    weights of every row through one address; the results stay those of
    the interpreter."""
    height = blocks * rows
    body = f"""
    tir.for %n = 0 to {blocks} step 1 {{name = "n", kind = "serial"}} {{
      tir.for %u = 0 to {rows} step 1 {{name = "u", kind = "unrolled"}} {{
        %c_rows = arith.constant {rows} : index
        %first = arith.muli %n, %c_rows : index
        tir.for %j = 0 to {lanes} step 1 {{name = "j", kind = "vectorized"}} {{
          %row = arith.addi %first, %u : index
          %x = memref.load %a[%row, %j] : memref<{height}x{lanes}xf32>
          %w = memref.load %b[%n, %j] : memref<{blocks}x{lanes}xf32>
          %half = arith.constant 0.5 : f32
          %p = arith.mulf %x, %w : f32
          %q = arith.addf %p, %half : f32
          memref.store %q, %o[%row, %j] : memref<{height}x{lanes}xf32>
        }}
      }}
    }}"""
    inputs = [("a", f"memref<{height}x{lanes}xf32>"), ("b", f"memref<{blocks}x{lanes}xf32>")]
    text = function("k", inputs, [("o", f"memref<{height}x{lanes}xf32>")], body)
    unrolled = apply_pipeline(parse_module(text), "tir-lower-unrolled")
    assert sum(isinstance(op, arith.MuliOp) for op in unrolled.walk()) == 1
    vector_code = apply_pipeline(unrolled, "tir-lower-vectorized")
    loads = [op for op in vector_code.walk() if isinstance(op, llvm.LoadOp)]
    # each row loads its activation row at its own address, and the weights at one
    assert len(loads) == 2 * rows
    assert len({op.operands[0] for op in loads}) == rows + 1
    check(text, [floats((height, lanes)), floats((blocks, lanes))])


# ----------------------------------------------------------- LLVM IR text


def test_a_vector_compare_is_an_fcmp_instruction() -> None:
    module = lower(elementwise(["arith.cmpf"], ["f32", "f32"], "i1", 16, "<{predicate = 4}>"))
    assert any(isinstance(op, VectorFCmpOp) for op in module.walk())
    text = llvm_ir(module)
    assert "fcmp olt <16 x float>" in text
    assert "llvm_ext" not in text
