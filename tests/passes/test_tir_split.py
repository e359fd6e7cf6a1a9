"""tir-split: random kernels and factors keep their numbers; splitting by a
weight's block reads blocked weights from the loop variables; the tail copy
is peeled and renamed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import arith, memref

from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import loops_by_name
from xtc.testing.schedules import (
    SCHEDULE_SETTINGS,
    Kernel,
    check_schedule,
    conv2d_blocked,
    kernel_function,
    kernels,
    lower,
    matmul,
)


@SCHEDULE_SETTINGS
@given(kernels(), st.data())
def test_split_keeps_the_numbers(kernel: Kernel, data: st.DataObject) -> None:
    loop = data.draw(st.sampled_from(kernel.spatial + kernel.reduction))
    extent = kernel.extent(loop)
    factor = data.draw(st.integers(1, extent))
    scheduled = check_schedule(
        kernel, f"tir-split{{func={kernel.name} loop={loop} factor={factor}}}"
    )
    loops = loops_by_name(kernel_function(scheduled, kernel.name))
    assert loop not in loops
    assert loops[f"{loop}_o"][0].extent == extent // factor
    assert loops[f"{loop}_i"][0].extent == factor
    tails = loops.get(f"{loop}_tail", [])
    assert [t.extent for t in tails] == ([extent % factor] if extent % factor else [])
    assert all(len(same) == 1 for same in loops.values())


@pytest.mark.parametrize(("factor", "folded"), [(4, True), (2, False)])
def test_split_by_the_block_reads_blocked_weights_from_the_loop_variables(
    factor: int, folded: bool
) -> None:
    """Splitting the output channels of a conv2d with OIHW4o weights by 4
    turns `oc floordiv 4` and `oc rem 4` into the outer and inner loop
    variables; by 2 it keeps them."""
    kernel = lower(conv2d_blocked(2, 4, 2, 4, 2))
    channels = kernel.spatial[1]
    scheduled = check_schedule(
        kernel, f"tir-split{{func={kernel.name} loop={channels} factor={factor}}}"
    )
    ops = list(kernel_function(scheduled, kernel.name).walk())
    division = any(isinstance(op, arith.FloorDivSIOp | arith.RemSIOp) for op in ops)
    assert division != folded
    weight = next(op for op in ops if isinstance(op, memref.LoadOp) and len(op.indices) == 5)
    loops = loops_by_name(kernel_function(scheduled, kernel.name))
    if folded:
        assert weight.indices[0] is loops[f"{channels}_o"][0].induction_variable
        assert weight.indices[4] is loops[f"{channels}_i"][0].induction_variable


def test_split_peels_and_renames_the_tail_copy() -> None:
    kernel = lower(matmul(5, 3, 7))
    scheduled = check_schedule(kernel, "tir-split{func=matmul_0 loop=i1 factor=3}")
    loops = loops_by_name(kernel_function(scheduled, "matmul_0"))
    tail = loops["i1_tail"][0]
    assert tail.extent == 1
    assert [op.loop_name.data for op in tail.walk() if isinstance(op, ForOp)] == [
        "i1_tail",
        "r0_i1_tail",
    ]


# ---------------------------------------------------------------------------
# Reorder.
