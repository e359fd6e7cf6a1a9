"""tir-cache-read: the part of an argument buffer that a loop's body reads,
copied into a local buffer at the start of the body (packing), the body's
loads of the argument redirected to the copy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from xtc.analysis.loops import Dimension, region_of
from xtc.dialects.tir import ForOp
from xtc.passes.gpu_memory import (
    MAX_SHARED_BYTES,
    SCOPES,
    ThreadShape,
    cooperative_copy,
    enclosing_loops,
    is_block_loop,
    is_thread_loop,
    memory_space_attr,
    outermost_thread_loops,
    shared_buffers,
    shared_bytes,
    thread_shape,
)
from xtc.passes.loop_rewrites import (
    LOCAL_ALIGNMENT,
    MAX_LOCAL_BYTES,
    MAX_STACK_BYTES,
    allocate_local,
    local_element_bytes,
    redirect,
)
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    check_fresh_names,
    emit_sum,
    find_buffer,
    nest_of,
    new_loop,
)

# ------------------------------------------------------- building the copy


def copy_nest(
    buffer: SSAValue, local: SSAValue, dimensions: Sequence[Dimension], names: Sequence[str]
) -> ForOp:
    """`for <L>_cr0 .. <L>_crN { local[cr..] = buffer[outside + low + cr ..] }`,
    one loop per kept dimension (a dropped one reads at `outside + low`)."""
    kept = [d for d in dimensions if d.kept]
    loops = [new_loop(name, d.span) for name, d in zip(names, kept, strict=True)]
    body = nest_of(loops)
    ivs = iter(loop.induction_variable for loop in loops)
    source: list[SSAValue] = []
    local_indices: list[SSAValue] = []
    for dimension in dimensions:
        terms = dict(dimension.outside)
        if dimension.kept:
            iv = next(ivs)
            terms[iv] = terms.get(iv, 0) + 1
            local_indices.append(iv)
        ops, index = emit_sum(terms, dimension.low)
        body.add_ops(ops)
        source.append(index)
    value = memref.LoadOp.get(buffer, source)
    body.add_ops([value, memref.StoreOp.get(value.res, local, local_indices)])
    return loops[0]


# ------------------------------------------------------- the pass


@dataclass(frozen=True, kw_only=True)
class TirCacheRead(SchedulePass):
    """Packs the region of an argument buffer that a loop's body reads into
    a contiguous local buffer at the start of the body (TVM's cache_read
    with compute_at; BLAS's packing of a B panel).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop L named `loop`, and an argument
    named by `buffer`: its position (`buffer=1` is the second argument) or
    its SSA name (`buffer=in1`). Inside L's body the buffer is only read,
    by `memref.load`s nested in tir.for loops only (no scf.if between L and
    a load), and every index of those loads is a sum `outside + c0 + sum(c_k
    * v_k)`: v_k the variables of loops inside L (each with its static
    range), c_k and c0 integer constants (addi, subi, muli by a constant:
    what tir-split leaves), and `outside` any sum of values that stay fixed
    during one run of L's body (values defined before L, and L's own
    variable). In each dimension all loads must have the same `outside`
    (they may differ in c0 and c_k: the region is the union of their
    ranges).

    Produces: at the start of L's body, `%<name>_local = memref.alloca()
    {alignment = 64}` (a `memref.alloc`, freed by a `memref.dealloc` at the
    end of the body, when larger than 64 KiB) shaped as the box read: in
    each dimension `[outside + low, outside + high]`, low and high the least
    and greatest of `c0 + sum(c_k * v_k)`; a dimension every load reads at
    one fixed index is dropped from the local shape. Then a copy nest
    `<L>_cr0 .. <L>_crN` (serial, one loop per dimension kept, outer first
    as in the buffer) filling it, and each load of the buffer in the body
    reads the local buffer at `c0 - low + sum(c_k * v_k)`; index arithmetic
    left unused is erased. Loads of the buffer outside L (the tail nests a
    peeled split leaves) are not changed. The copy reads only elements
    inside the box whose corners the loads read, so it reads in bounds
    wherever the body does.

    For a matmul tiled as `for i1_o { for i0_o { .. for r0 { for i0_i {
    for i1_i { .. B[r0, i1_o * 16 + i1_i] } } } } }`, `buffer=1 loop=i1_o`
    packs the K x 16 panel of B once per i1_o, and the micro-kernel reads
    it at [r0, i1_i]: one 64-byte line per row.

    Refuses (naming pass, buffer, loop and function): a missing function,
    loop or argument, a name two arguments have, a non-memref argument, a
    body that writes the buffer, passes it to another op, does not read it
    or reads it under an op other than tir.for, an index of another form
    (a `select`-clamped one, a division), loads whose `outside` parts
    differ, a region of one element, a local buffer over 16 MiB, and a
    copy loop name already taken.

    `scope=shared` (GPU): the local buffer is the block's shared memory
    (`memref<..., 3 : i64>`) and the block's threads fill it together: the
    copy is `for <L>_<b>_shared_t (threadIdx.x, T) { for <L>_<b>_shared_r (serial) { e =
    r * T + t; if e < size { local[unflat(e)] = buffer[..] } } }`, T the
    extent of the threadIdx-bound loops of L's body (consecutive threads
    copy consecutive elements: coalesced reads). L is a blockIdx-bound
    loop or a serial loop inside one, not inside a threadIdx-bound loop,
    and its body's threadIdx-bound loops share one axis and one extent.
    convert-tir-to-gpu puts a barrier between the copy and the loops that
    read it. Refused besides: no blockIdx-bound loop around L, L inside a
    thread loop, no thread loop in L, thread loops of several axes or
    extents, and more than 48 KiB of shared memory in the block.
    `scope=local`: the buffer is the thread's own (`memref<..., 5 : i64>`,
    at most 64 KiB), copied as for `global`.

    Command line: `tir-cache-read{func=matmul_0 loop=i1_o buffer=1}` or
    `buffer=in1`, `scope=shared`; a name other than letters, digits, `_` and `-` is quoted
    (see xtc.passes.tir_loops).
    """

    name = "tir-cache-read"

    loop: str
    """The loop at the start of whose body the region is packed."""
    buffer: int | str
    """The argument to pack: its position (0 is the first) or its SSA name."""
    scope: str = "global"
    """Where the copy lives: global, shared (a GPU block's) or local (a thread's)."""

    def check_options(self) -> None:
        if self.scope not in SCOPES:
            raise self.bad_option(f"scope '{self.scope}' is not one of {', '.join(SCOPES)}")

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """`for L { body reading buffer[f(..)] }` -> `for L { local = alloca;
        for L_cr0 .. { local[..] = buffer[..] }; body reading local[..] }`."""
        loop = self.find_loop(func, self.loop)
        buffer = find_buffer(self.name, func, self.buffer)
        refuse = self.buffer_refuser(func, loop, buffer, "cache")
        threads = self.copying_threads(loop, refuse) if self.scope == "shared" else None
        region = region_of(loop, buffer, refuse)
        shape = [d.span for d in region.dimensions if d.kept]
        if not shape:
            raise refuse("its loads read one element: nothing to pack")
        element = cast(MemRefType[Attribute], buffer.type).get_element_type()
        size = prod(shape) * local_element_bytes(element, refuse)
        self.check_size(shape, size, loop, refuse)
        name = f"{buffer.name_hint or 'buffer'}_{'shared' if threads else 'local'}"
        if threads is not None:
            count = len(threads)
            prefix = f"{self.loop}_{name}"
            ts = [f"{prefix}_t{k}" for k in range(count)] if count > 1 else [f"{prefix}_t"]
            names = [*ts, f"{prefix}_r"]
            check_fresh_names(self.name, func, names, loop)
            allocation = memref.AllocaOp.get(
                element, LOCAL_ALIGNMENT, shape, memory_space=memory_space_attr("shared")
            )
            local, on_heap = allocation.memref, False
            local.name_hint = name
            nest = cooperative_copy(buffer, local, region.dimensions, prefix, threads)
        else:
            names = [f"{self.loop}_cr{d}" for d in range(len(shape))]
            check_fresh_names(self.name, func, names, loop)
            allocation, local, on_heap = self.allocate(element, shape, name)
            nest = copy_nest(buffer, local, region.dimensions, names)
        for load, load_indices in zip(region.loads, region.indices, strict=True):
            redirect(load, load_indices, region.dimensions, local, loop, rewriter)
        rewriter.insert([allocation, nest], InsertPoint.at_start(loop.body.block))
        if on_heap:
            rewriter.insert(memref.DeallocOp.get(local), InsertPoint.at_end(loop.body.block))

    def allocate(
        self, element: Attribute, shape: list[int], name: str
    ) -> tuple[Operation, SSAValue, bool]:
        """The global (alloca or alloc) or local (alloca) buffer."""
        if self.scope == "global":
            return allocate_local(element, shape, name)
        allocation = memref.AllocaOp.get(
            element, LOCAL_ALIGNMENT, shape, memory_space=memory_space_attr(self.scope)
        )
        allocation.memref.name_hint = name
        return allocation, allocation.memref, False

    def check_size(self, shape: list[int], size: int, loop: ForOp, refuse: Refuser) -> None:
        """Refuses a buffer larger than its scope allows."""
        listed = "x".join(map(str, shape))
        limit = {"global": MAX_LOCAL_BYTES, "local": MAX_STACK_BYTES}.get(self.scope)
        if limit is None:  # shared: with the block's other shared buffers
            block = next(outer for outer in [loop, *enclosing_loops(loop)] if is_block_loop(outer))
            taken = shared_bytes(shared_buffers(block))
            if taken + size > MAX_SHARED_BYTES:
                raise refuse(
                    f"the region read ({listed} elements, {size} bytes) with the block's "
                    f"{taken} bytes of shared buffers exceeds the {MAX_SHARED_BYTES} bytes of "
                    "shared memory a block has; cache it in an inner loop"
                )
        elif size > limit:
            raise refuse(
                f"the region read ({listed} elements, {size} bytes) exceeds the "
                f"{limit} bytes a {self.scope} buffer may take; cache it in an inner loop"
            )

    def copying_threads(self, loop: ForOp, refuse: Refuser) -> ThreadShape:
        """The axis and extent of the threads that copy into a shared buffer
        at the start of `loop`'s body; refuses a loop not of a block."""
        around = [loop, *enclosing_loops(loop)]
        if any(is_thread_loop(outer) for outer in around):
            raise refuse(
                "scope=shared caches for a block, so the loop must not be (inside) a "
                "threadIdx-bound loop"
            )
        if not any(is_block_loop(outer) for outer in around):
            raise refuse("scope=shared needs the loop to be (inside) a blockIdx-bound loop")
        shapes = {thread_shape(inner) for inner in outermost_thread_loops(loop)}
        if not shapes:
            raise refuse("scope=shared needs threadIdx-bound loops inside the loop to copy with")
        if len(shapes) > 1:
            listed = "; ".join(_describe(shape) for shape in sorted(shapes))
            raise refuse(
                f"its threadIdx-bound loop nests differ ({listed}); a cooperative copy needs "
                "one shape of threads"
            )
        return shapes.pop()


def _describe(shape: ThreadShape) -> str:
    return " x ".join(f"{axis} {extent}" for axis, extent in shape)
