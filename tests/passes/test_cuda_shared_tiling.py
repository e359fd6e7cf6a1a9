"""cuda-default-schedule{shared_tiling=true} (xtc.passes.cuda_shared_tiling):
a matmul and convolutions become blocks of output tiles whose operands go
through shared memory one reduction tile at a time, and compute what the
unscheduled kernels do, bit for bit, at the tir level (bound loops run
one after another: each copy before the compute) and at the gpu level
(a block's threads at once, waiting at the barriers); kernels that do not
fit keep the default schedule."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import gpu, memref
from xdsl.dialects.builtin import ModuleOp

from xtc import interp
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.gpu_memory import is_shared
from xtc.testing.graph_op import random_inputs
from xtc.testing.schedules import conv2d, matmul

TO_TIR = "convert-graph-to-te,convert-te-to-tir"
SHARED = "cuda-default-schedule{shared_tiling=true}"


def shared_buffers(module: ModuleOp) -> list[memref.AllocaOp]:
    return [op for op in module.walk() if isinstance(op, memref.AllocaOp) and is_shared(op.memref)]


def block_sizes(module: ModuleOp) -> list[tuple[int, ...]]:
    sizes: list[tuple[int, ...]] = []
    for kernel in (op for op in module.walk() if isinstance(op, gpu.FuncOp)):
        known = kernel.known_block_size
        assert known is not None
        sizes.append(tuple(known.get_values()))
    return sizes


CASES: dict[str, tuple[str, list[tuple[int, ...]], tuple[int, ...]]] = {
    # 16 x 16 outputs per block, K in tiles of 8: A's 16 x 8 and B's 8 x 16
    "matmul": (matmul(16, 16, 32), [(16, 8), (8, 16)], (16, 16, 1)),
    # NCHW, 16 output channels (the weights' reuse axis) x 4 columns per
    # block, 4 input channels a tile: the padded input's 4 x 3 rows x 6
    # columns, the weights' 16 x 4 x 3 x 3
    "conv2d 3x3": (conv2d(8, 4, 16, 3, 1, 1), [(4, 3, 6), (16, 4, 3, 3)], (4, 16, 1)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_tiled_kernels_compute_what_the_plain_ones_do(case: str) -> None:
    text, shapes, block = CASES[case]
    graph = parse_module(text)
    plain = apply_pipeline(graph.clone(), TO_TIR)
    scheduled = apply_pipeline(plain.clone(), SHARED)
    buffers = shared_buffers(scheduled)
    assert buffers, "the kernel is tiled through shared memory"
    assert sorted(tuple(b.memref.type.get_shape()) for b in buffers) == sorted(shapes)
    kernels = apply_pipeline(scheduled.clone(), "convert-tir-to-gpu")
    # a barrier after the copies, one at the end of the reduction tile
    assert sum(isinstance(op, gpu.BarrierOp) for op in kernels.walk()) == 2
    assert block in block_sizes(kernels)
    inputs = random_inputs(graph, seed=7)
    expected = interp.run(plain, inputs)
    for e, g in zip(expected, interp.run(scheduled, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    for e, g in zip(expected, interp.run(kernels, inputs), strict=True):
        np.testing.assert_array_equal(g, e)


def test_a_kernel_of_few_outputs_keeps_the_default_schedule() -> None:
    # a 3 x 3 output per channel: tiles of fewer than 64 threads
    graph = parse_module(conv2d(16, 8, 4, 3, 2, 0))
    plain = apply_pipeline(graph.clone(), TO_TIR)
    scheduled = apply_pipeline(plain.clone(), SHARED)
    assert not shared_buffers(scheduled)
    assert str(scheduled) == str(apply_pipeline(plain.clone(), "cuda-default-schedule"))
