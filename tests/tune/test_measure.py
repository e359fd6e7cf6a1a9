"""Measuring candidates in worker processes (tune/measure.py): valid
candidates get costs; a refused step, a segfault, a hang and a wrong answer
are each a recorded error, and measuring goes on with a new worker.

The faults come from a plugin (an `xdsl.universe` entry point, as a user's
package would add passes) with three deliberately broken passes, found by
the workers through the PYTHONPATH they inherit."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from xdsl.dialects import llvm

from xtc.driver.compiler import SCHEDULED_AFTER, SCHEDULED_KERNEL_PASSES, pipeline
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.tune.measure import (
    ErrorKind,
    LocalRunner,
    MeasureInput,
    MeasureOptions,
    MeasureResult,
    lowered_kernel,
)
from xtc.lowering.convert_tir_to_llvm import STAGE_NAMES
from xtc.tune.task import KERNEL_NAME, Task, kernel_tasks

MATMUL = """
func.func @main(%a: tensor<32x64xf32>, %b: tensor<64x48xf32>) -> tensor<32x48xf32> {
  %c = graph.matmul %a, %b : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
  func.return %c : tensor<32x48xf32>
}
"""

FAULTS = '''
"""Broken schedule steps, to test that measuring survives them."""
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, ModuleOp, f32
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.universe import Universe

from xtc.dialects.tir import ForOp


def _stores(module):
    return [op for op in module.walk() if isinstance(op, memref.StoreOp)]


@dataclass(frozen=True)
class Crash(ModulePass):
    """Every store goes 2^40 elements past its buffer: a segfault. The
    index is 0 where the first input starts with 123456.0, which it never
    does: a constant index past the buffer is undefined behaviour that LLVM
    may delete, stores and all (an 8x3 register tile's were)."""

    name = "test-crash"

    def apply(self, ctx, op: ModuleOp) -> None:
        kernel = next(o for o in op.walk() if isinstance(o, FuncOp))
        block = kernel.body.block
        first = block.args[0]
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        probe = memref.LoadOp.get(first, [zero.result] * len(first.type.get_shape()))
        sentinel = arith.ConstantOp(FloatAttr(123456.0, f32))
        equal = arith.CmpfOp(probe.res, sentinel.result, "oeq")
        far = arith.ConstantOp(IntegerAttr(1 << 40, IndexType()))
        index = arith.SelectOp(equal.result, zero.result, far.result)
        stores = _stores(op)
        block.insert_ops_before([zero, probe, sentinel, equal, far, index], block.first_op)
        for store in stores:
            store.operands[2] = index.result


@dataclass(frozen=True)
class Hang(ModulePass):
    """First, 2^60 times: out[0, ..] += 1.0 (no closed form for LLVM)."""

    name = "test-hang"

    def apply(self, ctx, op: ModuleOp) -> None:
        kernel = next(o for o in op.walk() if isinstance(o, FuncOp))
        out = kernel.body.block.args[-1]
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        one = arith.ConstantOp(FloatAttr(1.0, f32))
        indices = [zero.result] * len(out.type.get_shape())
        load = memref.LoadOp.get(out, indices)
        add = arith.AddfOp(load.res, one.result)
        store = memref.StoreOp.get(add.result, out, indices)
        loop = ForOp(0, 1 << 60, "hang", body=[load, add, store])
        kernel.body.block.insert_ops_before([zero, one, loop], kernel.body.block.first_op)


@dataclass(frozen=True)
class Wrong(ModulePass):
    """Every stored float is doubled."""

    name = "test-wrong"

    def apply(self, ctx, op: ModuleOp) -> None:
        for store in _stores(op):
            doubled = arith.AddfOp(store.value, store.value)
            Rewriter.insert_op(doubled, InsertPoint.before(store))
            store.operands[0] = doubled.result


from xdsl.rewriter import InsertPoint  # noqa: E402

UNIVERSE = Universe(
    all_passes={"test-crash": lambda: Crash, "test-hang": lambda: Hang, "test-wrong": lambda: Wrong}
)
'''


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the fault passes' package, put on sys.path (and so on
    the workers' PYTHONPATH)."""
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "xtc_test_faults.py").write_text(FAULTS)
    info = folder / "xtc_test_faults-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: xtc-test-faults\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[xdsl.universe]\nfaults = xtc_test_faults:UNIVERSE\n")
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))


@pytest.fixture(scope="module")
def task() -> Task:
    module = apply_pipeline(parse_module(MATMUL), "convert-graph-to-te,convert-te-to-tir")
    (found,) = kernel_tasks(module, "main")
    return found


def test_candidates_are_timed_and_checked(task: Task) -> None:
    space = task.space()
    configs = [task.default(), *(space.sample(random.Random(s)) for s in range(3))]
    with LocalRunner(MeasureOptions(threads=1, repeat=2, min_repeat_ms=1)) as runner:
        results = runner.measure([MeasureInput(task, c) for c in configs])
    for result in results:
        assert result.ok, result
        assert len(result.costs) == 2 and all(0 < c < 1 for c in result.costs)
        assert result.build_s > 0


def test_faults_are_survived_and_recorded(task: Task, faults: Path) -> None:
    default = task.default()
    steps = tuple(task.steps(default))
    options = MeasureOptions(threads=1, repeat=1, min_repeat_ms=1, run_timeout_s=5)
    inputs = [
        MeasureInput(task, default, (*steps, "test-crash")),
        MeasureInput(task, default, (*steps, "test-hang")),
        MeasureInput(task, default, (*steps, "test-wrong")),
        MeasureInput(task, default, ("tir-split{func=kernel loop=nope factor=2}",)),
        MeasureInput(task, default),
    ]
    with LocalRunner(options) as runner:
        crash, hang, wrong, refused, fine = runner.measure(inputs)
    assert crash.error is ErrorKind.CRASH and "signal 11" in crash.message, crash
    assert hang.error is ErrorKind.TIMEOUT and "run took more than 5 s" in hang.message, hang
    assert wrong.error is ErrorKind.WRONG and "differs from the default" in wrong.message, wrong
    assert refused.error is ErrorKind.INVALID and "nope" in refused.message, refused
    assert fine.ok, fine
    for failed in (crash, hang, wrong, refused):
        assert failed.cost == float("inf") and not failed.ok


def test_a_result_without_costs_is_no_success() -> None:
    assert not MeasureResult().ok
    assert MeasureResult(costs=(2.0, 1.0, 3.0)).cost == 1.0  # the fastest repeat


THREE_MATMULS = """
func.func @main(%a: tensor<32x64xf32>, %b: tensor<64x48xf32>, %s: tensor<48x48xf32>)
    -> tensor<32x48xf32> {
  %c = graph.matmul %a, %b : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
  %d = graph.matmul %c, %s : (tensor<32x48xf32>, tensor<48x48xf32>) -> tensor<32x48xf32>
  %e = graph.matmul %d, %s : (tensor<32x48xf32>, tensor<48x48xf32>) -> tensor<32x48xf32>
  func.return %e : tensor<32x48xf32>
}
"""


def test_identical_kernels_are_one_task() -> None:
    """Two matmuls of one shape in one model: one task, two occurrences."""
    module = apply_pipeline(parse_module(THREE_MATMULS), "convert-graph-to-te,convert-te-to-tir")
    tasks = kernel_tasks(module, "main")
    assert sorted(t.occurrences for t in tasks) == [1, 2]
    assert len({t.key for t in tasks}) == 2


GELU = """
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = graph.erf %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %e : tensor<8x64xf32>
}
"""


def test_candidates_are_built_as_a_compile_builds_kernels() -> None:
    """A candidate goes through the tir passes a compile runs after the
    schedule: its erf is the polynomial, not a call to libm's erff (30
    times slower, which made the tuner time code no compile makes)."""
    module = apply_pipeline(parse_module(GELU), "convert-graph-to-te,convert-te-to-tir")
    (found,) = kernel_tasks(module, "main")
    lowered = lowered_kernel(found.kernel_text, found.steps(found.default()))
    callees = {op.sym_name.data for op in lowered.ops if isinstance(op, llvm.FuncOp)}
    assert "erff" not in callees
    assert KERNEL_NAME in callees


@pytest.mark.parametrize("opt_level", [2, 3])
def test_the_candidates_passes_are_the_compiles(opt_level: int) -> None:
    passes = pipeline(opt_level).split(",")
    after = passes.index(SCHEDULED_AFTER) + 1
    lowered = passes.index(STAGE_NAMES[0])
    assert tuple(passes[after:lowered]) == SCHEDULED_KERNEL_PASSES
