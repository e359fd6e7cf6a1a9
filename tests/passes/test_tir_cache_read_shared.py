"""tir-cache-read scope=shared: a matmul tiled over a grid of blocks whose
threads copy A's and B's panels into shared memory computes the same
numbers as the unscheduled one (the tir interpreter runs bound loops one
after another, so the copy phase ends before the compute phase starts:
the serial run is a correct reference), bit for bit, and natively; the
kernel convert-tir-to-gpu makes of it has the barrier, and its PTX the
`.shared` buffers and `bar.sync` (that ptxas accepts for sm_90), and the
gpu-level interpreter (a block's threads at once, waiting at barriers)
computes the same numbers too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import gpu, memref

from xtc import interp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.gpu_memory import is_shared
from xtc.passes.tir_loops import ScheduleError
from xtc.runtime.ptx import ptx
from xtc.testing.graph_op import matmul_text, random_inputs
from xtc.testing.ptxas import assert_ptxas_accepts

KERNEL = "matmul_0"


def block_schedule(rows: int, cols: int, buffers: list[str]) -> str:
    """Blocks of rows x cols outputs, one thread each (threadIdx.y rows,
    threadIdx.x columns), the buffers named cached in shared memory per
    block."""
    steps = [
        f"tir-split{{func={KERNEL} loop=i0 factor={rows}}}",
        f"tir-split{{func={KERNEL} loop=i1 factor={cols}}}",
        f"tir-reorder{{func={KERNEL} order=i0_o,i1_o,i0_i,i1_i}}",
        f'tir-bind{{func={KERNEL} loop=i0_o axis="blockIdx.y"}}',
        f'tir-bind{{func={KERNEL} loop=i1_o axis="blockIdx.x"}}',
        f'tir-bind{{func={KERNEL} loop=i0_i axis="threadIdx.y"}}',
        f'tir-bind{{func={KERNEL} loop=i1_i axis="threadIdx.x"}}',
    ]
    steps += [f"tir-cache-read{{func={KERNEL} loop=i1_o buffer={b} scope=shared}}" for b in buffers]
    return ",".join(steps)


@st.composite
def tiled_matmuls(draw: st.DrawFn) -> tuple[int, int, int, int, int, list[str]]:
    """(m, k, n, rows, cols, cached buffers): tiles that divide the output."""
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 8))
    m, n = rows * draw(st.integers(1, 3)), cols * draw(st.integers(1, 3))
    k = draw(st.integers(1, 9))
    buffers = draw(st.sampled_from([["in0"], ["in1"], ["in0", "in1"], ["in1", "in0"]]))
    return m, k, n, rows, cols, buffers


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_matmuls())
def test_shared_copies_keep_the_numbers(case: tuple[int, int, int, int, int, list[str]]) -> None:
    m, k, n, rows, cols, buffers = case
    graph = parse_module(matmul_text(m, k, n))
    tir = apply_pipeline(graph.clone(), "convert-graph-to-te,convert-te-to-tir")
    scheduled = apply_pipeline(tir.clone(), block_schedule(rows, cols, buffers))
    shared = [op for op in scheduled.walk() if isinstance(op, memref.AllocaOp)]
    assert sum(is_shared(op.memref) for op in shared) == len(buffers)
    loads = [op for op in scheduled.walk() if isinstance(op, memref.LoadOp)]
    # each cached argument is read by its copy only
    for name in buffers:
        readers = [op for op in loads if op.memref.name_hint == name]
        assert len(readers) == 1
    inputs = random_inputs(graph, seed=5)
    expected = interp.run(tir, inputs)
    for e, g in zip(expected, interp.run(scheduled, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    for e, g in zip(expected, run_native(scheduled, inputs), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    kernel = apply_pipeline(scheduled, "convert-tir-to-gpu")
    barriers = [op for op in kernel.walk() if isinstance(op, gpu.BarrierOp)]
    assert len(barriers) == 1
    # the gpu level, each block's threads at once, phase after phase
    for e, g in zip(expected, interp.run(kernel, inputs), strict=True):
        np.testing.assert_array_equal(g, e)


def test_the_ptx_has_shared_buffers_and_a_barrier(tmp_path: Path) -> None:
    graph = parse_module(matmul_text(32, 20, 48))
    module = apply_pipeline(
        graph,
        "convert-graph-to-te,convert-te-to-tir,"
        + block_schedule(8, 16, ["in0", "in1"])
        + ",convert-tir-to-gpu",
    )
    text = ptx(module, "sm_90")
    assert ".shared .align 64 .b8 matmul_0_in0_shared_0[640];" in text  # 8 x 20 floats
    assert ".shared .align 64 .b8 matmul_0_in1_shared_0[1280];" in text  # 20 x 16 floats
    assert text.count("bar.sync") == 1
    assert "ld.shared" in text and "st.shared" in text
    assert_ptxas_accepts(text, tmp_path)


def test_more_shared_memory_than_a_block_has_is_refused() -> None:
    graph = parse_module(matmul_text(16, 512, 32))
    tir = apply_pipeline(graph, "convert-graph-to-te,convert-te-to-tir")
    # A's 16 x 512 rows (32 KiB) fit; B's 512 x 16 panel (32 KiB) more would not.
    apply_pipeline(tir.clone(), block_schedule(16, 16, ["in0"]))
    with pytest.raises(ScheduleError, match=r"with the block's 32768 bytes of shared buffers"):
        apply_pipeline(tir, block_schedule(16, 16, ["in0", "in1"]))
