"""tir-hoist-reduction: the outer reduction loop of a register tile moved out
past spatial loops, the tile's partial sums kept in the output between its
iterations (GEMM's blocking of K: KC in Goto's terms)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from xtc.analysis.vectorizable import is_pure
from xtc.dialects.tir import ForOp
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    check_unit_stride,
    direct_loops,
    index_constant,
    is_pure_scalar,
    ScheduleError,
    loop_name,
    loops_in,
    only_inner_loop,
    why_not_perfect,
)


@dataclass
class _Tile:
    """A register tile as tir-cache-write leaves it in its loop S: the
    accumulators, the init nest, the reduction nest (its outermost loop the
    one to hoist) and the write-back nest, whose `partial` load of the
    accumulator reaches the `store` into the output."""

    cached: ForOp
    accumulator: memref.AllocaOp
    init: ForOp
    write_back: ForOp
    identity_store: memref.StoreOp
    partial: memref.LoadOp
    store: memref.StoreOp


def _accumulator(refuse: Refuser, cached: ForOp) -> memref.AllocaOp:
    allocas = [op for op in cached.body.block.ops if isinstance(op, memref.AllocaOp)]
    if len(allocas) != 1:
        raise refuse.on(cached)(
            f"holds {len(allocas)} allocas beside the reduction; tir-hoist-reduction needs "
            "the one accumulator buffer that tir-cache-write leaves"
        )
    return allocas[0]


def _only(refuse: Refuser, ops: Sequence[Operation], what: str) -> Operation:
    if len(ops) != 1:
        raise refuse(f"has {len(ops)} {what}; tir-hoist-reduction needs exactly one")
    return ops[0]


def _cached_tile(refuse: Refuser, reduction: ForOp) -> _Tile:
    """The tile around `reduction` (see _Tile); refuses another shape."""
    cached = reduction.parent_op()
    if not isinstance(cached, ForOp):
        raise refuse("is not in a loop: tir-hoist-reduction needs a tile's reduction loop")
    loops = direct_loops(cached)
    if len(loops) != 3 or loops[1] is not reduction:
        raise refuse(
            f"is not between an init nest and a write-back nest in loop "
            f"'{loop_name(cached)}' (run tir-cache-write at that loop first)"
        )
    init, write_back = loops[0], loops[2]
    accumulator = _accumulator(refuse, cached)
    acc = accumulator.memref
    others = [op for op in cached.body.block.ops if op not in (accumulator, *loops)]
    if not all(is_pure_scalar(op) for op in others):
        raise refuse.on(cached)("holds other ops with effects beside its tile's nests")
    init_stores = [op for op in init.walk() if isinstance(op, memref.StoreOp)]
    identity = _only(refuse.on(init), init_stores, "stores in its init nest")
    stores = [op for op in write_back.walk() if isinstance(op, memref.StoreOp)]
    store = _only(refuse.on(write_back), stores, "stores in its write-back nest")
    loads = [op for op in write_back.walk() if isinstance(op, memref.LoadOp) and op.memref is acc]
    partial = _only(refuse.on(write_back), loads, "loads of its accumulators")
    assert isinstance(identity, memref.StoreOp) and isinstance(store, memref.StoreOp)
    assert isinstance(partial, memref.LoadOp)
    if identity.memref is not acc or store.memref is acc:
        raise refuse.on(cached)("does not hold a tile of accumulators as tir-cache-write leaves it")
    return _Tile(cached, accumulator, init, write_back, identity, partial, store)


def _chain(refuse: Refuser, outside: ForOp, cached: ForOp) -> None:
    """Refuses loops from `outside` down to the tile's loop that are not a
    perfect nest (each body one loop and pure scalar ops)."""
    if not outside.is_ancestor(cached):
        raise refuse.on(outside)(
            f"does not hold loop '{loop_name(cached)}' of the tile; tir-hoist-reduction moves "
            "the reduction loop out past loops around the tile"
        )
    loop = outside
    while loop is not cached:
        inner = only_inner_loop(loop)
        if inner is None:
            raise ScheduleError(refuse.pass_name, why_not_perfect(loop, refuse.func), loop)
        loop = inner


def _check_effects(refuse: Refuser, reduction: ForOp, tile: _Tile) -> None:
    """Refuses a reduction that reads the output or stores elsewhere than
    its accumulators, and a write-back that reads the output, stores a
    value of another type than the accumulators' or has other effects: the
    output holds partial sums between the reduction blocks, and the
    write-back runs at every block."""
    output, acc = tile.store.memref, tile.accumulator.memref
    for op in reduction.walk():
        if isinstance(op, memref.StoreOp) and op.memref is not acc:
            raise refuse("stores into another buffer than its accumulators")
        if isinstance(op, memref.LoadOp) and op.memref is output:
            raise refuse("reads the output its tile writes back")
        if not isinstance(op, memref.LoadOp | memref.StoreOp | ForOp) and not is_pure(op):
            raise refuse(f"holds '{op.name}', whose effects cannot be reordered")
    on_write_back = refuse.on(tile.write_back)
    for op in tile.write_back.walk():
        if isinstance(op, memref.LoadOp) and op.memref is output:
            raise on_write_back("reads the output it writes: it would read a partial sum")
        if not isinstance(op, memref.LoadOp | memref.StoreOp | ForOp) and not is_pure(op):
            raise on_write_back(f"holds '{op.name}', which cannot run at every reduction block")
    element = _element(acc.type)
    if tile.store.value.type != element:
        raise on_write_back(
            f"stores {tile.store.value.type} from {element} accumulators; the output cannot "
            "hold the partial sums"
        )


def _element(t: Attribute) -> Attribute:
    return cast(MemRefType[Attribute], t).get_element_type()


def _init_iterations(refuse: Refuser, tile: _Tile) -> dict[SSAValue, SSAValue]:
    """Each write-back loop's variable -> that of the init loop of the same
    tile loop (`X_wb` -> `X_init`)."""
    init = {loop_name(loop): loop for loop in loops_in(tile.init)}
    mapping: dict[SSAValue, SSAValue] = {}
    for loop in loops_in(tile.write_back):
        name = loop_name(loop)
        twin = init.get(name.removesuffix("_wb") + "_init")
        if not name.endswith("_wb") or twin is None:
            raise refuse.on(loop)("has no twin loop in the tile's init nest")
        mapping[loop.induction_variable] = twin.induction_variable
    partial = [mapping.get(index, index) for index in tile.partial.indices]
    if partial != list(tile.identity_store.indices):
        raise refuse.on(tile.write_back)(
            "reads the accumulators where the init nest does not set them"
        )
    return mapping


def _index_ops(refuse: Refuser, tile: _Tile) -> list[Operation]:
    """The write-back's ops computing the output element's indices, in
    program order; refuses one that is not pure scalar or a value the init
    nest cannot see."""
    inside = set(tile.write_back.walk())
    needed: set[Operation] = set()
    pending = list(tile.store.indices)
    body = list(tile.cached.body.block.ops)
    while pending:
        value = pending.pop()
        owner = value.owner
        if isinstance(owner, Block):
            continue
        if owner not in inside:
            if owner.parent_op() is tile.cached and body.index(owner) > body.index(tile.init):
                raise refuse.on(tile.write_back)(
                    "indexes the output with a value set after its init nest"
                )
            continue
        if not is_pure_scalar(owner):
            raise refuse.on(tile.write_back)(f"indexes the output through '{owner.name}'")
        if owner not in needed:
            needed.add(owner)
            pending.extend(owner.operands)
    return [op for op in tile.write_back.walk() if op in needed]


def _condition(iteration: SSAValue, value: int) -> tuple[list[Operation], SSAValue]:
    """`iteration == value`, and the ops computing it."""
    constant = index_constant(value)
    equal = arith.CmpiOp(iteration, constant.result, "eq")
    return [constant, equal], equal.result


def _start_from_partial_sums(tile: _Tile, iteration: SSAValue, refuse: Refuser) -> None:
    """The init nest sets each accumulator to the identity at the first
    block, else to the partial sum the output holds."""
    mapping = _init_iterations(refuse, tile)
    index_ops = _index_ops(refuse, tile)
    store = tile.identity_store
    block = store.parent_block()
    assert block is not None
    clones = [op.clone(mapping) for op in index_ops]
    for op, clone in zip(index_ops, clones, strict=True):
        for old, new in zip(op.results, clone.results, strict=True):
            mapping[old] = new
    indices = [mapping.get(index, index) for index in tile.store.indices]
    condition_ops, first = _condition(iteration, 0)
    partial = memref.LoadOp.get(tile.store.memref, indices)
    chosen = arith.SelectOp(first, store.value, partial.res)
    block.insert_ops_before([*clones, *condition_ops, partial, chosen], store)
    store.operands[0] = chosen.result


def _store_partial_sums(tile: _Tile, iteration: SSAValue, extent: int) -> None:
    """The write-back stores the epilogue's value at the last block, else
    the partial sums."""
    store = tile.store
    block = store.parent_block()
    assert block is not None
    if store.value is tile.partial.res:
        return  # no epilogue: the output holds the sum, whole or partial
    condition_ops, last = _condition(iteration, extent - 1)
    chosen = arith.SelectOp(last, store.value, tile.partial.res)
    block.insert_ops_before([*condition_ops, chosen], store)
    store.operands[0] = chosen.result


def _move_out(reduction: ForOp, outside: ForOp) -> None:
    """`outside { .. S { init; R { body }; wb } }` -> `R { outside { .. S {
    init; body; wb } } }`."""
    block = reduction.parent_block()
    assert block is not None
    for op in list(reduction.body.block.ops):
        op.detach()
        block.insert_op_before(op, reduction)
    reduction.detach()
    around = outside.parent_block()
    assert around is not None
    around.insert_op_before(reduction, outside)
    outside.detach()
    reduction.body.block.add_op(outside)


@dataclass(frozen=True, kw_only=True)
class TirHoistReduction(SchedulePass):
    """Moves the outermost reduction loop of a register tile out past the
    spatial loops around the tile (cache blocking of the reduction, GEMM's
    K blocks: split the reduction first, hoist its outer part), so that
    every tile reads one block of the operands while the block is in cache.

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a serial loop R named `loop`, from 0 step
    1, as tir-cache-write leaves a tile's reduction in its loop S: S's body
    holds an accumulator buffer (`memref.alloca`), pure scalar ops, an init
    nest storing once into it, R, and a write-back nest loading it once
    and storing once into an output of the accumulators' element type; a
    loop named `outside` that is S or holds S through a perfect nest (each
    body one loop and pure scalar ops). R and what it holds store only
    into the accumulators and do not read the output; the write-back reads
    other buffers (a bias, a residual), not the output; distinct iterations
    of the loops from `outside` down to S write distinct output elements,
    as convert-te-to-tir leaves a computation's output.

    Produces: R around `outside` (same name, bounds and kind), its body the
    loops from `outside` down; in S, R's former body in R's place. The
    init nest stores `select(R == 0, identity, output[i])` into the
    accumulators: a partial sum after the first block. The write-back
    stores `select(R == extent - 1, epilogue, partial)`: the epilogue
    (bias, relu, ...) is applied once, to the whole sum, and the output
    holds the partial sums between blocks. Each output element accumulates
    in the same order as before, so the results are bit-identical. For
    `tir-split{loop=r0 factor=64}` then tir-cache-write, a 256-channel
    conv's `r0_o` (4 blocks) hoisted above the column blocks sweeps the
    whole output once per block of 64 input channels.

    Refuses (naming pass, function and loop): a missing function or loop,
    a loop name used twice, R not serial or not from 0 step 1, R not
    between an init nest and a write-back nest as above, `outside` not
    holding S through a perfect nest, R storing elsewhere than into the
    accumulators or reading the output, a write-back reading the output,
    storing another type or holding other effects.

    Command line: `tir-hoist-reduction{func=conv2d_0 loop=r0_o outside=i1_o}`;
    a name other than letters, digits, `_` and `-`, or one that reads as a
    number or a boolean, is quoted: `loop="r.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-hoist-reduction"
    LOOP_OPTIONS = ("loop", "outside")

    loop: str
    """The outermost reduction loop of a cached tile, to move out."""
    outside: str
    """The spatial loop (around the tile, or the tile's own) to move it above."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        reduction = self.find_loop(func, self.loop)
        outside = self.find_loop(func, self.outside)
        refuse = self.refuser(func, reduction)
        check_unit_stride(self.name, func, reduction)
        if reduction.kind.data != "serial":
            raise refuse(f"is {reduction.kind.data}; only a serial reduction loop moves out")
        tile = _cached_tile(refuse, reduction)
        _chain(refuse, outside, tile.cached)
        _check_effects(refuse, reduction, tile)
        iteration = reduction.induction_variable
        assert isinstance(iteration.type, IndexType)
        _start_from_partial_sums(tile, iteration, refuse)
        _store_partial_sums(tile, iteration, reduction.extent)
        _move_out(reduction, outside)
