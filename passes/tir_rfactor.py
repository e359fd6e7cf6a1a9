"""tir-rfactor: a reduction into a scalar accumulator split into one
partial accumulator per iteration of its innermost loop, so that loop can
become vector code (TVM's rfactor)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from xtc.dialects.tir import ForOp
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    check_fresh_names,
    check_unit_stride,
    has_inner_loop,
    loop_name,
    new_loop,
)

PARTIALS_ALIGNMENT = 64

_IDENTITIES: dict[type[Operation], float] = {
    arith.AddfOp: -0.0,
    arith.MulfOp: 1.0,
    arith.MaximumfOp: float("-inf"),
    arith.MinimumfOp: float("inf"),
}
"""The float combiners a reduction may use, each with its identity."""

_Combiner = arith.AddfOp | arith.MulfOp | arith.MaximumfOp | arith.MinimumfOp


@dataclass(frozen=True)
class _Accumulation:
    """The accumulation in the loop's body: `store (combine (load acc), x), acc`,
    and the op beside the accumulator that holds the loop (the reduction's
    outermost loop)."""

    accumulator: SSAValue
    load: memref.LoadOp
    combine: _Combiner
    store: memref.StoreOp
    top: Operation


def _accumulation(refuse: Refuser, loop: ForOp) -> _Accumulation:
    """The rank-0 accumulation in `loop`'s body; refuses any other shape."""
    stores = [
        op
        for op in loop.body.block.ops
        if isinstance(op, memref.StoreOp) and not op.indices and _is_local(op.memref)
    ]
    if len(stores) != 1:
        raise refuse(
            f"stores into {len(stores)} rank-0 local accumulators; tir-rfactor needs exactly one"
        )
    store = stores[0]
    combine = store.value.owner
    if not isinstance(combine, _Combiner):
        name = combine.name if isinstance(combine, Operation) else "a block argument"
        raise refuse(
            f"accumulates with {name}; tir-rfactor splits arith.addf, mulf, maximumf and minimumf",
            store,
        )
    acc = store.memref
    load = next(
        (
            operand.owner
            for operand in (combine.lhs, combine.rhs)
            if isinstance(operand.owner, memref.LoadOp)
            and operand.owner.memref is acc
            and not operand.owner.indices
        ),
        None,
    )
    if load is None:
        raise refuse("stores into its accumulator a value that does not combine it", combine)
    others = [
        use.operation
        for use in acc.uses
        if use.operation not in (load, store) and loop.is_ancestor(use.operation)
    ]
    if others or load.res.uses.get_length() != 1 or combine.result.uses.get_length() != 1:
        raise refuse("uses its accumulator other than in one load-combine-store", combine)
    top = _child_in(acc, loop)
    if top is None:
        raise refuse("lies outside the block of its accumulator's alloca")
    return _Accumulation(acc, load, combine, store, top)


def _is_local(buffer: SSAValue) -> bool:
    return isinstance(buffer.owner, memref.AllocaOp)


def _child_in(acc: SSAValue, loop: ForOp) -> Operation | None:
    """The ancestor of `loop` (or `loop`) in the block of `acc`'s alloca."""
    block = cast(memref.AllocaOp, acc.owner).parent_block()
    current: Operation | None = loop
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def _identity(refuse: Refuser, accumulation: _Accumulation) -> arith.ConstantOp:
    element = cast(MemRefType[Attribute], accumulation.accumulator.type).get_element_type()
    if not isinstance(element, AnyFloat):
        raise refuse(f"accumulates {element}; tir-rfactor splits float reductions")
    value = _IDENTITIES[type(accumulation.combine)]
    return arith.ConstantOp(FloatAttr(value, cast(AnyFloat, element)))


def _init_loop(name: str, partials: SSAValue, extent: int, identity: arith.ConstantOp) -> ForOp:
    """`for j { partials[j] = identity }`."""
    init = new_loop(name, extent)
    init.body.block.add_ops(
        [identity, memref.StoreOp.get(identity.result, partials, [init.induction_variable])]
    )
    return init


def halving_stages(extent: int) -> list[int]:
    """The partial counts after each pairwise step: halved while even
    (16 -> [8, 4, 2, 1], 14 -> [7], 13 -> [])."""
    stages: list[int] = []
    while extent > 1 and extent % 2 == 0:
        extent //= 2
        stages.append(extent)
    return stages


def _halving_loop(
    name: str, source: SSAValue, count: int, accumulation: _Accumulation
) -> tuple[memref.AllocaOp, ForOp]:
    """`half[j] = combine(source[j], source[j + count])` for j < count: one
    step of the pairwise combination, into a new buffer (so that the loop
    can be vectorized)."""
    element = cast(MemRefType[Attribute], source.type).get_element_type()
    half = memref.AllocaOp.get(element, PARTIALS_ALIGNMENT, [count])
    half.memref.name_hint = f"part{count}"
    loop = new_loop(name, count)
    j = loop.induction_variable
    offset = arith.ConstantOp.from_int_and_width(count, IndexType())
    upper = arith.AddiOp(j, offset)
    low, high = memref.LoadOp.get(source, [j]), memref.LoadOp.get(source, [upper.result])
    combined = type(accumulation.combine)(low.res, high.res)
    store = memref.StoreOp.get(combined.result, half.memref, [j])
    loop.body.block.add_ops([offset, upper, low, high, combined, store])
    return half, loop


def _combine_loops(
    name: str, partials: SSAValue, extent: int, accumulation: _Accumulation
) -> list[Operation]:
    """The partials combined pairwise (`R_wb8`, `R_wb4`, ... while their
    count is even), then what is left combined into the accumulator in order
    (`R_wb`: `acc = combine(acc, part[j])`)."""
    ops: list[Operation] = []
    source, count = partials, extent
    for count in halving_stages(extent):
        half, loop = _halving_loop(f"{name}{count}", source, count, accumulation)
        ops += [half, loop]
        source = half.memref
    combine_back = new_loop(name, count)
    acc = accumulation.accumulator
    total = memref.LoadOp.get(acc, [])
    part = memref.LoadOp.get(source, [combine_back.induction_variable])
    combined = type(accumulation.combine)(total.res, part.res)
    combine_back.body.block.add_ops(
        [total, part, combined, memref.StoreOp.get(combined.result, acc, [])]
    )
    return [*ops, combine_back]


@dataclass(frozen=True, kw_only=True)
class TirRfactor(SchedulePass):
    """Splits a scalar reduction into partial accumulators, one per
    iteration of its innermost loop (TVM's rfactor), so that this loop can
    be vectorized: each lane then accumulates its own partial.

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) an innermost loop R named `loop` (no
    tir.for inside), from 0 with step 1, of extent N, not parallel, whose
    body accumulates into a rank-0 local accumulator `acc` (a
    `memref.alloca` in an enclosing body) in exactly one
    `store (combine (load acc[]), x), acc[]` (or `combine x, (load acc[])`),
    combine one of arith.addf, mulf, maximumf and minimumf, the
    accumulator used nowhere else in R.

    Produces: `%part = memref.alloca() {alignment = 64}` of N elements,
    then a loop `R_init` storing the combiner's identity (-0.0, 1.0,
    -inf, +inf) into every partial, both just before the op of acc's
    block that holds R (R itself or the reduction's outermost loop); in
    R's body the accumulation reads and writes `part[r]` instead of acc;
    just after that op the partials combined pairwise while their count
    is even, each step a loop `R_wb<c>` of c iterations storing
    `combine(p[j], p[j + c])` into a new buffer `%part<c>` of c elements
    (a tree, which tir-vectorize can make vector code: 16 partials take 4
    steps, not 16 dependent ones), then a serial loop `R_wb` combining
    what is left into acc (`acc = combine(acc, p[j])`). The rest of the
    body, acc's initial value and its epilogue are kept. Float sums and
    products are then reassociated: results may differ from the serial
    order in the last bits (max and min are exact).

    Refuses (naming pass, function and loop): a missing function or loop,
    a loop name used twice, a loop with a loop inside, not from 0 step 1,
    or parallel, a body without exactly one such accumulation (saying what
    it found), an integer accumulator, a new name already taken.

    Command line: `tir-rfactor{func=softmax_0 loop=r0_i}`; a name other
    than letters, digits, `_` and `-`, or one that reads as a number or a
    boolean, is quoted: `loop="r.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-rfactor"

    loop: str
    """The innermost reduction loop whose iterations get partial accumulators."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """`acc = id; for R.. { for r { acc op= x } }; epilogue(acc)` ->
        `acc = id; part[:] = identity; for R.. { for r { part[r] op= x } };
        for j { acc op= part[j] }; epilogue(acc)`."""
        loop = self.find_loop(func, self.loop)
        refuse = self.refuser(func, loop)
        if has_inner_loop(loop):
            raise refuse("holds another loop; tir-rfactor splits an innermost loop")
        check_unit_stride(self.name, func, loop)
        if loop.kind.data == "parallel":
            raise refuse("is parallel; a reduction loop runs in one thread")
        accumulation = _accumulation(refuse, loop)
        identity = _identity(refuse, accumulation)
        name = loop_name(loop)
        stages = [f"{name}_wb{count}" for count in halving_stages(loop.extent)]
        check_fresh_names(self.name, func, [f"{name}_init", *stages, f"{name}_wb"], loop)
        element = cast(MemRefType[Attribute], accumulation.accumulator.type).get_element_type()
        extent = loop.extent
        partials = memref.AllocaOp.get(element, PARTIALS_ALIGNMENT, [extent])
        partials.memref.name_hint = "part"
        init = _init_loop(f"{name}_init", partials.memref, extent, identity)
        rewriter.insert([partials, init], InsertPoint.before(accumulation.top))
        lane = [loop.induction_variable]
        rewriter.replace(accumulation.load, memref.LoadOp.get(partials.memref, lane))
        rewriter.replace(
            accumulation.store,
            memref.StoreOp.get(accumulation.combine.result, partials.memref, lane),
        )
        combine = _combine_loops(f"{name}_wb", partials.memref, extent, accumulation)
        rewriter.insert(combine, InsertPoint.after(accumulation.top))
