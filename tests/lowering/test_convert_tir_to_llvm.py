"""convert-tir-to-llvm: hand-written tir kernels run through the pass and the
JIT, against numpy (and the tir interpreter, the project's oracle). Every
arith and math op of xDSL is covered, over f16/f32/f64 and i8..i64."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

from xtc.dialects.graph.constant import attr_from_array
from xtc.lowering.llvm_emit import LoweringError
from xtc.runtime.llvm_jit import (
    CpuTarget,
    JitModule,
    aligned_copy,
    aligned_empty,
    compile_module,
)
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module

N = 16
RNG = np.random.default_rng(7)
DTYPES = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "ui8": np.uint8,
    "index": np.int64,
}


def lower(text: str) -> ModuleOp:
    module = parse_module(text)
    apply_pipeline(module, "convert-tir-to-llvm")
    return module


def jit(text: str, target: CpuTarget | None = None) -> JitModule:
    return compile_module(lower(text), target)


# This CPU; this CPU without native f16 arithmetic (as an AMD Zen 5, whatever
# the host); a baseline x86-64 without even F16C conversions (every f16 value
# converts through runtime/float_builtins.py).
TARGETS = {
    "host": None,
    "host-without-avx512fp16": CpuTarget.host().without("avx512fp16"),
    "x86-64": CpuTarget("x86-64"),
}


def kernel(
    name: str,
    op: str,
    in_types: Sequence[str],
    out_types: Sequence[str],
    props: str = "",
    n: int = N,
) -> str:
    """`out_k[i] = op(in_0[i], ...)` over n elements, the op in generic form."""
    args = [f"%a{k}: memref<{n}x{t}>" for k, t in enumerate(in_types)]
    args += [f"%o{k}: memref<{n}x{t}>" for k, t in enumerate(out_types)]
    loads = "\n".join(
        f"      %x{k} = memref.load %a{k}[%i] : memref<{n}x{t}>" for k, t in enumerate(in_types)
    )
    result = "%r" if len(out_types) == 1 else f"%r:{len(out_types)}"
    operands = ", ".join(f"%x{k}" for k in range(len(in_types)))
    signature = f"({', '.join(in_types)}) -> ({', '.join(out_types)})"
    stores = "\n".join(
        f"      memref.store {'%r' if len(out_types) == 1 else f'%r#{k}'}, %o{k}[%i] "
        f": memref<{n}x{t}>"
        for k, t in enumerate(out_types)
    )
    return f"""
  func.func @{name}({", ".join(args)}) {{
    tir.for %i = 0 to {n} step 1 {{name = "i0", kind = "serial"}} {{
{loads}
      {result} = "{op}"({operands}) {props} : {signature}
{stores}
    }}
    func.return
  }}"""


def module_of(kernels: Sequence[str]) -> str:
    return "builtin.module {" + "".join(kernels) + "\n}\n"


def run_kernel(compiled: JitModule, name: str, inputs: Sequence[np.ndarray], outs: Sequence[str]):
    outputs = [aligned_empty(inputs[0].shape, DTYPES[t]) for t in outs]
    compiled.call(name, [aligned_copy(a) for a in inputs] + outputs)
    return outputs


# ----------------------------------------------------------- float ops


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# name -> (numpy reference in f64, input range)
FLOAT_UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], tuple[float, float]]] = {
    "arith.negf": (np.negative, (-3, 3)),
    "math.absf": (np.abs, (-3, 3)),
    "math.acos": (np.arccos, (-0.99, 0.99)),
    "math.acosh": (np.arccosh, (1.01, 5)),
    "math.asin": (np.arcsin, (-0.99, 0.99)),
    "math.asinh": (np.arcsinh, (-3, 3)),
    "math.atan": (np.arctan, (-3, 3)),
    "math.atanh": (np.arctanh, (-0.9, 0.9)),
    "math.cbrt": (np.cbrt, (-3, 3)),
    "math.ceil": (np.ceil, (-3, 3)),
    "math.cos": (np.cos, (-3, 3)),
    "math.cosh": (np.cosh, (-3, 3)),
    "math.erf": (np.vectorize(math.erf), (-3, 3)),
    "math.exp": (np.exp, (-3, 3)),
    "math.exp2": (np.exp2, (-3, 3)),
    "math.expm1": (np.expm1, (-3, 3)),
    "math.floor": (np.floor, (-3, 3)),
    "math.log": (np.log, (0.1, 10)),
    "math.log10": (np.log10, (0.1, 10)),
    "math.log1p": (np.log1p, (-0.5, 10)),
    "math.log2": (np.log2, (0.1, 10)),
    "math.round": (_round_half_away, (-3, 3)),
    "math.roundeven": (np.rint, (-3, 3)),
    "math.rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 10)),
    "math.sin": (np.sin, (-3, 3)),
    "math.sinh": (np.sinh, (-3, 3)),
    "math.sqrt": (np.sqrt, (0.1, 10)),
    "math.tan": (np.tan, (-1.2, 1.2)),
    "math.tanh": (np.tanh, (-3, 3)),
    "math.trunc": (np.trunc, (-3, 3)),
}

FLOAT_BINARY: dict[
    str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], tuple[float, float]]
] = {
    "arith.addf": (np.add, (-3, 3)),
    "arith.subf": (np.subtract, (-3, 3)),
    "arith.mulf": (np.multiply, (-3, 3)),
    "arith.divf": (np.divide, (0.5, 3)),
    "arith.maximumf": (np.maximum, (-3, 3)),
    "arith.minimumf": (np.minimum, (-3, 3)),
    "arith.maxnumf": (np.fmax, (-3, 3)),
    "arith.minnumf": (np.fmin, (-3, 3)),
    "math.powf": (np.power, (0.1, 3)),
    "math.atan2": (np.arctan2, (-3, 3)),
    "math.copysign": (np.copysign, (-3, 3)),
}

TOLERANCE = {"f16": 2e-3, "f32": 2e-6, "f64": 1e-13}


def _symbol(op: str) -> str:
    return op.replace(".", "_")


def _uniform(bounds: tuple[float, float], dtype: Any, n: int = N) -> np.ndarray:
    return RNG.uniform(*bounds, size=n).astype(dtype)


def _close(actual: np.ndarray, expected: np.ndarray, ftype: str, what: str) -> None:
    tol = TOLERANCE[ftype]
    np.testing.assert_allclose(
        actual.astype(np.float64), expected, rtol=tol, atol=tol, err_msg=what
    )


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("ftype", ["f16", "f32", "f64"])
def test_every_float_op(ftype: str, target: str) -> None:
    dtype = DTYPES[ftype]
    kernels = [kernel(_symbol(op), op, [ftype], [ftype]) for op in FLOAT_UNARY]
    kernels += [kernel(_symbol(op), op, [ftype] * 2, [ftype]) for op in FLOAT_BINARY]
    kernels.append(kernel("math_fma", "math.fma", [ftype] * 3, [ftype]))
    kernels.append(kernel("math_fpowi", "math.fpowi", [ftype, "i32"], [ftype]))
    compiled = jit(module_of(kernels), TARGETS[target])
    for op, (reference, bounds) in FLOAT_UNARY.items():
        x = _uniform(bounds, dtype)
        (out,) = run_kernel(compiled, _symbol(op), [x], [ftype])
        _close(out, reference(x.astype(np.float64)).astype(dtype), ftype, op)
    for op, (reference, bounds) in FLOAT_BINARY.items():
        x, y = _uniform(bounds, dtype), _uniform(bounds, dtype)
        (out,) = run_kernel(compiled, _symbol(op), [x, y], [ftype])
        expected = reference(x.astype(np.float64), y.astype(np.float64)).astype(dtype)
        _close(out, expected, ftype, op)
    x, y, z = (_uniform((-3, 3), dtype) for _ in range(3))
    (out,) = run_kernel(compiled, "math_fma", [x, y, z], [ftype])
    _close(out, (x.astype(np.float64) * y + z).astype(dtype), ftype, "math.fma")
    base, exponent = _uniform((0.5, 2), dtype), RNG.integers(-4, 5, N).astype(np.int32)
    (out,) = run_kernel(compiled, "math_fpowi", [base, exponent], [ftype])
    _close(out, (base.astype(np.float64) ** exponent).astype(dtype), ftype, "math.fpowi")


def test_nan_propagation_and_signed_zero() -> None:
    ops = ["arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf"]
    compiled = jit(module_of([kernel(_symbol(op), op, ["f32"] * 2, ["f32"]) for op in ops]))
    x = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 2.0] * 3, np.float32)[:N]
    y = np.array([1.0, np.nan, np.nan, 0.0, -0.0, -2.0] * 3, np.float32)[:N]
    references = [np.maximum, np.minimum, np.fmax, np.fmin]
    for op, reference in zip(ops, references, strict=True):
        (out,) = run_kernel(compiled, _symbol(op), [x, y], ["f32"])
        np.testing.assert_array_equal(out, reference(x, y), err_msg=op)
    # maximumf / minimumf order the zeros: -0 < +0
    zeros = (x == 0) & (y == 0)
    (high,) = run_kernel(compiled, "arith_maximumf", [x, y], ["f32"])
    (low,) = run_kernel(compiled, "arith_minimumf", [x, y], ["f32"])
    assert not np.signbit(high[zeros]).any() and np.signbit(low[zeros]).all()


# ------------------------------------------------------------- integer ops


def wrap(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def unsigned(value: int, width: int) -> int:
    return value & ((1 << width) - 1)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _ipowi(a: int, b: int) -> int:
    if b >= 0:
        return a**b
    return 1 if a == 1 else (-1 if b % 2 else 1) if a == -1 else 0


IntReference = Callable[[int, int, int], int]
INT_BINARY: dict[str, IntReference] = {
    "arith.addi": lambda a, b, w: a + b,
    "arith.subi": lambda a, b, w: a - b,
    "arith.muli": lambda a, b, w: a * b,
    "arith.divsi": lambda a, b, w: 0 if b == 0 else _trunc_div(a, b),
    "arith.remsi": lambda a, b, w: 0 if b == 0 else a - b * _trunc_div(a, b),
    "arith.divui": lambda a, b, w: 0 if b == 0 else unsigned(a, w) // unsigned(b, w),
    "arith.remui": lambda a, b, w: 0 if b == 0 else unsigned(a, w) % unsigned(b, w),
    "arith.floordivsi": lambda a, b, w: 0 if b == 0 else a // b,
    "arith.ceildivsi": lambda a, b, w: 0 if b == 0 else -((-a) // b),
    "arith.ceildivui": lambda a, b, w: 0 if b == 0 else -(-unsigned(a, w) // unsigned(b, w)),
    "arith.minsi": lambda a, b, w: min(a, b),
    "arith.maxsi": lambda a, b, w: max(a, b),
    "arith.minui": lambda a, b, w: min(unsigned(a, w), unsigned(b, w)),
    "arith.maxui": lambda a, b, w: max(unsigned(a, w), unsigned(b, w)),
    "arith.andi": lambda a, b, w: a & b,
    "arith.ori": lambda a, b, w: a | b,
    "arith.xori": lambda a, b, w: a ^ b,
}
INT_SHIFTS: dict[str, IntReference] = {
    "arith.shli": lambda a, b, w: a << b,
    "arith.shrui": lambda a, b, w: unsigned(a, w) >> b,
    "arith.shrsi": lambda a, b, w: a >> b,
}
INT_UNARY: dict[str, Callable[[int, int], int]] = {
    "math.absi": lambda a, w: abs(a),
    "math.ctlz": lambda a, w: w - unsigned(a, w).bit_length(),
    "math.cttz": lambda a, w: w if a == 0 else (unsigned(a, w) & -unsigned(a, w)).bit_length() - 1,
    "math.ctpop": lambda a, w: bin(unsigned(a, w)).count("1"),
}


def _edge_ints(width: int) -> np.ndarray:
    """Random integers with 0, +-1, INT_MIN and INT_MAX among them."""
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    edges = [0, 1, -1, lo, hi, 7, -7]
    rest = RNG.integers(lo, hi, N - len(edges), endpoint=True)
    return np.array(edges + list(rest), dtype=f"int{width}")


def _expect_ints(fn: Callable[..., int], width: int, *columns: np.ndarray) -> np.ndarray:
    values = [wrap(fn(*(int(c[k]) for c in columns), width), width) for k in range(N)]
    return np.array(values, dtype=f"int{width}")


@pytest.mark.parametrize("width", [8, 16, 32, 64])
def test_every_integer_op(width: int) -> None:
    t = f"i{width}"
    kernels = [kernel(_symbol(op), op, [t, t], [t]) for op in (*INT_BINARY, *INT_SHIFTS)]
    kernels += [kernel(_symbol(op), op, [t], [t]) for op in INT_UNARY]
    kernels.append(kernel("math_ipowi", "math.ipowi", [t, t], [t]))
    kernels.append(kernel("addui_extended", "arith.addui_extended", [t, t], [t, "i1"]))
    for op in ("arith.mului_extended", "arith.mulsi_extended"):
        kernels.append(kernel(_symbol(op), op, [t, t], [t, t]))
    compiled = jit(module_of(kernels))
    a = _edge_ints(width)
    b = np.roll(_edge_ints(width), 3)
    for op, reference in INT_BINARY.items():
        (out,) = run_kernel(compiled, _symbol(op), [a, b], [t])
        np.testing.assert_array_equal(out, _expect_ints(reference, width, a, b), err_msg=op)
    shift = RNG.integers(0, width, N).astype(f"int{width}")
    for op, reference in INT_SHIFTS.items():
        (out,) = run_kernel(compiled, _symbol(op), [a, shift], [t])
        np.testing.assert_array_equal(out, _expect_ints(reference, width, a, shift), err_msg=op)
    for op, unary in INT_UNARY.items():
        (out,) = run_kernel(compiled, _symbol(op), [a], [t])
        np.testing.assert_array_equal(out, _expect_ints(unary, width, a), err_msg=op)
    base = RNG.integers(-4, 5, N).astype(f"int{width}")
    exponent = RNG.integers(-3, 13, N).astype(f"int{width}")
    (out,) = run_kernel(compiled, "math_ipowi", [base, exponent], [t])
    expected = _expect_ints(lambda x, y, w: _ipowi(x, y), width, base, exponent)
    np.testing.assert_array_equal(out, expected, err_msg="math.ipowi")

    total, carry = run_kernel(compiled, "addui_extended", [a, b], [t, "i1"])
    sums = [unsigned(int(x), width) + unsigned(int(y), width) for x, y in zip(a, b, strict=True)]
    np.testing.assert_array_equal(total, _expect_ints(lambda x, y, w: x + y, width, a, b))
    np.testing.assert_array_equal(carry, [s >> width for s in sums])
    for op, to_int in (("arith.mului_extended", unsigned), ("arith.mulsi_extended", wrap)):
        low, high = run_kernel(compiled, _symbol(op), [a, b], [t, t])
        products = [
            to_int(int(x), width) * to_int(int(y), width) for x, y in zip(a, b, strict=True)
        ]
        np.testing.assert_array_equal(low, [wrap(p, width) for p in products], err_msg=op)
        np.testing.assert_array_equal(high, [wrap(p >> width, width) for p in products], err_msg=op)


# --------------------------------------------------------- comparisons


CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord"]
CMPF += ["ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


def _cmp(op: str, x: Any, y: Any) -> bool:
    if op in ("false", "true"):
        return op == "true"
    unordered = bool(np.isnan(x) or np.isnan(y))
    if op == "ord":
        return not unordered
    if op == "uno":
        return unordered
    if op[0] in "ou" and op not in ("ult", "ule", "ugt", "uge") or op in CMPF[9:13]:
        ordered_op = op[1:]
        if unordered:
            return op[0] == "u"
        return {"eq": x == y, "ne": x != y, "gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y}[
            ordered_op
        ]
    raise AssertionError(op)


def test_comparisons_and_select() -> None:
    kernels = [
        kernel(f"cmpi_{p}", "arith.cmpi", ["i32", "i32"], ["i1"], f"<{{predicate = {k} : i64}}>")
        for k, p in enumerate(CMPI)
    ]
    kernels += [
        kernel(f"cmpf_{p}", "arith.cmpf", ["f32", "f32"], ["i1"], f"<{{predicate = {k} : i64}}>")
        for k, p in enumerate(CMPF)
    ]
    kernels.append(kernel("select", "arith.select", ["i1", "f64", "f64"], ["f64"]))
    compiled = jit(module_of(kernels))
    a, b = _edge_ints(32), np.roll(_edge_ints(32), 1)
    b[:4] = a[:4]
    for k, p in enumerate(CMPI):
        (out,) = run_kernel(compiled, f"cmpi_{p}", [a, b], ["i1"])
        signed = p in ("slt", "sle", "sgt", "sge")
        xs = a.astype(np.int64) if signed or p in ("eq", "ne") else a.view(np.uint32)
        ys = b.astype(np.int64) if signed or p in ("eq", "ne") else b.view(np.uint32)
        ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal}
        ops |= {"gt": np.greater, "ge": np.greater_equal}
        name = p if p in ("eq", "ne") else p[1:]
        np.testing.assert_array_equal(out, ops[name](xs, ys), err_msg=f"cmpi {p} ({k})")
    x = np.array([1, 2, np.nan, 3, np.nan, -1, 0, 5] * 2, np.float32)
    y = np.array([1, 1, 2, np.nan, np.nan, 4, -0.0, 5] * 2, np.float32)
    for p in CMPF:
        (out,) = run_kernel(compiled, f"cmpf_{p}", [x, y], ["i1"])
        expected = [_cmp(p, xv, yv) for xv, yv in zip(x, y, strict=True)]
        np.testing.assert_array_equal(out, expected, err_msg=f"cmpf {p}")
    cond = RNG.integers(0, 2, N).astype(np.bool_)
    t, f = RNG.normal(size=N), RNG.normal(size=N)
    (out,) = run_kernel(compiled, "select", [cond, t, f], ["f64"])
    np.testing.assert_array_equal(out, np.where(cond, t, f))


# --------------------------------------------------------------- casts


CASTS: list[tuple[str, str, str]] = [
    ("arith.extf", "f16", "f32"),
    ("arith.extf", "f32", "f64"),
    ("arith.extf", "f16", "f64"),
    ("arith.truncf", "f64", "f32"),
    ("arith.truncf", "f32", "f16"),
    ("arith.truncf", "f64", "f16"),
    ("arith.sitofp", "i32", "f32"),
    ("arith.sitofp", "i64", "f64"),
    ("arith.sitofp", "i8", "f16"),
    ("arith.sitofp", "i1", "f32"),
    ("arith.uitofp", "i8", "f32"),
    ("arith.uitofp", "i32", "f64"),
    ("arith.uitofp", "i64", "f64"),
    ("arith.uitofp", "i64", "f32"),
    ("arith.uitofp", "i1", "f32"),
    ("arith.fptosi", "f32", "i32"),
    ("arith.fptosi", "f64", "i64"),
    ("arith.fptosi", "f16", "i8"),
    ("arith.fptoui", "f32", "i8"),
    ("arith.fptoui", "f64", "i32"),
    ("arith.trunci", "i64", "i8"),
    ("arith.trunci", "i32", "i1"),
    ("arith.extsi", "i8", "i64"),
    ("arith.extsi", "i1", "i32"),
    ("arith.extui", "i8", "i64"),
    ("arith.extui", "i1", "i32"),
    ("arith.index_cast", "i32", "index"),
    ("arith.index_cast", "index", "i16"),
    ("arith.bitcast", "f32", "i32"),
    ("arith.bitcast", "i64", "f64"),
]


def _cast_input(op: str, source: str) -> np.ndarray:
    dtype = DTYPES[source]
    if source == "i1":
        return RNG.integers(0, 2, N).astype(np.bool_)
    if op in ("arith.fptosi", "arith.fptoui"):
        return RNG.uniform(0 if op.endswith("ui") else -100, 120, N).astype(dtype)
    if source.startswith("f"):
        return RNG.normal(scale=100, size=N).astype(dtype)
    return _edge_ints(np.dtype(dtype).itemsize * 8)


def _cast_reference(op: str, x: np.ndarray, source: str, target: str) -> np.ndarray:
    out = DTYPES[target]
    if op == "arith.bitcast":
        return x.view(out)
    if op == "arith.uitofp":
        return (
            x.view(f"uint{x.dtype.itemsize * 8}").astype(out) if source != "i1" else x.astype(out)
        )
    if op == "arith.sitofp" and source == "i1":
        return -x.astype(out)  # true is -1 as a signed i1
    if op == "arith.extsi" and source == "i1":
        return -x.astype(out)
    if op == "arith.extui" and source != "i1":
        return x.view(f"uint{x.dtype.itemsize * 8}").astype(out)
    if op == "arith.fptoui":
        return x.astype(np.uint64).astype(out)
    if op == "arith.truncf" and (source, target) == ("f64", "f16"):
        return x.astype(np.float16)
    if op == "arith.trunci" and target == "i1":
        return (x & 1).astype(np.bool_)
    return x.astype(out)


@pytest.mark.parametrize("target", list(TARGETS))
def test_every_cast(target: str) -> None:
    kernels = [kernel(f"cast_{k}", op, [s], [t]) for k, (op, s, t) in enumerate(CASTS)]
    compiled = jit(module_of(kernels), TARGETS[target])
    for k, (op, source, target) in enumerate(CASTS):
        x = _cast_input(op, source)
        (out,) = run_kernel(compiled, f"cast_{k}", [x], [target])
        expected = _cast_reference(op, x, source, target)
        np.testing.assert_array_equal(out, expected, err_msg=f"{op} {source} -> {target}")


def test_float_to_int_saturates_instead_of_poison() -> None:
    compiled = jit(module_of([kernel("f2i", "arith.fptosi", ["f32"], ["i8"])]))
    x = np.array([1e6, -1e6, np.nan, 3.7, -3.7] + [0.0] * (N - 5), np.float32)
    (out,) = run_kernel(compiled, "f2i", [x], ["i8"])
    np.testing.assert_array_equal(out[:5], [127, -128, 0, 3, -3])


# -------------------------------------------- kernels in the contract's shape


MATMUL = """
builtin.module {
  func.func @matmul(%a: memref<MxKxf32>, %b: memref<KxNxf32>,
                    %c: memref<MxNxf32> {graph.output = 0 : i64}) {
    tir.for %i = 0 to M step 1 {name = "i0", kind = "serial"} {
      tir.for %j = 0 to N step 1 {name = "i1", kind = "serial"} {
        %acc = memref.alloca() : memref<f32>
        %zero = arith.constant 0.000000e+00 : f32
        memref.store %zero, %acc[] : memref<f32>
        tir.for %k = 0 to K step 1 {name = "r0", kind = "serial"} {
          %x = memref.load %a[%i, %k] : memref<MxKxf32>
          %y = memref.load %b[%k, %j] : memref<KxNxf32>
          %m = arith.mulf %x, %y : f32
          %s0 = memref.load %acc[] : memref<f32>
          %s1 = arith.addf %s0, %m : f32
          memref.store %s1, %acc[] : memref<f32>
        }
        %r = memref.load %acc[] : memref<f32>
        memref.store %r, %c[%i, %j] : memref<MxNxf32>
      }
    }
    func.return
  }
}
"""


def matmul_text(m: int, n: int, k: int) -> str:
    return MATMUL.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 9), st.integers(1, 17), st.integers(1, 12))
def test_matmul_with_reduce_accumulator(m: int, n: int, k: int) -> None:
    compiled = jit(matmul_text(m, n, k))
    a = RNG.normal(size=(m, k)).astype(np.float32)
    b = RNG.normal(size=(k, n)).astype(np.float32)
    (c,) = run_kernel_2d(compiled, "matmul", [a, b], (m, n))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


CONSTANT_INDICES = """
builtin.module {
  func.func @shift(%x: memref<RxCxf32>, %y: memref<RxCxf32>, %z: memref<RxCxf32>) {
    tir.for %i = 0 to R step 1 {name = "i", kind = "serial"} {
      tir.for %u = 0 to C step 1 {name = "u", kind = "unrolled"} {
        %first = arith.constant 0 : index
        %last = arith.constant LAST : index
        %a = memref.load %x[%i, %u] : memref<RxCxf32>
        %b = memref.load %x[%first, %last] : memref<RxCxf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %y[%i, %u] : memref<RxCxf32>
      }
    }
    tir.for %r = 0 to R step 1 {name = "r", kind = "unrolled"} {
      tir.for %c = 0 to C step 1 {name = "c", kind = "vectorized"} {
        %a = memref.load %x[%r, %c] : memref<RxCxf32>
        %top = arith.constant 0 : index
        %b = memref.load %x[%top, %c] : memref<RxCxf32>
        %d = arith.mulf %a, %b : f32
        memref.store %d, %z[%r, %c] : memref<RxCxf32>
      }
    }
    func.return
  }
}
"""


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 5), st.integers(1, 9))
def test_constant_indices_fold_into_addresses(rows: int, columns: int) -> None:
    """Unrolled copies address their elements at constant offsets (folded
    into the GEP, lowering/llvm_emit.py's element_pointer), beside variable
    indices and in vector code: the same numbers as numpy."""
    text = (
        CONSTANT_INDICES.replace("RxC", f"{rows}x{columns}")
        .replace("to R ", f"to {rows} ")
        .replace("to C ", f"to {columns} ")
        .replace("LAST", str(columns - 1))
    )
    x = RNG.normal(size=(rows, columns)).astype(np.float32)
    y, z = aligned_empty((rows, columns), np.float32), aligned_empty((rows, columns), np.float32)
    jit(text).call("shift", [aligned_copy(x), y, z])
    np.testing.assert_array_equal(y, x + x[0, columns - 1])
    np.testing.assert_array_equal(z, x * x[0])


def run_kernel_2d(compiled: JitModule, name: str, inputs: list[np.ndarray], shape: tuple[int, ...]):
    out = aligned_empty(shape, np.float32)
    compiled.call(name, [aligned_copy(a) for a in inputs] + [out])
    return (out,)


# i64 + ui8 + i1 buffers, casts through unrealized_conversion_cast, scf.if,
# index arithmetic.
MIXED = """
builtin.module {
  func.func @mixed(%a: memref<2x8xi64>, %b: memref<2x8xui8>, %m: memref<2x8xi1>,
                   %o: memref<2x8xui8>, %p: memref<2x8xf32>) {
    tir.for %i = 0 to 2 step 1 {name = "i0", kind = "serial"} {
      tir.for %j = 0 to 8 step 1 {name = "i1", kind = "serial"} {
        %x = memref.load %a[%i, %j] : memref<2x8xi64>
        %bu = memref.load %b[%i, %j] : memref<2x8xui8>
        %bs = builtin.unrealized_conversion_cast %bu : ui8 to i8
        %flag = memref.load %m[%i, %j] : memref<2x8xi1>
        %bw = arith.extui %bs : i8 to i64
        %sum = arith.addi %x, %bw : i64
        %big = arith.constant 200 : i64
        %over = arith.cmpi sgt, %sum, %big : i64
        %clamped = arith.select %over, %big, %sum : i64
        %narrow = arith.trunci %clamped : i64 to i8
        %picked = arith.select %flag, %narrow, %bs : i8
        %pu = builtin.unrealized_conversion_cast %picked : i8 to ui8
        memref.store %pu, %o[%i, %j] : memref<2x8xui8>
        %row = arith.index_cast %i : index to i64
        %c8 = arith.constant 8 : index
        %flat = arith.muli %i, %c8 : index
        %pos = arith.addi %flat, %j : index
        %pos64 = arith.index_cast %pos : index to i64
        %even = arith.constant 2 : i64
        %rem = arith.remsi %pos64, %even : i64
        %zero = arith.constant 0 : i64
        %is_even = arith.cmpi eq, %rem, %zero : i64
        %value = scf.if %is_even -> (f32) {
          %f = arith.uitofp %bs : i8 to f32
          scf.yield %f : f32
        } else {
          %f = arith.sitofp %row : i64 to f32
          %g = math.erf %f : f32
          scf.yield %g : f32
        }
        memref.store %value, %p[%i, %j] : memref<2x8xf32>
      }
    }
    func.return
  }
}
"""


def mixed_reference(a: np.ndarray, b: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    total = np.minimum(a + b.astype(np.int64), 200)
    o = np.where(m, total.astype(np.uint8), b)
    rows = np.broadcast_to(np.arange(2)[:, None], (2, 8)).astype(np.float64)
    even = (np.arange(16).reshape(2, 8) % 2) == 0
    p = np.where(even, b.astype(np.float32), np.vectorize(math.erf)(rows)).astype(np.float32)
    return o, p


def test_mixed_integer_buffers_and_scf_if() -> None:
    compiled = jit(MIXED)
    a = RNG.integers(-50, 150, (2, 8)).astype(np.int64)
    b = RNG.integers(0, 256, (2, 8)).astype(np.uint8)
    m = RNG.integers(0, 2, (2, 8)).astype(np.bool_)
    o, p = aligned_empty((2, 8), np.uint8), aligned_empty((2, 8), np.float32)
    compiled.call("mixed", [aligned_copy(a), aligned_copy(b), aligned_copy(m), o, p])
    expected_o, expected_p = mixed_reference(a, b, m)
    np.testing.assert_array_equal(o, expected_o)
    np.testing.assert_allclose(p, expected_p, rtol=1e-6)


def memref_global(name: str, shape: str, value: str) -> str:
    """A constant memref.global (xDSL prints it in the generic form)."""
    return (
        f'"memref.global"() <{{sym_name = "{name}", type = memref<{shape}>, '
        f'initial_value = {value}, sym_visibility = "private", constant, '
        "alignment = 64 : i64}> : () -> ()"
    )


def main_text() -> str:
    """@main: allocates an intermediate, calls two kernels (one twice), reads
    a dense and a dense_resource global, copies a global to an output."""
    weights = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    blob = attr_from_array(np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4), "bias_blob")
    return f"""
builtin.module {{
  {memref_global("w", "3x4xf32", str(attr_from_array(weights)))}
  {memref_global("bias", "8x4xf32", str(blob))}
  {memref_global("flags", "4xi1", "dense<[true, false, true, true]> : tensor<4xi1>")}
  func.func private @scale_add(%x: memref<8x4xf32>, %w: memref<3x4xf32>,
                               %y: memref<8x4xf32>) {{
    tir.for %i = 0 to 8 step 1 {{name = "i0", kind = "serial"}} {{
      tir.for %j = 0 to 4 step 1 {{name = "i1", kind = "serial"}} {{
        %c1 = arith.constant 1 : index
        %v = memref.load %x[%i, %j] : memref<8x4xf32>
        %s = memref.load %w[%c1, %j] : memref<3x4xf32>
        %p = arith.mulf %v, %s : f32
        %r = math.tanh %p : f32
        memref.store %r, %y[%i, %j] : memref<8x4xf32>
      }}
    }}
    func.return
  }}
  func.func private @add_masked(%x: memref<8x4xf32>, %b: memref<8x4xf32>, %f: memref<4xi1>,
                                %y: memref<8x4xf32>) {{
    tir.for %i = 0 to 8 step 1 {{name = "i0", kind = "serial"}} {{
      tir.for %j = 0 to 4 step 1 {{name = "i1", kind = "serial"}} {{
        %v = memref.load %x[%i, %j] : memref<8x4xf32>
        %c = memref.load %b[%i, %j] : memref<8x4xf32>
        %keep = memref.load %f[%j] : memref<4xi1>
        %s = arith.addf %v, %c : f32
        %r = arith.select %keep, %s, %v : f32
        memref.store %r, %y[%i, %j] : memref<8x4xf32>
      }}
    }}
    func.return
  }}
  func.func @main(%x: memref<8x4xf32> {{graph.name = "x"}},
                  %y: memref<8x4xf32> {{graph.name = "y", graph.output = 0 : i64}},
                  %z: memref<3x4xf32> {{graph.name = "z", graph.output = 1 : i64}}) {{
    %t = memref.alloc() {{alignment = 64 : i64}} : memref<8x4xf32>
    %w = memref.get_global @w : memref<3x4xf32>
    %bias = memref.get_global @bias : memref<8x4xf32>
    %flags = memref.get_global @flags : memref<4xi1>
    func.call @scale_add(%x, %w, %t) : (memref<8x4xf32>, memref<3x4xf32>, memref<8x4xf32>) -> ()
    %u = memref.alloc() {{alignment = 64 : i64}} : memref<8x4xf32>
    func.call @add_masked(%t, %bias, %flags, %u)
        : (memref<8x4xf32>, memref<8x4xf32>, memref<4xi1>, memref<8x4xf32>) -> ()
    func.call @scale_add(%u, %w, %y) : (memref<8x4xf32>, memref<3x4xf32>, memref<8x4xf32>) -> ()
    memref.dealloc %t : memref<8x4xf32>
    memref.dealloc %u : memref<8x4xf32>
    "memref.copy"(%w, %z) : (memref<3x4xf32>, memref<3x4xf32>) -> ()
    func.return
  }}
}}
"""


def main_reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    bias = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    flags = np.array([True, False, True, True])
    t = np.tanh(x * w[1])
    u = np.where(flags, t + bias, t)
    return np.tanh(u * w[1]), w


def test_main_with_globals_intermediates_and_copy() -> None:
    text = main_text()
    compiled = jit(text)
    x = RNG.normal(size=(8, 4)).astype(np.float32)
    y, z = aligned_empty((8, 4), np.float32), aligned_empty((3, 4), np.float32)
    compiled.call("main", [aligned_copy(x), y, z])
    expected_y, expected_z = main_reference(x)
    np.testing.assert_allclose(y, expected_y, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(z, expected_z)
    # the kernels are internal: inlined into @main and gone
    assert set(compiled.signatures) == {"main"}


def test_same_as_tir_interpreter() -> None:
    """The lowering agrees with the project's oracle on the same tir module."""
    interp = pytest.importorskip("xtc.interp")
    x = RNG.normal(size=(8, 4)).astype(np.float32)
    text = main_text()
    interpreted = interp.run(parse_module(text), [x])
    y, z = aligned_empty((8, 4), np.float32), aligned_empty((3, 4), np.float32)
    jit(text).call("main", [aligned_copy(x), y, z])
    np.testing.assert_allclose(y, interpreted[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(z, interpreted[1])

    a = RNG.normal(size=(3, 5)).astype(np.float32)
    b = RNG.normal(size=(5, 4)).astype(np.float32)
    (c,) = interp.run(parse_module(matmul_text(3, 4, 5)), [a, b])
    (native,) = run_kernel_2d(jit(matmul_text(3, 4, 5)), "matmul", [a, b], (3, 4))
    np.testing.assert_allclose(native, c, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------ the lowered IR


def test_output_is_llvm_only_and_reparses() -> None:
    module = lower(main_text())
    assert all(op.name.startswith("llvm.") for op in module.walk() if op is not module)
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, llvm.FuncOp)}
    assert functions["main"].linkage.linkage.data == "external"
    assert functions["scale_add"].linkage.linkage.data == "internal"
    assert {"aligned_alloc", "free"} <= set(functions)
    text = module_to_text(module)
    assert "dense_resource<bias_blob" in text
    assert module_to_text(parse_module(text)) == text


def test_alloca_in_a_loop_is_hoisted_to_the_entry_block() -> None:
    module = lower(matmul_text(2, 3, 4))
    function = next(op for op in module.ops if isinstance(op, llvm.FuncOp))
    entry = function.body.blocks.first
    assert entry is not None
    allocas = [op for op in function.walk() if isinstance(op, llvm.AllocaOp)]
    assert len(allocas) == 1 and allocas[0].parent_block() is entry


def test_division_by_zero_does_not_trap() -> None:
    kernels = [kernel(_symbol(op), op, ["i32", "i32"], ["i32"]) for op in INT_BINARY if "div" in op]
    compiled = jit(module_of(kernels))
    a = _edge_ints(32)
    for op in INT_BINARY:
        if "div" in op:
            (out,) = run_kernel(compiled, _symbol(op), [a, np.zeros(N, np.int32)], ["i32"])
            np.testing.assert_array_equal(out, 0, err_msg=op)


ILLEGAL_INPUTS = [
    (
        """func.func @f(%n: index) {
             %m = memref.alloc(%n) : memref<?xf32>
             func.return
           }""",
        "'memref.alloc' with dynamic sizes is not supported",
    ),
    (
        """func.func @f(%m: memref<4xf32>, %v: f32, %i: index) {
             %r = "memref.atomic_rmw"(%v, %m, %i) <{kind = 0 : i64}>
                 : (f32, memref<4xf32>, index) -> f32
             func.return
           }""",
        "'memref.atomic_rmw' has no lowering to the llvm dialect",
    ),
    (
        """func.func @f() -> tensor<4xf32> {
             %c = te.compute : tensor<4xf32> {
             ^bb0(%i: index):
               %z = arith.constant 0.0 : f32
               te.yield %z : f32
             }
             func.return %c : tensor<4xf32>
           }""",
        "'func.func' @f result has type tensor<4xf32>, which has no llvm lowering",
    ),
    (
        """func.func @f(%m: memref<?x4xf32>) {
             func.return
           }""",
        "'func.func' needs a static shape and strides, got memref<\\?x4xf32>",
    ),
]


@pytest.mark.parametrize(("function", "message"), ILLEGAL_INPUTS)
def test_illegal_input_is_a_diagnostic(function: str, message: str) -> None:
    with pytest.raises(LoweringError, match=message):
        lower("builtin.module {\n" + function + "\n}")


ZEROS = """
builtin.module {
  func.func @zeros(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
    tir.for %i = 0 to 4 step 1 {name = "i", kind = "unrolled"} {
      %v = memref.load %x[%i] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %minus_zero = arith.constant -0.0 : f32
      %p = arith.mulf %v, %zero : f32
      %q = arith.mulf %v, %minus_zero : f32
      memref.store %p, %y[%i] : memref<4xf32>
      memref.store %q, %z[%i] : memref<4xf32>
    }
    func.return
  }
}
"""


def test_shared_constants_keep_the_sign_of_zero() -> None:
    """tir-cse shares each constant once per function (0.0 and -0.0 are two,
    though equal as Python floats): x * 0.0 and x * -0.0 keep their signs."""
    x = np.array([1.0, -2.0, 3.0, -4.0], np.float32)
    y, z = aligned_empty((4,), np.float32), aligned_empty((4,), np.float32)
    jit(ZEROS).call("zeros", [aligned_copy(x), y, z])
    np.testing.assert_array_equal(np.signbit(y), np.signbit(x * np.float32(0.0)))
    np.testing.assert_array_equal(np.signbit(z), np.signbit(x * np.float32(-0.0)))
