"""tir-bind: binding loops to GPU axes changes no number (the interpreter
and the CPU lowering run bound loops serially), and refuses what CUDA
cannot run."""

from __future__ import annotations

import pytest

from xtc.driver.pipelines import apply_pipeline
from xtc.passes.schedule_pass import PassOptionError
from xtc.passes.tir_bind import TirBind
from xtc.passes.tir_loops import ScheduleError, loops_by_name
from xtc.testing.schedules import add, check_schedule, kernel_function, lower, matmul, pool

BLOCKS_THREADS = 'tir-bind{loop=i0 axis="blockIdx.x"},tir-bind{loop=i1 axis="threadIdx.x"}'


@pytest.mark.parametrize(
    "graph",
    [add(3, 4, 5), matmul(4, 3, 5), pool("max_pool2d", 2, 5, 3, 1, 1)],
    ids=["add", "matmul", "max_pool2d"],
)
def test_bound_loops_keep_the_numbers(graph: str) -> None:
    kernel = lower(graph)
    scheduled = check_schedule(kernel, BLOCKS_THREADS)
    loops = loops_by_name(kernel_function(scheduled, kernel.name))
    assert [loops[n][0].kind.data for n in ("i0", "i1")] == ["blockIdx.x", "threadIdx.x"]


def test_a_reduction_loop_is_refused() -> None:
    kernel = lower(matmul(4, 3, 5))
    with pytest.raises(ScheduleError, match="loop 'r0' in @matmul_0 may let two iterations"):
        apply_pipeline(kernel.tir.clone(), 'tir-bind{loop=r0 axis="threadIdx.x"}')


def test_more_than_1024_threads_is_refused() -> None:
    kernel = lower(add(40, 30, 2))
    both = 'tir-bind{loop=i0 axis="threadIdx.y"},tir-bind{loop=i1 axis="threadIdx.x"}'
    with pytest.raises(ScheduleError, match="would make 1200 threads per block"):
        apply_pipeline(kernel.tir.clone(), both)
    grid = 'tir-bind{loop=i0 axis="blockIdx.y"},tir-bind{loop=i1 axis="threadIdx.x"}'
    loops = loops_by_name(kernel_function(apply_pipeline(kernel.tir.clone(), grid), kernel.name))
    assert [loops[n][0].kind.data for n in ("i0", "i1")] == ["blockIdx.y", "threadIdx.x"]


def test_an_unknown_axis_is_a_bad_option() -> None:
    with pytest.raises(PassOptionError, match="axis 'vthread' is not one of blockIdx.x"):
        TirBind(loop="i0", axis="vthread")
