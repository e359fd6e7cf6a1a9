"""tir-lower-unrolled: unrolled `tir.for` loops as copies of their body, a
stage of convert-tir-to-llvm.

Before copying, the loop-invariant values of the body (pure ops of the
body and of the vectorized loops in it, whose operands are all defined
before the loop: constants, the index arithmetic of outer loops'
variables) move in front of the loop, so each is computed once, not once
per copy: every copy's ops would be made and lowered only for tir-cse to
merge them again. On ResNet-50's 28 kernels this leaves 12k ops after
unrolling instead of 19k, and the same machine code."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xtc.dialects import tir
from xtc.passes.tir_loops import is_pure_scalar


def loops_inner_first_in_order(op: Operation, kind: str) -> list[tir.ForOp]:
    """The loops of `kind` within `op`, every inner loop before the loops
    around it and each loop after those before it in the same block (a
    post-order walk): what is made in front of one loop of a block then
    stands before the next ones too, which may use it (tir-lower-vectorized's
    SharedValues)."""
    found: list[tir.ForOp] = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if inner.regions:
                    found += loops_inner_first_in_order(inner, kind)
                    if isinstance(inner, tir.ForOp) and inner.kind.data == kind:
                        found.append(inner)
    return found


def unroll_loop(loop: tir.ForOp) -> None:
    """Replaces the loop by `extent` copies of its body, the induction
    variable a constant in each; its invariant values (hoist_invariants)
    computed once, before them."""
    hoist_invariants(loop)
    rewriter = PatternRewriter(loop)
    lower, step = loop.lower.value.data, loop.step.value.data
    for iteration in range(loop.extent):
        value = arith.ConstantOp(IntegerAttr(lower + iteration * step, IndexType()))
        rewriter.insert(value)
        mapping: dict[SSAValue, SSAValue] = {loop.induction_variable: value.result}
        for op in loop.body.block.ops:
            rewriter.insert(op.clone(value_mapper=mapping))
    rewriter.erase(loop)


def hoist_invariants(loop: tir.ForOp) -> None:
    """Moves in front of `loop`, in order, every pure op (`is_pure_scalar`,
    one result) of its body and of the vectorized loops in it whose
    operands are all defined before the loop; the ops that use them stay.
    Only ops that run whenever the body runs, once it runs at least once:
    a hoisted division then divides what it divided in place. Not from a
    serial loop or a branch inside: a value there would then live across
    that loop or be computed on a path that needs none, and the copies
    that tir-cse merges are those of the straight-line code (on ResNet-50's
    kernels, hoisting from any depth makes no fewer ops)."""
    block = loop.parent_block()
    assert block is not None
    if loop.extent < 1:
        return  # a body that never runs: nothing of it may run before it either
    for op in _straight_line_ops(loop):
        if len(op.results) != 1 or not is_pure_scalar(op):
            continue
        if any(_defined_within(value, loop) for value in op.operands):
            continue
        op.detach()
        block.insert_op_before(op, loop)


def _straight_line_ops(loop: tir.ForOp) -> list[Operation]:
    """The ops of the loop's body and, in place of each vectorized loop in
    it that runs (an extent of at least 1), that loop's ops (at any depth),
    in order: ops that run whenever the body runs."""
    ops: list[Operation] = []
    for op in loop.body.block.ops:
        if isinstance(op, tir.ForOp) and op.kind.data == "vectorized" and op.extent >= 1:
            ops += _straight_line_ops(op)
        else:
            ops.append(op)
    return ops


def _defined_within(value: SSAValue, loop: tir.ForOp) -> bool:
    """Whether `value` is defined by an op inside `loop` or is a block
    argument of a region within it (its induction variable among them)."""
    owner = value.owner
    defining = owner.parent_op() if isinstance(owner, Block) else owner
    assert defining is None or isinstance(defining, Operation)
    return defining is not None and loop.is_ancestor(defining)


@dataclass(frozen=True)
class TirLowerUnrolled(ModulePass):
    """Replaces every `unrolled` loop by `extent` copies of its body, each
    with the induction variable an `arith.constant`.

    Expects: tir-level functions; an unrolled loop's body is one block.

    Produces: the same IR without `unrolled` loops, each loop's invariant
    values (pure ops of its body and of the vectorized loops in it whose
    operands are defined before it) moved in front of it, computed once for
    all copies. Innermost loops go first,
    so the nest `for i unrolled { for j vectorized { ... } }` becomes copies
    of the vectorized loop, each with `i` a constant (tir-lower-vectorized
    then widens each copy).
    """

    name = "tir-lower-unrolled"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in loops_inner_first_in_order(op, "unrolled"):
            unroll_loop(loop)
