"""convert-tir-to-cf: `tir.for` loops (through `scf.for`) and `scf.if` as
blocks and branches, a stage of convert-tir-to-llvm."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering

from xtc.dialects import tir
from xtc.passes.typed_applier import TypedPatternApplier


class LowerTirFor(RewritePattern):
    """`tir.for` -> `scf.for` with constant bounds."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.ForOp, rewriter: PatternRewriter) -> None:
        bounds = [
            arith.ConstantOp(IntegerAttr(attr.value.data, IndexType()))
            for attr in (op.lower, op.upper, op.step)
        ]
        body = op.body.block
        body.add_op(scf.YieldOp())
        lower, upper, step = bounds
        loop = scf.ForOp(
            lower, upper, step, [], rewriter.move_region_contents_to_new_regions(op.body)
        )
        rewriter.replace(op, [*bounds, loop], [])


@dataclass(frozen=True)
class ConvertTirToCf(ModulePass):
    """Turns every `tir.for` into an `scf.for` over the same iterations, then
    every `scf.for` and `scf.if` into blocks and branches (xDSL's
    convert-scf-to-cf patterns, tried only on the ops they rewrite: a model
    has few loops among many ops).

    Expects: tir-level functions whose parallel, unrolled and vectorized
    loops are gone (tir-lower-parallel, tir-lower-unrolled,
    tir-lower-vectorized); a loop of another kind left runs serially.

    Produces: `cf.br` / `cf.cond_br` between blocks; a loop is a header
    block whose argument is the induction variable (an index), compared with
    its upper bound (`arith.cmpi slt`), its bounds and step `arith.constant`s.
    Nothing else changes.
    """

    name = "convert-tir-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LowerTirFor()).rewrite_module(op)
        PatternRewriteWalker(TypedPatternApplier([IfLowering(), ForLowering()])).rewrite_module(op)
