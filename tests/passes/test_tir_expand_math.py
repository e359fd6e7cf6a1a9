"""tir-expand-math: f32 exp, erf and tanh as polynomials agree with the exact
functions (float64) natively, in serial and vectorized loops, at the edges
(±inf, NaN, overflow, subnormal results) and on random values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module
from xtc.runtime.llvm_jit import aligned_copy, aligned_empty, compile_module

LANES = 16


def kernel(kind: str, count: int) -> str:
    return f"""
func.func @f(%x: memref<{count}xf32>, %e: memref<{count}xf32>, %r: memref<{count}xf32>) {{
  tir.for %i = 0 to {count} step 1 {{name = "i", kind = "{kind}"}} {{
    %v = memref.load %x[%i] : memref<{count}xf32>
    %a = math.exp %v : f32
    %b = math.erf %v : f32
    memref.store %a, %e[%i] : memref<{count}xf32>
    memref.store %b, %r[%i] : memref<{count}xf32>
  }}
  func.return
}}
"""


def run(kind: str, x: np.ndarray, expand: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """exp and erf of x (a multiple of LANES values), lowered and run natively."""
    module = parse_module(kernel(kind, x.size))
    passes = "tir-expand-math,convert-tir-to-llvm" if expand else "convert-tir-to-llvm"
    jit = compile_module(apply_pipeline(module, passes))
    e, r = aligned_empty(x.shape, np.float32), aligned_empty(x.shape, np.float32)
    jit.call("f", [aligned_copy(x.astype(np.float32)), e, r])
    return e, r


def check(x: np.ndarray, e: np.ndarray, r: np.ndarray) -> None:
    wide = x.astype(np.float64)
    with np.errstate(over="ignore"):
        want_e = np.exp(wide).astype(np.float32).astype(np.float64)
    want_r = np.array([math.erf(v) for v in wide])
    finite = np.isfinite(want_e) & (want_e > np.finfo(np.float32).tiny)
    np.testing.assert_allclose(e[finite], want_e[finite], rtol=2.5e-7, atol=0)
    np.testing.assert_allclose(
        e[~finite & ~np.isnan(x)], want_e[~finite & ~np.isnan(x)], atol=2e-45
    )
    np.testing.assert_allclose(r[~np.isnan(x)], want_r[~np.isnan(x)], rtol=2e-7, atol=1.5e-7)
    assert np.isnan(e[np.isnan(x)]).all() and np.isnan(r[np.isnan(x)]).all()


EDGES = np.array(
    [
        0.0,
        -0.0,
        1e-30,
        -1e-8,
        0.5,
        -0.99999,
        1.0,
        -1.0,
        3.9,
        4.0,
        -4.5,
        10.0,
        88.5,
        88.72,
        88.73,
        100.0,
        -87.0,
        -87.4,
        -95.0,
        -103.9,
        -104.5,
        -200.0,
        np.inf,
        -np.inf,
        np.nan,
        -np.nan,
        20.0,
        -20.0,
        0.3,
        2.0,
        -2.5,
        1e-3,
    ],
    np.float32,
)


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_edges(kind: str) -> None:
    e, r = run(kind, EDGES)
    check(EDGES, e, r)


@settings(max_examples=20, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        LANES,
        elements=st.floats(-110, 95, width=32, allow_nan=False),
    ),
    st.sampled_from(["serial", "vectorized"]),
)
def test_random_values(x: np.ndarray, kind: str) -> None:
    e, r = run(kind, x)
    check(x, e, r)


def test_dense_sweep_against_libm() -> None:
    """Every 1e-4 over [-6, 6] (erf's whole curve) and [-87, 88.7] (exp's
    normal range), vectorized; and the libm lowering says the same."""
    x = np.concatenate([np.arange(-6, 6, 1e-4), np.linspace(-87, 88.7, 64_000)]).astype(np.float32)
    x = x[: x.size // LANES * LANES]
    e, r = run("vectorized", x)
    check(x, e, r)
    libm_e, libm_r = run("serial", x, expand=False)
    np.testing.assert_allclose(e, libm_e, rtol=2.5e-7)
    np.testing.assert_allclose(r, libm_r, rtol=2e-7, atol=1.5e-7)


def test_other_element_types_keep_their_call() -> None:
    text = kernel("serial", 4).replace("f32", "f64")
    expanded = module_to_text(apply_pipeline(parse_module(text), "tir-expand-math"))
    assert "math.exp" in expanded and "math.erf" in expanded
    f32 = module_to_text(apply_pipeline(parse_module(kernel("serial", 4)), "tir-expand-math"))
    assert "math.exp" not in f32 and "math.erf" not in f32


EXP_BOUND = 1.0e-7
"""The relative error of exp the module docstring states for normal results."""


def test_exp_error_bound() -> None:
    """Against the exact e^x: every f32 in ±[0.5, 1) (all the mantissas of
    one binade: r takes every rounding) and 2^22 points over the normal
    range, vectorized."""
    binade = np.arange(0x3F000000, 0x3F800000, dtype=np.uint32).view(np.float32)
    spread = np.linspace(-87.3, 88.7, 1 << 22).astype(np.float32)
    for x in (binade, -binade, spread):
        e, _ = run("vectorized", x)
        relative = np.abs(e / np.exp(x.astype(np.float64)) - 1)
        assert relative.max() < EXP_BOUND


def test_exp_of_never_positive_values() -> None:
    """exp(-|x|) and exp(-x·x) have no upper clamp: ±inf give 0, NaN stays
    NaN, large values give subnormals or 0 as libm."""
    count = EDGES.size
    text = f"""
func.func @f(%x: memref<{count}xf32>, %e: memref<{count}xf32>, %r: memref<{count}xf32>) {{
  tir.for %i = 0 to {count} step 1 {{name = "i", kind = "vectorized"}} {{
    %v = memref.load %x[%i] : memref<{count}xf32>
    %a = math.absf %v : f32
    %n = arith.negf %a : f32
    %y = math.exp %n : f32
    %s = arith.mulf %v, %v : f32
    %m = arith.negf %s : f32
    %z = math.exp %m : f32
    memref.store %y, %e[%i] : memref<{count}xf32>
    memref.store %z, %r[%i] : memref<{count}xf32>
  }}
  func.return
}}
"""
    jit = compile_module(apply_pipeline(parse_module(text), "tir-expand-math,convert-tir-to-llvm"))
    e, r = aligned_empty(EDGES.shape, np.float32), aligned_empty(EDGES.shape, np.float32)
    jit.call("f", [aligned_copy(EDGES), e, r])
    wide = EDGES.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        for got, want in ((e, np.exp(-np.abs(wide))), (r, np.exp(-(wide * wide)))):
            want = want.astype(np.float32).astype(np.float64)
            np.testing.assert_allclose(got, want, rtol=2.5e-7, atol=2e-45)


def never_positive_kernel(count: int) -> str:
    """exp(-|x|), exp(min(x, 0)) (softmax's) and exp(x) of the same x."""
    buffer = f"memref<{count}xf32>"
    return f"""
func.func @f(%x: {buffer}, %e: {buffer}, %m: {buffer}, %r: {buffer}) {{
  tir.for %i = 0 to {count} step 1 {{name = "i", kind = "vectorized"}} {{
    %v = memref.load %x[%i] : {buffer}
    %a = math.absf %v : f32
    %n = arith.negf %a : f32
    %y = math.exp %n : f32
    %zero = arith.constant 0.0 : f32
    %c = arith.minimumf %v, %zero : f32
    %w = math.exp %c : f32
    %z = math.exp %v : f32
    memref.store %y, %e[%i] : {buffer}
    memref.store %w, %m[%i] : {buffer}
    memref.store %z, %r[%i] : {buffer}
  }}
  func.return
}}
"""


def run_never_positive(x: np.ndarray) -> tuple[np.ndarray, ...]:
    """exp(-|x|), exp(min(x, 0)) and exp(x), natively, vectorized."""
    lowered = apply_pipeline(parse_module(never_positive_kernel(x.size)), "tir-expand-math")
    assert module_to_text(lowered).count("arith.shrsi") == 1  # only exp(x) halves n
    jit = compile_module(apply_pipeline(lowered, "convert-tir-to-llvm"))
    results = tuple(aligned_empty(x.shape, np.float32) for _ in range(3))
    jit.call("f", [aligned_copy(x), *results])
    return results


def test_exp_of_never_positive_values_equals_the_general_scaling() -> None:
    """exp(-|x|) and exp(min(x, 0)) scale once, by 2^(n + 64) and 2^-64;
    exp of the same value loaded (not known to be never positive) scales by
    two halves of n. All round the exact product once: the bits agree over
    [-104, 0], the subnormal results from -87.3 on included, and are within
    2.5e-7 of e^x where it is normal."""
    x = -np.concatenate(
        [np.linspace(0, 104, 1 << 20), np.linspace(87, 104, 1 << 16)]
    ).astype(np.float32)
    negated, clamped, halves = run_never_positive(x)
    for once in (negated, clamped):
        np.testing.assert_array_equal(once.view(np.uint32), halves.view(np.uint32))
    assert (negated[x < -88] > 0).any() and (negated[x < -88] < np.finfo(np.float32).tiny).all()
    exact = np.exp(x.astype(np.float64))
    normal = exact > np.finfo(np.float32).tiny
    np.testing.assert_allclose(negated[normal], exact[normal], rtol=2.5e-7, atol=0)


def test_exp_of_a_minimum_keeps_nan_and_the_upper_bound() -> None:
    """exp(min(x, 0)): NaN stays NaN (the minimum propagates it), positive x
    and +inf give 1, -inf gives 0."""
    x = np.array([np.nan, np.inf, -np.inf, 5.0, -0.0, 0.0, -1.0, 1e30] * 2, np.float32)
    negated, clamped, _ = run_never_positive(x)
    want = np.exp(np.minimum(x.astype(np.float64), 0))
    np.testing.assert_allclose(clamped, want, rtol=2.5e-7, atol=0)
    assert np.isnan(clamped[np.isnan(x)]).all() and np.isnan(negated[np.isnan(x)]).all()


def tanh_kernel(kind: str, count: int) -> str:
    return f"""
func.func @f(%x: memref<{count}xf32>, %t: memref<{count}xf32>) {{
  tir.for %i = 0 to {count} step 1 {{name = "i", kind = "{kind}"}} {{
    %v = memref.load %x[%i] : memref<{count}xf32>
    %a = math.tanh %v : f32
    memref.store %a, %t[%i] : memref<{count}xf32>
  }}
  func.return
}}
"""


def run_tanh(kind: str, x: np.ndarray, expand: bool = True) -> np.ndarray:
    """tanh of x (a multiple of LANES values), lowered and run natively."""
    module = parse_module(tanh_kernel(kind, x.size))
    passes = "tir-expand-math,convert-tir-to-llvm" if expand else "convert-tir-to-llvm"
    jit = compile_module(apply_pipeline(module, passes))
    t = aligned_empty(x.shape, np.float32)
    jit.call("f", [aligned_copy(x.astype(np.float32)), t])
    return t


TANH_BOUND = 1.6e-7
"""The relative error of tanh the module docstring states."""


def check_tanh(x: np.ndarray, t: np.ndarray) -> None:
    want = np.tanh(x.astype(np.float64))
    number = ~np.isnan(x)
    np.testing.assert_allclose(t[number], want[number], rtol=TANH_BOUND, atol=0)
    assert np.isnan(t[~number]).all()
    # odd, signed zeros included: tanh(-0) is -0
    assert (np.signbit(t[number]) == np.signbit(x[number])).all()


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_tanh_edges(kind: str) -> None:
    edges = np.concatenate([EDGES, [0.625, -0.625, 0.62499994, 1e-40, -1e-45, 3e38]])
    edges = np.concatenate([edges, np.zeros(-edges.size % LANES)]).astype(np.float32)
    check_tanh(edges, run_tanh(kind, edges))


@settings(max_examples=10, deadline=None)
@given(
    hnp.arrays(np.float32, LANES, elements=st.floats(-20, 20, width=32, allow_nan=False)),
    st.sampled_from(["serial", "vectorized"]),
)
def test_tanh_random_values(x: np.ndarray, kind: str) -> None:
    check_tanh(x, run_tanh(kind, x))


def test_tanh_error_bound_and_libm() -> None:
    """Against the exact tanh: every f32 in ±[0.5, 1) (both pieces meet at
    0.625), 2^20 points over [-10, 10] and every 97th f32 from 2^-31 to 8,
    vectorized; libm's tanhf within the same bound."""
    binade = np.arange(0x3F000000, 0x3F800000, dtype=np.uint32).view(np.float32)
    spread = np.linspace(-10, 10, 1 << 20).astype(np.float32)
    steps = np.arange(0x30000000, 0x41000000, 97, dtype=np.uint32).view(np.float32)
    for x in (binade, -binade, spread, steps[: steps.size // LANES * LANES]):
        t = run_tanh("vectorized", x)
        check_tanh(x, t)
    libm = run_tanh("serial", spread, expand=False)
    np.testing.assert_allclose(run_tanh("vectorized", spread), libm, rtol=2 * TANH_BOUND)


def test_tanh_of_other_element_types_keeps_its_call() -> None:
    wide = tanh_kernel("serial", 4).replace("f32", "f64")
    assert "math.tanh" in module_to_text(apply_pipeline(parse_module(wide), "tir-expand-math"))
    f32 = module_to_text(apply_pipeline(parse_module(tanh_kernel("serial", 4)), "tir-expand-math"))
    assert "math.tanh" not in f32
