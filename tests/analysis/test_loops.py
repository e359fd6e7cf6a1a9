"""The affine reading of index arithmetic: constants folded, sums,
differences and constant multiples collected per atom; the trip counts
around an op."""

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, SSAValue

from xtc.analysis.loops import constant_int, linear_index, trips_around
from xtc.dialects.tir import ForOp
from xtc.driver.textual_ir import parse_module


def _const(value: int) -> SSAValue:
    return arith.ConstantOp(IntegerAttr(value, IndexType())).result


def test_constant_int_reads_constants_only() -> None:
    block = Block(arg_types=[IndexType()])
    assert constant_int(_const(7)) == 7
    assert constant_int(block.args[0]) is None


def test_linear_index_folds_constants_and_collects_terms() -> None:
    i, j = Block(arg_types=[IndexType(), IndexType()]).args
    scaled = arith.MuliOp(_const(4), i).result  # 4 * i
    shifted = arith.AddiOp(scaled, _const(3)).result  # 4i + 3
    folded = arith.AddiOp(_const(2), _const(5)).result  # 7, folded
    minus = arith.SubiOp(shifted, folded).result  # 4i - 4
    total = arith.AddiOp(minus, arith.MuliOp(j, _const(-2)).result).result
    form = linear_index(total)
    assert form.terms == {i: 4, j: -2}
    assert form.constant == -4


def test_terms_that_cancel_are_dropped() -> None:
    (i,) = Block(arg_types=[IndexType()]).args
    form = linear_index(arith.SubiOp(arith.AddiOp(i, _const(1)).result, i).result)
    assert form.terms == {}
    assert form.constant == 1


def test_a_product_of_two_variables_is_one_atom() -> None:
    i, j = Block(arg_types=[IndexType(), IndexType()]).args
    product = arith.MuliOp(i, j).result
    assert linear_index(product).terms == {product: 1}


NEST = """
func.func @kernel(%out: memref<6x4xf32>) {
  tir.for %i = 0 to 6 step 1 {name = "i", kind = "serial"} {
    %c = arith.constant 1.0 : f32
    tir.for %j = 2 to 6 step 1 {name = "j", kind = "parallel"} {
      memref.store %c, %out[%i, %j] : memref<6x4xf32>
    }
  }
  func.return
}
"""


def test_trips_around_multiplies_the_extents_of_the_loops_around_an_op() -> None:
    module = parse_module(NEST)
    kernel = next(op for op in module.walk() if isinstance(op, FuncOp))
    outer = next(op for op in module.walk() if isinstance(op, ForOp))
    store = next(op for op in module.walk() if isinstance(op, memref.StoreOp))
    constant = next(op for op in module.walk() if isinstance(op, arith.ConstantOp))
    assert trips_around(store) == trips_around(store, kernel) == 6 * 4
    assert trips_around(constant) == 6
    assert trips_around(store, outer) == 4
    assert trips_around(outer) == 1
