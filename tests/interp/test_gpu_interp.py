"""The interpreter at the gpu level: a launch runs its kernel once per
thread of the grid, so a model after convert-tir-to-gpu computes what it
did at the tir level (bit for bit); each thread sees its own block and
thread ids; a kernel with barriers runs a block's threads at once, phase
after phase, sharing the block's shared buffers."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import InterpretationError

from xtc import interp
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.testing.graph_op import random_inputs
from xtc.testing.schedules import add, conv2d, lower, matmul, pool

BLOCKS_THREADS = 'tir-bind{loop=i0 axis="blockIdx.y"},tir-bind{loop=i1 axis="threadIdx.x"}'
CASES = {
    "add, default schedule": (add(3, 4, 5), "cuda-default-schedule"),
    "add, blockIdx.y x threadIdx.x": (add(3, 4, 5), BLOCKS_THREADS),
    "matmul, default schedule": (matmul(6, 5, 7), "cuda-default-schedule"),
    "max_pool2d, default schedule": (pool("max_pool2d", 2, 6, 3, 1, 0), "cuda-default-schedule"),
    "conv2d without padding": (conv2d(2, 5, 3, 3, 1, 0), "cuda-default-schedule{threads=8}"),
    # two kernels: the padding nest, then the convolution, on a host temporary
    "conv2d with padding": (conv2d(2, 5, 3, 3, 1, 1), "cuda-default-schedule{threads=8}"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_gpu_level_computes_what_the_tir_level_does(case: str) -> None:
    graph, schedule = CASES[case]
    kernel = lower(graph)
    gpu = apply_pipeline(kernel.tir.clone(), f"{schedule},convert-tir-to-gpu")
    assert "gpu.launch_func" in str(gpu)
    inputs = random_inputs(kernel.graph, seed=4)
    for expected, got in zip(interp.run(kernel.tir, inputs), interp.run(gpu, inputs), strict=True):
        np.testing.assert_array_equal(got, expected)


WHERE = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "m"}> ({
    "gpu.func"() <{function_type = (memref<2x3x4xi64>) -> (), kernel}> ({
    ^bb0(%out: memref<2x3x4xi64>):
      %b = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %n = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %g = "gpu.grid_dim"() <{dimension = #gpu<dim y>}> : () -> index
      %ng = arith.muli %n, %g : index
      %code = arith.addi %ng, %tx : index
      %v = arith.index_cast %code : index to i64
      memref.store %v, %out[%b, %ty, %tx] : memref<2x3x4xi64>
      BARRIER
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
  func.func @main(%out: memref<2x3x4xi64> {graph.output = 0 : i64}) {
    %one = arith.constant 1 : index
    %two = arith.constant 2 : index
    %three = arith.constant 3 : index
    %four = arith.constant 4 : index
    "gpu.launch_func"(%one, %two, %one, %four, %three, %one, %out) <{kernel = @m::@k,
        operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}>
        : (index, index, index, index, index, index, memref<2x3x4xi64>) -> ()
    func.return
  }
}"""


def test_each_thread_sees_its_place() -> None:
    (out,) = interp.run(parse_module(WHERE.replace("BARRIER", "")), [])
    # block_dim.x * grid_dim.y = 4 * 2 = 8, plus the thread's x
    expected = np.broadcast_to(8 + np.arange(4), (2, 3, 4))
    np.testing.assert_array_equal(out, expected)


REVERSE = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "m"}> ({
    "gpu.func"() <{function_type = (memref<2x4xi64>) -> (), kernel}> ({
    ^bb0(%out: memref<2x4xi64>):
      %b = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %s = memref.alloca() : memref<4xi64, 3 : i64>
      %c10 = arith.constant 10 : index
      %base = arith.muli %b, %c10 : index
      %code = arith.addi %base, %t : index
      %v = arith.index_cast %code : index to i64
      memref.store %v, %s[%t] : memref<4xi64, 3 : i64>
      "gpu.barrier"() : () -> ()
      %c3 = arith.constant 3 : index
      %other = arith.subi %c3, %t : index
      %w = memref.load %s[%other] : memref<4xi64, 3 : i64>
      memref.store %w, %out[%b, %t] : memref<2x4xi64>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
  func.func @main(%out: memref<2x4xi64> {graph.output = 0 : i64}) {
    %one = arith.constant 1 : index
    %two = arith.constant 2 : index
    %four = arith.constant 4 : index
    "gpu.launch_func"(%two, %one, %one, %four, %one, %one, %out) <{kernel = @m::@k,
        operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}>
        : (index, index, index, index, index, index, memref<2x4xi64>) -> ()
    func.return
  }
}"""


def test_a_barrier_waits_for_the_blocks_threads() -> None:
    # each thread writes its code to the block's shared buffer, then reads
    # the one its mirror thread wrote: only right when all wrote first
    (out,) = interp.run(parse_module(REVERSE), [])
    np.testing.assert_array_equal(out, [[3, 2, 1, 0], [13, 12, 11, 10]])


def test_a_failing_thread_is_reported_not_waited_for() -> None:
    failing = REVERSE.replace("%c3 = arith.constant 3", "%c3 = arith.constant 9")
    with pytest.raises(InterpretationError, match=r"memref.load: index \[\d\] out of \[4\]"):
        interp.run(parse_module(failing), [])
