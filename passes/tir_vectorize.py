"""tir-vectorize: an innermost loop marked to become vector operations."""

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
    has_inner_loop,
    loop_name,
    select_functions,
    set_kind,
)
from xtc.passes.vectorizable import MAX_VECTOR_LANES, loop_kept_serial

PASS = "tir-vectorize"


@dataclass(frozen=True)
class VectorizeLoop(RewritePattern):
    """The named innermost loop's kind -> "vectorized", in the chosen
    functions."""

    functions: frozenset[str]
    loop: str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        if function_name(op) not in self.functions:
            return
        loop = find_loop(PASS, op, self.loop)
        where = f"loop '{loop_name(loop)}' in @{function_name(op)}"
        if has_inner_loop(loop):
            raise ScheduleError(
                PASS, f"{where} holds another loop; only an innermost loop vectorizes", loop
            )
        if loop.extent > MAX_VECTOR_LANES:
            raise ScheduleError(
                PASS,
                f"{where} has {loop.extent} iterations; at most {MAX_VECTOR_LANES} vectorize "
                "(split it first)",
                loop,
            )
        reason = loop_kept_serial(loop)
        if reason is not None:
            raise ScheduleError(PASS, f"{where} cannot become vector code: {reason}", loop)
        set_kind(loop, "vectorized", rewriter)


@dataclass(frozen=True, kw_only=True)
class TirVectorize(ModulePass):
    """Marks an innermost loop to be vectorized (TVM's vectorize).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop named `loop` with no tir.for inside
    it and at most 64 iterations.

    Produces: the loop with kind "vectorized" (whatever kind it had),
    nothing else changed. The lowering widens such a loop into vector
    operations; where it cannot, the loop runs serially, which computes the
    same, and says so in a `vectorize-missed` remark (`xtc-opt --remarks`).

    Refuses (naming pass, function and loop): a missing function or loop, a
    loop name used twice, a loop holding another loop, a loop of more than
    64 iterations (saying how many), a body that the lowering could only
    run serially whatever follows: an op with a region, or with effects
    other than loads, stores and checks (a call), as passes/vectorizable.py
    decides for both. What the lowering still leaves serial (lanes that
    store to the same element, ...) is a remark of convert-tir-to-llvm.

    Command line: `tir-vectorize{func=matmul_0 loop=i1_i}`; a name other
    than letters, digits, `_` and `-`, or one that reads as a number or a
    boolean, is quoted: `loop="i.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-vectorize"

    func: str = ""
    """The function to schedule; empty: every function that has the loop."""
    loop: str
    """The innermost loop to vectorize."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = select_functions(op, self.name, self.func, [self.loop])
        pattern = VectorizeLoop(functions, self.loop)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
