"""tir-cache-write scope=shared and scope=local: a matmul tiled over a grid
of blocks whose accumulators live in the block's shared memory or in each
thread's own memory computes the same numbers as the unscheduled one, bit
for bit, in the tir interpreter (bound loops run one after another, so each
phase ends before the next starts) and in the gpu-level interpreter (a
block's threads at once, waiting at barriers); the PTX has the `.shared`
buffer and `bar.sync`, or keeps a thread's accumulators in registers, and
ptxas accepts it for sm_90; what cannot work is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import gpu, memref

from xtc import interp
from xtc.analysis.memory_spaces import LOCAL_MEMORY_SPACE, SHARED_MEMORY_SPACE, memory_space
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.tir_loops import ScheduleError
from xtc.runtime.ptx import ptx
from xtc.testing.graph_op import matmul_text, random_inputs
from xtc.testing.ptxas import assert_ptxas_accepts

KERNEL = "matmul_0"
LOOP_OF_SCOPE = {"shared": "i1_o", "local": "i0_i"}
"""Where each scope caches: the block's loop, or the thread's."""


def block_schedule(rows: int, cols: int, scope: str) -> str:
    """Blocks of rows x cols outputs, a thread per row (threadIdx.x) doing
    its cols outputs, the accumulators cached in `scope`."""
    return ",".join(
        [
            f"tir-split{{func={KERNEL} loop=i0 factor={rows}}}",
            f"tir-split{{func={KERNEL} loop=i1 factor={cols}}}",
            f"tir-reorder{{func={KERNEL} order=i0_o,i1_o,i0_i,i1_i}}",
            f'tir-bind{{func={KERNEL} loop=i0_o axis="blockIdx.y"}}',
            f'tir-bind{{func={KERNEL} loop=i1_o axis="blockIdx.x"}}',
            f'tir-bind{{func={KERNEL} loop=i0_i axis="threadIdx.x"}}',
            f"tir-cache-write{{func={KERNEL} loop={LOOP_OF_SCOPE[scope]} scope={scope}}}",
        ]
    )


@st.composite
def tiled_matmuls(draw: st.DrawFn) -> tuple[int, int, int, int, int, str]:
    """(m, k, n, rows, cols, scope): tiles that divide the output."""
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    m, n = rows * draw(st.integers(1, 3)), cols * draw(st.integers(1, 3))
    k = draw(st.integers(1, 7))
    return m, k, n, rows, cols, draw(st.sampled_from(["shared", "local"]))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_matmuls())
def test_cached_accumulators_keep_the_numbers(case: tuple[int, int, int, int, int, str]) -> None:
    m, k, n, rows, cols, scope = case
    graph = parse_module(matmul_text(m, k, n))
    tir = apply_pipeline(graph.clone(), "convert-graph-to-te,convert-te-to-tir")
    scheduled = apply_pipeline(tir.clone(), block_schedule(rows, cols, scope))
    (acc,) = [
        op
        for op in scheduled.walk()
        if isinstance(op, memref.AllocaOp) and op.memref.name_hint == "acc"
    ]
    expected_space = SHARED_MEMORY_SPACE if scope == "shared" else LOCAL_MEMORY_SPACE
    assert memory_space(acc.memref.type) == expected_space
    assert acc.memref.type.get_shape() == ((rows, cols) if scope == "shared" else (cols,))
    inputs = random_inputs(graph, seed=7)
    expected = interp.run(tir, inputs)
    for e, g in zip(expected, interp.run(scheduled, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    kernel = apply_pipeline(scheduled, "convert-tir-to-gpu")
    barriers = [op for op in kernel.walk() if isinstance(op, gpu.BarrierOp)]
    assert bool(barriers) == (scope == "shared")
    for e, g in zip(expected, interp.run(kernel, inputs), strict=True):
        np.testing.assert_array_equal(g, e)


def kernel_ptx(scope: str) -> str:
    graph = parse_module(matmul_text(32, 20, 48))
    pipeline = (
        f"convert-graph-to-te,convert-te-to-tir,{block_schedule(8, 16, scope)},convert-tir-to-gpu"
    )
    return ptx(apply_pipeline(graph, pipeline), "sm_90")


def test_the_ptx_has_a_shared_accumulator_tile_and_barriers(tmp_path: Path) -> None:
    text = kernel_ptx("shared")
    assert ".shared .align 64 .b8 matmul_0_acc_0[512];" in text  # 8 x 16 floats
    assert "bar.sync" in text
    assert "ld.shared" in text and "st.shared" in text and "st.global" in text
    assert_ptxas_accepts(text, tmp_path)


def test_the_ptx_keeps_a_threads_accumulators_in_registers(tmp_path: Path) -> None:
    text = kernel_ptx("local")
    assert ".local" not in text and "bar.sync" not in text
    assert text.count("st.global") == 16  # the thread's 16 outputs, from registers
    assert_ptxas_accepts(text, tmp_path)


def test_more_shared_memory_than_a_block_has_is_refused() -> None:
    tir = apply_pipeline(
        parse_module(matmul_text(128, 2, 128)), "convert-graph-to-te,convert-te-to-tir"
    )
    apply_pipeline(tir.clone(), block_schedule(64, 128, "shared"))  # 32 KiB fit
    with pytest.raises(ScheduleError, match=r"65536 bytes of accumulators, .* exceeds the 49152"):
        apply_pipeline(tir, block_schedule(128, 128, "shared"))


def test_more_local_memory_than_a_thread_may_take_is_refused() -> None:
    tir = apply_pipeline(
        parse_module(matmul_text(1, 1, 16400)), "convert-graph-to-te,convert-te-to-tir"
    )
    with pytest.raises(ScheduleError, match=r"65600 bytes of accumulators, over the 65536"):
        apply_pipeline(tir, block_schedule(1, 16400, "local"))
