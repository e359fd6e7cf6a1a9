"""tir-compute-at: a producer nest that fills a function-local buffer moved
inside a loop of its consumer, computing per iteration only the region of
the buffer that iteration reads (TVM's compute_at)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import prod
from typing import cast

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, StringAttr, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from xtc.analysis.loops import (
    AccessIndex,
    Dimension,
    access_index,
    loads_of,
    region_read,
)
from xtc.dialects.tir import GPU_AXES, ForOp
from xtc.passes.loop_rewrites import (
    MAX_LOCAL_BYTES,
    allocate_local,
    local_element_bytes,
    redirect,
)
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    check_fresh_names,
    describe_buffer,
    direct_loops,
    emit_sum,
    enclosing_loops,
    function_name,
    is_pure_scalar,
    loop_name,
    only_inner_loop,
    top_level_op,
    why_not_perfect,
)

SUFFIX = "_at"
"""Appended to the name of each loop of the moved producer."""
SHARED_UNSAFE_KINDS = ("parallel", *GPU_AXES)
"""Loop kinds whose iterations run at once: they would race on one buffer."""


# ------------------------------------------------------- naming the placement


@dataclass(frozen=True)
class Placement:
    """One application: the function, the producer's root loop, the loop
    `at`, and the refusals naming them (pointing at the producer)."""

    func: FuncOp
    producer: ForOp
    at: ForOp
    refuse: Refuser


# ------------------------------------------------------- the producer


@dataclass(frozen=True)
class Producer:
    """A perfect nest writing each element of `buffer` once: `loops` outer
    first, `by_dimension[d]` the loop whose variable is the store's index d."""

    loops: list[ForOp]
    store: memref.StoreOp
    by_dimension: list[ForOp]
    loads: list[memref.LoadOp]

    @property
    def buffer(self) -> SSAValue:
        return self.store.memref


def producer_chain(where: Placement) -> list[ForOp]:
    """The producer's loops, outer first; refuses a nest that is not
    perfect."""
    loops = [where.producer]
    while direct_loops(loops[-1]):
        inner = only_inner_loop(loops[-1])
        if inner is None:
            raise where.refuse(why_not_perfect(loops[-1], where.func), loops[-1])
        loops.append(inner)
    return loops


def producer_accesses(
    where: Placement, loops: Sequence[ForOp]
) -> tuple[memref.StoreOp, list[memref.LoadOp]]:
    """The producer's one store and its loads; refuses any other op with
    effects or regions."""
    stores: list[memref.StoreOp] = []
    loads: list[memref.LoadOp] = []
    for op in where.producer.walk():
        if op is where.producer or op in loops:
            continue
        if isinstance(op, memref.StoreOp):
            stores.append(op)
        elif isinstance(op, memref.LoadOp):
            loads.append(op)
        elif not is_pure_scalar(op):
            raise where.refuse(
                f"the producer holds '{op.name}'; only loads, one store and pure scalar "
                "ops can move",
                op,
            )
    if len(stores) != 1:
        raise where.refuse(
            f"the producer has {len(stores)} stores; it must write one buffer with one store"
        )
    return stores[0], loads


def check_local_buffer(where: Placement, buffer: SSAValue) -> MemRefType[Attribute]:
    """Refuses a buffer that is not a `memref.alloc` of the function's body."""
    owner = buffer.owner
    if not isinstance(owner, memref.AllocOp) or owner.parent_op() is not where.func:
        raise where.refuse(
            f"the producer writes {describe_buffer(buffer)}, which is not a buffer "
            f"allocated (memref.alloc) in the body of @{function_name(where.func)}",
            where.producer,
        )
    return cast(MemRefType[Attribute], buffer.type)


def loops_by_dimension(
    where: Placement, loops: Sequence[ForOp], store: memref.StoreOp, shape: Sequence[int]
) -> list[ForOp]:
    """The loop whose variable is each index of the store; refuses a store
    whose indices are not exactly the nest's variables, each once, over the
    whole buffer (then every element is written exactly once)."""
    owners: dict[SSAValue, ForOp] = {loop.induction_variable: loop for loop in loops}
    chosen: list[ForOp] = []
    for index in store.indices:
        loop = owners.get(index)
        if loop is None or loop in chosen:
            break
        chosen.append(loop)
    if len(chosen) != len(loops) or len(store.indices) != len(loops):
        raise where.refuse(
            "the producer's store index is not exactly its loop variables, each once "
            "(each element of the buffer must be written once, by one iteration)",
            store,
        )
    for dimension, (loop, size) in enumerate(zip(chosen, shape, strict=True)):
        lower, step = loop.lower.value.data, loop.step.value.data
        if lower != 0 or step != 1 or loop.extent != size:
            raise where.refuse(
                f"loop '{loop_name(loop)}' runs from {lower} to {loop.upper.value.data} step "
                f"{step}; it must run over dimension {dimension} of the buffer, from 0 "
                f"to {size} step 1",
                loop,
            )
    return chosen


def analyse_producer(where: Placement) -> Producer:
    loops = producer_chain(where)
    store, loads = producer_accesses(where, loops)
    buffer_type = check_local_buffer(where, store.memref)
    for load in loads:
        if load.memref is store.memref:
            raise where.refuse(
                "the producer reads the buffer it writes (a reduction into it); each "
                "element must be computed once from other buffers",
                load,
            )
    by_dimension = loops_by_dimension(where, loops, store, buffer_type.get_shape())
    return Producer(loops, store, by_dimension, loads)


# ------------------------------------------------------- the consumer


def check_order(where: Placement) -> Operation:
    """The top-level op holding `at`; refuses a producer that is not a
    top-level nest, and `at` inside the producer or in a nest that comes
    before it."""
    if where.producer.parent_op() is not where.func:
        raise where.refuse(
            f"loop '{loop_name(where.producer)}' is not a top-level loop nest of "
            f"@{function_name(where.func)}"
        )
    if where.producer.is_ancestor(where.at):
        raise where.refuse(f"loop '{loop_name(where.at)}' is inside the producer", where.at)
    nest = top_level_op(where.func, where.at)
    if not where.producer.is_before_in_block(nest):
        raise where.refuse(
            f"loop '{loop_name(where.at)}' comes before the producer; it must be in a "
            "later loop nest that reads the buffer",
            where.at,
        )
    return nest


def check_buffer_uses(where: Placement, producer: Producer, nest: Operation) -> None:
    """Refuses a use of the buffer other than the producer's store, loads
    inside `at` and a dealloc in the function's body after `at`'s nest."""
    for use in producer.buffer.uses:
        op = use.operation
        if op is producer.store:
            continue
        if isinstance(op, memref.LoadOp) and where.at.is_ancestor(op):
            continue
        if isinstance(op, memref.DeallocOp) and nest.is_before_in_block(op):
            continue
        buffer = describe_buffer(producer.buffer)
        if isinstance(op, memref.LoadOp):
            reader = next(iter(enclosing_loops_of(op)), None)
            place = f"in loop '{loop_name(reader)}'" if reader is not None else "outside loops"
            raise where.refuse(
                f"{buffer} is also read {place}, outside loop '{loop_name(where.at)}': "
                "that reader would see only the region the last iteration computed",
                op,
            )
        if isinstance(op, memref.StoreOp):
            raise where.refuse(f"{buffer} is also written outside the producer", op)
        raise where.refuse(
            f"{buffer} is passed to '{op.name}' besides the producer and the loads in "
            f"loop '{loop_name(where.at)}'",
            op,
        )


def enclosing_loops_of(op: Operation) -> list[ForOp]:
    """The loops around `op`, innermost first."""
    parent = op.parent_op()
    return enclosing_loops(parent) if isinstance(parent, ForOp) else []


def check_inputs_unchanged(where: Placement, producer: Producer, nest: Operation) -> None:
    """Refuses an op after the producer, up to the end of `at`'s nest, that
    writes (or passes on, or frees) a buffer the producer reads: computed
    later, the producer would read other values."""
    read = {load.memref for load in producer.loads}
    current = where.producer.next_op
    while current is not None:
        for op in current.walk():
            if isinstance(op, memref.LoadOp):
                continue
            for operand in op.operands:
                if operand in read:
                    raise where.refuse(
                        f"'{op.name}' uses {describe_buffer(operand)}, which the producer "
                        f"reads, between the producer and loop '{loop_name(where.at)}'; "
                        "computed later the producer could read other values",
                        op,
                    )
        if current is nest:
            return
        current = current.next_op


def check_no_loop_skipped(where: Placement, loads: Sequence[memref.LoadOp]) -> None:
    """Refuses a load under a loop of no iteration inside `at`: the bounds
    of the region are then not reached by any load."""
    for load in loads:
        for loop in enclosing_loops_of(load):
            if loop is where.at:
                break
            if loop.extent == 0:
                raise where.refuse(f"loop '{loop_name(loop)}' runs no iteration", loop)


def check_not_shared_across_threads(where: Placement) -> None:
    """Refuses `at` or a loop around it whose iterations run at once: they
    would race on the function-level buffer."""
    for loop in enclosing_loops(where.at):
        if loop.kind.data in SHARED_UNSAFE_KINDS:
            raise where.refuse(
                f"loop '{loop_name(loop)}' is {loop.kind.data}: its iterations would race "
                "on the function-level buffer (local=true gives each iteration its own)",
                loop,
            )


def check_in_bounds(
    where: Placement, dimensions: Sequence[Dimension], shape: Sequence[int]
) -> None:
    """Refuses a region that is statically outside the buffer."""
    for d, (dimension, size) in enumerate(zip(dimensions, shape, strict=True)):
        outside_buffer = not dimension.outside and (dimension.low < 0 or dimension.high >= size)
        if outside_buffer or dimension.span > size:
            raise where.refuse(
                f"the loads read [{dimension.low}, {dimension.high}] in dimension {d} of a "
                f"buffer of size {size}",
                where.at,
            )


def restricts(dimension: Dimension, size: int) -> bool:
    """Whether the region is less than the whole dimension (or moves)."""
    return bool(dimension.outside) or dimension.low != 0 or dimension.high != size - 1


# ------------------------------------------------------- the rewrite


def offset_loop(loop: ForOp, extent: int, start: SSAValue) -> None:
    """`for v = 0 to extent { ..v.. }` -> `for v = 0 to extent { x = v +
    start; ..x.. }`."""
    loop.properties["upper"] = IntegerAttr(extent, i64)
    iv = loop.induction_variable
    shifted = arith.AddiOp(iv, start)
    body = loop.body.block
    if body.first_op is None:
        body.add_op(shifted)
    else:
        body.insert_op_before(shifted, body.first_op)
    iv.replace_uses_with_if(shifted.result, lambda use: use.operation is not shifted)
    shifted.result.name_hint = f"{loop_name(loop)}_idx"


def rename_and_serialize(loops: Sequence[ForOp]) -> None:
    """Appends SUFFIX to each loop's name; a parallel or thread-bound loop
    becomes serial (it now runs inside `at`)."""
    for loop in loops:
        name = loop_name(loop) + SUFFIX
        loop.properties["name"] = StringAttr(name)
        loop.induction_variable.name_hint = name
        if loop.kind.data in SHARED_UNSAFE_KINDS:
            loop.properties["kind"] = StringAttr("serial")


@dataclass(frozen=True, kw_only=True)
class TirComputeAt(SchedulePass):
    """Moves a producer loop nest inside a loop of its consumer, computing
    only the region of its buffer each iteration of that loop reads (TVM's
    compute_at; the padding of a conv computed per output row).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop named `loop`, the root of a
    top-level loop nest P (the producer), and a loop named `at` (A) in a
    later top-level nest. P is a perfect nest of loops from 0 step 1 whose
    innermost body holds pure scalar ops, loads of other buffers, and one
    `memref.store` into a buffer B allocated (`memref.alloc`) in the
    function's body, at indices that are exactly P's loop variables, each
    once, each loop running over its whole dimension of B: every element
    of B is written once. No op between P and the end of A's nest writes,
    frees or passes on a buffer P reads. B is read only by `memref.load`s
    inside A's body, nested in tir.for loops only, whose indices are sums
    `outside + c0 + sum(c_k * v_k)` as tir-cache-read accepts (v_k the
    variables of loops inside A, `outside` values fixed during one
    iteration of A: A's variable, the variables of loops around A, values
    defined before A), with one `outside` per dimension; B is used
    otherwise only by P's store and a `memref.dealloc` after A's nest.
    Without `local`, neither A nor a loop around it is parallel or
    thread-bound (the buffer is shared by all iterations).

    Produces: P moved to the start of A's body, its loops renamed
    `<name>_at` (a parallel or thread-bound one made serial). In each
    dimension d of B the loads read the box `[outside + low, outside +
    high]` per iteration of A; where that is not the whole dimension, P's loop over d runs `high -
    low + 1` times and its variable v is replaced in the body by `v +
    start`, `start = outside + low` computed (arith) at the start of A's
    body. Without `local` the store keeps writing B at those indices (B
    stays full-size; each iteration of A fills the region it reads). With
    `local=true` a region-sized buffer `%<A>_region` (a 64-byte aligned
    `memref.alloca`, or a `memref.alloc` freed at the end of A's body when
    over 64 KiB) is allocated at the start of A's body, P stores into it at
    its loop variables, the loads of B read it at `c0 - low + sum(c_k *
    v_k)`, and B's alloc and dealloc are erased: each iteration has its own
    region, so A or a loop around it may be (or later become) parallel.

    Refuses (naming pass, both loops and the function): a missing function
    or loop; a producer that is not top-level, not perfect, holds another
    op with effects, has not exactly one store, writes an argument or a
    buffer not allocated in the function's body, reads its own buffer, or
    stores at indices other than its loop variables over the whole buffer;
    `at` inside the producer or before it; B used other than by P's store,
    loads inside A and a dealloc after A's nest (another reader would see
    partial data); a buffer P reads changed between P and A; loads under an
    op other than tir.for or under a loop of no iteration, with an index of
    another form (a select, a division) or different `outside` parts, or
    none at all; a region
    statically outside B; without `local` a parallel or thread-bound loop
    at or around A; with `local` a region over 16 MiB; a new loop name
    already taken.

    Command line: `tir-compute-at{func=conv_0 loop=i0 at=i2_1}` and
    `tir-compute-at{func=conv_0 loop=i0 at=i2_1 local=true}`; a name other
    than letters, digits, `_` and `-` is quoted (see xtc.passes.tir_loops).
    """

    name = "tir-compute-at"
    LOOP_OPTIONS = ("loop", "at")

    loop: str
    """The root loop of the producer nest to move."""
    at: str
    """The consumer's loop inside which the producer is computed."""
    local: bool = False
    """Compute into a region-sized buffer per iteration of `at`, so that `at`
    may be parallel."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """`alloc B; for P.. { B[p..] = f(p..) }; .. for A { ..B[g(..)].. }` ->
        `alloc B; .. for A { for P_at.. { B[p + start..] = f(p + start..) };
        ..B[g(..)].. }` over the region A's body reads (with `local`, into a
        region-sized buffer inside A that the loads read instead)."""
        producer_root, at = self.find_loop(func, self.loop), self.find_loop(func, self.at)
        head = (
            f"cannot compute loop '{loop_name(producer_root)}' at loop '{loop_name(at)}' of "
            f"@{function_name(func)}: "
        )
        where = Placement(func, producer_root, at, self.refuser(func, producer_root, head))
        nest = check_order(where)
        producer = analyse_producer(where)
        check_buffer_uses(where, producer, nest)
        check_inputs_unchanged(where, producer, nest)
        if not self.local:
            check_not_shared_across_threads(where)
        buffer = producer.buffer
        refuse = where.refuse.about(
            where.at, f"buffer {describe_buffer(buffer)} in loop '{loop_name(where.at)}': "
        )
        loads = loads_of(where.at, buffer, refuse)
        check_no_loop_skipped(where, loads)
        indices = [
            [access_index(i, where.at, refuse, load) for i in load.indices] for load in loads
        ]
        dimensions = [replace(d, kept=True) for d in region_read(indices, refuse, loads)]
        buffer_type = cast(MemRefType[Attribute], buffer.type)
        shape = buffer_type.get_shape()
        check_in_bounds(where, dimensions, shape)
        names = [loop_name(loop) + SUFFIX for loop in producer.loops]
        check_fresh_names(self.name, func, names, where.producer)
        if not self.local:
            self.move_producer(where, producer, dimensions, shape, None, rewriter)
            return
        local = self.local_buffer(where, buffer_type, dimensions, rewriter)
        self.move_producer(where, producer, dimensions, shape, local, rewriter)
        self.redirect_loads(where, producer, loads, indices, dimensions, local, rewriter)

    def local_buffer(
        self,
        where: Placement,
        buffer_type: MemRefType[Attribute],
        dimensions: Sequence[Dimension],
        rewriter: PatternRewriter,
    ) -> SSAValue:
        """A region-sized buffer at the start of `at`'s body (freed at its
        end when on the heap); refuses one over MAX_LOCAL_BYTES."""
        shape = [d.span for d in dimensions]
        element = buffer_type.get_element_type()
        size = prod(shape) * local_element_bytes(element, where.refuse)
        if size > MAX_LOCAL_BYTES:
            listed = "x".join(map(str, shape))
            raise where.refuse(
                f"the region read ({listed} elements, {size} bytes) exceeds the "
                f"{MAX_LOCAL_BYTES} bytes a local buffer may take; compute it at an inner loop",
                where.at,
            )
        allocation, local, on_heap = allocate_local(element, shape, f"{loop_name(where.at)}_region")
        body = where.at.body.block
        rewriter.insert(allocation, InsertPoint.at_start(body))
        if on_heap:
            rewriter.insert(memref.DeallocOp.get(local), InsertPoint.at_end(body))
        return local

    def move_producer(
        self,
        where: Placement,
        producer: Producer,
        dimensions: Sequence[Dimension],
        shape: Sequence[int],
        local: SSAValue | None,
        rewriter: PatternRewriter,
    ) -> None:
        """Moves the producer to the start of `at`'s body (after the local
        buffer), each restricted loop over its region from a start computed
        before it."""
        rename_and_serialize(producer.loops)
        starts: list[Operation] = []
        for dimension, loop, size in zip(dimensions, producer.by_dimension, shape, strict=True):
            if restricts(dimension, size):
                ops, start = emit_sum(dimension.outside, dimension.low)
                starts += ops
                offset_loop(loop, dimension.span, start)
        root = where.producer
        root.detach()
        body = where.at.body.block
        allocation = local.owner if local is not None else None
        point = (
            InsertPoint.after(allocation)
            if isinstance(allocation, Operation)
            else InsertPoint.at_start(body)
        )
        rewriter.insert([*starts, root], point)
        if local is not None:
            store = producer.store
            region_indices = [loop.induction_variable for loop in producer.by_dimension]
            rewriter.replace(store, memref.StoreOp.get(store.value, local, region_indices))

    def redirect_loads(
        self,
        where: Placement,
        producer: Producer,
        loads: Sequence[memref.LoadOp],
        indices: Sequence[Sequence[AccessIndex]],
        dimensions: Sequence[Dimension],
        local: SSAValue,
        rewriter: PatternRewriter,
    ) -> None:
        """The loads read the region-sized buffer; the function-level buffer,
        now unused, and its dealloc are erased."""
        for load, load_indices in zip(loads, indices, strict=True):
            redirect(load, load_indices, dimensions, local, where.at, rewriter)
        buffer = producer.buffer
        for use in list(buffer.uses):
            if isinstance(use.operation, memref.DeallocOp):
                rewriter.erase(use.operation)
        if not buffer.uses:
            rewriter.erase(cast(Operation, buffer.owner))
