"""convert-tir-to-cf: `tir.for` loops (through `scf.for`), `scf.if` and
`scf.while` as blocks and branches, a stage of convert-tir-to-llvm."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import BlockInsertPoint, InsertPoint
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering

from xtc.analysis.walk import ops_within
from xtc.dialects import tir
from xtc.passes.typed_applier import TypedPatternApplier, matched_op_types


class LowerTirFor(RewritePattern):
    """`tir.for` -> `scf.for` with constant bounds."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.ForOp, rewriter: PatternRewriter) -> None:
        bounds = [_index_constant(attr.value.data) for attr in (op.lower, op.upper, op.step)]
        body = op.body.block
        body.add_op(scf.YieldOp.create())
        # scf.ForOp(lower, upper, step, [], body) without IRDL's argument checks
        loop = scf.ForOp.create(
            operands=[bound.result for bound in bounds],
            regions=[rewriter.move_region_contents_to_new_regions(op.body)],
        )
        rewriter.replace(op, [*bounds, loop], [])


def _index_constant(value: int) -> arith.ConstantOp:
    """`arith.constant value : index`, built as arith.ConstantOp(...) builds it."""
    return arith.ConstantOp.create(
        properties={"value": _index_attr(value)}, result_types=[IndexType()]
    )


@functools.lru_cache(maxsize=1024)
def _index_attr(value: int) -> IntegerAttr[IndexType]:
    return IntegerAttr(value, IndexType())


class WhileLowering(RewritePattern):
    """`scf.while` -> a branch to the `before` blocks, whose `scf.condition`
    branches to the `after` blocks or out; the `after` blocks' `scf.yield`
    branches back (xDSL 0.74 has no pattern for it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter) -> None:
        entry = op.parent_block()
        region = entry.parent_region() if entry is not None else None
        assert entry is not None and region is not None
        remaining = entry.split_before(op)
        exit_block = remaining
        if op.results:
            exit_block = Block(arg_types=op.result_types)
            region.insert_block_before(exit_block, remaining)
            rewriter.insert(cf.BranchOp(remaining), InsertPoint.at_end(exit_block))
        before, after = op.before_region, op.after_region
        before_first, after_first = before.first_block, after.first_block
        assert before_first is not None and after_first is not None
        assert before.last_block is not None and after.last_block is not None
        test = before.last_block.last_op
        back = after.last_block.last_op
        assert isinstance(test, scf.ConditionOp) and back is not None
        forwarded = list(test.args)
        rewriter.replace(
            test,
            cf.ConditionalBranchOp(test.condition, after_first, forwarded, exit_block, forwarded),
        )
        rewriter.replace(back, cf.BranchOp(before_first, *back.operands))
        rewriter.inline_region(before, BlockInsertPoint.before(exit_block))
        rewriter.inline_region(after, BlockInsertPoint.before(exit_block))
        rewriter.insert(cf.BranchOp(before_first, *op.arguments), InsertPoint.at_end(entry))
        rewriter.replace(op, [], list(exit_block.args))


@dataclass(frozen=True)
class ConvertTirToCf(ModulePass):
    """Turns every `tir.for` into an `scf.for` over the same iterations, then
    every `scf.for`, `scf.if` and `scf.while` into blocks and branches (xDSL's
    convert-scf-to-cf patterns and WhileLowering, tried only on the ops they
    rewrite: a model has few loops among many ops).

    Expects: tir-level functions whose parallel, unrolled and vectorized
    loops are gone (tir-lower-parallel, tir-lower-unrolled,
    tir-lower-vectorized); a loop of another kind left runs serially.

    Produces: `cf.br` / `cf.cond_br` between blocks; a loop is a header
    block whose argument is the induction variable (an index), compared with
    its upper bound (`arith.cmpi slt`), its bounds and step `arith.constant`s;
    a while loop is its `before` blocks, ending in `cf.cond_br` to its
    `after` blocks or out, and its `after` blocks, branching back. Nothing
    else changes.
    """

    name = "convert-tir-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Each loop is rewritten once, outer loops first (the order of a
        # PatternRewriteWalker); the walker's worklist of every op, visited
        # twice, would cost more than the rewrites: a unit has some
        # thousand ops and tens of loops.
        apply_to_each(op, LowerTirFor())
        apply_to_each(op, TypedPatternApplier([IfLowering(), ForLowering(), WhileLowering()]))


def apply_to_each(module: ModuleOp, pattern: RewritePattern) -> None:
    """Applies `pattern` once to each op of `module` that it may rewrite
    (passes/typed_applier.py's matched_types), in pre-order; the ops are
    found before any is rewritten, so a rewrite may move the others (an
    outer loop's body) but must not erase them, nor create ops the pattern
    rewrites."""
    types = matched_op_types(pattern)
    for target in [inner for inner in ops_within(module) if isinstance(inner, types)]:
        pattern.match_and_rewrite(target, PatternRewriter(target))
