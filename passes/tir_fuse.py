"""tir-fuse: a loop and the one loop it holds become one loop."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
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
    check_fresh_names,
    check_unit_stride,
    function_name,
    index_constant,
    loop_name,
    new_loop,
    perfect_nest,
    select_functions,
    sink_pure_ops,
)

PASS = "tir-fuse"
FUSIBLE_KINDS = ("serial", "parallel")


def _check_fusible(func: FuncOp, outer: ForOp, inner: ForOp) -> None:
    """Refuses loops not from 0 step 1, or of different kinds, or of a kind
    whose meaning depends on the extent (vectorized, unrolled, bound)."""
    for loop in (outer, inner):
        check_unit_stride(PASS, func, loop)
    where = f"loops '{loop_name(outer)}' and '{loop_name(inner)}' in @{function_name(func)}"
    if outer.kind.data != inner.kind.data:
        raise ScheduleError(
            PASS, f"{where} are {outer.kind.data} and {inner.kind.data}, not of one kind", outer
        )
    if outer.kind.data not in FUSIBLE_KINDS:
        raise ScheduleError(
            PASS, f"{where} are {outer.kind.data}; only serial or parallel loops fuse", outer
        )


@dataclass(frozen=True)
class FuseLoops(RewritePattern):
    """`for O { for I { body } }` -> `for O_I { O = v / Ei; I = v % Ei;
    body }` in the chosen functions."""

    functions: frozenset[str]
    outer: str
    inner: str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        if function_name(op) not in self.functions:
            return
        outer, inner = perfect_nest(PASS, op, (self.outer, self.inner))
        if loop_name(outer) != self.outer:
            raise ScheduleError(
                PASS,
                f"loop '{self.outer}' is inside loop '{self.inner}' in @{function_name(op)}, "
                "not around it",
                inner,
            )
        _check_fusible(op, outer, inner)
        fused_name = f"{self.outer}_{self.inner}"
        check_fresh_names(PASS, op, [fused_name], outer)
        sink_pure_ops([outer, inner])
        fused = new_loop(fused_name, outer.extent * inner.extent, outer.kind.data)
        extent = index_constant(inner.extent)
        outer_index = arith.DivUIOp(fused.induction_variable, extent.result)
        inner_index = arith.RemUIOp(fused.induction_variable, extent.result)
        outer_index.result.name_hint = self.outer
        inner_index.result.name_hint = self.inner
        fused.body.block.add_ops([extent, outer_index, inner_index])
        outer.induction_variable.replace_all_uses_with(outer_index.result)
        rewriter.inline_block(
            inner.body.block, InsertPoint.at_end(fused.body.block), [inner_index.result]
        )
        rewriter.replace(outer, fused, [])


@dataclass(frozen=True, kw_only=True)
class TirFuse(ModulePass):
    """Fuses two perfectly nested loops into one (TVM's fuse).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has a loop named `outer`) a loop `outer` directly
    holding loop `inner` and otherwise only pure scalar ops, both from 0
    with step 1, both serial or both parallel; the name `outer_inner` not
    taken.

    Produces: one loop named `{outer}_{inner}` of extent Eo * Ei and the
    kind of both, whose body starts with `%outer = arith.divui %v, Ei` and
    `%inner = arith.remui %v, Ei` (index), then the outer body's pure ops,
    then the inner body.

    Refuses (naming pass, function and loop): a missing function or loop, a
    loop name used twice, loops not perfectly nested (naming the loop whose
    body holds other ops), `outer` inside `inner`, loops not from 0 step 1,
    of different kinds or of another kind, a fused name already taken.

    Command line: `tir-fuse{func=conv2d_0 outer=i0 inner=i1}`; a name other
    than letters, digits, `_` and `-`, or one that reads as a number or a
    boolean, is quoted: `outer="i.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-fuse"

    func: str = ""
    """The function to schedule; empty: every function that has the loop."""
    outer: str
    """The outer loop of the two."""
    inner: str
    """The loop directly inside `outer`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = select_functions(op, self.name, self.func, [self.outer, self.inner])
        pattern = FuseLoops(functions, self.outer, self.inner)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
