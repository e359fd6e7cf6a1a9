"""GPU memory scopes of the buffers schedules make (tir-cache-read's
`scope=`): a `shared` buffer belongs to a block of threads and is filled by
all of them at once (a cooperative copy); a `local` one belongs to one
thread. The scope is the memref's memory space, as NVVM numbers them:
3 for shared, 5 for local (`memref<16x64xf32, 3 : i64>`)."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, NoneAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue

from xtc.analysis.loops import Dimension
from xtc.analysis.memory_spaces import (
    LOCAL_MEMORY_SPACE,
    SHARED_MEMORY_SPACE,
    is_shared,
)
from xtc.analysis.types import element_bytes
from xtc.dialects.tir import ForOp
from xtc.passes.tir_bind import is_bound, is_thread_axis
from xtc.passes.tir_loops import emit_sum, index_constant, loops_in, nest_of, new_loop

SCOPES = ("global", "shared", "local")
"""Where a schedule's buffer lives: `global` (the default: a buffer as on
the CPU), `shared` (the memory of a block) or `local` (a thread's own)."""

MEMORY_SPACES = {"shared": SHARED_MEMORY_SPACE, "local": LOCAL_MEMORY_SPACE}

MAX_SHARED_BYTES = 48 * 1024
"""The static shared memory a CUDA block may use without opting into more
(every architecture since sm_20; sm_80 and sm_90 allow more only through a
dynamic allocation)."""


def memory_space_attr(scope: str) -> Attribute:
    """The memref memory space of a scope (none for global)."""
    space = MEMORY_SPACES.get(scope)
    return NoneAttr() if space is None else IntegerAttr(space, i64)


def shared_buffers(op: Operation) -> list[memref.AllocaOp]:
    """The shared buffers allocated inside `op`."""
    return [
        inner
        for inner in op.walk()
        if isinstance(inner, memref.AllocaOp) and is_shared(inner.memref)
    ]


def shared_bytes(buffers: Sequence[memref.AllocaOp]) -> int:
    """The shared memory the buffers take together."""
    total = 0
    for buffer in buffers:
        t = buffer.memref.type
        assert isinstance(t, MemRefType)
        total += prod(t.get_shape()) * element_bytes(t.get_element_type())
    return total


def thread_loops(op: Operation) -> list[ForOp]:
    """The threadIdx-bound loops inside `op` (outer first)."""
    return [loop for loop in loops_in(op) if is_thread_loop(loop)]


ThreadShape = tuple[tuple[str, int], ...]
"""The threads of a block as its nested threadIdx-bound loops: (axis,
extent) of each, outer first."""


def outermost_thread_loops(op: Operation) -> list[ForOp]:
    """The threadIdx-bound loops inside `op` not inside another one."""
    return [
        loop
        for loop in thread_loops(op)
        if not any(is_thread_loop(outer) for outer in enclosing_loops(loop))
    ]


def is_thread_loop(loop: ForOp) -> bool:
    return is_bound(loop) and is_thread_axis(loop.kind.data)


def is_block_loop(loop: ForOp) -> bool:
    return is_bound(loop) and not is_thread_axis(loop.kind.data)


def thread_shape(loop: ForOp) -> ThreadShape:
    """The shape of the threads a threadIdx-bound loop and those nested in
    it make."""
    return tuple((inner.kind.data, inner.extent) for inner in thread_loops(loop))


def enclosing_loops(op: Operation) -> list[ForOp]:
    """The tir.for loops around `op`, innermost first."""
    loops: list[ForOp] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def cooperative_copy(
    buffer: SSAValue,
    local: SSAValue,
    dimensions: Sequence[Dimension],
    name: str,
    threads: ThreadShape,
) -> ForOp:
    """`for <name>_t0 (axis, n0) .. { for <name>_r (serial) { e = r * T + t;
    if e < size { local[unflat(e)] = buffer[outside + low + unflat(e)] } } }`,
    T the number of threads and t the thread's row-major number in
    `threads`: the block's threads copy the box together, thread t the
    elements t, t + T, ...; consecutive threads read consecutive elements
    of the innermost dimension (coalesced). The guard is left out when T
    divides the box."""
    spans = [d.span for d in dimensions if d.kept]
    size = prod(spans)
    count = prod(extent for _, extent in threads)
    loops = [
        new_loop(f"{name}_t{k}" if len(threads) > 1 else f"{name}_t", extent, axis)
        for k, (axis, extent) in enumerate(threads)
    ]
    round_loop = new_loop(f"{name}_r", -(-size // count))
    body = nest_of([*loops, round_loop])
    terms: dict[SSAValue, int] = {round_loop.induction_variable: count}
    stride = count
    for loop, (_, extent) in zip(loops, threads, strict=True):
        stride //= extent
        terms[loop.induction_variable] = stride
    ops, element = emit_sum(terms, 0)
    copy = _element_copy(buffer, local, dimensions, spans, element)
    if size % count:
        bound = index_constant(size)
        inside = arith.CmpiOp(element, bound.result, "ult")
        guarded = scf.IfOp(inside.result, [], [*copy, scf.YieldOp()])
        ops += [bound, inside, guarded]
    else:
        ops += copy
    body.add_ops(ops)
    return loops[0]


def _element_copy(
    buffer: SSAValue,
    local: SSAValue,
    dimensions: Sequence[Dimension],
    spans: Sequence[int],
    element: SSAValue,
) -> list[Operation]:
    """The copy of element number `element` (row-major in the box)."""
    ops: list[Operation] = []
    local_indices: list[SSAValue] = []
    stride = prod(spans)
    for position, span in enumerate(spans):
        stride //= span
        value = element
        if stride != 1:
            divisor = index_constant(stride)
            quotient = arith.DivUIOp(value, divisor.result)
            ops += [divisor, quotient]
            value = quotient.result
        if position != 0:  # the outermost index is below its span already
            modulus = index_constant(span)
            remainder = arith.RemUIOp(value, modulus.result)
            ops += [modulus, remainder]
            value = remainder.result
        local_indices.append(value)
    kept = iter(local_indices)
    source: list[SSAValue] = []
    for dimension in dimensions:
        terms = dict(dimension.outside)
        if dimension.kept:
            index = next(kept)
            terms[index] = terms.get(index, 0) + 1
        sum_ops, index_value = emit_sum(terms, dimension.low)
        ops += sum_ops
        source.append(index_value)
    value = memref.LoadOp.get(buffer, source)
    return [*ops, value, memref.StoreOp.get(value.res, local, local_indices)]
