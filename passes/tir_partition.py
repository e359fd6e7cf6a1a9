"""tir-partition: a top-level loop nest that chooses its values by comparing
a loop's index with constants becomes one nest per range between those
constants, each with the comparisons decided.

Concat lowers to a select chain, `select(i1 < 64, x0[i1], select(i1 < 96,
x1[i1 - 64], ...))`, every branch of which is evaluated: each element loads
every input (its index clamped into range) and keeps one, so a Concat of k
inputs costs k loads and k selects an element (DenseNet's BN-ReLU over the
concatenation of 25 feature maps: 25 of each). Split at 64, 96, ... the
nest becomes k nests, the i-th reading only x_i; each is an elementwise
nest of its own that the default schedule vectorizes and runs in parallel.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i1
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from xtc.analysis.loops import constant_int
from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import (
    index_constant,
    is_pure_scalar,
    loop_name,
    loops_in,
    only_inner_loop,
    sink_pure_ops,
)

MAX_PIECES = 64
"""The most nests one nest is split into (each is a copy of its code)."""
SLT = 2
"""arith.cmpi's predicate number for `slt`."""

Interval = tuple[int, int]


@dataclass(frozen=True)
class Partition:
    """Where to split a nest: the loop whose index is compared, and the
    constants it is compared with, inside its range, ascending."""

    loop: ForOp
    bounds: tuple[int, ...]

    def ranges(self) -> list[tuple[int, int]]:
        edges = [self.loop.lower.value.data, *self.bounds, self.loop.upper.value.data]
        return list(zip(edges, edges[1:], strict=False))


def _nest(top: ForOp) -> list[ForOp]:
    """The perfectly nested loops from `top` down."""
    nest = [top]
    while (inner := only_inner_loop(nest[-1])) is not None:
        nest.append(inner)
    return nest


def _select_bound(op: arith.SelectOp, loops: dict[SSAValue, ForOp]) -> tuple[ForOp, int] | None:
    """(loop, c) when `op` selects on `i < c`, i the index of a loop of the
    nest (step 1) and c a constant strictly inside its range."""
    compare = op.cond.owner
    if not isinstance(compare, arith.CmpiOp) or compare.predicate.value.data != SLT:
        return None
    loop = loops.get(compare.lhs)
    bound = constant_int(compare.rhs)
    if loop is None or bound is None or loop.step.value.data != 1:
        return None
    if not loop.lower.value.data < bound < loop.upper.value.data:
        return None
    return loop, bound


def find_partition(top: ForOp) -> Partition | None:
    """The loop of `top`'s perfect nest whose index the most selects compare
    with constants, and those constants; None when no select does."""
    loops = {loop.induction_variable: loop for loop in _nest(top)}
    found: dict[ForOp, set[int]] = {}
    for op in top.walk():
        if isinstance(op, arith.SelectOp) and (hit := _select_bound(op, loops)) is not None:
            found.setdefault(hit[0], set()).add(hit[1])
    if not found:
        return None
    loop = max(found, key=lambda candidate: len(found[candidate]))
    return Partition(loop, tuple(sorted(found[loop])))


# ------------------------------------------------------------- one piece


def _interval(value: SSAValue) -> Interval | None:
    """The values an index can take, from constants and loop indices through
    addi, subi, muli by a constant, maxsi and minsi; None for another value."""
    constant = constant_int(value)
    if constant is not None:
        return constant, constant
    if isinstance(value, BlockArgument) and isinstance(value.owner.parent_op(), ForOp):
        loop = value.owner.parent_op()
        assert isinstance(loop, ForOp)
        if loop.step.value.data != 1 or loop.upper.value.data <= loop.lower.value.data:
            return None
        return loop.lower.value.data, loop.upper.value.data - 1
    owner = value.owner
    if not isinstance(owner, arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.MaxSIOp | arith.MinSIOp):
        return None
    a, b = _interval(owner.lhs), _interval(owner.rhs)
    if a is None or b is None:
        return None
    if isinstance(owner, arith.AddiOp):
        return a[0] + b[0], a[1] + b[1]
    if isinstance(owner, arith.SubiOp):
        return a[0] - b[1], a[1] - b[0]
    if isinstance(owner, arith.MaxSIOp):
        return max(a[0], b[0]), max(a[1], b[1])
    if isinstance(owner, arith.MinSIOp):
        return min(a[0], b[0]), min(a[1], b[1])
    products = [x * y for x in a for y in b]
    return min(products), max(products)


def _decided_compare(op: arith.CmpiOp) -> bool | None:
    """The value of an `slt` whose operands' ranges decide it."""
    if op.predicate.value.data != SLT:
        return None
    a, b = _interval(op.lhs), _interval(op.rhs)
    if a is None or b is None:
        return None
    if a[1] < b[0]:
        return True
    if a[0] >= b[1]:
        return False
    return None


def _decided_extremum(op: arith.MaxSIOp | arith.MinSIOp) -> SSAValue | None:
    """The operand a maxsi or minsi always returns, when the ranges say."""
    a, b = _interval(op.lhs), _interval(op.rhs)
    if a is None or b is None:
        return None
    larger = op.lhs if a[0] >= b[1] else op.rhs if b[0] >= a[1] else None
    smaller = op.lhs if a[1] <= b[0] else op.rhs if b[1] <= a[0] else None
    return larger if isinstance(op, arith.MaxSIOp) else smaller


def _fold_decided(piece: ForOp) -> None:
    """Replaces the compares, selects and clamps the ranges decide."""
    for op in list(piece.walk()):
        if isinstance(op, arith.CmpiOp) and (value := _decided_compare(op)) is not None:
            constant = arith.ConstantOp(IntegerAttr(int(value), i1))
            assert op.parent is not None
            op.parent.insert_op_before(constant, op)
            op.result.replace_all_uses_with(constant.result)
        elif isinstance(op, arith.SelectOp) and (value := constant_int(op.cond)) is not None:
            op.result.replace_all_uses_with(op.lhs if value else op.rhs)
        elif isinstance(op, arith.MaxSIOp | arith.MinSIOp):
            kept = _decided_extremum(op)
            if kept is not None:
                op.result.replace_all_uses_with(kept)


def _unused(piece: ForOp) -> Iterator[Operation]:
    for op in piece.walk(reverse=True):
        if op is piece or any(result.uses for result in op.results):
            continue
        if is_pure_scalar(op) or isinstance(op, memref.LoadOp):
            yield op


def _erase_unused(piece: ForOp) -> None:
    """Erases the values nothing uses any more (a load has no effect)."""
    while dead := list(_unused(piece)):
        for op in dead:
            Rewriter.erase_op(op)


def _piece(top: ForOp, split: str, start: int, end: int, number: int) -> ForOp:
    """A copy of `top` whose loop `split` runs over [start, end), its loops
    renamed `_p<number>`, with what that range decides folded away."""
    piece = top.clone()
    suffix = f"_p{number}"
    loop = next(candidate for candidate in loops_in(piece) if loop_name(candidate) == split)
    for renamed in loops_in(piece):
        renamed.properties["name"] = StringAttr(loop_name(renamed) + suffix)
        renamed.induction_variable.name_hint = loop_name(renamed)
    lower = loop.lower.value.data
    loop.properties["upper"] = IntegerAttr(end - start + lower, loop.upper.type)
    if start != lower:
        shift = index_constant(start - lower)
        shifted = arith.AddiOp(loop.induction_variable, shift.result)
        # at the top of the innermost body, keeping the nest perfect
        nest = _nest(piece)
        sink_pure_ops(nest)
        innermost = nest[-1].body.block
        innermost.insert_ops_before([shift, shifted], innermost.first_op)
        loop.induction_variable.replace_uses_with_if(
            shifted.result, lambda use: use.operation is not shifted
        )
    _fold_decided(piece)
    _erase_unused(piece)
    return piece


class PartitionSelectChain(RewritePattern):
    """A top-level nest selecting on `i < c` -> one nest per range of i."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), FuncOp):
            return
        partition = find_partition(op)
        if partition is None or len(partition.bounds) + 1 > MAX_PIECES:
            return
        split = loop_name(partition.loop)
        pieces = [
            _piece(op, split, start, end, number)
            for number, (start, end) in enumerate(partition.ranges())
        ]
        rewriter.replace(op, pieces, [])


@dataclass(frozen=True)
class TirPartition(ModulePass):
    """Splits each top-level nest that selects on a loop index compared with
    constants into one nest per range (see the module docstring).

    Expects: tir-level functions (convert-te-to-tir), before any schedule.

    Produces: in place of each such nest, one copy per range between the
    constants (at most MAX_PIECES), its loops renamed `<name>_p<k>` (k from
    0), the compared loop running over the range's length with its index
    offset by the range's start; in each copy the compares, selects and
    index clamps that the range decides are folded, and the loads and index
    arithmetic no longer used are erased. Other nests are left as they are.

    Command line: `tir-partition`."""

    name = "tir-partition"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([PartitionSelectChain()])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
