"""tir-compute-inline: a producer loop nest that fills a local buffer is
erased, and each load of that buffer computes the producer's value in
place (TVM's compute_inline at the tir level)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from xtc.dialects.tir import OUTPUT_ATTR, ForOp
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    describe_buffer,
    direct_loops,
    function_name,
    is_pure_scalar,
    loop_name,
    top_level_op,
)


@dataclass(frozen=True)
class Producer:
    """A perfect nest (outer first) whose innermost body stores one value
    into a local buffer at the nest's loop variables."""

    nest: tuple[ForOp, ...]
    store: memref.StoreOp
    buffer: SSAValue
    allocation: Operation


# ------------------------------------------------------- the producer


def producer_nest(loop: ForOp, refuse: Refuser) -> list[ForOp]:
    """The loops from `loop` down to the first one without an inner loop,
    each body but the innermost holding one loop and pure scalar ops."""
    nest = [loop]
    while True:
        inner = direct_loops(nest[-1])
        if not inner:
            return nest
        where = f"loop '{loop_name(nest[-1])}'"
        if len(inner) > 1:
            raise refuse(f"it is not a perfect nest: {where} holds {len(inner)} loops", nest[-1])
        for op in nest[-1].body.block.ops:
            if op is not inner[0] and not is_pure_scalar(op):
                if isinstance(op, memref.AllocaOp):
                    raise refuse(
                        f"{where} holds a local buffer beside loop '{loop_name(inner[0])}': "
                        "a reduction or a value carried across iterations",
                        op,
                    )
                raise refuse(
                    f"it is not a perfect nest: {where} holds '{op.name}' beside loop "
                    f"'{loop_name(inner[0])}'",
                    op,
                )
        nest.append(inner[0])


def innermost_store(innermost: ForOp, refuse: Refuser) -> memref.StoreOp:
    """The one store of the innermost body, whose other ops are pure scalar
    ops and loads; refuses any other body."""
    stores: list[memref.StoreOp] = []
    for op in innermost.body.block.ops:
        if isinstance(op, memref.StoreOp):
            stores.append(op)
        elif isinstance(op, memref.AllocaOp):
            raise refuse(
                f"the body of loop '{loop_name(innermost)}' holds a local buffer: "
                "a reduction or a value carried across iterations",
                op,
            )
        elif not isinstance(op, memref.LoadOp) and not is_pure_scalar(op):
            raise refuse(
                f"the body of loop '{loop_name(innermost)}' holds '{op.name}'; only pure "
                "scalar ops, loads and one store inline",
                op,
            )
    if not stores:
        raise refuse(f"the body of loop '{loop_name(innermost)}' stores nothing")
    if len(stores) > 1:
        raise refuse(
            f"the body of loop '{loop_name(innermost)}' holds {len(stores)} stores; "
            "a producer stores one value",
            stores[1],
        )
    store = stores[0]
    for op in innermost.body.block.ops:
        if isinstance(op, memref.LoadOp) and op.memref is store.memref:
            raise refuse(
                f"it reads {describe_buffer(store.memref)}, the buffer it writes: a value carried "
                "across iterations",
                op,
            )
    return store


def is_output(func: FuncOp, argument: BlockArgument) -> bool:
    """Whether `argument` is one of `func`'s arguments marked as an output."""
    if argument.owner is not func.body.block or func.arg_attrs is None:
        return False
    return OUTPUT_ATTR in func.arg_attrs.data[argument.index].data


def local_allocation(
    func: FuncOp, buffer: SSAValue, refuse: Refuser, store: Operation
) -> Operation:
    """The memref.alloc (or alloca) directly in `func`'s body that made
    `buffer`; refuses an argument or another buffer."""
    if isinstance(buffer, BlockArgument):
        role = "an output of" if is_output(func, buffer) else "an argument of"
        raise refuse(
            f"it stores into {describe_buffer(buffer)}, {role} the function, not a local buffer: "
            "inlining would drop what it writes",
            store,
        )
    owner = cast(Operation, buffer.owner)
    if not isinstance(owner, memref.AllocOp | memref.AllocaOp) or owner.parent_op() is not func:
        raise refuse(
            f"it stores into {describe_buffer(buffer)}, made by '{owner.name}'; only a buffer "
            "allocated (memref.alloc) in the function's body inlines",
            store,
        )
    return owner


def check_stores_whole_buffer(
    nest: Sequence[ForOp], store: memref.StoreOp, refuse: Refuser
) -> None:
    """Refuses a store whose indices are not the nest's loop variables in
    order, or a nest that does not run over the whole buffer (each loop from
    0 to the dimension's size, step 1): a load of an element the producer
    never writes has no value to inline."""
    ivs = [loop.induction_variable for loop in nest]
    indices = list(store.indices)
    if len(indices) != len(ivs) or any(i is not v for i, v in zip(indices, ivs, strict=False)):
        names = ", ".join(loop_name(loop) for loop in nest)
        raise refuse(
            f"it stores at indices other than its loop variables ({names}), each once and in order",
            store,
        )
    shape = cast(MemRefType[Attribute], store.memref.type).get_shape()
    for loop, size in zip(nest, shape, strict=True):
        lower, upper, step = (loop.lower.value.data, loop.upper.value.data, loop.step.value.data)
        if lower != 0 or step != 1 or upper != size:
            raise refuse(
                f"loop '{loop_name(loop)}' runs from {lower} to {upper} step {step} over a "
                f"dimension of {size}; the producer must write every element (from 0 to the "
                "size, step 1)",
                loop,
            )


def find_producer(func: FuncOp, loop: ForOp, refuse: Refuser) -> Producer:
    if loop.parent_op() is not func:
        raise refuse("it is not a top-level loop of the function (it is nested in another op)")
    nest = producer_nest(loop, refuse)
    store = innermost_store(nest[-1], refuse)
    allocation = local_allocation(func, store.memref, refuse, store)
    check_stores_whole_buffer(nest, store, refuse)
    return Producer(tuple(nest), store, store.memref, allocation)


# ------------------------------------------------------- its readers


def consumer_loads(func: FuncOp, producer: Producer, refuse: Refuser) -> list[memref.LoadOp]:
    """The loads of the producer's buffer, all after the producer nest;
    refuses another store of it, another use (a call, a view), a load before
    the nest, and a buffer no one reads."""
    root = producer.nest[0]
    loads: list[memref.LoadOp] = []
    for use in producer.buffer.uses:
        user = use.operation
        if user is producer.store or isinstance(user, memref.DeallocOp):
            continue
        if isinstance(user, memref.StoreOp):
            raise refuse(
                f"{describe_buffer(producer.buffer)} is written by another store too", user
            )
        if not isinstance(user, memref.LoadOp):
            raise refuse(f"{describe_buffer(producer.buffer)} is passed to '{user.name}'", user)
        if not root.is_before_in_block(top_level_op(func, user)):
            raise refuse(
                f"{describe_buffer(producer.buffer)} is read before the producer writes it", user
            )
        loads.append(user)
    if not loads:
        raise refuse(
            f"no one reads {describe_buffer(producer.buffer)}: the nest is dead code, there is "
            "nothing to inline it into"
        )
    return loads


def computation(producer: Producer) -> list[Operation]:
    """The ops of the nest the stored value depends on, in program order."""
    needed: set[Operation] = set()
    pending = [producer.store.value]
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, Operation) or owner in needed:
            continue
        if not producer.nest[0].is_ancestor(owner):
            continue
        needed.add(owner)
        pending.extend(owner.operands)
    return [op for loop in producer.nest for op in loop.body.block.ops if op in needed]


def last_reader(func: FuncOp, loads: Sequence[memref.LoadOp]) -> Operation:
    """The last top-level op of `func` holding one of `loads`."""
    block = func.body.block
    return max((top_level_op(func, load) for load in loads), key=block.get_operation_index)


def inputs_to_keep_alive(
    func: FuncOp,
    producer: Producer,
    ops: Sequence[Operation],
    last: Operation,
    refuse: Refuser,
) -> list[memref.DeallocOp]:
    """The top-level deallocs of buffers the producer reads that lie between
    the producer and `last`, the last op reading its buffer (a fused
    kernel frees an intermediate right after its last reader: the inlined
    loads read it later). Refuses such a buffer that something else (a
    store, a call, a view, a nested dealloc) may write there: the inlined
    loads would see the new values."""
    root = producer.nest[0]
    deallocs: list[memref.DeallocOp] = []
    inputs = list(dict.fromkeys(op.memref for op in ops if isinstance(op, memref.LoadOp)))
    for buffer in inputs:
        for use in buffer.uses:
            writer = use.operation
            if isinstance(writer, memref.LoadOp):
                continue
            top = top_level_op(func, writer)
            if not root.is_before_in_block(top) or last.is_before_in_block(top):
                continue
            if isinstance(writer, memref.DeallocOp) and writer is top:
                deallocs.append(writer)
                continue
            raise refuse(
                f"it reads {describe_buffer(buffer)}, which '{writer.name}' may write "
                "between the producer and a read of its buffer",
                writer,
            )
    return sorted(deallocs, key=func.body.block.get_operation_index)


def inline_into(
    load: memref.LoadOp, producer: Producer, ops: Sequence[Operation], rewriter: PatternRewriter
) -> None:
    """`buffer[j..]` -> the producer's ops with its loop variables `i..`
    replaced by `j..`."""
    mapping: dict[SSAValue, SSAValue] = {
        loop.induction_variable: index
        for loop, index in zip(producer.nest, load.indices, strict=True)
    }
    clones = [op.clone(value_mapper=mapping) for op in ops]
    value = mapping.get(producer.store.value, producer.store.value)
    rewriter.replace(load, clones, [value])


# ------------------------------------------------------- the pass


@dataclass(frozen=True, kw_only=True)
class TirComputeInline(SchedulePass):
    """Computes a producer's value where it is read, erasing the producer
    nest and its buffer (TVM's compute_inline): inlining a conv's padding
    nest makes the conv read its input through the padding's select.

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a top-level loop named `loop`, the root of
    a perfect nest (each body but the innermost holds one loop and pure
    scalar ops) whose innermost body holds pure scalar ops (arith, math),
    `memref.load`s and one `memref.store` of a value into a buffer made by
    a `memref.alloc` (or `alloca`) in the function's body, at exactly the
    nest's loop variables in order, each loop running from 0 to its
    dimension's size with step 1 (the producer writes every element). The
    buffer is otherwise only read, by `memref.load`s after the nest (and
    freed by `memref.dealloc`), and no buffer the producer reads is written
    (stored to, passed to another op) between the producer and the last
    top-level op reading its buffer.

    Produces: each load `%b[j0, .., jn]` replaced by a copy of the ops the
    stored value depends on (the producer's loads and scalar ops, from every
    level of the nest), the loop variables replaced by `j0 .. jn`, placed
    just before where the load was; the producer nest, the alloc and its
    deallocs erased. A top-level dealloc of a buffer the producer reads that
    lay before the last reader moves to just after it (a fused kernel frees
    an intermediate after its last reader, which the producer was). The
    numbers are the same bit for bit (the same ops on the same values); the
    producer's work is repeated at every read.

    Refuses (naming pass, loop and function): a missing function or loop,
    a loop that is not top-level, a nest that is not perfect, a body with a
    local buffer (a reduction or a value carried across iterations), an op
    other than pure scalar ops, loads and one store, no store or more than
    one, a store into an argument (an output) or into a buffer not
    allocated in the function, store indices other than the loop
    variables, a nest not covering the whole buffer, a producer reading the
    buffer it writes, the buffer written elsewhere, passed to another op or
    read before the producer, a buffer no one reads (dead code), and an
    input of the producer written between the producer and a reader.

    Command line: `tir-compute-inline{func=conv2d_0 loop=i0}`; a name other
    than letters, digits, `_` and `-` is quoted (see xtc.passes.tir_loops).
    """

    name = "tir-compute-inline"

    loop: str
    """The root loop of the producer nest to inline."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """`%b = alloc; for i.. { b[i..] = f(i..) }; .. b[j..] ..` -> `.. f(j..)
        ..`."""
        loop = self.find_loop(func, self.loop)
        refuse = self.refuser(
            func, loop, f"cannot inline loop '{loop_name(loop)}' of @{function_name(func)}: "
        )
        producer = find_producer(func, loop, refuse)
        loads = consumer_loads(func, producer, refuse)
        ops = computation(producer)
        last = last_reader(func, loads)
        deallocs = inputs_to_keep_alive(func, producer, ops, last, refuse)
        for load in loads:
            inline_into(load, producer, ops, rewriter)
        for dealloc in reversed(deallocs):
            dealloc.detach()
            rewriter.insert(dealloc, InsertPoint.after(last))
        rewriter.erase(loop)
        for use in list(producer.buffer.uses):
            rewriter.erase(use.operation)
        rewriter.erase(producer.allocation)
