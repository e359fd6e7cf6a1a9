"""tir-unroll: a loop marked to be unrolled."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter

from xtc.passes.schedule_pass import SchedulePass
from xtc.passes.tir_loops import set_kind

MAX_UNROLLED_ITERATIONS = 64
"""Unrolling more copies of a body than this bloats code without speed."""


@dataclass(frozen=True, kw_only=True)
class TirUnroll(SchedulePass):
    """Marks a loop to be unrolled (TVM's unroll).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop named `loop` of at most 64
    iterations.

    Produces: the loop with kind "unrolled" (whatever kind it had), nothing
    else changed; the lowering emits one copy of the body per iteration.

    Refuses (naming pass, function and loop): a missing function or loop, a
    loop name used twice, a loop of more than 64 iterations (saying how
    many).

    Command line: `tir-unroll{func=matmul_0 loop=i0_i}`; a name other than
    letters, digits, `_` and `-`, or one that reads as a number or a
    boolean, is quoted: `loop="i.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-unroll"

    loop: str
    """The loop to unroll."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """The loop's kind -> "unrolled"."""
        loop = self.find_loop(func, self.loop)
        if loop.extent > MAX_UNROLLED_ITERATIONS:
            refuse = self.refuser(func, loop)
            raise refuse(f"has {loop.extent} iterations; at most {MAX_UNROLLED_ITERATIONS} unroll")
        set_kind(loop, "unrolled", rewriter)
