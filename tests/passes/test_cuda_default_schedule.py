"""cuda-default-schedule: one thread per output element. The numbers do
not change (the interpreter runs bound loops serially), every kernel's
spatial loops end on blockIdx.x x threadIdx.x with no tail, and ptxas
accepts the PTX of the scheduled model (skipped without ptxas)."""

from __future__ import annotations

from math import prod
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects import memref
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, i32
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.dialects.gpu import FuncOp as GpuFuncOp
from xdsl.ir import SSAValue

from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.driver.cuda import compile_graph_to_gpu
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.frontend.onnx import import_model
from xtc.passes.cuda_default_schedule import (
    GPU_SINGLE_THREAD,
    CudaDefaultSchedule,
    fills_only_untiled,
    threads_for,
)
from xtc.passes.schedule_pass import PassOptionError
from xtc.remarks import collect_remarks
from xtc.runtime.ptx import ptx
from xtc.testing.graph_op import random_inputs
from xtc.testing.ptxas import assert_ptxas_accepts
from xtc.testing.schedules import (
    add,
    conv2d,
    conv2d_blocked,
    kernel_function,
    lower,
    matmul,
    pool,
)

GRAPHS = {
    "add": add(5, 7, 64),
    "matmul": matmul(6, 5, 7),
    "max_pool2d": pool("max_pool2d", 3, 6, 2, 2, 0),
}


def test_threads_divide_the_extent() -> None:
    assert threads_for(2240, 256) == 224
    assert threads_for(42, 256) == 42
    assert threads_for(1031, 256) == 1  # a prime: one thread per block
    assert threads_for(1024, 1024) == 1024


@pytest.mark.parametrize("name", list(GRAPHS))
def test_the_default_schedule_keeps_the_numbers(name: str) -> None:
    kernel = lower(GRAPHS[name])
    scheduled = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule")
    inputs = random_inputs(kernel.graph, seed=2)
    for e, g in zip(interp.run(kernel.tir, inputs), interp.run(scheduled, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    func = kernel_function(scheduled, kernel.name)
    outer = next(op for op in func.body.block.ops if isinstance(op, ForOp))
    inner = next(op for op in outer.body.block.ops if isinstance(op, ForOp))
    assert (outer.kind.data, inner.kind.data) == ("blockIdx.x", "threadIdx.x")
    output = func.args[-1].type
    assert isinstance(output, MemRefType)
    assert outer.extent * inner.extent == int(np.prod(output.get_shape()))


@pytest.mark.parametrize("name", list(GRAPHS))
def test_ptxas_accepts_the_scheduled_model(name: str, tmp_path: Path) -> None:
    kernel = lower(GRAPHS[name])
    gpu = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule,convert-tir-to-gpu")
    assert_ptxas_accepts(ptx(gpu, "sm_90"), tmp_path)


def test_each_nest_of_a_function_becomes_a_kernel_its_host_calls() -> None:
    padded = lower(conv2d(2, 5, 3, 3, 1, 1))  # the padding nest, then the convolution
    scheduled = apply_pipeline(padded.tir.clone(), "cuda-default-schedule")
    host = kernel_function(scheduled, "conv2d_0")
    assert [op.name for op in host.body.block.ops] == [
        "memref.alloc",
        "func.call",
        "func.call",
        "memref.dealloc",
        "func.return",
    ]
    calls = [op for op in host.body.block.ops if isinstance(op, CallOp)]
    assert [c.callee.string_value() for c in calls] == ["conv2d_0_k0", "conv2d_0_k1"]
    padded_input = host.body.block.first_op
    assert padded_input is not None
    assert all(padded_input.results[0] in c.arguments for c in calls)
    for name in ("conv2d_0_k0", "conv2d_0_k1"):
        kernel = kernel_function(scheduled, name)
        outer = next(op for op in kernel.body.block.ops if isinstance(op, ForOp))
        assert outer.kind.data == "blockIdx.x"
        assert not any(isinstance(op, memref.AllocOp) for op in kernel.walk())
    inputs = random_inputs(padded.graph, seed=3)
    for e, g in zip(interp.run(padded.tir, inputs), interp.run(scheduled, inputs), strict=True):
        np.testing.assert_array_equal(g, e)


SUM_INTO_ONE = """
func.func @main(%x: memref<8xf32>, %y: memref<f32> {graph.output = 0 : i64}) {
  func.call @total(%x, %y) : (memref<8xf32>, memref<f32>) -> ()
  func.return
}
func.func @total(%x: memref<8xf32>, %y: memref<f32>) {
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %y[] : memref<f32>
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    %s = memref.load %y[] : memref<f32>
    %t = arith.addf %s, %v : f32
    memref.store %t, %y[] : memref<f32>
  }
  func.return
}
"""


def test_a_reduction_into_one_element_runs_on_one_thread_and_says_so() -> None:
    with collect_remarks() as remarks:
        gpu = apply_pipeline(parse_module(SUM_INTO_ONE), "cuda-default-schedule,convert-tir-to-gpu")
    assert [(r.category, r.function, r.loop) for r in remarks] == [
        (GPU_SINGLE_THREAD, "total_k1", "i")
    ]
    kernels = {k.sym_name.data: k for k in gpu.walk() if isinstance(k, GpuFuncOp)}
    assert set(kernels) == {"total_k0", "total_k1"}  # the store of 0, then the sum
    for kernel in kernels.values():
        for sizes in ("gpu.known_block_size", "gpu.known_grid_size"):
            assert kernel.attributes[sizes] == DenseArrayBase.from_list(i32, [1, 1, 1])
    host = kernel_function(gpu, "total")
    assert {op.name for op in host.body.block.ops} == {"func.call", "func.return"}
    x = np.arange(8, dtype=np.float32)
    (total,) = interp.run(gpu, [x])
    assert float(total) == 28.0


def test_threads_out_of_range_is_a_bad_option() -> None:
    with pytest.raises(PassOptionError, match=r"threads=2048 is outside \[1, 1024\]"):
        CudaDefaultSchedule(threads=2048)


def test_a_small_output_gets_fewer_threads_per_block_to_fill_the_gpu() -> None:
    assert threads_for(7 * 7 * 512, 256) == 64  # 392 blocks, not 98 of 256
    assert threads_for(56 * 56 * 64, 256) == 256  # 784 blocks of 256 already
    assert threads_for(4 * 256, 256) == 256  # too small to fill: the largest
    assert threads_for(97, 256) == 97  # a prime: one block of it


def test_outputs_per_thread_out_of_range_is_a_bad_option() -> None:
    with pytest.raises(PassOptionError, match=r"outputs_per_thread=0 is outside \[1, 16\]"):
        CudaDefaultSchedule(outputs_per_thread=0)


TILED = {
    "conv2d": (conv2d(3, 6, 8, 3, 1, 1), "conv2d_0_k1", "tmp2"),  # the padded input
    "conv2d_blocked": (conv2d_blocked(2, 6, 2, 4, 3), "conv2d_0", "in0"),
    "matmul": (matmul(8, 5, 6), "matmul_0", "in1"),
}
"""A reduction nest, its kernel, and the input its coalesced loads read."""


def _reduction_loads(func: FuncOp) -> dict[str, int]:
    """The loads of the function's arguments under its reduction loops
    (the loops in its thread loop), counted per argument name."""
    threads = next(o for o in func.walk() if isinstance(o, ForOp) and o.kind.data == "threadIdx.x")
    args: dict[SSAValue, str] = {a: a.name_hint or "" for a in func.args}
    counts: dict[str, int] = {}
    for loop in (o for o in threads.body.block.ops if isinstance(o, ForOp)):
        for op in loop.walk():
            if isinstance(op, memref.LoadOp) and op.memref in args:
                counts[args[op.memref]] = counts.get(args[op.memref], 0) + 1
    return counts


def _threads(func: FuncOp) -> int:
    """Blocks x threads of the function's bound loops."""
    return prod(o.extent for o in func.walk() if isinstance(o, ForOp) and "Idx" in o.kind.data)


@pytest.mark.parametrize("outputs", [2, 4])
@pytest.mark.parametrize("name", list(TILED))
def test_each_thread_computes_several_outputs_reading_the_shared_input_once(
    name: str, outputs: int
) -> None:
    text, kernel_name, shared = TILED[name]
    kernel = lower(text)
    plain = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule")
    tiled = apply_pipeline(
        kernel.tir.clone(), f"cuda-default-schedule{{outputs_per_thread={outputs}}}"
    )
    inputs = random_inputs(kernel.graph, seed=4)
    gpu = apply_pipeline(tiled.clone(), "convert-tir-to-gpu")
    expected = interp.run(kernel.tir, inputs)
    for got in (interp.run(tiled, inputs), interp.run(gpu, inputs)):
        for e, g in zip(expected, got, strict=True):
            np.testing.assert_array_equal(g, e)
    before, after = kernel_function(plain, kernel_name), kernel_function(tiled, kernel_name)
    assert _threads(after) * outputs == _threads(before)
    loads_before, loads_after = _reduction_loads(before), _reduction_loads(after)
    assert loads_after[shared] == loads_before[shared] == 1  # read once, used by every output
    weights = next(n for n in loads_before if n != shared)
    assert loads_after[weights] == outputs * loads_before[weights]
    accumulators = [op for op in after.walk() if isinstance(op, memref.AllocaOp)]
    assert len(accumulators) == outputs


@pytest.mark.parametrize(
    "text",
    [pool("max_pool2d", 4, 6, 2, 2, 0), add(4, 4, 8), matmul(1, 5, 8), matmul(8, 2, 1024)],
    ids=["pool", "add", "one_row", "fills_the_gpu_only_untiled"],
)
def test_a_nest_where_no_load_is_saved_is_not_tiled(text: str) -> None:
    kernel = lower(text)
    plain = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule")
    tiled = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule{outputs_per_thread=4}")
    assert str(tiled) == str(plain)


def test_register_tiling_never_leaves_a_gpu_it_filled_half_idle() -> None:
    assert fills_only_untiled(7 * 7 * 512, 4)  # 6272 threads would leave most SMs idle
    assert not fills_only_untiled(14 * 14 * 256, 4)  # 12544 threads still fill it
    assert not fills_only_untiled(8 * 36, 4)  # too small to fill it either way


def _one_node_model(
    node: onnx.NodeProto, shape: list[int], out_shape: list[int], *weights: onnx.TensorProto
) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)
    graph = helper.make_graph([node], "g", [x], [y], list(weights))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_the_epilogue_of_a_reduction_into_one_element_runs_in_a_kernel() -> None:
    """ReduceMean over every axis, and LayerNormalization over axis 0: their
    mean (a load of the sum, a division, a store) was refused at the top
    level ("used outside it"); it now runs in a kernel of one thread."""
    x = np.random.default_rng(4).standard_normal((3, 70)).astype(np.float32)
    mean = helper.make_node("ReduceMean", ["x"], ["y"], keepdims=0)
    norm = helper.make_node("LayerNormalization", ["x", "scale"], ["y"], axis=0)
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [3, 70], np.full(210, 2, np.float32))
    expected = {"mean": np.mean(x), "norm": 2 * (x - x.mean()) / np.sqrt(x.var() + 1e-5)}
    for name, model in (
        ("mean", _one_node_model(mean, [3, 70], [])),
        ("norm", _one_node_model(norm, [3, 70], [3, 70], scale)),
    ):
        gpu = compile_graph_to_gpu(import_model(model), 3)
        (got,) = interp.run(gpu, {"x": x})
        np.testing.assert_allclose(got, expected[name], rtol=1e-5, atol=1e-5)


SCALAR_COPY = """
func.func @scalar_copy(%x: memref<f32>, %y: memref<f32> {graph.output = 0 : i64}) {
  %v = memref.load %x[] : memref<f32>
  memref.store %v, %y[] : memref<f32>
  func.return
}
"""


def test_a_function_without_loops_that_touches_memory_runs_in_a_kernel() -> None:
    """Einsum's inner product reshapes a rank-0 tensor with a load and a
    store: they go to a kernel of one thread, not to host code (which
    convert-tir-to-gpu refuses)."""
    gpu = apply_pipeline(parse_module(SCALAR_COPY), "cuda-default-schedule,convert-tir-to-gpu")
    assert [k.sym_name.data for k in gpu.walk() if isinstance(k, GpuFuncOp)] == ["scalar_copy_k0"]
    (y,) = interp.run(gpu, [np.float32(2.5)], "scalar_copy")
    assert float(y) == 2.5
