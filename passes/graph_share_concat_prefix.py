"""graph-share-concat-prefix: a concatenation that begins with every operand
of an earlier one, in order, reads that earlier concatenation instead.

DenseNet's layer j reads `concat(x0, f1, ..., fj)` and layer j + 1 reads
`concat(x0, f1, ..., fj, fj+1)`. Concatenation along one axis is
associative, so the second is `concat(concat(x0, ..., fj), fj+1)`: written
so, each concatenation copies one new input instead of all of them, and,
being read by its layer's batch norm and by the next concatenation, it is
no longer fused into that batch norm (graph-fuse-ops keeps a value used by
two ops out of its users' groups): the batch norm and its ReLU become a
plain elementwise kernel over one input, and tir-concat-in-place can make
the concatenations views of one buffer.

Expects: graph-level IR. Produces: each `graph.concat(v1..vn)` for which an
earlier `graph.concat(v1..vm)` of the same block along the same axis exists
(2 <= m < n, the operands the same SSA values in the same order; the
longest such m) rewritten as `graph.concat(that concat, vm+1..vn)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xtc.dialects.graph.base import get_int, normalize_axis, op_props, shape_of
from xtc.dialects.graph.tensor import ConcatOp

MIN_SHARED = 2
"""An earlier concatenation of one operand is that operand: nothing to share."""

ConcatKey = tuple[Block, int, tuple[SSAValue, ...]]
"""(the block, the axis, the operands as written in the model) of a concat."""


def concat_axis(op: ConcatOp) -> int:
    """The concat's axis, non-negative."""
    rank = len(shape_of(op.output.type))
    return normalize_axis(op.name, get_int(op_props(op), "axis"), rank)


@dataclass
class ConcatAfterConcatPrefix(RewritePattern):
    """concat(v1..vn) -> concat(concat(v1..vm), vm+1..vn) for the longest
    earlier concat(v1..vm) of the block. Ops must be visited in block
    order, once: `seen` indexes each concat visited by its operands as
    written before any rewrite, so each lookup is one hash per prefix."""

    seen: dict[ConcatKey, SSAValue] = field(default_factory=dict[ConcatKey, SSAValue])

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        block = op.parent_block()
        if block is None:
            return
        key = (block, concat_axis(op), tuple(op.inputs))
        shorter = self.shared_prefix(op, key, rewriter)
        self.seen.setdefault(key, op.output if shorter is None else shorter)

    def shared_prefix(
        self, op: ConcatOp, key: ConcatKey, rewriter: PatternRewriter
    ) -> SSAValue | None:
        """The output of `op` rewritten over the longest earlier concat
        its operands begin with; None when there is none."""
        block, axis, operands = key
        for shared in range(len(operands) - 1, MIN_SHARED - 1, -1):
            prefix = self.seen.get((block, axis, operands[:shared]))
            if prefix is not None:
                shorter = ConcatOp.build_inferred([prefix, *operands[shared:]], dict(op.properties))
                rewriter.replace(op, shorter)
                return shorter.output
        return None


class GraphShareConcatPrefix(ModulePass):
    """Each concatenation that begins with the operands of an earlier one
    reads that earlier one instead (see the module docstring for input and
    output IR).

    Command line: `graph-share-concat-prefix`."""

    name = "graph-share-concat-prefix"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        walker = PatternRewriteWalker(ConcatAfterConcatPrefix(), apply_recursively=False)
        walker.rewrite_module(op)
