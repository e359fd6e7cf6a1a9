"""tir-bind: a loop bound to a GPU axis, its iterations the blocks of the
grid or the threads of a block along that axis (TVM's bind)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter

from xtc.dialects.tir import GPU_AXES, ForOp
from xtc.passes.independent_iterations import check_independent_iterations
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import loop_name, loops_in, set_kind

MAX_THREADS_PER_BLOCK = 1024
"""CUDA's limit on the threads of one block (the product of the
threadIdx-bound extents), on every architecture since sm_20."""

AXIS_LIMITS = {
    "blockIdx.x": 2**31 - 1,
    "blockIdx.y": 65535,
    "blockIdx.z": 65535,
    "threadIdx.x": 1024,
    "threadIdx.y": 1024,
    "threadIdx.z": 64,
}
"""The largest extent CUDA allows along each axis."""


def is_bound(loop: ForOp) -> bool:
    return loop.kind.data in GPU_AXES


def is_thread_axis(axis: str) -> bool:
    return axis.startswith("threadIdx.")


def bound_loops(func: FuncOp) -> list[ForOp]:
    """The loops of `func` bound to a GPU axis, outer first."""
    return [loop for loop in loops_in(func) if is_bound(loop)]


def threads_per_block(loops: list[ForOp]) -> int:
    """The threads of one block: the product of the threadIdx-bound extents."""
    return prod(loop.extent for loop in loops if is_thread_axis(loop.kind.data))


@dataclass(frozen=True, kw_only=True)
class TirBind(SchedulePass):
    """Binds a loop to a GPU axis (TVM's bind).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a serial or parallel loop named `loop`
    whose iterations are independent by tir-parallel's rule
    (xtc.passes.independent_iterations: no parallel loop around or inside it, no
    call inside it, each iteration writing its own slice of every buffer
    from outside it), and no other loop of the function bound to `axis`.

    Produces: the loop with kind `axis` (`kind = "threadIdx.x"`), nothing
    else changed. The interpreter and convert-tir-to-llvm run it serially;
    convert-tir-to-gpu makes the function a kernel whose blocks and threads
    are the iterations of its bound loops.

    Refuses (naming pass, function and loop): an axis other than
    blockIdx.x|y|z and threadIdx.x|y|z, a missing function or loop, a loop
    name used twice, a vectorized, unrolled or already bound loop, an axis
    another loop of the function is bound to, an extent over the axis's
    CUDA limit, more than 1024 threads per block (the product of the
    threadIdx-bound extents), and a loop whose iterations may not run at
    once (as tir-parallel refuses it).

    Command line: `tir-bind{func=relu_0 loop=i0 axis="blockIdx.x"}` (the
    axis has a dot, so it is quoted; see xtc.passes.tir_loops).
    """

    name = "tir-bind"

    loop: str
    """The loop to bind."""

    axis: str
    """blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y or threadIdx.z."""

    def check_options(self) -> None:
        if self.axis not in GPU_AXES:
            raise self.bad_option(f"axis '{self.axis}' is not one of {', '.join(GPU_AXES)}")

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """The loop's kind -> the axis, once the checks of the docstring hold."""
        loop = self.find_loop(func, self.loop)
        refuse = self.refuser(func, loop)
        self.check_kind(loop, refuse)
        self.check_axis_free(func, loop, refuse)
        self.check_extent(func, loop, refuse)
        check_independent_iterations(loop, refuse)
        set_kind(loop, self.axis, rewriter)

    def check_kind(self, loop: ForOp, refuse: Refuser) -> None:
        kind = loop.kind.data
        if is_bound(loop):
            raise refuse(f"is already bound to {kind}")
        if kind not in ("serial", "parallel"):
            raise refuse(f"is {kind}; only a serial or parallel loop is bound to a GPU axis")

    def check_axis_free(self, func: FuncOp, loop: ForOp, refuse: Refuser) -> None:
        for other in bound_loops(func):
            if other.kind.data == self.axis:
                raise refuse(
                    f"cannot be bound to {self.axis}: loop '{loop_name(other)}' already is", other
                )

    def check_extent(self, func: FuncOp, loop: ForOp, refuse: Refuser) -> None:
        limit = AXIS_LIMITS[self.axis]
        if loop.extent > limit:
            raise refuse(f"has {loop.extent} iterations; {self.axis} allows at most {limit}")
        if not is_thread_axis(self.axis):
            return
        threads = threads_per_block(bound_loops(func)) * loop.extent
        if threads > MAX_THREADS_PER_BLOCK:
            raise refuse(
                f"bound to {self.axis} would make {threads} threads per block "
                f"(the product of the threadIdx-bound extents); at most {MAX_THREADS_PER_BLOCK}"
            )
