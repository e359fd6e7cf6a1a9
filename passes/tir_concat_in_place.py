"""tir-concat-in-place: a concatenation's inputs computed straight into
their places in its output, and its copy gone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    i8,
)
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from xtc.analysis.types import ElementSizeError, element_bytes
from xtc.dialects.tir import CONCAT_AXIS_ATTR
from xtc.remarks import Remark, report

PASS_NAME = "tir-concat-in-place"
CONCAT_COPIED = "concat-copied"
"""Remark category: a concatenation left as a copy, and why."""
VIEW_ALIGNMENT = 64
"""Each input's place in the output starts on a 64-byte boundary, as every
buffer does (kernels may load its rows aligned)."""


def concat_axes(module: ModuleOp) -> dict[str, int]:
    """Each concat kernel's `tir.concat_axis`, by the kernel's name (found
    once: a symbol lookup per call scans the module's ops)."""
    axes: dict[str, int] = {}
    for op in module.ops:
        if isinstance(op, FuncOp):
            axis = op.attributes.get(CONCAT_AXIS_ATTR)
            if isinstance(axis, IntegerAttr):
                axes.setdefault(op.sym_name.data, axis.value.data)
    return axes


def _buffer_bytes(t: Attribute) -> int | None:
    """Bytes of a static, identity-layout buffer type; None for any other."""
    if not isinstance(t, MemRefType):
        return None
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        return None
    if not isinstance(t.layout, NoneAttr) or not isinstance(t.memory_space, NoneAttr):
        return None
    try:
        return prod(shape) * element_bytes(t.get_element_type())
    except ElementSizeError:
        return None


def _deallocs(value: SSAValue, block: Block) -> list[memref.DeallocOp] | None:
    """The deallocs of a buffer, when it has some and all are in `block`."""
    deallocs = [u.operation for u in value.uses if isinstance(u.operation, memref.DeallocOp)]
    if not deallocs or any(d.parent_block() is not block for d in deallocs):
        return None
    return deallocs


@dataclass
class _Member:
    """A buffer of the concatenation (an input or its output): its alloc,
    its deallocs, and its byte offset in the output."""

    alloc: memref.AllocOp
    deallocs: list[memref.DeallocOp]
    offset: int


@dataclass
class _Placed:
    """A concatenation's output that is already a view of a byte buffer of
    this pass (it is an input of a later concatenation, placed before it):
    the buffer, its deallocs, and the output's byte offset in it."""

    raw: memref.AllocOp
    deallocs: list[memref.DeallocOp]
    offset: int


def _member(value: SSAValue, block: Block, offset: int) -> _Member | str:
    """The buffer as a member at `offset`, or why it cannot be one."""
    alloc = value.owner
    if not isinstance(alloc, memref.AllocOp) or alloc.parent_block() is not block:
        return "a buffer is not allocated in the function's body"
    if _buffer_bytes(alloc.memref.type) is None or alloc.dynamic_sizes or alloc.symbol_operands:
        return "a buffer is not static"
    deallocs = _deallocs(value, block)
    if deallocs is None:
        return "a buffer is not freed in the function's body"
    return _Member(alloc, deallocs, offset)


def _placed(value: SSAValue, block: Block) -> _Placed | None:
    """The output's place when it is a `memref.view` at a constant offset of
    a static byte buffer allocated and freed in `block`; None otherwise."""
    view = value.owner
    if not isinstance(view, memref.ViewOp) or view.parent_block() is not block or view.sizes:
        return None
    raw, shift = view.source.owner, view.byte_shift.owner
    if not isinstance(raw, memref.AllocOp) or raw.parent_block() is not block:
        return None
    if raw.memref.type.get_element_type() != i8 or _buffer_bytes(raw.memref.type) is None:
        return None
    if not isinstance(shift, arith.ConstantOp) or not isinstance(shift.value, IntegerAttr):
        return None
    deallocs = _deallocs(raw.memref, block)
    if deallocs is None or _buffer_bytes(value.type) is None:
        return None
    return _Placed(raw, deallocs, shift.value.value.data)


def _is_concatenated_elsewhere(value: SSAValue, call: CallOp, axes: Mapping[str, int]) -> bool:
    """Whether `value` is an input of a concat kernel's call (one in `axes`)
    other than `call`; being another concatenation's output is no matter:
    that one is then a prefix, or a part, of this one."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, CallOp) and user is not call and user.callee.string_value() in axes:
            if use.index < len(user.arguments) - 1:
                return True
    return False


def _members(
    call: CallOp, axis: int, axes: Mapping[str, int]
) -> tuple[_Placed | None, list[_Member]] | str:
    """Where the output already is (None: nowhere yet), and the members:
    the output (first, when it is not placed) and the inputs at their byte
    offsets in it; or why the concatenation stays a copy."""
    *inputs, output = call.arguments
    block = call.parent_block()
    assert block is not None
    out_type = output.type
    if not isinstance(out_type, MemRefType) or any(d != 1 for d in out_type.get_shape()[:axis]):
        return "the dimensions before its axis are not all 1"
    if len(set(inputs)) != len(inputs) or output in inputs:
        return "a buffer is passed twice"
    placed = _placed(output, block)
    members = [] if placed is not None else [_member(output, block, 0)]
    base = placed.offset if placed is not None else 0
    offset = 0
    for value in inputs:
        if _is_concatenated_elsewhere(value, call, axes):
            return "an input is concatenated more than once"
        if (base + offset) % VIEW_ALIGNMENT:
            return f"an input's place in the output is not {VIEW_ALIGNMENT}-byte aligned"
        members.append(_member(value, block, offset))
        offset += _buffer_bytes(value.type) or 0
    reasons = [m for m in members if isinstance(m, str)]
    if reasons:
        return reasons[0]
    return placed, [m for m in members if isinstance(m, _Member)]


def _byte_buffer(
    members: Sequence[_Member], placed: _Placed | None, rewriter: PatternRewriter
) -> tuple[memref.AllocOp, int]:
    """The byte buffer that holds the members, allocated before the first
    of them and freed after the last (`placed`'s, moved as needed, or a new
    one the size of the output, the first member), and their base offset
    in it."""
    block = members[0].alloc.parent_block()
    assert block is not None
    position: dict[Operation, int] = {op: i for i, op in enumerate(block.ops)}
    first = min((m.alloc for m in members), key=position.__getitem__)
    last = max((d for m in members for d in m.deallocs), key=position.__getitem__)
    if placed is None:
        size = _buffer_bytes(members[0].alloc.memref.type)
        assert size is not None
        raw = memref.AllocOp.get(i8, VIEW_ALIGNMENT, [size])
        rewriter.insert(raw, InsertPoint.before(first))
        rewriter.insert(memref.DeallocOp.get(raw), InsertPoint.after(last))
        return raw, 0
    if position[placed.raw] > position[first]:
        placed.raw.detach()
        rewriter.insert(placed.raw, InsertPoint.before(first))
    latest = max(placed.deallocs, key=position.__getitem__)
    if position[latest] < position[last]:
        latest.detach()
        rewriter.insert(latest, InsertPoint.after(last))
    return placed.raw, placed.offset


def _rewrite(
    call: CallOp, placed: _Placed | None, members: Sequence[_Member], rewriter: PatternRewriter
) -> None:
    """One byte buffer for all members, each a view of it at its offset,
    from the first member's alloc to the last member's dealloc; the call goes."""
    raw, base = _byte_buffer(members, placed, rewriter)
    for member in members:
        shift = arith.ConstantOp(IntegerAttr(base + member.offset, IndexType()))
        view = memref.ViewOp(raw.memref, shift.result, [], member.alloc.memref.type)
        rewriter.insert(view, InsertPoint.after(raw))
        rewriter.insert(shift, InsertPoint.after(raw))
        for dealloc in member.deallocs:
            rewriter.erase(dealloc)
        rewriter.replace(member.alloc, [], [view.result])
    rewriter.erase(call)


@dataclass
class ConcatCalls:
    """The concat kernels some of whose calls were removed, and those some
    of whose calls stay."""

    removed: set[str] = field(default_factory=set[str])
    kept: set[str] = field(default_factory=set[str])

    def uncalled(self) -> set[str]:
        return self.removed - self.kept


@dataclass(frozen=True)
class ConcatIntoViews(RewritePattern):
    """A call of a concat kernel (one of `axes`: the concat kernels' axes by
    name) -> its inputs and output as views of one buffer, the inputs side
    by side where the output has them (within the buffer of the output,
    when the output is already a view placed by a later concatenation); no
    call. `calls` tallies the kernels whose calls go and stay."""

    axes: Mapping[str, int]
    calls: ConcatCalls

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CallOp, rewriter: PatternRewriter) -> None:
        callee = op.callee.string_value()
        axis = self.axes.get(callee)
        if axis is None:
            return
        found = _members(op, axis, self.axes)
        if isinstance(found, str):
            self.calls.kept.add(callee)
            report(
                Remark(
                    "missed",
                    CONCAT_COPIED,
                    PASS_NAME,
                    f"@{callee} stays a copy: {found}",
                    function=callee,
                    op=op,
                )
            )
            return
        self.calls.removed.add(callee)
        _rewrite(op, *found, rewriter)


def _erase_private_functions(module: ModuleOp, names: set[str]) -> None:
    """Erases the private functions (or declarations) named `names`."""
    for op in list(module.ops):
        if isinstance(op, FuncOp) and op.sym_name.data in names:
            if op.sym_visibility == StringAttr("private"):
                module.body.block.erase_op(op)


@dataclass(frozen=True)
class TirConcatInPlace(ModulePass):
    """Removes the copy of a concatenation along an axis with only 1s
    before it: there each input is a contiguous run of the output's bytes,
    so its producer can write it there (TVM's and ONNX Runtime's concat
    stay copies; XLA's buffer assignment shares them this way).

    Expects: a model function at tir, as convert-te-to-tir leaves it: calls
    of kernels over buffers that are top-level `memref.alloc`s freed by
    top-level `memref.dealloc`s, before tir-plan-memory (the only byte
    buffers viewed at constant offsets are this pass's). A concat kernel is
    one with `tir.concat_axis = a` (convert-te-to-tir sets it), called with
    its inputs then its output.

    Produces: for each call of a concat kernel whose output and inputs are
    distinct static buffers of the function's body, each input concatenated
    by no other call (being another concatenation's output is allowed),
    every dimension of the output before `a` of size 1 and every input's
    place 64-byte aligned: one `memref.alloc() {alignment = 64} :
    memref<Nxi8>` (N the output's bytes) where the first of them was
    allocated, the output and each input a `memref.view` of it (the inputs
    at their byte offsets in the output), one `memref.dealloc` where the
    last of them was freed, and no call. Chains are one buffer: the calls
    are taken from the last, and a concatenation whose output is already a
    view of such a buffer (an input of a later one: DenseNet's
    `C2 = concat(C1, f2)`) puts its inputs in that buffer, at the output's
    offset plus theirs, the buffer allocated and freed around them all.
    Any other concat call stays, with a `concat-copied` remark saying why.
    A private concat kernel whose calls all went is erased (it is never
    compiled).
    """

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        calls = ConcatCalls()
        PatternRewriteWalker(
            ConcatIntoViews(concat_axes(op), calls), apply_recursively=False, walk_reverse=True
        ).rewrite_module(op)
        _erase_private_functions(op, calls.uncalled())
