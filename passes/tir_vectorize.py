"""tir-vectorize: an innermost loop marked to become vector operations."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter

from xtc.analysis.vectorizable import MAX_VECTOR_LANES, loop_kept_serial
from xtc.passes.schedule_pass import SchedulePass
from xtc.passes.tir_loops import has_inner_loop, set_kind


@dataclass(frozen=True, kw_only=True)
class TirVectorize(SchedulePass):
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
    other than loads, stores and checks (a call), as analysis/vectorizable.py
    decides for both. What the lowering still leaves serial (lanes that
    store to the same element, ...) is a remark of tir-lower-vectorized.

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
        reason = loop_kept_serial(loop)
        if reason is not None:
            raise refuse(f"cannot become vector code: {reason}")
        set_kind(loop, "vectorized", rewriter)
