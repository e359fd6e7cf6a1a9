"""tir-vectorize: marking a loop vectorized changes no number, alone or with
unrolled loops around it."""

from __future__ import annotations

from xtc.passes.tir_loops import loops_by_name
from xtc.testing.schedules import check_schedule, conv2d, kernel_function, lower


def kinds(schedule: str, names: tuple[str, ...]) -> list[str]:
    scheduled = check_schedule(lower(conv2d(2, 6, 3, 3, 2, 1)), schedule)
    loops = loops_by_name(kernel_function(scheduled, "conv2d_0"))
    return [loops[n][0].kind.data for n in names]


def test_vectorize_keeps_the_numbers() -> None:
    assert kinds("tir-vectorize{func=conv2d_0 loop=r2}", ("r2",)) == ["vectorized"]


def test_vectorize_inside_unrolled_loops_keeps_the_numbers() -> None:
    schedule = (
        "tir-unroll{func=conv2d_0 loop=r1},tir-vectorize{func=conv2d_0 loop=r2},"
        "tir-unroll{func=conv2d_0 loop=i3}"
    )
    assert kinds(schedule, ("r1", "r2", "i3")) == ["unrolled", "vectorized", "unrolled"]
