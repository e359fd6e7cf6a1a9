"""tir-vectorize: an innermost loop marked to become vector operations."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter

from xtc.passes.schedule_pass import SchedulePass
from xtc.passes.tir_loops import has_inner_loop, set_kind

MAX_VECTOR_LANES = 64
"""The widest vector a loop becomes (64 bytes of i8, four AVX-512 f32 vectors)."""


@dataclass(frozen=True, kw_only=True)
class TirVectorize(SchedulePass):
    """Marks an innermost loop to be vectorized (TVM's vectorize).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop named `loop` with no tir.for inside
    it and at most 64 iterations.

    Produces: the loop with kind "vectorized" (whatever kind it had),
    nothing else changed. The lowering widens such a loop into vector
    operations; where it does not yet, the loop runs serially, which
    computes the same.

    Refuses (naming pass, function and loop): a missing function or loop, a
    loop name used twice, a loop holding another loop, a loop of more than
    64 iterations (saying how many).

    Command line: `tir-vectorize{func=matmul_0 loop=i1_i}`; a name other
    than letters, digits, `_` and `-`, or one that reads as a number or a
    boolean, is quoted: `loop="i.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-vectorize"

    loop: str
    """The innermost loop to vectorize."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """The innermost loop's kind -> "vectorized"."""
        loop = self.find_loop(func, self.loop)
        refuse = self.refuser(func, loop)
        if has_inner_loop(loop):
            raise refuse("holds another loop; only an innermost loop vectorizes")
        if loop.extent > MAX_VECTOR_LANES:
            raise refuse(
                f"has {loop.extent} iterations; at most {MAX_VECTOR_LANES} vectorize "
                "(split it first)"
            )
        set_kind(loop, "vectorized", rewriter)
