"""cuda-default-schedule: one thread per output element. The numbers do
not change (the interpreter runs bound loops serially), every kernel's
spatial loops end on blockIdx.x x threadIdx.x with no tail, and ptxas
accepts the PTX of the scheduled model (skipped without ptxas)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType

from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.driver.pipelines import apply_pipeline
from xtc.passes.cuda_default_schedule import CudaDefaultSchedule, threads_for
from xtc.passes.schedule_pass import PassOptionError
from xtc.passes.tir_loops import ScheduleError
from xtc.runtime.ptx import ptx
from xtc.testing.graph_op import random_inputs
from xtc.testing.schedules import add, conv2d, kernel_function, lower, matmul, pool

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


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="CUDA's ptxas is not on PATH")
@pytest.mark.parametrize("name", list(GRAPHS))
def test_ptxas_accepts_the_scheduled_model(name: str, tmp_path: Path) -> None:
    kernel = lower(GRAPHS[name])
    gpu = apply_pipeline(kernel.tir.clone(), "cuda-default-schedule,convert-tir-to-gpu")
    (tmp_path / "k.ptx").write_text(ptx(gpu, "sm_90"))
    ptxas = shutil.which("ptxas")
    assert ptxas is not None
    result = subprocess.run(
        [ptxas, "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def test_a_function_of_several_nests_is_refused() -> None:
    padded = lower(conv2d(2, 5, 3, 3, 1, 1))  # the padding nest, then the convolution
    with pytest.raises(ScheduleError, match="@conv2d_0 has 2 loop nests at its top level"):
        apply_pipeline(padded.tir.clone(), "cuda-default-schedule")


def test_threads_out_of_range_is_a_bad_option() -> None:
    with pytest.raises(PassOptionError, match=r"threads=2048 is outside \[1, 1024\]"):
        CudaDefaultSchedule(threads=2048)
