"""Lockstep execution of kernels (interp/gpu_lockstep.py) computes bit for
bit what running their threads one after another does (interp/gpu.py,
`one_thread_at_a_time`): on random kernels under each CUDA schedule (one
thread per output, register tiles, shared-memory tiles, warp reductions),
with the grid run one block at a time or many; on an `scf.if` that lanes
take both ways, and shuffles in a partial warp. Faults give the serial
path's messages, and a kernel holding an op it does not run falls back to
one thread at a time."""

from __future__ import annotations

from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import InterpretationError

from xtc import interp
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.interp import RunTimeFault, gpu_lockstep
from xtc.interp.gpu import one_thread_at_a_time
from xtc.testing.graph_op import random_inputs
from xtc.testing.schedules import (
    SCHEDULE_SETTINGS,
    Kernel,
    add,
    conv2d,
    dense,
    kernels,
    lower,
    matmul,
)

SCHEDULES = [
    "cuda-default-schedule",
    "cuda-default-schedule{shared_tiling=false}",
    "cuda-default-schedule{shared_tiling=false outputs_per_thread=4}",
    "cuda-default-schedule{shared_outputs_per_thread=2}",
    "cuda-default-schedule{threads=8 cross_thread=false}",
]
CHUNKS = [1, 40, gpu_lockstep.CHUNK_LANES]
"""Threads run at once: one block at a time, a few, the default."""


def assert_lockstep_is_serial(module: ModuleOp, inputs: Any, chunk: int) -> None:
    with one_thread_at_a_time():
        expected = interp.run(module, inputs)
    with mock.patch.object(gpu_lockstep, "CHUNK_LANES", chunk):
        got = interp.run(module, inputs)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(g, e)


def _gpu(kernel: Kernel, schedule: str) -> ModuleOp:
    return apply_pipeline(kernel.tir.clone(), f"{schedule},convert-tir-to-gpu")


@SCHEDULE_SETTINGS
@given(kernel=kernels(), schedule=st.sampled_from(SCHEDULES), chunk=st.sampled_from(CHUNKS))
def test_random_kernels_in_lockstep_compute_what_serial_threads_do(
    kernel: Kernel, schedule: str, chunk: int
) -> None:
    assert_lockstep_is_serial(_gpu(kernel, schedule), random_inputs(kernel.graph, seed=3), chunk)


LONG_REDUCTIONS = {  # at least 64 terms per output: a warp per output, shuffles
    "matmul 2x70x3": matmul(2, 70, 3),
    "dense 3x80x2": dense(3, 80, 2),
    "conv2d 8 channels 3x3, padded": conv2d(8, 5, 3, 3, 1, 1),
    "add": add(5, 6, 70),
}


@pytest.mark.parametrize("case", list(LONG_REDUCTIONS))
@pytest.mark.parametrize("chunk", CHUNKS[1:])
def test_warp_reductions_in_lockstep_compute_what_serial_threads_do(case: str, chunk: int) -> None:
    kernel = lower(LONG_REDUCTIONS[case])
    module = _gpu(kernel, "cuda-default-schedule")
    assert case == "add" or "shfl.sync" in str(module) or "gpu.barrier" in str(module)
    assert_lockstep_is_serial(module, random_inputs(kernel.graph, seed=8), chunk)


KERNEL = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "m"}> ({
    "gpu.func"() <{function_type = (memref<2x40xf32>) -> (), kernel}> ({
    ^bb0(%out: memref<2x40xf32>):
      %b = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      BODY
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
  func.func @main(%out: memref<2x40xf32> {graph.output = 0 : i64}) {
    %one = arith.constant 1 : index
    %two = arith.constant 2 : index
    %threads = arith.constant 40 : index
    "gpu.launch_func"(%two, %one, %one, %threads, %one, %one, %out) <{kernel = @m::@k,
        operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}>
        : (index, index, index, index, index, index, memref<2x40xf32>) -> ()
    func.return
  }
}"""

DIVERGENT_SHUFFLE = """
      %c3 = arith.constant 3 : index
      %c0 = arith.constant 0 : index
      %r = arith.remui %t, %c3 : index
      %odd = arith.cmpi ne, %r, %c0 : index
      %ti = arith.index_cast %t : index to i64
      %v = scf.if %odd -> (i64) {
        %c10 = arith.constant 10 : i64
        %ten = arith.muli %ti, %c10 : i64
        scf.yield %ten : i64
      } else {
        %bi = arith.index_cast %b : index to i64
        %neg = arith.subi %bi, %ti : i64
        scf.yield %neg : i64
      }
      %f = arith.sitofp %v : i64 to f32
      %mask = arith.constant -1 : i32
      %offset = arith.constant 8 : i32
      %clamp = arith.constant 31 : i32
      %s = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%mask, %f, %offset, %clamp)
          : (i32, f32, i32, i32) -> f32
      memref.store %s, %out[%b, %t] : memref<2x40xf32>"""


@pytest.mark.parametrize("chunk", CHUNKS)
def test_divergent_branches_and_a_partial_warps_shuffle(chunk: int) -> None:
    """Lanes take both ways of the scf.if; thread t reads thread t ^ 8, its
    own value where t ^ 8 is past the block's 40 threads (t = 32..39)."""
    module = parse_module(KERNEL.replace("BODY", DIVERGENT_SHUFFLE))
    assert_lockstep_is_serial(module, [], chunk)
    (out,) = interp.run(module, [])
    t = np.arange(40)
    source = np.where((t ^ 8) < 40, t ^ 8, t)
    value = lambda b: np.where(source % 3 != 0, 10 * source, b - source)  # noqa: E731
    np.testing.assert_array_equal(out, np.stack([value(0), value(1)]).astype(np.float32))


OUT_OF_RANGE = """
      %c1 = arith.constant 1 : index
      %next = arith.addi %t, %c1 : index
      %z = arith.constant 0.0 : f32
      memref.store %z, %out[%b, %next] : memref<2x40xf32>"""


def test_an_index_out_of_range_is_the_serial_error() -> None:
    module = parse_module(KERNEL.replace("BODY", OUT_OF_RANGE))
    with pytest.raises(
        InterpretationError, match=r"memref.store: index \[0, 40\] out of \[2, 40\]"
    ):
        interp.run(module, [])
    with one_thread_at_a_time(), pytest.raises(InterpretationError, match=r"index \[0, 40\]"):
        interp.run(module, [])


FAILED_ASSERT = """
      %c7 = arith.constant 7 : index
      %ok = arith.cmpi ult, %t, %c7 : index
      %ti = arith.index_cast %t : index to i64
      "tir.assert"(%ok, %ti) <{message = "thread {} past 7"}> : (i1, i64) -> ()"""


def test_a_failed_assert_names_the_first_failing_thread() -> None:
    module = parse_module(KERNEL.replace("BODY", FAILED_ASSERT))
    with pytest.raises(RunTimeFault, match="thread 7 past 7"):
        interp.run(module, [])
    with one_thread_at_a_time(), pytest.raises(RunTimeFault, match="thread 7 past 7"):
        interp.run(module, [])


I1_ADD = """
      %true = arith.constant true
      %odd = arith.addi %true, %true : i1
      %f = arith.uitofp %odd : i1 to f32
      memref.store %f, %out[%b, %t] : memref<2x40xf32>"""


def test_a_kernel_with_an_op_lanes_do_not_run_runs_one_thread_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = parse_module(KERNEL.replace("BODY", I1_ADD))
    kernel = next(op for op in module.walk() if isinstance(op, gpu.FuncOp))
    assert gpu_lockstep.refusal(kernel) == "arith.addi"
    monkeypatch.setattr("xtc.interp.gpu.run_lockstep", _never)
    (out,) = interp.run(module, [])
    np.testing.assert_array_equal(out, np.zeros((2, 40)))  # true + true = false in i1


def test_launches_run_in_lockstep_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def spy(kernel: gpu.FuncOp, *args: Any) -> None:
        calls.append(kernel.sym_name.data)
        gpu_lockstep.run_lockstep(kernel, *args)

    monkeypatch.setattr("xtc.interp.gpu.run_lockstep", spy)
    interp.run(parse_module(KERNEL.replace("BODY", DIVERGENT_SHUFFLE)), [])
    assert calls == ["k"]
    with one_thread_at_a_time():
        interp.run(parse_module(KERNEL.replace("BODY", DIVERGENT_SHUFFLE)), [])
    assert calls == ["k"]


def _never(*args: Any) -> None:
    raise AssertionError("ran in lockstep")
