"""tir-reorder: random orders keep the numbers; what it refuses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtc.dialects.tir import ForOp
from xtc.driver.pipelines import apply_pipeline
from xtc.passes.tir_loops import ScheduleError, loops_by_name
from xtc.testing.schedules import (
    SCHEDULE_SETTINGS,
    Kernel,
    check_schedule,
    kernel_function,
    kernels,
    lower,
    matmul,
)


@SCHEDULE_SETTINGS
@given(kernels(), st.data())
def test_reorder_keeps_the_numbers(kernel: Kernel, data: st.DataObject) -> None:
    nests = [n for n in (kernel.spatial, kernel.reduction) if len(n) > 1]
    nest = data.draw(st.sampled_from(nests))
    order = data.draw(st.permutations(nest))
    scheduled = check_schedule(
        kernel,
        f"tir-reorder{{func={kernel.name} order={','.join(order)}}}",
        exact=nest is kernel.spatial,
    )
    func = kernel_function(scheduled, kernel.name)
    outermost = loops_by_name(func)[order[0]][0]
    inside = [op.loop_name.data for op in outermost.walk() if isinstance(op, ForOp)]
    assert inside[: len(order)] == list(order)


def test_reorder_refuses_a_split_after_a_peeled_split() -> None:
    kernel = lower(matmul(6, 2, 5))
    schedule = (
        "tir-split{func=matmul_0 loop=i1 factor=2},tir-split{func=matmul_0 loop=i0 factor=4},"
        "tir-reorder{func=matmul_0 order=i0_o,i1_o,i0_i,i1_i}"
    )
    with pytest.raises(ScheduleError, match=r"loop 'i0_i' in @matmul_0 is not perfectly nested"):
        apply_pipeline(kernel.tir.clone(), schedule)


def test_reorder_refuses_moving_a_reduction_past_its_accumulator() -> None:
    kernel = lower(matmul(2, 3, 4))
    with pytest.raises(ScheduleError, match=r"holds the accumulator of reduction loop 'r0'"):
        apply_pipeline(kernel.tir.clone(), "tir-reorder{func=matmul_0 order=r0,i1}")


# ---------------------------------------------------------------------------
# Fuse.
