"""Cross-thread reductions of the CUDA schedule: a kernel with few outputs
and a long reduction gets a warp per output. The numbers hold at the tir
level (the serial interpreter runs the lane loop, then the combine loop)
and at the gpu level (the interpreter runs a warp's lanes at once, meeting
at each shuffle); ptxas accepts the shuffles; `cross_thread=false` keeps
one thread per output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.driver.pipelines import apply_pipeline
from xtc.interp.gpu_threads import Warp
from xtc.passes.cuda_cross_thread_reduction import warps_per_block
from xtc.runtime.ptx import ptx
from xtc.testing.graph_op import random_inputs
from xtc.testing.ptxas import assert_ptxas_accepts
from xtc.testing.schedules import SCHEDULE_SETTINGS, Kernel, conv2d, dense, lower, matmul


def _graph(inputs: str, output: str, op: str, props: str = "") -> str:
    return (
        f"func.func @main(%x0: {inputs}) -> {output} {{\n"
        f"  %y = {op} %x0 {props} : ({inputs}) -> {output}\n"
        f"  func.return %y : {output}\n}}\n"
    )


def softmax(rows: int, cols: int) -> str:
    t = f"tensor<{rows}x{cols}xf32>"
    return _graph(t, t, "graph.softmax", "{axis = -1 : i64}")


def reduce(kind: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> str:
    kept = [d for i, d in enumerate(shape) if i not in axes]
    out = f"tensor<{'x'.join(map(str, kept))}xf32>" if kept else "tensor<f32>"
    axes_text = ", ".join(map(str, axes))
    return _graph(
        f"tensor<{'x'.join(map(str, shape))}xf32>",
        out,
        f"graph.{kind}",
        f"{{axes = array<i64: {axes_text}>, keepdims = false}}",
    )


def global_avg_pool(c: int, size: int) -> str:
    return _graph(
        f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<1x{c}x1x1xf32>", "graph.global_avg_pool2d"
    )


GRAPHS = {
    "softmax": softmax(3, 300),
    "reduce_sum_all": reduce("reduce_sum", (10, 30), (0, 1)),
    "reduce_max_middle": reduce("reduce_max", (3, 70, 2), (1,)),
    "reduce_min_rows": reduce("reduce_min", (5, 96), (1,)),
    "reduce_mean": reduce("reduce_mean", (4, 128), (1,)),
    "global_avg_pool": global_avg_pool(6, 9),
    "conv_long_reduction": conv2d(64, 3, 4, 3, 1, 1),
    "gemm_1xK_KxN": matmul(1, 200, 5),
    "dense_1xK": dense(1, 160, 3),
}


def lane_loops(module: ModuleOp) -> list[ForOp]:
    return [
        op
        for op in module.walk()
        if isinstance(op, ForOp) and op.kind.data == "threadIdx.x" and op.extent == 32
    ]


def check_numbers(kernel: Kernel, module: ModuleOp, seed: int) -> None:
    inputs = random_inputs(kernel.graph, seed=seed)
    for expected, got in zip(
        interp.run(kernel.tir, inputs), interp.run(module, inputs), strict=True
    ):
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_a_warp_computes_each_output_and_the_numbers_hold(name: str) -> None:
    kernel = lower(GRAPHS[name])
    scheduled = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule")
    assert lane_loops(scheduled), "the reduction is split across lanes"
    check_numbers(kernel, scheduled, seed=1)
    gpu = apply_pipeline(scheduled, "convert-tir-to-gpu")
    shuffles = [op for op in gpu.walk() if isinstance(op, llvm.CallIntrinsicOp)]
    assert len(shuffles) % 5 == 0 and shuffles, "a butterfly of 5 shuffles per reduction"
    check_numbers(kernel, gpu, seed=1)


def test_cross_thread_false_keeps_one_thread_per_output() -> None:
    kernel = lower(GRAPHS["gemm_1xK_KxN"])
    scheduled = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule{cross_thread=false}")
    assert not lane_loops(scheduled)


@pytest.mark.parametrize(
    "text",
    [matmul(128, 256, 600), reduce("reduce_sum", (4, 40), (1,))],
    ids=["many_outputs", "short_reduction"],
)
def test_many_outputs_or_a_short_reduction_keep_one_thread_per_output(text: str) -> None:
    scheduled = apply_pipeline(lower(text).tir.clone(), "cuda-default-schedule")
    assert not lane_loops(scheduled)


def test_a_warp_exchange_returns_the_partner_lane_value() -> None:
    warp = Warp(2)
    got: list[float] = [0.0, 0.0]

    def lane(i: int) -> None:
        got[i] = warp.exchange(i, float(10 + i), 1)

    import threading

    threads = [threading.Thread(target=lane, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [11.0, 10.0]


@given(
    rows=st.integers(1, 6),
    cols=st.integers(64, 300),
    kind=st.sampled_from(["reduce_sum", "reduce_max", "reduce_min"]),
)
@SCHEDULE_SETTINGS
def test_row_reductions_of_any_length_keep_their_numbers(rows: int, cols: int, kind: str) -> None:
    kernel = lower(reduce(kind, (rows, cols), (1,)))
    gpu = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule,convert-tir-to-gpu")
    check_numbers(kernel, gpu, seed=rows * cols)


@pytest.mark.parametrize("name", ["softmax", "reduce_sum_all", "conv_long_reduction"])
def test_ptxas_accepts_the_shuffles(name: str, tmp_path: Path) -> None:
    kernel = lower(GRAPHS[name])
    gpu = apply_pipeline(
        kernel.tir.clone(), "tir-expand-math,cuda-default-schedule,convert-tir-to-gpu"
    )
    text = ptx(gpu, "sm_90")
    assert "shfl.sync.bfly.b32" in text
    assert_ptxas_accepts(text, tmp_path)


def test_the_cuda_runtime_interpreter_device_runs_the_warps() -> None:
    from xtc.driver.cuda import compile_cuda_model

    kernel = lower(GRAPHS["softmax"])
    inputs = random_inputs(kernel.graph, seed=4)
    model = compile_cuda_model(kernel.graph, device="interp")
    (expected,) = interp.run(kernel.tir, inputs)
    (got,) = model.run(inputs)
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-6)
    off = compile_cuda_model(kernel.graph, device="interp", cross_thread=False)
    assert "cross_thread=false" in off.manifest["pipeline"]
    assert "cross_thread" not in model.manifest["pipeline"]


@given(
    channels=st.integers(8, 24),
    size=st.integers(2, 4),
    outputs=st.integers(1, 3),
    kernel_size=st.sampled_from([1, 3]),
)
@SCHEDULE_SETTINGS
def test_convolutions_with_long_reductions_keep_their_numbers(
    channels: int, size: int, outputs: int, kernel_size: int
) -> None:
    kernel = lower(conv2d(channels, size, outputs, kernel_size, 1, kernel_size // 2))
    gpu = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule,convert-tir-to-gpu")
    assert (channels * kernel_size**2 >= 64) == any(
        isinstance(op, llvm.CallIntrinsicOp) for op in gpu.walk()
    )
    check_numbers(kernel, gpu, seed=channels)


def test_few_outputs_spread_over_small_blocks() -> None:
    assert warps_per_block(25088) == 8  # ResNet-50's 7x7x512 convs: 3136 blocks of 8 warps
    assert warps_per_block(1000) == 2  # its Gemm: 500 blocks, not 125
    assert warps_per_block(128) == 1  # BERT's layer-norm rows: a block each
    assert warps_per_block(7) == 1
