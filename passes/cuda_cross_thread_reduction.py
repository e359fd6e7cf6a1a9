"""Cross-thread reductions for the CUDA schedule (TVM's cross-thread
allreduce): a warp of WARP lanes computes ONE output of a reduction nest.

At the tir level (`split_lanes`, called by cuda-default-schedule) the
reduction `acc = init; for r.. { acc = acc (+) x(r) }; epilogue(acc)`
becomes, with L = WARP lanes and K the reduction's iteration count,

    part = alloca [L]
    for lane < L  {kind = threadIdx.x}           (`<r0>_lane`)
      p = identity
      for ko < ceil(K / L)                       (`<r0>_k`)
        k = ko * L + lane;  r.. = digits of k    (guarded by k < K when L does not divide K)
        p = p (+) x(r..)
      part[lane] = p
    for j < L  { acc = acc (+) part[j] }        (`<r0>_lanes`)
    epilogue(acc)

which the serial tir interpreter runs as it stands (a sum is reassociated:
the last bits may differ). Neighbouring lanes read neighbouring `k`, so
loads along a contiguous reduction axis are coalesced.

At the gpu level (`lower_lanes`, called by convert-tir-to-gpu) the lane
loop wraps its whole parent body: `part[lane]` stays in a register, the
combine loop becomes a butterfly of warp shuffles
(`llvm.nvvm.shfl.sync.bfly.f32`, full mask, offsets L/2 .. 1) after which
every lane holds the combined value, and lane 0 alone folds it into `acc`
and runs the epilogue (`scf.if lane == 0`).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.dialects import arith, llvm, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    f32,
    i32,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from xtc.dialects.tir import ForOp
from xtc.passes.schedule_pass import SchedulePass
from xtc.passes.tir_fuse import TirFuse
from xtc.passes.tir_loops import (
    has_inner_loop,
    index_constant,
    is_pure_scalar,
    loop_name,
    new_loop,
    only_inner_loop,
)
from xtc.passes.tir_split import TirSplit

WARP = 32
"""The lanes that compute one output: a warp, combined by shuffles alone."""

MIN_REDUCTION = 64
"""The shortest reduction worth a warp: two iterations per lane."""

CROSS_THREAD_OUTPUTS = 65536
"""Below this many outputs, one thread each fills under a quarter of a large
GPU (an H100 holds 132 x 2048 = 270336 threads), too few to hide memory
latency: ResNet-50's 7x7 and 14x14 convs at batch 1 (25088 and 50176
outputs, reductions of 2304 to 4608), its Gemm, softmax and layer-norm
rows and whole-tensor reductions get a warp per output."""

OUTPUTS_PER_BLOCK = 8
"""The most outputs (warps) of one block: 256 threads."""

SPREAD_BLOCKS = 264
"""Blocks enough for two on each multiprocessor of an H100 (132): fewer
outputs go in smaller blocks (down to one warp) so that they spread over
every multiprocessor rather than fill a few."""

_Combiner = arith.AddfOp | arith.MulfOp | arith.MaximumfOp | arith.MinimumfOp

_IDENTITIES: dict[type[Operation], float] = {
    arith.AddfOp: -0.0,
    arith.MulfOp: 1.0,
    arith.MaximumfOp: float("-inf"),
    arith.MinimumfOp: float("inf"),
}


@dataclass(frozen=True)
class Reduction:
    """A perfect nest of reduction loops (outer first) whose innermost body
    folds into the rank-0 `accumulator` with one load-combine-store."""

    loops: list[ForOp]
    accumulator: SSAValue
    combine: _Combiner

    @property
    def extent(self) -> int:
        return prod(loop.extent for loop in self.loops)


def _is_rank0_local(value: SSAValue) -> bool:
    return (
        isinstance(value.owner, memref.AllocaOp)
        and not cast(MemRefType[Attribute], value.type).get_shape()
    )


def _runs_on_every_lane(op: Operation) -> bool:
    """Ops before the reduction that each lane may repeat: pure scalars,
    local accumulators, loads, and stores into rank-0 local buffers."""
    if isinstance(op, memref.StoreOp):
        return _is_rank0_local(op.memref)
    if isinstance(op, memref.AllocaOp | memref.LoadOp):
        return True
    return is_pure_scalar(op)


def find_reduction(body: Block) -> Reduction | None:
    """The one reduction nest of `body` that split_lanes handles: serial
    loops from 0 step 1, an f32 accumulation by addf, mulf, maximumf or
    minimumf into a rank-0 memref read and written nowhere else in the
    nest, no other store in it; before it, only ops every lane may repeat.
    None for anything else."""
    loops = [op for op in body.ops if isinstance(op, ForOp)]
    if len(loops) != 1:
        return None
    chain = [loops[0]]
    while (inner := only_inner_loop(chain[-1])) is not None:
        chain.append(inner)
    if has_inner_loop(chain[-1]):
        return None
    if any(
        loop.lower.value.data != 0 or loop.step.value.data != 1 or loop.kind.data != "serial"
        for loop in chain
    ):
        return None
    stores = [op for op in chain[-1].walk() if isinstance(op, memref.StoreOp)]
    if len(stores) != 1 or stores[0].indices:
        return None
    store = stores[0]
    combine = store.value.owner
    if not isinstance(combine, _Combiner) or combine.result.type != f32:
        return None
    acc = store.memref
    loads = [
        o.owner
        for o in (combine.lhs, combine.rhs)
        if isinstance(o.owner, memref.LoadOp) and o.owner.memref is acc
    ]
    uses = [u.operation for u in acc.uses if chain[0].is_ancestor(u.operation)]
    if len(loads) != 1 or len(uses) != 2 or loads[0].res.uses.get_length() != 1:
        return None
    before = [op for op in body.ops][: list(body.ops).index(chain[0])]
    if not all(_runs_on_every_lane(op) for op in before):
        return None
    return Reduction(chain, acc, combine)


def _digits(k: SSAValue, loops: list[ForOp], ops: list[Operation]) -> dict[SSAValue, SSAValue]:
    """Each reduction loop's variable from the fused index `k` (innermost
    fastest), the index ops appended to `ops`."""
    mapping: dict[SSAValue, SSAValue] = {}
    rest = k
    for loop in reversed(loops[1:]):
        extent = index_constant(loop.extent)
        digit, quotient = arith.RemUIOp(rest, extent), arith.DivUIOp(rest, extent)
        ops += [extent, digit, quotient]
        mapping[loop.induction_variable] = digit.result
        rest = quotient.result
    mapping[loops[0].induction_variable] = rest
    return mapping


def split_lanes(reduction: Reduction, lanes: int = WARP) -> ForOp:
    """The rewrite of the module docstring, in place; the lane loop."""
    top = reduction.loops[0]
    name = loop_name(top)
    element = cast(AnyFloat, reduction.combine.result.type)
    part = memref.AllocaOp.get(element, shape=[lanes])
    part.memref.name_hint = "part"
    lane = new_loop(f"{name}_lane", lanes, "threadIdx.x")
    partial = memref.AllocaOp.get(element, shape=[])
    partial.memref.name_hint = "lane_acc"
    identity = arith.ConstantOp(FloatAttr(_IDENTITIES[type(reduction.combine)], element))
    steps = new_loop(f"{name}_k", -(-reduction.extent // lanes))
    lane.body.block.add_ops(
        [partial, identity, memref.StoreOp.get(identity.result, partial.memref, []), steps]
    )
    width = index_constant(lanes)
    scaled = arith.MuliOp(steps.induction_variable, width.result)
    k = arith.AddiOp(scaled.result, lane.induction_variable)
    index_ops: list[Operation] = [width, scaled, k]
    mapping = _digits(k.result, reduction.loops, index_ops)
    mapping[reduction.accumulator] = partial.memref
    steps.body.block.add_ops(index_ops)
    target = steps.body.block
    if reduction.extent % lanes:
        total = index_constant(reduction.extent)
        inside = arith.CmpiOp(k.result, total.result, "ult")
        guard = scf.IfOp(inside.result, [], [Block()])
        steps.body.block.add_ops([total, inside, guard])
        target = guard.true_region.block
    for loop in reduction.loops:
        for op in loop.body.block.ops:
            if not isinstance(op, ForOp):
                target.add_op(op.clone(value_mapper=mapping))
    if target is not steps.body.block:
        target.add_op(scf.YieldOp())
    value = memref.LoadOp.get(partial.memref, [])
    lane.body.block.add_ops(
        [value, memref.StoreOp.get(value.res, part.memref, [lane.induction_variable])]
    )
    combine = new_loop(f"{name}_lanes", lanes)
    acc = memref.LoadOp.get(reduction.accumulator, [])
    one = memref.LoadOp.get(part.memref, [combine.induction_variable])
    folded = type(reduction.combine)(acc.res, one.res)
    combine.body.block.add_ops(
        [acc, one, folded, memref.StoreOp.get(folded.result, reduction.accumulator, [])]
    )
    body = top.parent_block()
    assert body is not None, "a reduction nest lies in a body"
    body.insert_ops_before([part, lane, combine], top)
    top.detach()
    top.erase()
    return lane


def warps_per_block(outputs: int) -> int:
    """The outputs (warps) of a block: the most up to OUTPUTS_PER_BLOCK that
    divides `outputs` and still leaves SPREAD_BLOCKS blocks, else 1."""
    divisors = [d for d in range(1, OUTPUTS_PER_BLOCK + 1) if outputs % d == 0]
    return max(d for d in divisors if d == 1 or outputs // d >= SPREAD_BLOCKS)


def _blocks_of_warps(func: FuncOp, chain: list[ForOp], outputs: int) -> list[SchedulePass]:
    """The passes that fuse the output loops `chain` (`i0_i1_...`) and split
    the fused loop by warps_per_block (`..._o`: the blocks, `..._i`: a
    block's warps)."""
    name = func.sym_name.data
    steps: list[SchedulePass] = []
    fused = loop_name(chain[-1])
    for outer in reversed(chain[:-1]):  # inner pairs first: the fused body is perfect
        steps.append(TirFuse(func=name, outer=loop_name(outer), inner=fused))
        fused = f"{loop_name(outer)}_{fused}"
    return [*steps, TirSplit(func=name, loop=fused, factor=warps_per_block(outputs))]


def lane_schedule(func: FuncOp, chain: list[ForOp]) -> list[SchedulePass] | None:
    """For a kernel whose independent output loops `chain` (outer first;
    none: a reduction into one element) count fewer than
    CROSS_THREAD_OUTPUTS outputs and whose innermost output body holds a
    reduction of at least MIN_REDUCTION iterations that find_reduction
    accepts: that reduction split across lanes (split_lanes, in place) and
    the passes that put its outputs in blocks of warps; for a reduction
    into one element, the nest already in one block `lanes_b` bound to
    blockIdx.x, and no passes. None for another kernel (left as it is)."""
    outputs = prod(loop.extent for loop in chain)
    body = chain[-1].body.block if chain else func.body.block
    reduction = find_reduction(body)
    if not 0 < outputs < CROSS_THREAD_OUTPUTS or reduction is None:
        return None
    if reduction.extent < MIN_REDUCTION:
        return None
    if chain:
        split_lanes(reduction)
        return _blocks_of_warps(func, chain, outputs)
    top = reduction.loops[0]
    block = new_loop("lanes_b", 1, "blockIdx.x")
    body.insert_op_before(block, top)
    top.detach()
    block.body.block.add_op(top)
    split_lanes(reduction)
    return []


@dataclass(frozen=True)
class _Lanes:
    """A lane loop of split_lanes as convert-tir-to-gpu finds it."""

    lane: ForOp
    combine_loop: ForOp
    part: memref.AllocaOp
    stored: memref.StoreOp
    accumulator: SSAValue
    combiner: type[_Combiner]


def _lanes_at(lane: ForOp) -> _Lanes | None:
    """The split_lanes form around a threadIdx.x loop, or None."""
    combine_loop = lane.next_op
    stored = lane.body.block.last_op
    if not (
        isinstance(combine_loop, ForOp)
        and combine_loop.extent == lane.extent
        and isinstance(stored, memref.StoreOp)
        and list(stored.indices) == [lane.induction_variable]
    ):
        return None
    part = stored.memref.owner
    if not isinstance(part, memref.AllocaOp) or part.parent_block() is not lane.parent_block():
        return None
    ops = list(combine_loop.body.block.ops)
    if len(ops) != 4:
        return None
    load_acc, load_part, folded, store = ops
    if not (
        isinstance(load_acc, memref.LoadOp)
        and isinstance(load_part, memref.LoadOp)
        and load_part.memref is stored.memref
        and list(load_part.indices) == [combine_loop.induction_variable]
        and isinstance(folded, _Combiner)
        and isinstance(store, memref.StoreOp)
        and store.memref is load_acc.memref
    ):
        return None
    return _Lanes(lane, combine_loop, part, stored, load_acc.memref, type(folded))


def _butterfly(value: SSAValue, lanes: int, combiner: type[_Combiner]) -> list[Operation]:
    """`value` combined across the warp: after it every lane holds the
    fold of all lanes' values (the last op's result)."""
    ops: list[Operation] = []
    mask = arith.ConstantOp(IntegerAttr(-1, i32))
    clamp = arith.ConstantOp(IntegerAttr(WARP - 1, i32))
    ops += [mask, clamp]
    offset = lanes // 2
    while offset:
        distance = arith.ConstantOp(IntegerAttr(offset, i32))
        other = llvm.CallIntrinsicOp(
            "llvm.nvvm.shfl.sync.bfly.f32",
            [mask.result, value, distance.result, clamp.result],
            [f32],
        )
        folded = combiner(value, other.results[0])
        ops += [distance, other, folded]
        value = folded.result
        offset //= 2
    return ops


def lower_lanes(lane: ForOp) -> bool:
    """The gpu-level form of the module docstring for a split_lanes lane
    loop, in place: the lane loop then is its parent body's only op.
    False (nothing changed) for any other threadIdx.x loop."""
    found = _lanes_at(lane)
    if found is None:
        return False
    body = lane.parent_block()
    assert body is not None, "a lane loop lies in a body"
    ops = list(body.ops)
    before = [op for op in ops[: ops.index(lane)] if op is not found.part]
    after = ops[ops.index(found.combine_loop) + 1 :]
    wrapper = new_loop(loop_name(lane), lane.extent, "threadIdx.x")
    lane.induction_variable.replace_all_uses_with(wrapper.induction_variable)
    inner = wrapper.body.block
    for op in [*before, *lane.body.block.ops]:
        op.detach()
        inner.add_op(op)
    value = found.stored.value
    found.stored.detach()
    found.stored.erase()
    combined = _butterfly(value, lane.extent, found.combiner)
    zero = index_constant(0)
    first = arith.CmpiOp(wrapper.induction_variable, zero.result, "eq")
    acc = memref.LoadOp.get(found.accumulator, [])
    folded = found.combiner(acc.res, combined[-1].results[0])
    once = Block([acc, folded, memref.StoreOp.get(folded.result, found.accumulator, [])])
    for op in after:
        op.detach()
        once.add_op(op)
    once.add_op(scf.YieldOp())
    inner.add_ops([*combined, zero, first, scf.IfOp(first.result, [], [once])])
    for op in (found.combine_loop, lane, found.part):
        op.detach()
        op.erase()
    body.add_op(wrapper)
    return True
