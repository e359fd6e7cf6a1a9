"""tir-plan-memory: a function's intermediate buffers laid out in one arena,
buffers that are never live at the same time sharing bytes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    ModuleOp,
    NoneAttr,
    i8,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from xtc.analysis.types import ElementSizeError, element_bytes

ARENA_ALIGNMENT = 64
"""Every buffer starts on a 64-byte boundary of the 64-byte aligned arena."""
ARENA_BYTES_ATTR = "tir.arena_bytes"
UNPLANNED_BYTES_ATTR = "tir.unplanned_bytes"


def align_up(size: int, alignment: int = ARENA_ALIGNMENT) -> int:
    """`size` rounded up to a multiple of `alignment`."""
    return -(-size // alignment) * alignment


def _intervals_overlap(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    """Whether two closed live intervals [start, end] share a position."""
    return a[0] <= b[1] and b[0] <= a[1]


def _lowest_free_offset(busy: list[tuple[int, int]], size: int) -> int:
    """The lowest offset where `size` bytes fit between the busy byte ranges
    [begin, end) (all multiples of the alignment): first fit by offset."""
    candidate = 0
    for begin, end in sorted(busy):
        if candidate + size <= begin:
            break
        candidate = max(candidate, end)
    return candidate


def _check_intervals(intervals: Sequence[tuple[int, int, int]]) -> None:
    for position, (start, end, size) in enumerate(intervals):
        if start > end:
            raise ValueError(
                f"plan_offsets: buffer {position} ends ({end}) before it starts ({start})"
            )
        if size < 0:
            raise ValueError(f"plan_offsets: buffer {position} has a negative size ({size})")


def plan_offsets(intervals: Sequence[tuple[int, int, int]]) -> tuple[list[int], int]:
    """Offsets in one arena for buffers given as (start, end, size): live
    from position `start` to position `end` (both included), `size` bytes,
    rounded up to 64. Returns each buffer's offset (a multiple of 64) and the
    arena's size in bytes. Buffers live at the same time never share a byte.

    Greedy by size: the largest buffer first, each at the lowest offset that
    does not overlap a buffer already placed and live at the same time.
    Zero-size buffers are at offset 0 and conflict with nothing."""
    _check_intervals(intervals)
    sizes = [align_up(size) for _, _, size in intervals]
    order = sorted(range(len(intervals)), key=lambda i: (-sizes[i], intervals[i][0], i))
    offsets = [0] * len(intervals)
    placed: list[int] = []
    for i in order:
        if sizes[i] == 0:
            continue
        busy = [
            (offsets[j], offsets[j] + sizes[j])
            for j in placed
            if _intervals_overlap(intervals[i], intervals[j])
        ]
        offsets[i] = _lowest_free_offset(busy, sizes[i])
        placed.append(i)
    arena = max((offsets[i] + sizes[i] for i in placed), default=0)
    return offsets, arena


def _arena_element_bytes(t: Attribute) -> int | None:
    """Bytes one element takes in the arena; None for an element type the
    arena does not hold: index (a view of bytes needs a fixed width) and
    types with no byte size (vectors, ...)."""
    if isinstance(t, IndexType):
        return None
    try:
        return element_bytes(t)
    except ElementSizeError:
        return None


def _buffer_bytes(alloc: memref.AllocOp) -> int | None:
    """The byte size of a static, identity-layout buffer a view can stand
    for; None for any other alloc."""
    if alloc.dynamic_sizes or alloc.symbol_operands:
        return None
    if alloc.alignment is not None and ARENA_ALIGNMENT % alloc.alignment.value.data != 0:
        return None
    t = alloc.memref.type
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        return None
    if not isinstance(t.layout, NoneAttr) or not isinstance(t.memory_space, NoneAttr):
        return None
    size = _arena_element_bytes(t.get_element_type())
    return None if size is None else prod(shape) * size


@dataclass
class _Buffer:
    """A plannable alloc with its live interval and its deallocs."""

    alloc: memref.AllocOp
    start: int
    end: int
    size: int
    deallocs: list[memref.DeallocOp]


def _plannable_buffer(
    alloc: memref.AllocOp, block: Block, position: dict[Operation, int]
) -> _Buffer | None:
    """The alloc as a buffer when it is static and every dealloc of it is a
    top-level dealloc of `block` (at least one); else None."""
    size = _buffer_bytes(alloc)
    if size is None:
        return None
    users = [use.operation for use in alloc.memref.uses]
    deallocs = [u for u in users if isinstance(u, memref.DeallocOp)]
    if not deallocs or any(d.parent_block() is not block for d in deallocs):
        return None
    # Every use counts, so a use after the dealloc still keeps the bytes.
    ancestors = [block.find_ancestor_op_in_block(u) for u in users]
    end = max(position[a] for a in ancestors if a is not None)
    return _Buffer(alloc, position[alloc], end, size, deallocs)


def _plannable_buffers(block: Block) -> list[_Buffer]:
    """The top-level allocs of `block` that the arena can hold."""
    position: dict[Operation, int] = {op: i for i, op in enumerate(block.ops)}
    buffers = [
        _plannable_buffer(op, block, position) for op in block.ops if isinstance(op, memref.AllocOp)
    ]
    return [b for b in buffers if b is not None]


class PlanFunctionMemory(RewritePattern):
    """Top-level alloc/dealloc pairs of a function -> views of one arena
    allocated at the start of the function and freed before its return."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        block = op.body.blocks.first
        if ARENA_BYTES_ATTR in op.attributes or block is None or len(op.body.blocks) != 1:
            return
        terminator = block.last_op
        if not isinstance(terminator, ReturnOp):
            return
        buffers = _plannable_buffers(block)
        if not buffers:
            return
        offsets, arena_bytes = plan_offsets([(b.start, b.end, b.size) for b in buffers])
        arena = memref.AllocOp.get(i8, ARENA_ALIGNMENT, [arena_bytes])
        arena.memref.name_hint = "arena"
        rewriter.insert(arena, InsertPoint.at_start(block))
        for buffer, offset in zip(buffers, offsets, strict=True):
            _replace_by_view(buffer, arena, offset, rewriter)
        rewriter.insert(memref.DeallocOp.get(arena), InsertPoint.before(terminator))
        op.attributes[ARENA_BYTES_ATTR] = IntegerAttr(arena_bytes, i64)
        unplanned = sum(align_up(b.size) for b in buffers)
        op.attributes[UNPLANNED_BYTES_ATTR] = IntegerAttr(unplanned, i64)
        rewriter.notify_op_modified(op)


def _replace_by_view(
    buffer: _Buffer, arena: memref.AllocOp, offset: int, rewriter: PatternRewriter
) -> None:
    """The buffer's alloc becomes a view of the arena at `offset`; its
    deallocs go (the arena is freed once)."""
    for dealloc in buffer.deallocs:
        rewriter.erase(dealloc)
    shift = arith.ConstantOp(IntegerAttr(offset, IndexType()))
    rewriter.insert(shift, InsertPoint.before(buffer.alloc))
    view = memref.ViewOp(arena.memref, shift.result, [], buffer.alloc.memref.type)
    rewriter.replace(buffer.alloc, view)


@dataclass(frozen=True)
class TirPlanMemory(ModulePass):
    """Plans a static memory arena per function, reusing bytes between
    buffers whose lifetimes do not overlap (TVM's StorageRewrite, as a
    static plan over the whole model function).

    Expects: tir-level functions, as convert-te-to-tir leaves them, whose
    intermediate buffers are top-level `memref.alloc` ops of static shape,
    each freed by a top-level `memref.dealloc` in the function's single
    block, which ends in `func.return`. Other allocs (dynamic, with a layout or
    memory space, with a nested or missing dealloc, an element type other
    than iN/f16/f32/f64, an alignment above 64) are left as they are, as is a
    function without a plannable alloc.

    Produces: for each function with plannable allocs, `%arena = memref.alloc()
    {alignment = 64} : memref<Nxi8>` at the start of its block, each
    plannable alloc replaced by `memref.view %arena[%offset][]` (an
    `arith.constant` index, a multiple of 64) where it was, its deallocs
    removed, and `memref.dealloc %arena` just before `func.return`. Buffers
    live at the same time (from alloc to last use or dealloc, both included)
    never share a byte. The function gets `tir.arena_bytes = N : i64` and
    `tir.unplanned_bytes = M : i64` (the sum of the 64-rounded sizes, what
    separate allocs would take); a function already carrying
    `tir.arena_bytes` is left alone, so the pass is idempotent.
    """

    name = "tir-plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PlanFunctionMemory(), apply_recursively=False).rewrite_module(op)
