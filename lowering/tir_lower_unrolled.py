"""tir-lower-unrolled: unrolled `tir.for` loops as copies of their body, a
stage of convert-tir-to-llvm."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xtc.analysis.walk import ops_within
from xtc.dialects import tir


def loops_innermost_first(module: ModuleOp, kind: str) -> list[tir.ForOp]:
    """The module's loops of `kind`, every inner loop before its outer ones."""
    loops = [op for op in ops_within(module) if isinstance(op, tir.ForOp) and op.kind.data == kind]
    return loops[::-1]  # a pre-order walk reversed: inner loops before outer ones


def unroll_loop(loop: tir.ForOp) -> None:
    """Replaces the loop by `extent` copies of its body, the induction
    variable a constant in each."""
    rewriter = PatternRewriter(loop)
    lower, step = loop.lower.value.data, loop.step.value.data
    for iteration in range(loop.extent):
        value = arith.ConstantOp(IntegerAttr(lower + iteration * step, IndexType()))
        rewriter.insert(value)
        mapping: dict[SSAValue, SSAValue] = {loop.induction_variable: value.result}
        for op in loop.body.block.ops:
            rewriter.insert(op.clone(value_mapper=mapping))
    rewriter.erase(loop)


@dataclass(frozen=True)
class TirLowerUnrolled(ModulePass):
    """Replaces every `unrolled` loop by `extent` copies of its body, each
    with the induction variable an `arith.constant`.

    Expects: tir-level functions; an unrolled loop's body is one block.

    Produces: the same IR without `unrolled` loops. Innermost loops go first,
    so the nest `for i unrolled { for j vectorized { ... } }` becomes copies
    of the vectorized loop, each with `i` a constant (tir-lower-vectorized
    then widens each copy).
    """

    name = "tir-lower-unrolled"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in loops_innermost_first(op, "unrolled"):
            unroll_loop(loop)
