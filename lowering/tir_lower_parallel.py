"""tir-lower-parallel: each `tir.for` of kind "parallel" is outlined into its
own function and run by libgomp's thread pool; the first stage of
convert-tir-to-llvm.

A parallel loop in `@f`

    tir.for %i = L to U step S {name = "i", kind = "parallel"} { body }

becomes, at its place, the loop's work-sharing slots on the stack, emptied
(`xtc_share_reset`), a stack context of i64 slots holding the values the
body uses from outside (a memref's pointer by ptrtoint, an index or narrower
integer widened, a float's bits) and the slots' address, and one call

    GOMP_parallel(@f_parallel_<n>, ctx, xtc_num_threads, 0)

and a new internal function `@f_parallel_<n>(ctx)` that every thread of the
team runs: it loads the values back, asks libgomp for its thread number t
and the team's size T, and stores its static chunk of the E = extent
iterations, [t * ceil(E / T), min((t + 1) * ceil(E / T), E)), empty for the
last threads when E < T, in its slot (`xtc_share_own`). It then runs the
body serially for each iteration `xtc_share_next` gives it: those of its own
chunk in order, then, once its chunk is done, the last ones of other
threads' chunks that nobody has started (runtime/work_sharing.py). With
threads of equal speed each runs its own chunk, as a static schedule would,
and keeps its part of the data in its core's cache from one loop to the
next; a thread slowed down by another tenant of its core no longer holds
the team back. Constants and `memref.get_global`s
the body uses are copied into the function rather than passed (LLVM keeps
seeing constants). The body's allocas (reduction accumulators) move with it,
so each thread has its own.

`@xtc_num_threads` (an i32 global, 0 by default: libgomp's default, all
cores or OMP_NUM_THREADS) is the team size every parallel loop asks for; the
runtime sets it from XTC_NUM_THREADS (runtime/llvm_jit.py for the JIT,
`xtc_set_num_threads` in a model library). libgomp keeps one pool of
threads per process, reused by every loop of every model.

The outlined function is ordinary tir-level IR (a `func.func` taking the
context as a `memref<Nxi64>`, scf/arith/memref ops, a few llvm ops on the
slots), so the later stages of convert-tir-to-llvm lower it with everything else.
The slots are i64 rather than each value's own type because xDSL's LLVM IR
translation types a GEP's result by its element type and llvmlite refuses
to store a value of another type through it.
A parallel loop nested in another runs, in its own outlined function, as a
nested team (libgomp gives it one thread unless nesting is enabled).

A loop whose body holds run-time checks (`tir.assert`) also passes the
caller's fault record (`xtc_fault_record()`, in the last slot): each thread
sends its faults there for the chunk (`xtc_fault_redirect` before, and back
after), so that a fault in any thread fails the caller's run
(runtime/faults.py defines both functions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

from xtc.dialects.tir import AssertOp, ForOp
from xtc.lowering.llvm_emit import (
    LOWERING,
    PTR,
    LoweringError,
    cast_op,
    gep,
    llvm_type,
    load_op,
    store_op,
)

NUM_THREADS_GLOBAL = "xtc_num_threads"
"""The i32 global holding the team size parallel loops ask for (0: default);
runtime/llvm_jit.py names it too (the runtime imports no lowering)."""
GOMP_PARALLEL = "GOMP_parallel"
SHARE_RESET = "xtc_share_reset"
SHARE_OWN = "xtc_share_own"
SHARE_NEXT = "xtc_share_next"
"""The work-sharing functions (runtime/work_sharing.py defines them and
names them too: the runtime imports no lowering)."""
SHARE_SLOTS = 64
SHARE_SLOT_WORDS = 8
"""The caller's slots (runtime/work_sharing.py's SLOTS), each a cache line
of 8 i64."""
MAX_EXTENT = 2**32 - 1
"""A slot packs a chunk's bounds as two u32."""
THREAD_NUM = "omp_get_thread_num"
TEAM_SIZE = "omp_get_num_threads"
FAULT_RECORD = "xtc_fault_record"
"""`ptr xtc_fault_record()`: the record the calling thread's faults go to."""
FAULT_REDIRECT = "xtc_fault_redirect"
"""`ptr xtc_fault_redirect(ptr)`: sends the calling thread's faults to a
record; returns the one they went to before (runtime/faults.py names both
too: the runtime imports no lowering)."""
SLOT_ALIGNMENT = 8
"""Each value passed takes one 8-byte slot (an i64) of the context array."""
_PASSABLE = (MemRefType, IndexType, IntegerType, Float16Type, Float32Type, Float64Type)
_FLOAT_WIDTHS: dict[type[Attribute], int] = {Float16Type: 16, Float32Type: 32, Float64Type: 64}


# ------------------------------------------------------------ what is passed


def _defined_outside(value: SSAValue, loop: ForOp) -> bool:
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent_op()
        return parent is None or not loop.is_ancestor(parent)
    return not loop.is_ancestor(owner)


def _copyable(value: SSAValue) -> Operation | None:
    """The op defining `value` when it may be copied into the outlined
    function instead of passed: no operands, no regions, no side effects
    (constants, memref.get_global)."""
    owner = value.owner
    if isinstance(owner, Operation) and not owner.operands and not owner.regions:
        if len(owner.results) == 1 and is_side_effect_free(owner):
            return owner
    return None


@dataclass
class _Outside:
    """What the loop's body uses from outside: values passed through the
    context (in slot order) and ops copied into the outlined function."""

    passed: list[SSAValue]
    copied: list[Operation]


def _reports_faults(loop: ForOp) -> bool:
    """Whether the loop's body holds a run-time check, or a parallel loop
    outlined from it that passes its fault record on."""
    return any(
        isinstance(op, AssertOp)
        or (
            isinstance(op, llvm.CallOp)
            and op.callee is not None
            and op.callee.string_value() == FAULT_RECORD
        )
        for op in loop.body.walk()
    )


def _values_from_outside(loop: ForOp) -> _Outside:
    passed: list[SSAValue] = []
    copied: list[Operation] = []
    for op in loop.body.walk():
        for value in op.operands:
            if not _defined_outside(value, loop):
                continue
            definition = _copyable(value)
            if definition is not None:
                if definition not in copied:
                    copied.append(definition)
            elif value not in passed:
                _check_passable(value, op)
                passed.append(value)
    return _Outside(passed, copied)


def _check_passable(value: SSAValue, user: Operation) -> None:
    """Refuses a value that does not fit an 8-byte slot."""
    if not isinstance(value.type, _PASSABLE):
        raise LoweringError(
            f"{LOWERING}: '{user.name}' in a parallel loop uses a value of type "
            f"{value.type} from outside the loop, which cannot be passed to its threads",
            user,
        )


# ------------------------------------------------------------- building IR


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def _cast(value: SSAValue, t: Attribute) -> UnrealizedConversionCastOp:
    return cast_op(value, t)


def _slot(context: SSAValue, position: int) -> llvm.GEPOp:
    return gep(context, i64, position, inbounds=True)


def _convert(op_type: type[IRDLOperation], value: SSAValue, t: Attribute) -> Operation:
    return op_type.create(operands=[value], result_types=[t])


def _float_bits(t: Attribute) -> Attribute | None:
    """The integer type as wide as float type `t` (None: not a float)."""
    width = _FLOAT_WIDTHS.get(type(t))
    return IntegerType(width) if width is not None else None


def _narrower_than_slot(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.bitwidth < 64


def _to_slot(value: SSAValue) -> list[Operation]:
    """Ops turning a value of llvm type into the i64 its slot holds (the
    last op's result; none when it already is an i64): a pointer as its
    address, a float as its bits, a narrower integer zero-extended."""
    t = value.type
    if t == PTR:
        return [_convert(llvm.PtrToIntOp, value, i64)]
    ops: list[Operation] = []
    bits = _float_bits(t)
    if bits is not None:
        ops.append(_convert(llvm.BitcastOp, value, bits))
        value, t = ops[-1].results[0], bits
    if _narrower_than_slot(t):
        ops.append(_convert(llvm.ZExtOp, value, i64))
    return ops


def _from_slot(slot: SSAValue, t: Attribute) -> list[Operation]:
    """Ops reading a value of llvm type `t` back from its slot's i64."""
    if t == PTR:
        return [_convert(llvm.IntToPtrOp, slot, PTR)]
    bits = _float_bits(t) or t
    ops: list[Operation] = []
    if _narrower_than_slot(bits):
        ops.append(_convert(llvm.TruncOp, slot, bits))
    if bits != t:
        ops.append(_convert(llvm.BitcastOp, ops[-1].results[0] if ops else slot, t))
    return ops


def _store_context(passed: Sequence[SSAValue]) -> tuple[list[Operation], SSAValue]:
    """Ops filling a stack context with the passed values, one i64 slot each,
    and the context's pointer."""
    context = memref.AllocaOp.get(i64, SLOT_ALIGNMENT, [max(1, len(passed))])
    context.memref.name_hint = "ctx"
    pointer = _cast(context.memref, PTR)
    ops: list[Operation] = [context, pointer]
    for position, value in enumerate(passed):
        stored = value
        if llvm_type(value.type) != value.type:
            ops.append(_cast(value, llvm_type(value.type)))
            stored = ops[-1].results[0]
        conversions = _to_slot(stored)
        ops += conversions
        if conversions:
            stored = conversions[-1].results[0]
        slot = _slot(pointer.results[0], position)
        ops += [slot, store_op(stored, slot.result, SLOT_ALIGNMENT)]
    return ops, pointer.results[0]


def _load_context(
    context: SSAValue, passed: Sequence[SSAValue]
) -> tuple[list[Operation], list[SSAValue]]:
    """Ops reading the passed values back from the context argument, with
    their tir-level types; the values."""
    pointer = _cast(context, PTR)
    ops: list[Operation] = [pointer]
    values: list[SSAValue] = []
    for position, value in enumerate(passed):
        slot = _slot(pointer.results[0], position)
        loaded = load_op(slot.result, i64, SLOT_ALIGNMENT)
        ops += [slot, loaded]
        result = loaded.dereferenced_value
        t = llvm_type(value.type)
        conversions = _from_slot(result, t)
        ops += conversions
        if conversions:
            result = conversions[-1].results[0]
        if t != value.type:
            ops.append(_cast(result, value.type))
            result = ops[-1].results[0]
        result.name_hint = value.name_hint
        values.append(result)
    return ops, values


@dataclass
class _Chunk:
    """This thread's number and the team's size (i32), and the thread's
    static chunk [begin, end) of the iterations (index)."""

    thread: SSAValue
    team: SSAValue
    begin: SSAValue
    end: SSAValue


def _chunk_bounds(extent: int) -> tuple[list[Operation], _Chunk]:
    """This thread's iterations [begin, end) of `extent`: chunks of
    ceil(extent / team size) in thread order."""
    thread = func.CallOp(THREAD_NUM, [], [i32])
    team = func.CallOp(TEAM_SIZE, [], [i32])
    thread_index = arith.IndexCastOp(thread.res[0], IndexType())
    team_index = arith.IndexCastOp(team.res[0], IndexType())
    total, one = _index(extent), _index(1)
    rounded_up = arith.AddiOp(total, team_index)
    numerator = arith.SubiOp(rounded_up, one)
    chunk = arith.DivUIOp(numerator, team_index)
    begin = arith.MuliOp(thread_index, chunk)
    after = arith.AddiOp(begin, chunk)
    end = arith.MinSIOp(after, total)
    chunk.result.name_hint = "chunk"
    begin.result.name_hint = "begin"
    end.result.name_hint = "end"
    ops: list[Operation] = [thread, team, thread_index, team_index, total, one]
    ops += [rounded_up, numerator, chunk, begin, after, end]
    return ops, _Chunk(thread.res[0], team.res[0], begin.result, end.result)


def _own_slot(chunk: _Chunk, slots: SSAValue) -> tuple[list[Operation], SSAValue]:
    """The slot holding this thread's chunk: its own among the caller's
    `slots` (a pointer), or one on its stack for a thread numbered
    SHARE_SLOTS or more; the chunk is stored in it (xtc_share_own)."""
    private = memref.AllocaOp.get(i64, SLOT_ALIGNMENT, [1])
    private_pointer = _cast(private.memref, PTR)
    words = arith.ConstantOp(IntegerAttr(SHARE_SLOT_WORDS, i32))
    offset = arith.MuliOp(chunk.thread, words)
    shared = gep(slots, i64, offset.result)
    limit = arith.ConstantOp(IntegerAttr(SHARE_SLOTS, i32))
    has_shared = arith.CmpiOp(chunk.thread, limit, "ult")
    slot = llvm.SelectOp(has_shared, shared, private_pointer)
    slot.res.name_hint = "slot"
    begin = arith.IndexCastOp(chunk.begin, i64)
    end = arith.IndexCastOp(chunk.end, i64)
    own = llvm.CallOp(SHARE_OWN, slot.res, begin.result, end.result)
    ops: list[Operation] = [private, private_pointer, words, offset, shared, limit, has_shared]
    return [*ops, slot, begin, end, own], slot.res


def _claiming_loop(chunk: _Chunk, slot: SSAValue, slots: SSAValue, body: Block) -> scf.WhileOp:
    """`body` (over the iteration counter) for each iteration this thread
    claims: its own chunk's, then others' (runtime/work_sharing.py), as

        scf.while { %k = xtc_share_next(...); scf.condition(%k >= 0) %k }
        do { ^bb0(%counter: index): body }"""
    test = Block()
    claim = llvm.CallOp(SHARE_NEXT, slot, slots, chunk.thread, chunk.team, return_type=i64)
    zero = arith.ConstantOp(IntegerAttr(0, i64))
    found = arith.CmpiOp(claim.returned, zero, "sge")
    counter = arith.IndexCastOp(claim.returned, IndexType())
    counter.result.name_hint = "claimed"
    test.add_ops([claim, zero, found, counter, scf.ConditionOp(found, counter)])
    return scf.WhileOp([], [IndexType()], Region(test), Region(body))


def _iteration_value(loop: ForOp, counter: SSAValue) -> tuple[list[Operation], SSAValue]:
    """lower + counter * step, the loop variable's value at iteration `counter`."""
    ops: list[Operation] = []
    value = counter
    step, lower = loop.step.value.data, loop.lower.value.data
    if step != 1:
        factor = _index(step)
        scaled = arith.MuliOp(value, factor)
        ops += [factor, scaled]
        value = scaled.result
    if lower != 0:
        base = _index(lower)
        shifted = arith.AddiOp(base, value)
        ops += [base, shifted]
        value = shifted.result
    return ops, value


def _outlined_function(
    name: str, loop: ForOp, outside: _Outside, slots: SSAValue, fault_record: SSAValue | None
) -> func.FuncOp:
    """`func.func private @name(%ctx: memref<Nxi64>)` running the iterations
    of the loop this thread claims from the caller's `slots` (passed after
    the values from outside); the loop's body is moved into it. With a
    `fault_record` (passed last), the chunk's faults go to the caller's
    record."""
    passed = [*outside.passed, slots, *([fault_record] if fault_record is not None else [])]
    entry = Block(arg_types=[MemRefType(i64, [len(passed)])])
    entry.args[0].name_hint = "ctx"
    load_ops, loaded = _load_context(entry.args[0], passed)
    entry.add_ops(load_ops)
    restore: list[Operation] = []
    if fault_record is not None:
        previous = llvm.CallOp(FAULT_REDIRECT, loaded[-1], return_type=PTR)
        entry.add_op(previous)
        restore.append(llvm.CallOp(FAULT_REDIRECT, previous.results[0], return_type=PTR))
        loaded = loaded[:-1]
    slots_pointer = _cast(loaded[-1], PTR)
    entry.add_op(slots_pointer)
    loaded = loaded[:-1]
    mapping: dict[SSAValue, SSAValue] = dict(zip(outside.passed, loaded, strict=True))
    for op in outside.copied:
        copy = op.clone()
        entry.add_op(copy)
        mapping[op.results[0]] = copy.results[0]
    chunk_ops, chunk = _chunk_bounds(loop.extent)
    slot_ops, slot = _own_slot(chunk, slots_pointer.results[0])
    entry.add_ops([*chunk_ops, *slot_ops])
    body = Block(arg_types=[IndexType()])
    body.args[0].name_hint = f"{loop.loop_name.data}_k"
    value_ops, value = _iteration_value(loop, body.args[0])
    body.add_ops(value_ops)
    value.name_hint = loop.induction_variable.name_hint
    loop.induction_variable.replace_all_uses_with(value)
    for op in list(loop.body.block.ops):
        op.detach()
        body.add_op(op)
    body.add_op(scf.YieldOp())
    chunk_loop = _claiming_loop(chunk, slot, slots_pointer.results[0], body)
    entry.add_ops([chunk_loop, *restore, func.ReturnOp()])
    for old, new in mapping.items():
        old.replace_uses_with_if(new, lambda use: chunk_loop.is_ancestor(use.operation))
    return func.FuncOp(
        name, ([entry.args[0].type], []), Region(entry), visibility=StringAttr("private")
    )


def _caller_slots() -> tuple[list[Operation], SSAValue]:
    """The caller's work-sharing slots on its stack, emptied
    (xtc_share_reset); the memref."""
    slots = memref.AllocaOp.get(i64, SHARE_SLOT_WORDS * 8, [SHARE_SLOTS * SHARE_SLOT_WORDS])
    slots.memref.name_hint = "slots"
    pointer = _cast(slots.memref, PTR)
    reset = llvm.CallOp(SHARE_RESET, pointer.results[0])
    return [slots, pointer, reset], slots.memref


def _launch(name: str, pointer: SSAValue) -> list[Operation]:
    """GOMP_parallel(@name, ctx, xtc_num_threads, 0)."""
    function = llvm.AddressOfOp(name, PTR)
    threads_global = memref.GetGlobalOp(NUM_THREADS_GLOBAL, MemRefType(i32, [1]))
    zero = _index(0)
    threads = memref.LoadOp.get(threads_global.memref, [zero.result])
    threads.res.name_hint = "threads"
    flags = llvm.ConstantOp(IntegerAttr(0, i32), i32)
    call = llvm.CallOp(GOMP_PARALLEL, function.result, pointer, threads.res, flags.result)
    return [function, threads_global, zero, threads, flags, call]


# ---------------------------------------------------------- declarations


def _symbols(module: ModuleOp) -> set[str]:
    names: set[str] = set()
    for op in module.ops:
        name = op.properties.get("sym_name")
        if isinstance(name, StringAttr):
            names.add(name.data)
    return names


def _fresh_name(module: ModuleOp, function: str) -> str:
    taken = _symbols(module)
    n = 0
    while f"{function}_parallel_{n}" in taken:
        n += 1
    return f"{function}_parallel_{n}"


def _external(name: str, inputs: list[Attribute], output: Attribute | None) -> llvm.FuncOp:
    return llvm.FuncOp(
        name, llvm.LLVMFunctionType(inputs, output), linkage=llvm.LinkageAttr("external")
    )


def _declarations(module: ModuleOp, reports_faults: bool) -> list[Operation]:
    """What the launch and the outlined functions refer to and the module
    lacks: libgomp's functions and the team-size global, and the fault
    functions when the loop `reports_faults`."""
    taken = _symbols(module)
    wanted: list[tuple[str, Operation]] = [
        (
            NUM_THREADS_GLOBAL,
            memref.GlobalOp.get(
                StringAttr(NUM_THREADS_GLOBAL),
                MemRefType(i32, [1]),
                UnitAttr(),
                StringAttr("public"),
                alignment=4,
            ),
        ),
        (THREAD_NUM, func.FuncOp.external(THREAD_NUM, [], [i32])),
        (
            FAULT_RECORD,
            llvm.FuncOp(
                FAULT_RECORD,
                llvm.LLVMFunctionType([], PTR),
                linkage=llvm.LinkageAttr("external"),
            ),
        ),
        (
            FAULT_REDIRECT,
            llvm.FuncOp(
                FAULT_REDIRECT,
                llvm.LLVMFunctionType([PTR], PTR),
                linkage=llvm.LinkageAttr("external"),
            ),
        ),
        (TEAM_SIZE, func.FuncOp.external(TEAM_SIZE, [], [i32])),
        (GOMP_PARALLEL, _external(GOMP_PARALLEL, [PTR, PTR, i32, i32], None)),
        (SHARE_RESET, _external(SHARE_RESET, [PTR], None)),
        (SHARE_OWN, _external(SHARE_OWN, [PTR, i64, i64], None)),
        (SHARE_NEXT, _external(SHARE_NEXT, [PTR, PTR, i32, i32], i64)),
    ]
    fault_functions = (FAULT_RECORD, FAULT_REDIRECT)
    return [
        op
        for name, op in wanted
        if name not in taken and (reports_faults or name not in fault_functions)
    ]


# ---------------------------------------------------------------- pattern


def _enclosing_function(op: Operation) -> func.FuncOp:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    if parent is None:
        raise LoweringError(f"{LOWERING}: a parallel loop is not inside a function", op)
    return parent


@dataclass
class OutlineParallelLoop(RewritePattern):
    """A parallel `tir.for` -> the context, the GOMP_parallel call and the
    outlined function (see the module docstring)."""

    module: ModuleOp

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != "parallel":
            return
        caller = _enclosing_function(op)
        name = _fresh_name(self.module, caller.sym_name.data)
        outside = _values_from_outside(op)
        record_ops: list[Operation] = []
        fault_record: SSAValue | None = None
        if _reports_faults(op):
            record_ops.append(llvm.CallOp(FAULT_RECORD, return_type=PTR))
            fault_record = cast(SSAValue, record_ops[-1].results[0])
        if op.extent > MAX_EXTENT:
            raise LoweringError(
                f"{LOWERING}: a parallel loop runs at most {MAX_EXTENT} iterations, "
                f"this one {op.extent}",
                op,
            )
        slot_ops, slots = _caller_slots()
        passed = [*outside.passed, slots, *([fault_record] if fault_record is not None else [])]
        context_ops, pointer = _store_context(passed)
        outlined = _outlined_function(name, op, outside, slots, fault_record)
        rewriter.insert(outlined, InsertPoint.after(caller))
        launch = _launch(name, pointer)
        rewriter.insert([*record_ops, *slot_ops, *context_ops, *launch], InsertPoint.before(op))
        rewriter.erase(op)
        for declaration in _declarations(self.module, fault_record is not None):
            rewriter.insert(declaration, InsertPoint.at_end(self.module.body.block))


@dataclass(frozen=True)
class TirLowerParallel(ModulePass):
    """Outlines every `parallel` loop, outer ones first, into a function
    `@<func>_parallel_<n>` that libgomp's `GOMP_parallel` runs on a team of
    `@xtc_num_threads` threads (see the module docstring).

    Expects: tir-level functions (`func.func`) over static memrefs; the
    values a parallel loop's body uses from outside are memrefs, integers,
    index or floats.

    Produces: no `parallel` loop. In its place, the work-sharing slots
    (`memref<512xi64>`, emptied by `xtc_share_reset`), a stack context of
    i64 slots and an `llvm.call @GOMP_parallel`; the outlined `func.func
    private` reads the context, stores its thread's chunk
    (`xtc_share_own`) and runs the body for each iteration `xtc_share_next`
    claims, as an `scf.while`. The module declares `GOMP_parallel`,
    `omp_get_thread_num`, `omp_get_num_threads`, the three `xtc_share_`
    functions (runtime/work_sharing.py defines them) and the global
    `@xtc_num_threads` (and the fault record functions when the loop holds a
    `tir.assert`).
    """

    name = "tir-lower-parallel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(OutlineParallelLoop(op)).rewrite_module(op)
