"""tir-reorder: the loops of a perfect nest permuted."""

from __future__ import annotations

from collections.abc import Sequence
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
from xdsl.rewriter import InsertPoint

from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import (
    ScheduleError,
    function_name,
    has_inner_loop,
    loop_like,
    loop_name,
    nest_of,
    perfect_nest,
    select_functions,
    sink_pure_ops,
)

PASS = "tir-reorder"


def _check_vectorized_stays_innermost(
    func: FuncOp, nest: Sequence[ForOp], order: Sequence[str], pass_name: str = PASS
) -> None:
    """Refuses an order that would put a loop marked vectorized around
    another loop."""
    innermost_body_has_loop = has_inner_loop(nest[-1])
    for loop in nest:
        if loop.kind.data != "vectorized":
            continue
        last = loop_name(loop) == order[-1]
        if not last or innermost_body_has_loop:
            raise ScheduleError(
                pass_name,
                f"loop '{loop_name(loop)}' in @{function_name(func)} is vectorized and "
                "would hold another loop in this order",
                loop,
            )


@dataclass(frozen=True)
class ReorderLoops(RewritePattern):
    """The perfect nest of the loops named in `order` -> the same loops
    nested in that order, in the chosen functions. Refusals name
    `pass_name` (a pass built on this one, such as tir-tile, passes its own)."""

    functions: frozenset[str]
    order: tuple[str, ...]
    pass_name: str = PASS

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        if function_name(op) not in self.functions:
            return
        nest = perfect_nest(self.pass_name, op, self.order)
        _check_vectorized_stays_innermost(op, nest, self.order, self.pass_name)
        if [loop_name(loop) for loop in nest] == list(self.order):
            return
        sink_pure_ops(nest)
        by_name = {loop_name(loop): loop for loop in nest}
        reordered = [loop_like(by_name[name]) for name in self.order]
        body = nest_of(reordered)
        for old, new in zip((by_name[n] for n in self.order), reordered, strict=True):
            old.induction_variable.replace_all_uses_with(new.induction_variable)
        innermost = nest[-1]
        rewriter.inline_block(
            innermost.body.block,
            InsertPoint.at_end(body),
            [reordered[self.order.index(loop_name(innermost))].induction_variable],
        )
        rewriter.replace(nest[0], reordered[0], [])


@dataclass(frozen=True, kw_only=True)
class TirReorder(ModulePass):
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

    func: str = ""
    """The function to schedule; empty: every function that has the loop."""
    order: tuple[str, ...]
    """The loops of a perfect nest, in their new order, outermost first."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.order:
            raise ScheduleError(self.name, "order names no loop")
        functions = select_functions(op, self.name, self.func, self.order)
        pattern = ReorderLoops(functions, tuple(self.order))
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
