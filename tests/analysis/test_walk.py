"""ops_within and ops_within_reversed list what xDSL's walk yields, in its
order: nested loops, an if with two regions, and functions of several
blocks (after convert-tir-to-cf)."""

from xtc.analysis.walk import ops_within, ops_within_reversed
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.tir_loops import loops_in

KERNEL = """builtin.module {
  func.func @k(%in0: memref<4x8xf32>, %c: i1, %out0: memref<4x8xf32>) {
    tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
      tir.for %j = 0 to 8 step 1 {name = "j", kind = "serial"} {
        %v = memref.load %in0[%i, %j] : memref<4x8xf32>
        scf.if %c {
          tir.for %k = 0 to 2 step 1 {name = "k", kind = "serial"} {
            memref.store %v, %out0[%i, %j] : memref<4x8xf32>
          }
        } else {
          %w = arith.addf %v, %v : f32
          memref.store %w, %out0[%i, %j] : memref<4x8xf32>
        }
      }
    }
    tir.for %m = 0 to 3 step 1 {name = "m", kind = "serial"} {
      %z = arith.constant 0.0 : f32
    }
    func.return
  }
}
"""


def test_ops_within_is_the_walk_in_order() -> None:
    module = parse_module(KERNEL)
    for top in [module, *module.walk()]:
        assert ops_within(top) == list(top.walk())
        assert ops_within_reversed(top) == list(top.walk(reverse=True))


def test_ops_within_holds_across_blocks() -> None:
    module = apply_pipeline(parse_module(KERNEL), "convert-tir-to-cf")
    function = module.body.block.first_op
    assert function is not None and len(function.regions[0].blocks) > 1
    assert ops_within(module) == list(module.walk())
    assert ops_within_reversed(module) == list(module.walk(reverse=True))


def test_loops_in_finds_loops_under_other_regions() -> None:
    module = parse_module(KERNEL)
    names = [loop.loop_name.data for loop in loops_in(module)]
    assert names == ["i", "j", "k", "m"]
