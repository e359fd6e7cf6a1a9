"""tir-cache-write: accumulating a register tile or inner loops keeps the
numbers; the register-tile composition of a matmul; what it refuses."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.passes.tir_loops import ScheduleError, loops_by_name
from xtc.testing.graph_op import random_inputs
from xtc.testing.schedules import (
    SCHEDULE_SETTINGS,
    Kernel,
    accumulators,
    check_schedule,
    kernel_function,
    lower,
    matmul,
    reduction_kernels,
    register_tile,
)


@SCHEDULE_SETTINGS
@given(reduction_kernels(), st.data())
def test_cache_write_of_a_register_tile_keeps_the_numbers(
    kernel: Kernel, data: st.DataObject
) -> None:
    rows, cols = kernel.spatial[-2:]
    rows_factor = data.draw(st.integers(1, kernel.extent(rows)))
    cols_factor = data.draw(st.integers(1, kernel.extent(cols)))
    scheduled = check_schedule(
        kernel, register_tile(kernel.name, rows, cols, rows_factor, cols_factor)
    )
    assert (rows_factor, cols_factor) in accumulators(scheduled, kernel.name)


@SCHEDULE_SETTINGS
@given(reduction_kernels(), st.data())
def test_cache_write_of_inner_loops_keeps_the_numbers(kernel: Kernel, data: st.DataObject) -> None:
    """Caching at any spatial loop but the innermost: the loops inside it
    are the tile (k >= 1)."""
    position = data.draw(st.integers(0, len(kernel.spatial) - 2))
    loop = kernel.spatial[position]
    scheduled = check_schedule(kernel, f"tir-cache-write{{func={kernel.name} loop={loop}}}")
    tile = tuple(kernel.extent(t) for t in kernel.spatial[position + 1 :])
    assert tile in accumulators(scheduled, kernel.name)


def test_cache_write_refuses_a_loop_holding_the_accumulator() -> None:
    kernel = lower(matmul(2, 3, 4))
    with pytest.raises(ScheduleError, match=r"loop 'i1' in @matmul_0 holds its accumulator"):
        apply_pipeline(kernel.tir.clone(), "tir-cache-write{func=matmul_0 loop=i1}")


BRIEF_SCHEDULE = (
    "tir-split{func=matmul_0 loop=i1 factor=16},tir-split{func=matmul_0 loop=i0 factor=4},"
    "tir-reorder{func=matmul_0 order=i0_o,i1_o,i0_i,i1_i},tir-cache-write{func=matmul_0 loop=i1_o},"
    "tir-unroll{func=matmul_0 loop=i0_i},tir-vectorize{func=matmul_0 loop=i1_i}"
)
PEELING_SCHEDULE = (
    register_tile("matmul_0", "i0", "i1", 4, 16)
    + ",tir-unroll{func=matmul_0 loop=i0_i},tir-vectorize{func=matmul_0 loop=i1_i}"
)


def check_micro_kernel(scheduled: ModuleOp) -> None:
    """A 4x16 accumulator; the reduction loop around i0_i (unrolled) around
    i1_i (vectorized), which holds no loop."""
    assert (4, 16) in accumulators(scheduled, "matmul_0")
    loops = {n: ls[0] for n, ls in loops_by_name(kernel_function(scheduled, "matmul_0")).items()}
    assert loops["i0_i"].kind.data == "unrolled" and loops["i1_i"].kind.data == "vectorized"
    assert loops["i0_i"].parent_op() is loops["r0"]
    assert loops["i1_i"].parent_op() is loops["i0_i"]


def test_register_tile_of_a_dividing_matmul() -> None:
    """64x32x48, natively only (the interpreter takes seconds on it), both
    orders of splitting; and against numpy."""
    kernel = lower(matmul(64, 32, 48))
    a, b = random_inputs(kernel.graph, seed=1)
    for schedule in (BRIEF_SCHEDULE, PEELING_SCHEDULE):
        scheduled = check_schedule(kernel, schedule, interpret=False)
        check_micro_kernel(scheduled)
        np.testing.assert_allclose(run_native(scheduled, [a, b])[0], a @ b, rtol=1e-4, atol=1e-4)


def test_register_tile_of_a_matmul_with_remainders() -> None:
    """33x17x29: the brief's order (split i1, then i0) leaves i0_i holding
    i1_o and i1_tail, which reorder refuses; splitting i0 and moving i0_i
    in before splitting i1 tiles it, the tails outside the tile."""
    kernel = lower(matmul(33, 17, 29))
    with pytest.raises(ScheduleError, match=r"its body holds 2 loops \('i1_o', 'i1_tail'\)"):
        apply_pipeline(kernel.tir.clone(), BRIEF_SCHEDULE)
    check_micro_kernel(check_schedule(kernel, PEELING_SCHEDULE))


# ---------------------------------------------------------------------------
# Unroll and vectorize change no number.
