"""tir-fuse: a loop and the one loop it holds become one loop."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from xtc.dialects.tir import ForOp
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    check_fresh_names,
    check_unit_stride,
    function_name,
    index_constant,
    loop_name,
    new_loop,
    perfect_nest,
    sink_pure_ops,
)

FUSIBLE_KINDS = ("serial", "parallel")


def _check_fusible(refuse: Refuser, outer: ForOp, inner: ForOp) -> None:
    """Refuses loops of different kinds, or of a kind whose meaning depends
    on the extent (vectorized, unrolled, bound)."""
    if outer.kind.data != inner.kind.data:
        raise refuse(f"are {outer.kind.data} and {inner.kind.data}, not of one kind")
    if outer.kind.data not in FUSIBLE_KINDS:
        raise refuse(f"are {outer.kind.data}; only serial or parallel loops fuse")


@dataclass(frozen=True, kw_only=True)
class TirFuse(SchedulePass):
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
    LOOP_OPTIONS = ("outer", "inner")

    outer: str
    """The outer loop of the two."""
    inner: str
    """The loop directly inside `outer`."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """`for O { for I { body } }` -> `for O_I { O = v / Ei; I = v % Ei;
        body }`."""
        outer, inner = perfect_nest(self.name, func, (self.outer, self.inner))
        if loop_name(outer) != self.outer:
            refuse = self.refuser(func, inner, head=f"loop '{self.outer}' ")
            raise refuse(f"is inside loop '{self.inner}' in @{function_name(func)}, not around it")
        for loop in (outer, inner):
            check_unit_stride(self.name, func, loop)
        head = f"loops '{self.outer}' and '{self.inner}' in @{function_name(func)} "
        _check_fusible(self.refuser(func, outer, head), outer, inner)
        fused_name = f"{self.outer}_{self.inner}"
        check_fresh_names(self.name, func, [fused_name], outer)
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
