"""Register tiling for cuda-default-schedule: one thread computes K outputs
of a reduction nest (a convolution, a matmul) along a spatial loop that its
coalesced loads do not depend on, so each such load feeds K accumulators
from one register.

`tile_outputs` rewrites the nest in place: the chosen loop `a` runs to
extent/K (renamed `a_o`), and the body of the innermost spatial loop holds
K copies of itself for a = a_o * K + j (j < K), jammed: one copy of each
reduction loop holding the K copies of its body; an op that computes the
same value in every copy (an index, a load of a buffer the body does not
write) appears once. Jamming is legal because `a` is one of the
independent loops the schedule binds: its iterations touch disjoint
elements, and the accumulators are allocas of each copy."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64
from xdsl.ir import Block, Operation, SSAValue

from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import index_constant, is_pure_scalar, loop_name, sink_pure_ops

Copies = list[dict[SSAValue, SSAValue]]
"""For each copy j, the value that stands for each original value."""


def _ivs_under(
    value: SSAValue, ivs: set[SSAValue], seen: dict[SSAValue, set[SSAValue]]
) -> set[SSAValue]:
    """The loop variables among `ivs` that `value` is computed from."""
    if value in ivs:
        return {value}
    if value in seen:
        return seen[value]
    owner = value.owner
    found: set[SSAValue] = set()
    if isinstance(owner, Operation) and is_pure_scalar(owner):
        for operand in owner.operands:
            found |= _ivs_under(operand, ivs, seen)
    seen[value] = found
    return found


def _is_plain_nest(body: Block) -> bool:
    """Whether every op with regions under `body` is a tir.for, and a
    tir.for is directly in it (a reduction around the outputs' values)."""
    nested = [op for top in body.ops for op in top.walk() if op.regions]
    return any(isinstance(op, ForOp) for op in body.ops) and all(
        isinstance(op, ForOp) for op in nested
    )


def reuse_axis(chain: Sequence[ForOp], outputs: int) -> ForOp | None:
    """The loop of `chain` (the independent spatial loops, outermost first)
    to give each thread `outputs` iterations of: not the innermost of more
    than one iteration (whose neighbouring iterations stay on neighbouring
    threads, coalesced), its extent a multiple of `outputs`, and the one
    that the most loads inside the reduction loops do not depend on, among
    the loads that depend on that innermost loop (coalesced loads, which a
    thread would otherwise repeat per output); None when no loop saves a
    load or the innermost body is not a plain reduction nest. (Only the
    choice rests on this analysis: tile_outputs shares exactly the ops
    that compute the same value in every copy.)"""
    body = chain[-1].body.block
    if outputs < 2 or len(chain) < 2 or not _is_plain_nest(body):
        return None
    ivs: set[SSAValue] = {loop.induction_variable for loop in chain}
    seen: dict[SSAValue, set[SSAValue]] = {}
    used: list[set[SSAValue]] = []
    for top in body.ops:
        for op in top.walk() if isinstance(top, ForOp) else ():
            if isinstance(op, memref.LoadOp):
                used.append({iv for i in op.indices for iv in _ivs_under(i, ivs, seen)})
    varying = [loop for loop in chain if loop.extent > 1]
    if len(varying) < 2:
        return None
    fastest = varying[-1].induction_variable
    best, best_saved = None, 0
    for loop in varying[:-1]:
        if loop.extent % outputs != 0:
            continue
        iv = loop.induction_variable
        saved = sum(1 for u in used if fastest in u and iv not in u)
        if saved > best_saved:
            best, best_saved = loop, saved
    return best


def _written(ops: Sequence[Operation]) -> set[SSAValue]:
    """The buffers stored to anywhere in or under `ops`."""
    return {o.memref for top in ops for o in top.walk() if isinstance(o, memref.StoreOp)}


def _jam(ops: Sequence[Operation], into: Block, copies: Copies, written: set[SSAValue]) -> None:
    """Appends to `into` the copies of `ops`, jammed: a tir.for once, its
    body jammed in turn; an op the copies share (pure, or a load of an
    unwritten buffer, with the same operands in every copy) once; any other
    op once per copy, in copy order."""
    for op in ops:
        if isinstance(op, ForOp):
            loop = ForOp(
                op.lower.value.data,
                op.upper.value.data,
                loop_name(op),
                op.kind.data,
                op.step.value.data,
            )
            loop.induction_variable.name_hint = op.induction_variable.name_hint
            into.add_op(loop)
            for mapping in copies:
                mapping[op.induction_variable] = loop.induction_variable
            _jam(list(op.body.block.ops), loop.body.block, copies, written)
            continue
        same = all(all(m.get(v, v) is copies[0].get(v, v) for m in copies[1:]) for v in op.operands)
        reads_fixed = isinstance(op, memref.LoadOp) and op.memref not in written
        if same and (is_pure_scalar(op) or reads_fixed):
            shared = op.clone(value_mapper=dict(copies[0]))
            into.add_op(shared)
            for mapping in copies:
                mapping.update(zip(op.results, shared.results, strict=True))
            continue
        for mapping in copies:
            copy = op.clone(value_mapper=dict(mapping))
            into.add_op(copy)
            mapping.update(zip(op.results, copy.results, strict=True))


def tile_outputs(chain: Sequence[ForOp], axis: ForOp, outputs: int) -> None:
    """Gives each iteration of the innermost loop of `chain` `outputs`
    iterations of `axis` (a loop of `chain` whose extent `outputs`
    divides, as reuse_axis picks it): `axis` runs to extent/outputs as
    `<axis>_o`, and the innermost body holds its jammed copies for
    axis = axis_o * outputs + j."""
    sink_pure_ops(chain)  # the axis's variable is then used in the innermost body only
    body = chain[-1].body.block
    old_ops = list(body.ops)
    for op in old_ops:
        op.detach()
    written = _written(old_ops)
    iv = axis.induction_variable
    axis.properties["upper"] = IntegerAttr(axis.extent // outputs, i64)
    axis.properties["name"] = StringAttr(f"{loop_name(axis)}_o")
    iv.name_hint = loop_name(axis)
    factor = index_constant(outputs)
    base = arith.MuliOp(iv, factor.result)
    body.add_ops([factor, base])
    copies: Copies = []
    for j in range(outputs):
        if j == 0:
            copies.append({iv: base.result})
            continue
        offset = index_constant(j)
        index = arith.AddiOp(base.result, offset.result)
        body.add_ops([offset, index])
        copies.append({iv: index.result})
    _jam(old_ops, body, copies, written)
    for op in reversed(old_ops):
        op.erase(safe_erase=False)
