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

Neighbouring ranges of one length whose chosen loads differ only in their
buffer (of one type) and the offset of the compared index are one nest
over all of them, loading from `select(i1 < 96, x1, select(i1 < 128, x2,
x3))` at `i1 - select(...)`: a pointer chosen per value of i1, outside the
inner loops. DenseNet's BN-ReLU over 25 maps is then 2 nests, not 25 (each
nest is scheduled, lowered and compiled: most of such a model's compile).
Only when the compared loop is not the nest's innermost, so that the
buffer is the same across the loop the schedule vectorizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i1
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from xtc.analysis.loops import constant_int, depends_on
from xtc.analysis.walk import ops_within, ops_within_reversed
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
INDEX_ARITHMETIC = (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.MaxSIOp, arith.MinSIOp)


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
    for op in ops_within(top):
        if isinstance(op, arith.SelectOp) and (hit := _select_bound(op, loops)) is not None:
            found.setdefault(hit[0], set()).add(hit[1])
    if not found:
        return None
    loop = max(found, key=lambda candidate: len(found[candidate]))
    return Partition(loop, tuple(sorted(found[loop])))


def chain_selects(top: ForOp, loop: ForOp) -> dict[arith.SelectOp, int]:
    """The selects of `top` on `i < c`, i the index of `loop`: their c."""
    loops = {loop.induction_variable: loop}
    chain: dict[arith.SelectOp, int] = {}
    for op in ops_within(top):
        if isinstance(op, arith.SelectOp) and (hit := _select_bound(op, loops)) is not None:
            chain[op] = hit[1]
    return chain


# ------------------------------------------------- ranges that share a nest

Signature = tuple[object, ...]
"""What a range's chosen value is, but for its buffer and index offset."""


Affine = tuple[int, int]
"""a * i + b, as (a, b)."""


def _affine(value: SSAValue, index: SSAValue, start: int, end: int) -> Affine | None:
    """`value` as an affine function of `index` over [start, end), through
    constants, addi, subi, muli by a constant, and maxsi and minsi whose
    operands are ordered all over the range; None for another value."""
    if value == index:
        return 1, 0
    constant = constant_int(value)
    if constant is not None:
        return 0, constant
    owner = value.owner
    if not isinstance(owner, INDEX_ARITHMETIC):
        return None
    a, b = _affine(owner.lhs, index, start, end), _affine(owner.rhs, index, start, end)
    if a is None or b is None:
        return None
    if isinstance(owner, arith.AddiOp):
        return a[0] + b[0], a[1] + b[1]
    if isinstance(owner, arith.SubiOp):
        return a[0] - b[0], a[1] - b[1]
    if isinstance(owner, arith.MuliOp):
        if a[0] and b[0]:
            return None
        return a[0] * b[1] + b[0] * a[1], a[1] * b[1]
    # the difference of two affine functions is smallest and largest at the range's ends
    differences = [(a[0] - b[0]) * at + a[1] - b[1] for at in (start, end - 1)]
    larger = a if min(differences) >= 0 else b if max(differences) <= 0 else None
    smaller = b if larger is a else a if larger is b else None
    return larger if isinstance(owner, arith.MaxSIOp) else smaller


def _index_shift(value: SSAValue, index: SSAValue, start: int, end: int) -> int | None:
    """c when `value` is `index - start + c` all over [start, end)."""
    affine = _affine(value, index, start, end)
    return None if affine is None or affine[0] != 1 else affine[1] + start


def _index_signature(
    value: SSAValue, index: SSAValue, start: int, end: int
) -> tuple[str, object] | None:
    """("fixed", the value or constant) for an index that does not depend
    on `index`; ("shift", c) for one that is `index - start + c` all over
    [start, end); None for another."""
    if not depends_on(value, index):
        constant = constant_int(value)
        return ("fixed", value if constant is None else constant)
    shift = _index_shift(value, index, start, end)
    return None if shift is None else ("shift", shift)


def _chosen(value: SSAValue, chain: dict[arith.SelectOp, int], start: int) -> SSAValue:
    """The value a select chain gives over a range starting at `start`."""
    while isinstance(select := value.owner, arith.SelectOp) and select in chain:
        value = select.lhs if start < chain[select] else select.rhs
    return value


def _chosen_by_chain(use: Use, chain: dict[arith.SelectOp, int]) -> bool:
    """Whether `use` is a select of the chain choosing the used value."""
    return use.index > 0 and isinstance(use.operation, arith.SelectOp) and use.operation in chain


def _roots(chain: dict[arith.SelectOp, int]) -> list[arith.SelectOp]:
    """The selects of the chain whose value is used outside it."""
    return [
        select
        for select in chain
        if not all(_chosen_by_chain(use, chain) for use in select.result.uses)
    ]


def _value_signature(
    value: SSAValue, index: SSAValue, start: int, end: int, block: Block
) -> object | None:
    """A chosen load, as its buffer type and indices' signatures; any other
    value as itself (ranges share a nest only where it is the same)."""
    load = value.owner
    if not isinstance(load, memref.LoadOp):
        return ("value", value)
    if load.parent is not block:
        return None
    indices = [_index_signature(i, index, start, end) for i in load.indices]
    if any(i is None for i in indices):
        return None
    return ("load", load.memref.type, tuple(indices))


def range_signatures(top: ForOp, partition: Partition) -> list[Signature | None]:
    """Per range, what decides whether it can share a nest with its
    neighbours (equal signatures can); None where it cannot."""
    nest = _nest(top)
    if partition.loop is nest[-1]:
        return [None] * len(partition.ranges())
    chain = chain_selects(top, partition.loop)
    roots = _roots(chain)
    index = partition.loop.induction_variable
    block = nest[-1].body.block
    signatures: list[Signature | None] = []
    for start, end in partition.ranges():
        chosen = [
            _value_signature(_chosen(root.result, chain, start), index, start, end, block)
            for root in roots
        ]
        signatures.append(None if None in chosen else (end - start, *chosen))
    return signatures


def _shareable(top: ForOp, partition: Partition, ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether each load chosen over these ranges is chosen by one root
    only and used by the chain only (its uses can take the shared load)."""
    chain = chain_selects(top, partition.loop)
    owner: dict[SSAValue, arith.SelectOp] = {}
    for root in _roots(chain):
        chosen = {_chosen(root.result, chain, start) for start, _ in ranges}
        if len(chosen) == 1:
            continue
        for value in chosen:
            if owner.setdefault(value, root) is not root:
                return False
            if not all(_chosen_by_chain(use, chain) for use in value.uses):
                return False
    return True


def group_ranges(top: ForOp, partition: Partition) -> list[list[tuple[int, int]]]:
    """The ranges, neighbours of equal signature gathered (see the module
    docstring)."""
    groups: list[list[tuple[int, int]]] = []
    previous: Signature | None = None
    signatures = range_signatures(top, partition)
    for bounds, signature in zip(partition.ranges(), signatures, strict=True):
        if groups and signature is not None and signature == previous:
            groups[-1].append(bounds)
        else:
            groups.append([bounds])
        previous = signature
    shared: list[list[tuple[int, int]]] = []
    for group in groups:
        if len(group) > 1 and not _shareable(top, partition, group):
            shared += [[bounds] for bounds in group]
        else:
            shared.append(group)
    return shared


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
    if not isinstance(owner, INDEX_ARITHMETIC):
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
    for op in ops_within(piece):
        if isinstance(op, arith.CmpiOp) and (value := _decided_compare(op)) is not None:
            constant = arith.ConstantOp(IntegerAttr(int(value), i1))
            assert op.parent is not None
            op.parent.insert_op_before(constant, op)
            op.result.replace_all_uses_with(constant.result)
        elif isinstance(op, arith.SelectOp) and (value := constant_int(op.cond)) is not None:
            op.result.replace_all_uses_with(op.lhs if value else op.rhs)
        elif isinstance(op, arith.SelectOp) and op.lhs == op.rhs:
            op.result.replace_all_uses_with(op.lhs)
        elif isinstance(op, arith.MaxSIOp | arith.MinSIOp):
            kept = _decided_extremum(op)
            if kept is not None:
                op.result.replace_all_uses_with(kept)


def _erase_unused(piece: ForOp) -> None:
    """Erases the values nothing uses any more (a load has no effect), in
    one walk from the end: an op's users come after it, and go first."""
    for op in ops_within_reversed(piece):
        if op is piece or any(result.uses for result in op.results):
            continue
        if is_pure_scalar(op) or isinstance(op, memref.LoadOp):
            Rewriter.erase_op(op)


def _by_range(
    conditions: Sequence[SSAValue], values: Sequence[SSAValue], ops: list[Operation]
) -> SSAValue:
    """values[k] where conditions[k] is the first to hold (the last value
    where none does), as a select chain appended to `ops`."""
    value = values[-1]
    for condition, chosen in reversed(list(zip(conditions, values, strict=False))):
        select = arith.SelectOp(condition, chosen, value)
        ops.append(select)
        value = select.result
    return value


def _share_loads(
    loads: Sequence[memref.LoadOp],
    shifts: Sequence[int | None],
    ranges: Sequence[tuple[int, int]],
    index: SSAValue,
) -> None:
    """Replaces `loads` (the k-th chosen over ranges[k], in one block) by one
    load from the buffer chosen by `index`'s range, at the indices of the
    first, but where shifts[position] is c: there at `index - start + c`."""
    block = loads[0].parent
    assert block is not None
    first = next(op for op in block.ops if op in loads)
    ops: list[Operation] = []

    def constant(value: int) -> SSAValue:
        ops.append(op := index_constant(value))
        return op.result

    conditions: list[SSAValue] = []
    for _, end in ranges[:-1]:
        ops.append(compare := arith.CmpiOp(index, constant(end), "slt"))
        conditions.append(compare.result)
    buffer = _by_range(conditions, [load.memref for load in loads], ops)
    indices: list[SSAValue] = []
    for kept, shift in zip(first.indices, shifts, strict=True):
        if shift is None:
            indices.append(kept)
            continue
        offsets = [constant(start - shift) for start, _ in ranges]
        ops.append(offset := arith.SubiOp(index, _by_range(conditions, offsets, ops)))
        indices.append(offset.result)
    ops.append(shared := memref.LoadOp.get(buffer, indices))
    block.insert_ops_before(ops, first)
    for load in loads:
        load.res.replace_all_uses_with(shared.res)


def _shared_loads(
    top: ForOp, partition: Partition, ranges: Sequence[tuple[int, int]]
) -> list[tuple[list[memref.LoadOp], list[int | None]]]:
    """Per root of the chain choosing loads that differ over `ranges`: the
    loads, in the ranges' order, and per index position its shift (None:
    the same index in all)."""
    chain = chain_selects(top, partition.loop)
    index = partition.loop.induction_variable
    start, end = ranges[0]
    shared: list[tuple[list[memref.LoadOp], list[int | None]]] = []
    for root in _roots(chain):
        chosen = [_chosen(root.result, chain, at) for at, _ in ranges]
        if len(set(chosen)) == 1:
            continue
        loads = [value.owner for value in chosen if isinstance(value.owner, memref.LoadOp)]
        assert len(loads) == len(chosen), "equal signatures: every range chooses a load"
        shifts = [
            _index_shift(i, index, start, end) if depends_on(i, index) else None
            for i in loads[0].indices
        ]
        shared.append((loads, shifts))
    return shared


def _piece(
    top: ForOp, partition: Partition, ranges: Sequence[tuple[int, int]], number: int
) -> ForOp:
    """A copy of `top` whose compared loop runs over the union of `ranges`,
    its loops renamed `_p<number>`, with what that range decides folded
    away and the loads chosen over several ranges made one (_share_loads)."""
    start, end = ranges[0][0], ranges[-1][1]
    mapping: dict[SSAValue, SSAValue] = {}
    piece = top.clone(mapping)
    split = loop_name(partition.loop)
    loop = next(candidate for candidate in loops_in(piece) if loop_name(candidate) == split)
    suffix = f"_p{number}"
    for renamed in loops_in(piece):
        renamed.properties["name"] = StringAttr(loop_name(renamed) + suffix)
        renamed.induction_variable.name_hint = loop_name(renamed)
    lower = loop.lower.value.data
    loop.properties["upper"] = IntegerAttr(end - start + lower, loop.upper.type)
    index = loop.induction_variable
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
        index = shifted.result
    if len(ranges) > 1:
        for loads, shifts in _shared_loads(top, partition, ranges):
            copies = [mapping[load.res].owner for load in loads]
            copied = [copy for copy in copies if isinstance(copy, memref.LoadOp)]
            _share_loads(copied, shifts, ranges, index)
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
        if partition is None:
            return
        groups = group_ranges(op, partition)
        if len(groups) > MAX_PIECES:
            return
        pieces = [_piece(op, partition, ranges, number) for number, ranges in enumerate(groups)]
        rewriter.replace(op, pieces, [])


@dataclass(frozen=True)
class TirPartition(ModulePass):
    """Splits each top-level nest that selects on a loop index compared with
    constants into one nest per range (see the module docstring).

    Expects: tir-level functions (convert-te-to-tir), before any schedule.

    Produces: in place of each such nest, one copy per range between the
    constants, or per run of neighbouring ranges that share a nest (at most
    MAX_PIECES copies), its loops renamed `<name>_p<k>` (k from 0), the
    compared loop running over the range's (run's) length with its index
    offset by its start; in each copy the compares, selects and index
    clamps that the range decides are folded, and the loads and index
    arithmetic no longer used are erased. Ranges share a nest when they
    have one length, the compared loop is not the innermost, and each
    select chain chooses in each of them a load from a buffer of one type
    (only the chain using it), at the same indices but the compared one,
    which is the loop index less a constant: in the run's copy those loads
    are one, from `arith.select`s of the buffers on `i < end` of each range
    but the last, at the index less the constant chosen the same way.
    Other nests are left as they are.

    Command line: `tir-partition`."""

    name = "tir-partition"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([PartitionSelectChain()])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
