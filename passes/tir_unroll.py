"""tir-unroll: a loop marked to be unrolled."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xtc.passes.tir_loops import (
    ScheduleError,
    find_loop,
    function_name,
    loop_name,
    select_functions,
    set_kind,
)

PASS = "tir-unroll"
MAX_UNROLLED_ITERATIONS = 64
"""Unrolling more copies of a body than this bloats code without speed."""


@dataclass(frozen=True)
class UnrollLoop(RewritePattern):
    """The named loop's kind -> "unrolled", in the chosen functions."""

    functions: frozenset[str]
    loop: str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        if function_name(op) not in self.functions:
            return
        loop = find_loop(PASS, op, self.loop)
        if loop.extent > MAX_UNROLLED_ITERATIONS:
            raise ScheduleError(
                PASS,
                f"loop '{loop_name(loop)}' in @{function_name(op)} has {loop.extent} "
                f"iterations; at most {MAX_UNROLLED_ITERATIONS} unroll",
                loop,
            )
        set_kind(loop, "unrolled", rewriter)


@dataclass(frozen=True, kw_only=True)
class TirUnroll(ModulePass):
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

    func: str = ""
    """The function to schedule; empty: every function that has the loop."""
    loop: str
    """The loop to unroll."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = select_functions(op, self.name, self.func, [self.loop])
        pattern = UnrollLoop(functions, self.loop)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
