"""tir-unroll: marking loops unrolled changes no number."""

from __future__ import annotations

from xtc.passes.tir_loops import loops_by_name
from xtc.testing.schedules import check_schedule, conv2d, kernel_function, lower


def test_unroll_keeps_the_numbers() -> None:
    schedule = "tir-unroll{func=conv2d_0 loop=r1},tir-unroll{func=conv2d_0 loop=i3}"
    scheduled = check_schedule(lower(conv2d(2, 6, 3, 3, 2, 1)), schedule)
    loops = loops_by_name(kernel_function(scheduled, "conv2d_0"))
    assert [loops[n][0].kind.data for n in ("r1", "i3")] == ["unrolled", "unrolled"]
