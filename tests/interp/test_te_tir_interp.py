"""The interpreter at the te and tir levels: scalar semantics that keep the
element precision (interp/scalar.py), te.compute / te.reduce, and tir
functions whose outputs `run` allocates and returns."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    UnrealizedConversionCastOp,
    f16,
    f32,
    i1,
    i8,
    i32,
)
from xdsl.ir import Attribute, Block, Operation
from xdsl.utils.exceptions import InterpretationError

from xtc import interp
from xtc.driver.textual_ir import parse_module

ui8 = IntegerType(8, Signedness.UNSIGNED)


def run_op(build: Callable[..., Operation], types: Sequence[Attribute], *values: Any) -> Any:
    """Runs one op on operands of `types` holding `values`; its only result."""
    block = Block(arg_types=list(types))
    op = build(*block.args)
    interpreter = interp.make_interpreter(ModuleOp([]))
    (result,) = interpreter.run_op(op, values)
    return result


def binary(op_class: type[Operation], t: Attribute, a: Any, b: Any) -> Any:
    return run_op(lambda x, y: op_class(x, y), [t, t], a, b)


# Scalars.


def test_float_ops_keep_the_element_precision() -> None:
    a, b = np.float32(0.1), np.float32(0.2)
    total = binary(arith.AddfOp, f32, a, b)
    assert type(total) is np.float32 and total == a + b
    assert type(binary(arith.DivfOp, f16, np.float16(1), np.float16(3))) is np.float16
    constant = run_op(lambda: arith.ConstantOp(FloatAttr(0.1, f32)), [])
    assert type(constant) is np.float32 and constant == np.float32(0.1)


def test_integer_constants_and_i1() -> None:
    assert run_op(lambda: arith.ConstantOp(IntegerAttr(1, i1)), []) is True
    assert run_op(lambda: arith.ConstantOp(IntegerAttr(-3, IndexType())), []) == -3
    assert binary(arith.AndIOp, i1, True, True) is True
    assert binary(arith.XOrIOp, i1, True, True) is False


def test_integer_ops_wrap_and_divide_as_c() -> None:
    assert binary(arith.AddiOp, i8, 127, 1) == -128
    assert binary(arith.MuliOp, i8, 16, 16) == 0
    assert binary(arith.DivSIOp, i32, -7, 2) == -3
    assert binary(arith.FloorDivSIOp, i32, -7, 2) == -4
    assert binary(arith.RemSIOp, i32, -7, 2) == -1
    assert binary(arith.DivUIOp, i8, -1, 2) == 127
    assert binary(arith.RemUIOp, i8, -1, 10) == 5
    assert binary(arith.MaxUIOp, i8, -1, 1) == -1
    assert binary(arith.MaxSIOp, i8, -1, 1) == 1
    assert binary(arith.ShRSIOp, i8, -128, 7) == -1
    assert binary(arith.ShRUIOp, i8, -128, 7) == 1
    # Undefined natively; a value here, not an error (select evaluates both sides).
    assert binary(arith.DivSIOp, i32, 5, 0) == 0
    assert binary(arith.RemUIOp, i32, 5, 0) == 0


def test_comparisons() -> None:
    def cmpi(predicate: str, a: int, b: int) -> bool:
        return run_op(lambda x, y: arith.CmpiOp(x, y, predicate), [i8, i8], a, b)

    def cmpf(predicate: str, a: float, b: float) -> bool:
        return run_op(lambda x, y: arith.CmpfOp(x, y, predicate), [f32, f32], a, b)

    assert cmpi("slt", -1, 1) and not cmpi("ult", -1, 1) and cmpi("ugt", -1, 1)
    assert cmpi("eq", -1, 255) and cmpi("ne", 0, 1) and cmpi("sge", 3, 3)
    nan = np.float32("nan")
    assert not cmpf("olt", nan, 1.0) and cmpf("ult", nan, 1.0)
    assert not cmpf("oeq", nan, nan) and cmpf("une", nan, nan) and cmpf("uno", nan, 0.0)
    assert cmpf("one", 1.0, 2.0) and not cmpf("one", nan, 2.0) and cmpf("ord", 1.0, 2.0)


def test_maximumf_and_minimumf_propagate_nan_and_order_zeros() -> None:
    nan = np.float32("nan")
    assert np.isnan(binary(arith.MaximumfOp, f32, nan, np.float32(1)))
    assert np.isnan(binary(arith.MinimumfOp, f32, np.float32(1), nan))
    assert not np.signbit(binary(arith.MaximumfOp, f32, np.float32(-0.0), np.float32(0.0)))
    assert np.signbit(binary(arith.MinimumfOp, f32, np.float32(0.0), np.float32(-0.0)))
    assert binary(arith.MaxnumfOp, f32, nan, np.float32(2)) == 2


def test_casts() -> None:
    def cast(op_class: type[Operation], source: Attribute, target: Attribute, value: Any) -> Any:
        return run_op(lambda x: op_class(x, target), [source], value)

    assert cast(arith.SIToFPOp, i1, f32, True) == -1.0
    assert cast(arith.UIToFPOp, i1, f32, True) == 1.0
    assert cast(arith.UIToFPOp, i8, f32, -1) == 255.0
    assert type(cast(arith.SIToFPOp, i32, f32, 7)) is np.float32
    assert cast(arith.FPToSIOp, f32, i32, np.float32(-2.7)) == -2
    assert cast(arith.FPToUIOp, f32, i8, np.float32(200.5)) == -56  # 200 as signless i8
    # Out of range: what x86 (and numpy there) gives, never an error.
    for value in (np.inf, -np.inf, np.nan, 3e9):
        with np.errstate(all="ignore"):
            expected = [np.array([value], np.float32).astype(t)[0] for t in (np.int32, np.int8)]
        got = [cast(arith.FPToSIOp, f32, t, np.float32(value)) for t in (i32, i8)]
        assert got == expected, value
    assert cast(arith.ExtSIOp, i1, i32, True) == -1
    assert cast(arith.ExtUIOp, i8, i32, -1) == 255
    assert cast(arith.TruncIOp, i32, i8, 300) == 44
    assert cast(arith.IndexCastOp, i8, IndexType(), -5) == -5
    assert type(cast(arith.ExtFOp, f16, f32, np.float16(1.5))) is np.float32
    assert cast(arith.BitcastOp, f32, i32, np.float32(1.0)) == 0x3F800000
    to_unsigned = run_op(lambda x: UnrealizedConversionCastOp.get([x], [ui8]), [i8], -1)
    to_signless = run_op(lambda x: UnrealizedConversionCastOp.get([x], [i8]), [ui8], 200)
    assert (to_unsigned, to_signless) == (255, -56)


UNARY_MATH: list[tuple[type[Operation], Callable[[float], float]]] = [
    (xmath.ExpOp, math.exp),
    (xmath.LogOp, math.log),
    (xmath.TanhOp, math.tanh),
    (xmath.ErfOp, math.erf),
    (xmath.SqrtOp, math.sqrt),
    (xmath.RsqrtOp, lambda x: 1 / math.sqrt(x)),
    (xmath.SinOp, math.sin),
    (xmath.Log1pOp, math.log1p),
    (xmath.FloorOp, math.floor),
    (xmath.CeilOp, math.ceil),
    (xmath.TruncOp, math.trunc),
    (xmath.AbsFOp, abs),
]


@settings(max_examples=20, deadline=None)
@given(st.floats(0.0625, 16, width=32), st.sampled_from(UNARY_MATH))
def test_math_in_f32_is_close_to_the_exact_value(
    x: float, case: tuple[type[Operation], Callable[[float], float]]
) -> None:
    op_class, exact = case
    value = run_op(lambda v: op_class(v), [f32], np.float32(x))
    assert type(value) is np.float32
    assert value == pytest.approx(np.float32(exact(x)), rel=1e-6, abs=1e-7)


def test_rounding_and_power() -> None:
    def unary(op_class: type[Operation], x: float) -> Any:
        return run_op(lambda v: op_class(v), [f32], np.float32(x))

    assert unary(xmath.RoundOp, 2.5) == 3 and unary(xmath.RoundOp, -2.5) == -3
    assert unary(xmath.RoundOp, 0.49999997) == 0
    assert unary(xmath.RoundEvenOp, 2.5) == 2
    assert binary(xmath.PowFOp, f32, np.float32(2), np.float32(10)) == 1024
    assert run_op(lambda v: xmath.AbsIOp(v), [i8], -128) == -128


# te.


TE_MODULE = """
func.func @kernel(%x: tensor<2x3xf32>, %n: tensor<4xui8>)
    -> (tensor<2xf32>, tensor<f32>, tensor<4xui8>, tensor<2x3xi1>) {
  %prod = te.compute : tensor<2xf32> {
  ^bb0(%i: index):
    %p = te.reduce {kind = "prod", extents = array<i64: 3>} : f32 {
    ^bb0(%k: index):
      %v = tensor.extract %x[%i, %k] : tensor<2x3xf32>
      te.yield %v : f32
    }
    te.yield %p : f32
  }
  %low = te.compute : tensor<f32> {
    %m = te.reduce {kind = "min", extents = array<i64: 2, 3>} : f32 {
    ^bb0(%i: index, %j: index):
      %v = tensor.extract %x[%i, %j] : tensor<2x3xf32>
      te.yield %v : f32
    }
    te.yield %m : f32
  }
  %top = te.compute : tensor<4xui8> {
  ^bb0(%i: index):
    %m = te.reduce {kind = "max", extents = array<i64: 4>} : ui8 {
    ^bb0(%k: index):
      %v = tensor.extract %n[%k] : tensor<4xui8>
      te.yield %v : ui8
    }
    te.yield %m : ui8
  }
  %positive = te.compute : tensor<2x3xi1> {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %x[%i, %j] : tensor<2x3xf32>
    %zero = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %v, %zero : f32
    te.yield %c : i1
  }
  func.return %prod, %low, %top, %positive
    : tensor<2xf32>, tensor<f32>, tensor<4xui8>, tensor<2x3xi1>
}
"""


def test_te_compute_and_reduce() -> None:
    x = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    n = np.array([3, 250, 7, 128], np.uint8)
    prod, low, top, positive = interp.run(parse_module(TE_MODULE), [x, n])
    np.testing.assert_array_equal(prod, x.prod(axis=1))
    assert low.shape == () and low == x.min()
    np.testing.assert_array_equal(top, np.full(4, 250, np.uint8))
    np.testing.assert_array_equal(positive, x > 0)


def test_te_read_out_of_bounds_is_an_error() -> None:
    text = """
    func.func @k(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = te.compute : tensor<3xf32> {
      ^bb0(%i: index):
        %one = arith.constant 1 : index
        %j = arith.subi %i, %one : index
        %v = tensor.extract %x[%j] : tensor<3xf32>
        te.yield %v : f32
      }
      func.return %y : tensor<3xf32>
    }"""
    with pytest.raises(InterpretationError, match=r"tensor.extract: index \[-1\] out of \[3\]"):
        interp.run(parse_module(text), [np.zeros(3, np.float32)])


# tir.


TIR_MODULE = """
"memref.global"() <{sym_name = "table", type = memref<3xf32>,
  initial_value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>, sym_visibility = "private", constant,
  alignment = 64 : i64}> : () -> ()
func.func private @scale(%x: memref<3xf32>, %out: memref<3xf32> {graph.output = 0 : i64}) {
  %t = memref.get_global @table : memref<3xf32>
  tir.for %i = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    %a = memref.load %x[%i] : memref<3xf32>
    %b = memref.load %t[%i] : memref<3xf32>
    %zero = arith.constant 0.0 : f32
    %negative = arith.cmpf olt, %a, %zero : f32
    %r = scf.if %negative -> (f32) {
      scf.yield %zero : f32
    } else {
      %m = arith.mulf %a, %b : f32
      scf.yield %m : f32
    }
    memref.store %r, %out[%i] : memref<3xf32>
  }
  func.return
}
func.func @main(%x: memref<3xf32> {graph.name = "x"},
                %sum: memref<f32> {graph.name = "sum", graph.output = 1 : i64},
                %y: memref<3xf32> {graph.name = "y", graph.output = 0 : i64},
                %odd: memref<8xi32> {graph.output = 2 : i64}) {
  %tmp = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  func.call @scale(%x, %tmp) : (memref<3xf32>, memref<3xf32>) -> ()
  %acc = memref.alloca() : memref<f32>
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %acc[] : memref<f32>
  tir.for %r = 0 to 3 step 1 {name = "r0", kind = "serial"} {
    %v = memref.load %tmp[%r] : memref<3xf32>
    %old = memref.load %acc[] : memref<f32>
    %new = arith.addf %old, %v : f32
    memref.store %new, %acc[] : memref<f32>
  }
  %s = memref.load %acc[] : memref<f32>
  memref.store %s, %sum[] : memref<f32>
  "memref.copy"(%tmp, %y) : (memref<3xf32>, memref<3xf32>) -> ()
  memref.dealloc %tmp : memref<3xf32>
  tir.for %i = 1 to 8 step 2 {name = "i0", kind = "serial"} {
    %c = arith.index_cast %i : index to i32
    memref.store %c, %odd[%i] : memref<8xi32>
  }
  func.return
}
"""


def test_tir_main_gets_its_outputs_allocated_and_returned_in_order() -> None:
    module = parse_module(TIR_MODULE)
    module.verify()
    x = np.array([1.0, -1.0, 0.5], np.float32)
    y, total, odd = interp.run(module, {"x": x})
    np.testing.assert_array_equal(y, [1.0, 0.0, 1.5])
    assert total.dtype == np.float32 and total.shape == () and total == 2.5
    np.testing.assert_array_equal(odd, [0, 1, 0, 3, 0, 5, 0, 7])
    assert interp.input_names(interp.entry_function(module)) == ["x"]


def test_tir_kernel_runs_alone() -> None:
    (out,) = interp.run(parse_module(TIR_MODULE), [np.ones(3, np.float32)], "scale")
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


def test_tir_store_into_a_constant_global_fails() -> None:
    text = """
    "memref.global"() <{sym_name = "c", type = memref<2xf32>,
      initial_value = dense<1.0> : tensor<2xf32>, sym_visibility = "private", constant}>
      : () -> ()
    func.func @main(%out: memref<2xf32> {graph.output = 0 : i64}) {
      %g = memref.get_global @c : memref<2xf32>
      %i = arith.constant 0 : index
      %v = arith.constant 2.0 : f32
      memref.store %v, %g[%i] : memref<2xf32>
      func.return
    }"""
    with pytest.raises(ValueError, match="read-only"):
        interp.run(parse_module(text), [])
