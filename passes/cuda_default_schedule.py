"""cuda-default-schedule: the default CUDA schedule, one thread per element of
a kernel's output: the spatial loops of each kernel fused into one, split
into blocks of threads, bound to blockIdx.x x threadIdx.x."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.passes import ModulePass

from xtc.dialects.tir import ForOp
from xtc.passes.independent_iterations import check_independent_iterations
from xtc.passes.schedule_pass import PassOptionError, Refuser, SchedulePass
from xtc.passes.tir_bind import MAX_THREADS_PER_BLOCK, bound_loops
from xtc.passes.tir_fuse import TirFuse
from xtc.passes.tir_loops import ScheduleError, is_pure_scalar, loop_name, only_inner_loop
from xtc.passes.tir_split import TirSplit


def threads_for(extent: int, most: int) -> int:
    """The threads of a block: the largest divisor of `extent` up to
    `most`, so that the blocks tile the iterations with no tail."""
    return max(d for d in range(1, min(extent, most) + 1) if extent % d == 0)


def spatial_chain(pass_name: str, func: FuncOp) -> list[ForOp]:
    """The function's one loop nest, from its outermost loop down through
    each loop that holds just one loop (and pure scalar ops): the loops
    whose iterations write distinct outputs in a kernel from
    convert-te-to-tir. Refuses a body with several nests or other ops."""
    name = func.sym_name.data
    loops = [op for op in func.body.block.ops if isinstance(op, ForOp)]
    others = [
        op
        for op in func.body.block.ops
        if not isinstance(op, ForOp | ReturnOp) and not is_pure_scalar(op)
    ]
    if len(loops) != 1 or others:
        what = f"{len(loops)} loop nests" if len(loops) != 1 else f"'{others[0].name}'"
        raise ScheduleError(
            pass_name,
            f"@{name} has {what} at its top level; the default CUDA schedule makes a "
            "kernel of a function that is one loop nest",
            others[0] if others else func,
        )
    chain = [loops[0]]
    while (inner := only_inner_loop(chain[-1])) is not None:
        chain.append(inner)
    return chain


@dataclass(frozen=True)
class CudaDefaultSchedule(ModulePass):
    """The default CUDA schedule: one thread per output element.

    Expects: tir-level functions; each function with loops and no bound
    loop (those are left as scheduled) is one loop nest whose outer loops,
    down to the first loop holding something else than one loop and pure
    scalar ops, are serial from 0 with step 1 and independent (the spatial
    loops of an elementwise, injective or reduction kernel from
    convert-te-to-tir: a reduction's accumulator stays inside a thread).

    Produces: in each such function, those loops fused into one loop
    `F` (tir-fuse: `i0_i1_...`), split by T (tir-split: `F_o`, `F_i`),
    `F_o` bound to blockIdx.x and `F_i` to threadIdx.x, T the largest
    divisor of the fused extent up to `threads` (so no tail remains).
    convert-tir-to-gpu then makes each function a kernel.

    Refuses (naming the function): a function with several loop nests or
    other ops around its nest (a conv2d's padding nest), a spatial loop
    tir-bind would refuse for a dependence, and what tir-fuse and
    tir-split refuse on the way (a loop from a non-zero bound).

    Command line: `cuda-default-schedule{threads=128}`.
    """

    name = "cuda-default-schedule"

    threads: int = 256
    """The most threads per block (a divisor of the fused extent is taken)."""

    def __post_init__(self) -> None:
        if not 1 <= self.threads <= MAX_THREADS_PER_BLOCK:
            raise PassOptionError(
                self.name, f"threads={self.threads} is outside [1, {MAX_THREADS_PER_BLOCK}]"
            )

    def schedule_of(self, func: FuncOp) -> list[SchedulePass]:
        """The schedule passes that fuse and split `func`'s spatial loops,
        once each is shown independent (as tir-bind checks it: after the
        fusion its index is a division and a remainder, which the check
        cannot follow; distinct iterations of the fused loop differ in a
        first original loop, whose iterations write apart)."""
        name = func.sym_name.data
        chain = spatial_chain(self.name, func)
        for loop in chain:
            check_independent_iterations(loop, Refuser(self.name, func, loop))
        steps: list[SchedulePass] = []
        fused = loop_name(chain[-1])
        for outer in reversed(chain[:-1]):  # inner pairs first: the fused body is perfect
            steps.append(TirFuse(func=name, outer=loop_name(outer), inner=fused))
            fused = f"{loop_name(outer)}_{fused}"
        extent = prod(loop.extent for loop in chain)
        threads = threads_for(extent, self.threads)
        return [*steps, TirSplit(func=name, loop=fused, factor=threads)]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [
            f
            for f in op.ops
            if isinstance(f, FuncOp)
            and f.body.blocks
            and any(isinstance(o, ForOp) for o in f.body.walk())
            and not bound_loops(f)
        ]
        schedules = {f.sym_name.data: self.schedule_of(f) for f in functions}
        for steps in schedules.values():
            for step in steps:
                step.apply(ctx, op)
        for f in functions:
            blocks = next(o for o in f.body.block.ops if isinstance(o, ForOp))
            threads = only_inner_loop(blocks)
            assert threads is not None, "tir-split leaves no tail: the factor divides"
            blocks.properties["kind"] = StringAttr("blockIdx.x")
            threads.properties["kind"] = StringAttr("threadIdx.x")
