"""The rewrites that more than one schedule pass performs: `split_loop`
(tir-split, and tir-tile on each loop), `reorder_loops` (tir-reorder, and
tir-tile after its splits), and the local buffer that tir-cache-read and
tir-compute-at allocate and redirect loads to (`allocate_local`,
`redirect`). Each names in its refusals the pass that asked for it."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, memref
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from xtc.analysis.loops import AccessIndex, Dimension, Refuse, constant_int
from xtc.analysis.types import ElementSizeError, element_bytes
from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import (
    ScheduleError,
    check_fresh_names,
    check_unit_stride,
    emit_sum,
    find_loop,
    function_name,
    has_inner_loop,
    index_constant,
    is_pure_scalar,
    loop_like,
    loop_name,
    loops_in,
    nest_of,
    new_loop,
    perfect_nest,
    rename_loops_inside,
    sink_pure_ops,
)

# ---------------------------------------------------------------- split


def _check_split(pass_name: str, func: FuncOp, loop: ForOp, factor: int) -> None:
    """Refuses a loop that is not serial from 0 step 1, or a factor outside
    [1, extent], in a diagnostic of pass `pass_name`."""
    check_unit_stride(pass_name, func, loop)
    where = f"loop '{loop_name(loop)}' in @{function_name(func)}"
    if loop.kind.data != "serial":
        raise ScheduleError(
            pass_name, f"{where} is {loop.kind.data}; split a loop before setting its kind", loop
        )
    if not 1 <= factor <= loop.extent:
        raise ScheduleError(
            pass_name, f"factor {factor} is not in [1, {loop.extent}], the extent of {where}", loop
        )


def _tail_names(loop: ForOp) -> tuple[str, list[str]]:
    """The tail loop's name and the names the loops of its copy of the body
    get: each loop's name with `_<tail loop name>` appended."""
    tail = f"{loop_name(loop)}_tail"
    inner = [loop_name(i) for i in loops_in(loop) if i is not loop]
    return tail, [f"{name}_{tail}" for name in inner]


def _main_nest(loop: ForOp, factor: int) -> tuple[ForOp, ForOp, SSAValue]:
    """`L_o` (extent // factor) around `L_i` (factor), the inner body
    starting with `L = L_o * factor + L_i`; the two loops and that value."""
    name = loop_name(loop)
    outer = new_loop(f"{name}_o", loop.extent // factor)
    inner = new_loop(f"{name}_i", factor)
    outer.body.block.add_op(inner)
    scale = index_constant(factor)
    start = arith.MuliOp(outer.induction_variable, scale.result)
    index = arith.AddiOp(start.result, inner.induction_variable)
    index.result.name_hint = name
    inner.body.block.add_ops([scale, start, index])
    return outer, inner, index.result


def _tail_loop(loop: ForOp, factor: int) -> ForOp:
    """`L_tail` over the last extent % factor iterations with a copy of the
    body, its inner loops renamed `<name>_L_tail`."""
    tail_name, _ = _tail_names(loop)
    done = loop.extent // factor * factor
    tail = new_loop(tail_name, loop.extent - done)
    base = index_constant(done)
    index = arith.AddiOp(base.result, tail.induction_variable)
    index.result.name_hint = loop_name(loop)
    tail.body.block.add_ops([base, index])
    mapping: dict[SSAValue, SSAValue] = {loop.induction_variable: index.result}
    for op in loop.body.block.ops:
        tail.body.block.add_op(op.clone(mapping))
    rename_loops_inside(tail, f"_{tail_name}")
    return tail


_QUOTIENTS = (arith.FloorDivSIOp, arith.DivSIOp, arith.DivUIOp)
_REMAINDERS = (arith.RemSIOp, arith.RemUIOp)


def _fold_quotient_and_remainder(
    index: SSAValue, factor: int, outer: ForOp, inner: ForOp, rewriter: PatternRewriter
) -> None:
    """`L // factor` -> `L_o` and `L % factor` -> `L_i` where L = L_o ·
    factor + L_i (0 <= L_i < factor, L_o >= 0): the blocked index of an
    operand laid out in blocks of `factor` (a conv2d weight in OIHW16o)
    becomes the loop variables themselves."""
    for use in list(index.uses):
        user = use.operation
        if not isinstance(user, _QUOTIENTS + _REMAINDERS):
            continue  # an index_cast or a multiply has no divisor to compare
        if use.index != 0 or constant_int(user.operands[1]) != factor:
            continue
        if isinstance(user, _QUOTIENTS):
            rewriter.replace(user, [], [outer.induction_variable])
        elif isinstance(user, _REMAINDERS):
            rewriter.replace(user, [], [inner.induction_variable])


def split_loop(
    pass_name: str, func: FuncOp, name: str, factor: int, rewriter: PatternRewriter
) -> None:
    """`for L` -> `for L_o { for L_i { L = L_o * factor + L_i; body } }`,
    then `for L_tail { L = (E // factor) * factor + L_tail; body }` when
    factor does not divide E (tir-split; tir-tile splits with it too).
    Refusals name `pass_name`."""
    loop = find_loop(pass_name, func, name)
    _check_split(pass_name, func, loop, factor)
    new_names = [f"{name}_o", f"{name}_i"]
    peeled = loop.extent % factor != 0
    if peeled:
        tail_name, copies = _tail_names(loop)
        new_names += [tail_name, *copies]
    check_fresh_names(pass_name, func, new_names, loop)
    replacement: list[Operation] = []
    tail = _tail_loop(loop, factor) if peeled else None
    outer, inner, index = _main_nest(loop, factor)
    rewriter.inline_block(loop.body.block, InsertPoint.at_end(inner.body.block), [index])
    _fold_quotient_and_remainder(index, factor, outer, inner, rewriter)
    replacement.append(outer)
    if tail is not None:
        replacement.append(tail)
    rewriter.replace(loop, replacement, [])


# ---------------------------------------------------------------- reorder


def _check_vectorized_stays_innermost(
    pass_name: str, func: FuncOp, nest: Sequence[ForOp], order: Sequence[str]
) -> None:
    """Refuses an order that would put a loop marked vectorized around
    another loop."""
    innermost_body_has_loop = has_inner_loop(nest[-1])
    for loop in nest:
        if loop.kind.data != "vectorized":
            continue
        last = loop_name(loop) == order[-1]
        if not last or innermost_body_has_loop:
            raise ScheduleError(
                pass_name,
                f"loop '{loop_name(loop)}' in @{function_name(func)} is vectorized and "
                "would hold another loop in this order",
                loop,
            )


def reorder_loops(
    pass_name: str, func: FuncOp, order: Sequence[str], rewriter: PatternRewriter
) -> None:
    """The perfect nest of the loops named in `order` -> the same loops
    nested in that order (tir-reorder; tir-tile reorders with it too).
    Refusals name `pass_name`."""
    nest = perfect_nest(pass_name, func, order)
    _check_vectorized_stays_innermost(pass_name, func, nest, order)
    if [loop_name(loop) for loop in nest] == list(order):
        return
    sink_pure_ops(nest)
    by_name = {loop_name(loop): loop for loop in nest}
    reordered = [loop_like(by_name[name]) for name in order]
    body = nest_of(reordered)
    for old, new in zip((by_name[n] for n in order), reordered, strict=True):
        old.induction_variable.replace_all_uses_with(new.induction_variable)
    innermost = nest[-1]
    rewriter.inline_block(
        innermost.body.block,
        InsertPoint.at_end(body),
        [reordered[order.index(loop_name(innermost))].induction_variable],
    )
    rewriter.replace(nest[0], reordered[0], [])


# ---------------------------------------------------------------- local buffers

LOCAL_ALIGNMENT = 64
MAX_STACK_BYTES = 64 * 1024
"""A local buffer up to this size is a `memref.alloca`, a larger one a
`memref.alloc` freed at the end of the loop body."""
MAX_LOCAL_BYTES = 16 * 1024 * 1024
"""The largest local buffer tir-cache-read or tir-compute-at makes."""


def allocate_local(
    element: Attribute, shape: Sequence[int], name: str
) -> tuple[Operation, SSAValue, bool]:
    """A 64-byte aligned local buffer: an alloca, or an alloc when it is
    larger than MAX_STACK_BYTES. The op, its value and whether it must be
    freed."""
    on_heap = prod(shape) * element_bytes(element) > MAX_STACK_BYTES
    kind = memref.AllocOp if on_heap else memref.AllocaOp
    op = kind.get(element, LOCAL_ALIGNMENT, shape)
    op.memref.name_hint = name
    return op, op.memref, on_heap


def _erase_dead_index_ops(
    values: Sequence[SSAValue], loop: ForOp, rewriter: PatternRewriter
) -> None:
    """Erases the pure ops inside `loop` that computed `values` and that
    nothing uses any more, and those feeding only them."""
    pending = list(values)
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, Operation) or not loop.is_ancestor(owner):
            continue
        if owner is loop or not is_pure_scalar(owner):
            continue
        if any(result.uses for result in owner.results):
            continue
        operands = list(owner.operands)
        rewriter.erase(owner)
        pending.extend(operands)


def redirect(
    load: memref.LoadOp,
    indices: Sequence[AccessIndex],
    dimensions: Sequence[Dimension],
    local: SSAValue,
    loop: ForOp,
    rewriter: PatternRewriter,
) -> None:
    """`buffer[index..]` -> `local[inner + constant - low ..]` over the kept
    dimensions, the index arithmetic built just before the load."""
    new_indices: list[SSAValue] = []
    for index, dimension in zip(indices, dimensions, strict=True):
        if not dimension.kept:
            continue
        ops, value = emit_sum(index.inner, index.constant - dimension.low)
        rewriter.insert(ops, InsertPoint.before(load))
        new_indices.append(value)
    old_indices = list(load.indices)
    rewriter.replace(load, memref.LoadOp.get(local, new_indices))
    _erase_dead_index_ops(old_indices, loop, rewriter)


def local_element_bytes(element: Attribute, refuse: Refuse) -> int:
    """The bytes of one element of a local buffer; refuses (through
    `refuse`) an element type with no byte size."""
    try:
        return element_bytes(element)
    except ElementSizeError as e:
        raise refuse(str(e)) from None
