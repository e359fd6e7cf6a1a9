"""tir-concat-in-place: a concatenation's inputs computed straight into
their places in its output, and its copy gone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, NoneAttr, i8
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


@dataclass
class _Member:
    """A buffer of the concatenation (an input or its output): its alloc,
    its deallocs, and its byte offset in the output."""

    alloc: memref.AllocOp
    deallocs: list[memref.DeallocOp]
    offset: int


def _member(value: SSAValue, block: Block, offset: int) -> _Member | str:
    """The buffer as a member at `offset`, or why it cannot be one."""
    alloc = value.owner
    if not isinstance(alloc, memref.AllocOp) or alloc.parent_block() is not block:
        return "a buffer is not allocated in the function's body"
    if _buffer_bytes(alloc.memref.type) is None or alloc.dynamic_sizes or alloc.symbol_operands:
        return "a buffer is not static"
    deallocs = [u.operation for u in value.uses if isinstance(u.operation, memref.DeallocOp)]
    if not deallocs or any(d.parent_block() is not block for d in deallocs):
        return "a buffer is not freed in the function's body"
    return _Member(alloc, deallocs, offset)


def _is_other_concat(op: Operation, call: CallOp, axes: Mapping[str, int]) -> bool:
    """Whether `op` is a call of a concat kernel (in `axes`) other than `call`."""
    return isinstance(op, CallOp) and op is not call and op.callee.string_value() in axes


def _members(call: CallOp, axis: int, axes: Mapping[str, int]) -> list[_Member] | str:
    """The output (first) and the inputs at their byte offsets in it, or
    why the concatenation stays a copy."""
    *inputs, output = call.arguments
    block = call.parent_block()
    assert block is not None
    out_type = output.type
    if not isinstance(out_type, MemRefType) or any(d != 1 for d in out_type.get_shape()[:axis]):
        return "the dimensions before its axis are not all 1"
    if len(set(inputs)) != len(inputs) or output in inputs:
        return "a buffer is passed twice"
    members = [_member(output, block, 0)]
    offset = 0
    for value in inputs:
        if any(_is_other_concat(u.operation, call, axes) for u in value.uses):
            return "an input is concatenated more than once"
        if offset % VIEW_ALIGNMENT:
            return f"an input's place in the output is not {VIEW_ALIGNMENT}-byte aligned"
        members.append(_member(value, block, offset))
        offset += _buffer_bytes(value.type) or 0
    reasons = [m for m in members if isinstance(m, str)]
    if reasons:
        return reasons[0]
    return [m for m in members if isinstance(m, _Member)]


def _rewrite(call: CallOp, members: Sequence[_Member], rewriter: PatternRewriter) -> None:
    """One byte buffer for all members, each a view of it at its offset,
    from the first member's alloc to the last member's dealloc; the call goes."""
    block = call.parent_block()
    assert block is not None
    position: dict[Operation, int] = {op: i for i, op in enumerate(block.ops)}
    first = min((m.alloc for m in members), key=position.__getitem__)
    deallocs = [d for m in members for d in m.deallocs]
    last = max(deallocs, key=position.__getitem__)
    size = _buffer_bytes(members[0].alloc.memref.type)
    assert size is not None
    raw = memref.AllocOp.get(i8, VIEW_ALIGNMENT, [size])
    rewriter.insert(raw, InsertPoint.before(first))
    rewriter.insert(memref.DeallocOp.get(raw), InsertPoint.after(last))
    for member in members:
        shift = arith.ConstantOp(IntegerAttr(member.offset, IndexType()))
        view = memref.ViewOp(raw.memref, shift.result, [], member.alloc.memref.type)
        rewriter.insert(view, InsertPoint.after(raw))
        rewriter.insert(shift, InsertPoint.after(raw))
        for dealloc in member.deallocs:
            rewriter.erase(dealloc)
        rewriter.replace(member.alloc, [], [view.result])
    rewriter.erase(call)


@dataclass(frozen=True)
class ConcatIntoViews(RewritePattern):
    """A call of a concat kernel (one of `axes`: the concat kernels' axes by
    name) -> its inputs and output as views of one buffer, the inputs side
    by side where the output has them; no call."""

    axes: Mapping[str, int]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CallOp, rewriter: PatternRewriter) -> None:
        axis = self.axes.get(op.callee.string_value())
        if axis is None:
            return
        members = _members(op, axis, self.axes)
        if isinstance(members, str):
            report(
                Remark(
                    "missed",
                    CONCAT_COPIED,
                    PASS_NAME,
                    f"@{op.callee.string_value()} stays a copy: {members}",
                    function=op.callee.string_value(),
                    op=op,
                )
            )
            return
        _rewrite(op, members, rewriter)


@dataclass(frozen=True)
class TirConcatInPlace(ModulePass):
    """Removes the copy of a concatenation along an axis with only 1s
    before it: there each input is a contiguous run of the output's bytes,
    so its producer can write it there (TVM's and ONNX Runtime's concat
    stay copies; XLA's buffer assignment shares them this way).

    Expects: a model function at tir, as convert-te-to-tir leaves it: calls
    of kernels over buffers that are top-level `memref.alloc`s freed by
    top-level `memref.dealloc`s, before tir-plan-memory. A concat kernel is
    one with `tir.concat_axis = a` (convert-te-to-tir sets it), called with
    its inputs then its output.

    Produces: for each call of a concat kernel whose output and inputs are
    distinct static buffers of the function's body, each input concatenated
    by no other call, every dimension of the output before `a` of size 1 and
    every input's place 64-byte aligned: one `memref.alloc() {alignment =
    64} : memref<Nxi8>` (N the output's bytes) where the first of them was
    allocated, the output and each input a `memref.view` of it (the inputs
    at their byte offsets in the output), one `memref.dealloc` where the
    last of them was freed, and no call. Any other concat call stays, with
    a `concat-copied` remark saying why.
    """

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            ConcatIntoViews(concat_axes(op)), apply_recursively=False
        ).rewrite_module(op)
