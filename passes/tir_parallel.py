"""tir-parallel: a loop marked to run its iterations across threads, once
the rule of xtc.passes.independent_iterations shows that no two iterations
touch the same element."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter

from xtc.passes.independent_iterations import check_parallelizable
from xtc.passes.schedule_pass import SchedulePass
from xtc.passes.tir_loops import set_kind


@dataclass(frozen=True, kw_only=True)
class TirParallel(SchedulePass):
    """Marks a loop to run its iterations across threads (TVM's parallel).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop named `loop`, serial or parallel,
    whose iterations are independent by the rule of
    xtc.passes.independent_iterations: no parallel loop around or inside
    it, no call inside, and every buffer allocated outside it written by stores
    whose index, in one dimension, gives each iteration its own slice
    (`i`, `i * c + x`, `io * 16 + ii` after a split) and read only inside
    that slice; for a loop of tir-fuse (its variable used only as `v / E`
    and `v % E`), one such dimension for each of those digits.

    Produces: the loop with kind "parallel", nothing else changed;
    convert-tir-to-llvm outlines it and runs it through libgomp
    (tir-lower-parallel), each thread a contiguous chunk of
    iterations.

    Refuses (naming pass, function and loop): a missing function or loop,
    a loop name used twice, a vectorized, unrolled or thread-bound loop, a
    parallel loop around or inside it, a call inside it, an op that writes
    or frees a buffer from outside the loop other than memref.store (or
    whose effects are unknown), and a buffer whose accesses may let two
    iterations touch one element (naming the buffer).

    Command line: `tir-parallel{func=matmul_0 loop=i0}`; a name other than
    letters, digits, `_` and `-`, or one that reads as a number or a
    boolean, is quoted: `loop="i.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-parallel"

    loop: str
    """The loop whose iterations run across threads."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """The loop's kind -> "parallel", once the rule of
        xtc.passes.independent_iterations holds."""
        loop = self.find_loop(func, self.loop)
        check_parallelizable(loop, self.refuser(func, loop))
        set_kind(loop, "parallel", rewriter)
