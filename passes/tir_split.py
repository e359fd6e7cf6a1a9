"""tir-split: one loop becomes an outer and an inner loop, the remainder of
a non-dividing factor peeled into a tail loop."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter

from xtc.passes.loop_rewrites import split_loop
from xtc.passes.schedule_pass import SchedulePass


@dataclass(frozen=True, kw_only=True)
class TirSplit(SchedulePass):
    """Splits loop `loop` by `factor` (TVM's split).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop named `loop`, serial, from 0 with
    step 1, extent E, and 1 <= factor <= E; loop names unique in the
    function.

    Produces: the loop replaced by `L_o` (extent E // factor, serial)
    holding `L_i` (extent factor, serial), whose body starts with
    `%L = arith.addi (arith.muli %L_o, factor), %L_i` (index) and then
    holds the original body using `%L`, except that `%L floordiv factor`
    (or divsi, divui) becomes `%L_o` and `%L rem factor` (remsi, remui)
    becomes `%L_i`, so an index into blocks of `factor` (a conv2d weight in
    OIHW16o) reads straight from the loop variables. When factor does not divide E the
    remainder is peeled: after `L_o` comes `L_tail` (extent E % factor)
    running a copy of the body with `%L = (E // factor) * factor + %L_tail`;
    every loop inside that copy has `_L_tail` appended to its name (`r0`
    in the tail of `i1` becomes `r0_i1_tail`), so names stay unique however
    splits are composed.

    Interactions: splitting a loop that holds a peeled split leaves two
    loops in the new inner loop (`tir-split i1` then `tir-split i0` with
    remainders: `i0_i` holds `i1_o` and `i1_tail`), which tir-reorder then
    refuses to reorder; split the outer loop and reorder first, or use
    factors that divide. Refuses (naming pass, function and loop): a missing
    function or loop, a loop name used twice in the function, a loop not
    from 0 step 1 or not serial, a factor outside [1, E], a new name already
    taken.

    Command line: `tir-split{func=matmul_0 loop=i1 factor=16}`; a name
    other than letters, digits, `_` and `-`, or one that reads as a number
    or a boolean, is quoted: `loop="i.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-split"

    loop: str
    """The loop to split."""
    factor: int
    """The inner loop's extent, in [1, the loop's extent]."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        split_loop(self.name, func, self.loop, self.factor, rewriter)
