"""tir-fuse: fusing random adjacent loops keeps the numbers."""

from __future__ import annotations

import itertools

from hypothesis import assume, given
from hypothesis import strategies as st

from xtc.passes.tir_loops import loops_by_name
from xtc.testing.schedules import (
    SCHEDULE_SETTINGS,
    Kernel,
    check_schedule,
    kernel_function,
    kernels,
)


@SCHEDULE_SETTINGS
@given(kernels(), st.data())
def test_fuse_keeps_the_numbers(kernel: Kernel, data: st.DataObject) -> None:
    pairs = [p for n in (kernel.spatial, kernel.reduction) for p in itertools.pairwise(n)]
    outer, inner = data.draw(st.sampled_from(pairs))
    scheduled = check_schedule(
        kernel, f"tir-fuse{{func={kernel.name} outer={outer} inner={inner}}}"
    )
    loops = loops_by_name(kernel_function(scheduled, kernel.name))
    assert outer not in loops and inner not in loops
    assert loops[f"{outer}_{inner}"][0].extent == kernel.extent(outer) * kernel.extent(inner)


@SCHEDULE_SETTINGS
@given(kernels(), st.data())
def test_fusing_a_fused_loop_with_the_next_keeps_the_numbers(
    kernel: Kernel, data: st.DataObject
) -> None:
    """The outer pair first: the fused loop's divui and remui (pure by a
    constant) stand beside the third loop, and sink into the new body."""
    triples = list(zip(kernel.spatial, kernel.spatial[1:], kernel.spatial[2:]))
    assume(triples)
    a, b, c = data.draw(st.sampled_from(triples))
    func = kernel.name
    first = f"tir-fuse{{func={func} outer={a} inner={b}}}"
    scheduled = check_schedule(kernel, f"{first},tir-fuse{{func={func} outer={a}_{b} inner={c}}}")
    loops = loops_by_name(kernel_function(scheduled, func))
    extent = kernel.extent(a) * kernel.extent(b) * kernel.extent(c)
    assert loops[f"{a}_{b}_{c}"][0].extent == extent


# ---------------------------------------------------------------------------
# Cache-write, and the register tile it is for.
