"""tir-reorder: the loops of a perfect nest permuted."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter

from xtc.passes.loop_rewrites import reorder_loops
from xtc.passes.schedule_pass import SchedulePass


@dataclass(frozen=True, kw_only=True)
class TirReorder(SchedulePass):
    """Permutes a perfect loop nest (TVM's reorder).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has a loop named `order[0]`) the loops named in
    `order` (unique names) forming a perfect nest: one of them holds the
    next directly, and its body holds nothing else but pure scalar ops
    (index arithmetic such as tir-split leaves), down to the last one. Their
    iterations are taken to be independent, or to accumulate into an
    accumulator outside the nest, as convert-te-to-tir and the schedule
    passes leave them (a sum reordered adds in another order).

    Produces: the same loops (bounds, names, kinds) nested in the order
    given, outermost first; the pure scalar ops of the nest's bodies moved
    to the start of the innermost body; the innermost body unchanged.

    Interactions: a reduction loop cannot move out past its accumulator
    (the loop holding the rank-0 `memref.alloca` is not perfectly nested;
    run tir-cache-write first); after `tir-split` peels a tail inside a loop
    that is split later, that loop's inner part holds two loops (`i1_o` and
    `i1_tail`) and is not perfectly nested either. Refuses (naming pass,
    function and loop): a missing function or loop, a loop name used twice,
    loops not perfectly nested (naming the loop whose body holds other ops),
    a vectorized loop that would hold another loop.

    Command line: `tir-reorder{func=matmul_0 order=i0_o,i1_o,i0_i,i1_i}`; a
    name other than letters, digits, `_` and `-`, or one that reads as a
    number or a boolean, is quoted: `order="i.0",i1` (see xtc.passes.tir_loops).
    """

    name = "tir-reorder"
    LOOP_OPTIONS = ("order",)

    order: tuple[str, ...]
    """The loops of a perfect nest, in their new order, outermost first."""

    def check_options(self) -> None:
        if not self.order:
            raise self.bad_option("order names no loop")

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        reorder_loops(self.name, func, self.order, rewriter)
