"""tir-hoist-reduction: a register tile's reduction split in blocks, the
block loop moved out past the loops around the tile, keeps the numbers bit
for bit (the epilogue, an average pool's division among them, applied once
to the whole sum); what it refuses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtc.driver.pipelines import apply_pipeline
from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import ScheduleError, loop_name, loops_by_name
from xtc.testing.schedules import (
    SCHEDULE_SETTINGS,
    Kernel,
    check_schedule,
    kernel_function,
    lower,
    matmul,
    reduction_kernels,
    register_tile,
)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@SCHEDULE_SETTINGS
@given(reduction_kernels(), st.data())
def test_hoisting_a_reduction_block_loop_keeps_the_numbers(
    kernel: Kernel, data: st.DataObject
) -> None:
    """Any dividing block of the outermost reduction loop, its block loop
    hoisted above any loop around the tile (or the tile's own loop)."""
    reduction = kernel.reduction[0]
    factor = data.draw(st.sampled_from(_divisors(kernel.extent(reduction))))
    rows, cols = kernel.spatial[-2:]
    rows_factor = data.draw(st.integers(1, kernel.extent(rows)))
    cols_factor = data.draw(st.integers(1, kernel.extent(cols)))
    around = [*kernel.spatial[:-2], f"{rows}_o", f"{cols}_o"]
    outside = data.draw(st.sampled_from(around))
    schedule = ",".join(
        [
            f"tir-split{{func={kernel.name} loop={reduction} factor={factor}}}",
            register_tile(kernel.name, rows, cols, rows_factor, cols_factor),
            f"tir-hoist-reduction{{func={kernel.name} loop={reduction}_o outside={outside}}}",
        ]
    )
    try:
        scheduled = check_schedule(kernel, schedule)
    except ScheduleError as e:
        # A peeled tail beside a loop it moves past: no perfect nest.
        assert "is not perfectly nested" in str(e)
        assert outside != f"{cols}_o"
        return
    hoisted = loops_by_name(kernel_function(scheduled, kernel.name))[f"{reduction}_o"][0]
    inner = hoisted.body.block.first_op
    assert isinstance(inner, ForOp) and loop_name(inner) == outside


def test_hoisting_refuses_a_reduction_not_cached_in_a_tile() -> None:
    kernel = lower(matmul(4, 8, 6))
    with pytest.raises(ScheduleError, match="is not between an init nest and a write-back nest"):
        apply_pipeline(
            kernel.tir.clone(),
            f"tir-split{{func={kernel.name} loop=r0 factor=4}},"
            f"tir-hoist-reduction{{func={kernel.name} loop=r0_o outside=i0}}",
        )
