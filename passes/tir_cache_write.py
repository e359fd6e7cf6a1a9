"""tir-cache-write: a tile of reduction accumulators kept in one local
buffer, the reduction loops moved around the tile (the register tile of a
micro-kernel)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator

from xtc.analysis.types import element_bytes
from xtc.analysis.vectorizable import is_pure
from xtc.dialects.tir import ForOp
from xtc.passes.gpu_memory import (
    MAX_SHARED_BYTES,
    SCOPES,
    enclosing_loops,
    is_block_loop,
    is_thread_loop,
    memory_space_attr,
    shared_buffers,
    shared_bytes,
)
from xtc.passes.loop_rewrites import MAX_STACK_BYTES
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    ScheduleError,
    check_fresh_names,
    check_unit_stride,
    direct_loops,
    is_pure_scalar,
    loop_like,
    loop_name,
    nest_of,
    only_inner_loop,
    rank0_accumulator,
    why_not_perfect,
)

ACCUMULATOR_ALIGNMENT = 64


@dataclass
class _Reduction:
    """A reduction nest under the loop to cache: the tile loops T1..Tk down
    to the accumulator, the ops of Tk's body in their roles, and the
    reduction loops R1..Rm (a perfect nest) whose innermost body
    accumulates."""

    tiles: list[ForOp]
    accumulator: memref.AllocaOp
    pool: list[Operation]
    """Pure scalar ops of the nest outside the reduction body and the
    epilogue, in program order: copied into each new nest that uses them."""
    identity_store: memref.StoreOp
    reductions: list[ForOp]
    epilogue: list[Operation]

    @property
    def accumulator_value(self) -> SSAValue:
        return self.accumulator.memref


def _tiles(refuse: Refuser) -> tuple[list[ForOp], memref.AllocaOp]:
    """The loops from inside `loop` down to the one holding the rank-0
    accumulator, and that accumulator."""
    loop = refuse.loop
    tiles: list[ForOp] = []
    current = loop
    while (accumulator := rank0_accumulator(current)) is None:
        inner = only_inner_loop(current) if tiles else None
        if not tiles and len(direct_loops(current)) == 1:
            inner = direct_loops(current)[0]
        if inner is None:
            if not any(isinstance(op, ForOp) for op in current.body.walk()):
                raise refuse("holds no reduction accumulator (rank-0 alloca)")
            raise ScheduleError(refuse.pass_name, why_not_perfect(current, refuse.func), current)
        check_unit_stride(refuse.pass_name, refuse.func, inner)
        tiles.append(inner)
        current = inner
    if not tiles:
        raise refuse("holds its accumulator directly: nothing to cache")
    return tiles, accumulator


def _first_access(
    ops: Sequence[Operation], kind: type[memref.LoadOp] | type[memref.StoreOp], buffer: SSAValue
) -> int | None:
    """The position of the first load or store (`kind`) of `buffer`."""
    for position, op in enumerate(ops):
        if isinstance(op, kind) and op.memref is buffer:
            return position
    return None


def _check_pure(refuse: Refuser, tile: ForOp, ops: Iterable[Operation], where: str) -> None:
    for op in ops:
        if not is_pure_scalar(op):
            raise refuse.on(tile)(f"holds '{op.name}' {where}; only pure scalar ops can be there")


def _reduction_chain(refuse: Refuser, tile: ForOp, middle: Sequence[Operation]) -> list[ForOp]:
    """The perfect nest of reduction loops between setting and reading the
    accumulator (pure scalar ops beside it allowed)."""
    loops = [op for op in middle if isinstance(op, ForOp)]
    if len(loops) != 1:
        raise refuse.on(tile)(
            f"holds {len(loops)} loops between setting and reading its accumulator; "
            "tir-cache-write needs one reduction loop nest there",
        )
    _check_pure(refuse, tile, (op for op in middle if op is not loops[0]), "beside its reduction")
    chain = loops
    while (inner := only_inner_loop(chain[-1])) is not None:
        chain.append(inner)
    return chain


def _analyse(refuse: Refuser) -> _Reduction:
    """The reduction nest under the refuser's loop; refuses one tir-cache-write cannot
    rebuild."""
    tiles, accumulator = _tiles(refuse)
    innermost = tiles[-1]
    ops = list(innermost.body.block.ops)
    at = ops.index(accumulator)
    _check_pure(refuse, innermost, ops[:at], "before its accumulator")
    rest = ops[at + 1 :]
    acc = accumulator.memref
    store_at = _first_access(rest, memref.StoreOp, acc)
    if store_at is None:
        raise refuse.on(innermost)("never sets its accumulator before reading it")
    _check_pure(refuse, innermost, rest[:store_at], "before setting its accumulator")
    load_at = _first_access(rest[store_at + 1 :], memref.LoadOp, acc)
    if load_at is None:
        raise refuse.on(innermost)("never reads its accumulator after the reduction")
    load_at += store_at + 1
    middle = rest[store_at + 1 : load_at]
    reductions = _reduction_chain(refuse, innermost, middle)
    pool = [op for tile in tiles[:-1] for op in tile.body.block.ops if is_pure_scalar(op)]
    pool += ops[:at] + rest[:store_at] + [op for op in middle if is_pure_scalar(op)]
    pool += [op for r in reductions[:-1] for op in r.body.block.ops if is_pure_scalar(op)]
    reduction = _Reduction(
        tiles, accumulator, pool, cast(memref.StoreOp, rest[store_at]), reductions, rest[load_at:]
    )
    _check_accumulator_uses(refuse, reduction)
    _check_independent(refuse, reduction)
    return reduction


def _check_accumulator_uses(refuse: Refuser, reduction: _Reduction) -> None:
    """Refuses an accumulator used other than by rank-0 loads and stores."""
    acc = reduction.accumulator_value
    for use in acc.uses:
        user = use.operation
        if not isinstance(user, memref.LoadOp | memref.StoreOp) or user.memref is not acc:
            raise refuse.on(reduction.tiles[-1])(
                f"passes its accumulator to '{user.name}'; only loads and stores can use it",
            )


def _has_no_own_effect(op: Operation) -> bool:
    """Whether `op` itself, its nested ops aside, touches no memory: a pure
    op (every arith op: xDSL leaves extsi unmarked), a terminator, or an op
    with regions (scf.if, tir.for)."""
    return bool(op.regions) or op.has_trait(IsTerminator) or is_pure(op)


def _check_independent(refuse: Refuser, reduction: _Reduction) -> None:
    """Refuses reduction loops that write anything but the accumulator, an
    epilogue with effects other than stores and allocas, and an epilogue
    storing into a buffer the reduction reads: moving the reductions of
    the whole tile before every epilogue would change what they compute."""
    acc = reduction.accumulator_value
    read: set[SSAValue] = set()
    first = reduction.reductions[0]
    for op in first.walk():
        if isinstance(op, memref.StoreOp) and op.memref is not acc:
            raise refuse.on(first)("stores into another buffer than its accumulator")
        if isinstance(op, memref.LoadOp):
            read.add(op.memref)
        elif not isinstance(op, memref.StoreOp) and not _has_no_own_effect(op):
            raise refuse.on(first)(f"holds '{op.name}', whose effects cannot be reordered")
    innermost = reduction.tiles[-1]
    for top in reduction.epilogue:
        for op in top.walk():
            if isinstance(op, memref.StoreOp) and op.memref in read:
                raise refuse.on(innermost)("stores into a buffer that its reduction loops read")
            allowed = isinstance(op, memref.StoreOp | memref.LoadOp | memref.AllocaOp)
            if not allowed and not _has_no_own_effect(op):
                raise refuse.on(innermost)(
                    f"holds '{op.name}' after its reduction, whose effects cannot be moved",
                )


def _needed_pool_ops(ops: Iterable[Operation], pool: Sequence[Operation]) -> list[Operation]:
    """The pool ops whose values `ops` use, directly or through other pool
    ops, in pool order."""
    in_pool = set(pool)
    needed: set[Operation] = set()
    pending = [operand for op in ops for inner in op.walk() for operand in inner.operands]
    while pending:
        owner = pending.pop().owner
        if isinstance(owner, Operation) and owner in in_pool and owner not in needed:
            needed.add(owner)
            pending.extend(owner.operands)
    return [op for op in pool if op in needed]


def _fill(
    block: Block,
    ops: Sequence[Operation],
    pool: Sequence[Operation],
    mapping: dict[SSAValue, SSAValue],
) -> None:
    """Copies into `block` the pool ops that `ops` need, then `ops`."""
    for op in [*_needed_pool_ops(ops, pool), *ops]:
        block.add_op(op.clone(mapping))


def _index_accumulator(root: Operation, acc: SSAValue, indices: Sequence[SSAValue]) -> None:
    """Rank-0 loads and stores of `acc` under `root` -> acc[indices]."""
    for op in list(root.walk()):
        if isinstance(op, memref.LoadOp) and op.memref is acc and not op.indices:
            Rewriter.replace_op(op, memref.LoadOp.get(acc, indices))
        elif isinstance(op, memref.StoreOp) and op.memref is acc and not op.indices:
            Rewriter.replace_op(op, memref.StoreOp.get(op.value, acc, indices))


def _tile_nest(
    reduction: _Reduction, suffix: str, base: dict[SSAValue, SSAValue]
) -> tuple[list[ForOp], dict[SSAValue, SSAValue]]:
    """Copies of the tile loops named `<name><suffix>`, nested, and a value
    mapping that sends each tile's iv to its copy's."""
    copies = [loop_like(t, loop_name(t) + suffix) for t in reduction.tiles]
    nest_of(copies)
    mapping = dict(base)
    for tile, copy in zip(reduction.tiles, copies, strict=True):
        mapping[tile.induction_variable] = copy.induction_variable
    return copies, mapping


def _rebuild(reduction: _Reduction, acc: SSAValue) -> list[ForOp]:
    """The init nest, the reduction nest around a copy of the tile, and the
    write-back nest, accumulating into acc[t1, ..., tk]."""
    base: dict[SSAValue, SSAValue] = {reduction.accumulator_value: acc}
    nests: list[ForOp] = []
    init, mapping = _tile_nest(reduction, "_init", base)
    _fill(init[-1].body.block, [reduction.identity_store], reduction.pool, mapping)
    nests.append(init[0])
    reductions = [loop_like(r) for r in reduction.reductions]
    nest_of(reductions)
    tiles, mapping = _tile_nest(reduction, "", base)
    reductions[-1].body.block.add_op(tiles[0])
    for old, new in zip(reduction.reductions, reductions, strict=True):
        mapping[old.induction_variable] = new.induction_variable
    body = list(reduction.reductions[-1].body.block.ops)
    _fill(tiles[-1].body.block, body, reduction.pool, mapping)
    nests.append(reductions[0])
    write_back, mapping = _tile_nest(reduction, "_wb", base)
    _fill(write_back[-1].body.block, reduction.epilogue, reduction.pool, mapping)
    nests.append(write_back[0])
    for copies in (init, tiles, write_back):
        _index_accumulator(copies[0], acc, [t.induction_variable for t in copies])
    return nests


@dataclass(frozen=True, kw_only=True)
class TirCacheWrite(SchedulePass):
    """Caches the accumulators of a tile of a reduction kernel in one local
    buffer, the reduction loops moved around the tile (TVM's cache_write
    with compute_at, the register tile of a micro-kernel).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a spatial loop S named `loop` whose body
    holds exactly one loop T1; T1 .. Tk perfectly nested (each body one loop
    and pure scalar ops), from 0 with step 1; Tk's body, as
    convert-te-to-tir leaves a reduction: pure scalar ops, a rank-0
    `memref.alloca` accumulator, pure ops and the store of the identity
    into it, one perfect nest of reduction loops R1 .. Rm (pure ops beside
    it) whose innermost body accumulates, then from the first load of the
    accumulator the epilogue (scalar ops and the store into the output).
    The accumulator is used only by rank-0 loads and stores; the reduction
    loops store only into it, and the epilogue stores into no buffer they
    read.

    Produces: at the top of S's body `%acc = memref.alloca() {alignment =
    64}` of shape [extent(T1), ..., extent(Tk)] and the accumulator's
    element type; in place of T1: an init nest `T1_init .. Tk_init` storing
    the identity into acc[t1, .., tk]; the reduction loops (same names,
    bounds and kinds) around a copy of the tile `T1 .. Tk` (same names)
    holding the accumulation into acc[t1, .., tk]; a write-back nest
    `T1_wb .. Tk_wb` loading acc[t1, .., tk], running the epilogue and
    storing the output. Pure scalar ops are copied into each nest that uses
    them. Each output element accumulates in the same order as before, so
    the results are bit-identical. For a 4x16 tile of matmul the reduction
    nest is `for r0 { for i0_i (4) { for i1_i (16) { acc[i0_i, i1_i] +=
    a * b } } }`: with i0_i unrolled and i1_i vectorized, acc stays in
    registers.

    The init and write-back copies keep the tile loops' kinds, so with
    T1 unrolled and Tk vectorized the identity stores and the write-back
    are register operations too.

    Interactions: a peeled split inside the tile leaves two loops where one
    tile loop should be (`tir-split i1` then `tir-split i0` with remainders:
    `i0_i` holds `i1_o` and `i1_tail`), which is refused; split the outer
    loop and reorder first, so the tails lie outside the tile. Refuses
    (naming pass, function and loop): a missing function or loop, a loop
    name used twice, S holding the accumulator itself ("nothing to cache")
    or no accumulator, tile loops not perfectly nested or not from 0 step
    1, a Tk body or reduction of another shape, the effects above, a new
    name already taken.

    `scope=local` (GPU): the buffer is the thread's own (`memref<..., 5 :
    i64>`, at most 64 KiB): S is a threadIdx-bound loop or inside one, and
    no tile loop is threadIdx-bound. `scope=shared` (GPU): the buffer is
    the block's shared memory (`memref<..., 3 : i64>`): S is a
    blockIdx-bound loop or a loop inside one, not inside a threadIdx-bound
    loop, and a tile loop is threadIdx-bound, so the block's threads
    accumulate into the buffer together and the write-back nest, bound as
    the tile, copies it to the output (convert-tir-to-gpu puts barriers
    between the phases). Refused besides: S outside the loops its scope
    needs, and a buffer over 64 KiB (local) or, with the block's other
    shared buffers, over 48 KiB (shared).

    Command line: `tir-cache-write{func=matmul_0 loop=i1_o}`, `scope=shared`; a name other
    than letters, digits, `_` and `-`, or one that reads as a number or a
    boolean, is quoted: `loop="i.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-cache-write"

    loop: str
    """The loop of the tile whose accumulators go to a local buffer."""
    scope: str = "global"
    """Where the buffer lives: global, shared (a GPU block's) or local (a thread's)."""

    def check_options(self) -> None:
        if self.scope not in SCOPES:
            raise self.bad_option(f"scope '{self.scope}' is not one of {', '.join(SCOPES)}")

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """`for S { for T1 .. for Tk { acc = alloca; acc = id; for R.. { acc
        op= x }; epilogue(acc) } }` -> `for S { acc = alloca [T1..Tk]; init
        nest; for R.. { for T1 .. Tk { acc[t] op= x } }; write-back nest }`."""
        loop = self.find_loop(func, self.loop)
        refuse = self.refuser(func, loop)
        reduction = _analyse(refuse)
        new_names = [loop_name(t) + s for s in ("_init", "_wb") for t in reduction.tiles]
        check_fresh_names(self.name, func, new_names, loop)
        acc_type = cast(MemRefType[Attribute], reduction.accumulator_value.type)
        shape = [t.extent for t in reduction.tiles]
        element = acc_type.get_element_type()
        self.check_scope(refuse, reduction.tiles, prod(shape) * element_bytes(element))
        acc = memref.AllocaOp.get(
            element, ACCUMULATOR_ALIGNMENT, shape, memory_space=memory_space_attr(self.scope)
        )
        acc.memref.name_hint = "acc"
        rewriter.insert(acc, InsertPoint.at_start(loop.body.block))
        rewriter.replace(reduction.tiles[0], _rebuild(reduction, acc.memref), [])

    def check_scope(self, refuse: Refuser, tiles: Sequence[ForOp], size: int) -> None:
        """Refuses a buffer its scope cannot hold at the refuser's loop."""
        if self.scope == "local":
            _check_local(refuse, tiles, size)
        elif self.scope == "shared":
            _check_shared(refuse, tiles, size)


def _check_local(refuse: Refuser, tiles: Sequence[ForOp], size: int) -> None:
    """A thread's buffer: inside a thread loop, its tile run by that thread."""
    loop = refuse.loop
    if not any(is_thread_loop(outer) for outer in [loop, *enclosing_loops(loop)]):
        raise refuse(
            "is not (inside) a threadIdx-bound loop; scope=local keeps the accumulators of "
            "one thread"
        )
    for tile in tiles:
        if is_thread_loop(tile):
            raise refuse(
                f"holds the threadIdx-bound tile loop '{loop_name(tile)}'; a scope=local "
                "buffer belongs to one thread"
            )
    if size > MAX_STACK_BYTES:
        raise refuse(
            f"has a tile of {size} bytes of accumulators, over the {MAX_STACK_BYTES} bytes a "
            "local buffer may take; cache a smaller tile"
        )


def _check_shared(refuse: Refuser, tiles: Sequence[ForOp], size: int) -> None:
    """A block's buffer: in a block loop, outside thread loops, its tile
    computed by the block's threads, fitting the block's shared memory."""
    loop = refuse.loop
    around = [loop, *enclosing_loops(loop)]
    if any(is_thread_loop(outer) for outer in around):
        raise refuse(
            "is (inside) a threadIdx-bound loop; scope=shared keeps the accumulators of a "
            "block, so cache at the block's loop"
        )
    block = next((outer for outer in around if is_block_loop(outer)), None)
    if block is None:
        raise refuse("is not (inside) a blockIdx-bound loop, which scope=shared needs")
    if not any(is_thread_loop(tile) for tile in tiles):
        raise refuse(
            "has no threadIdx-bound tile loop; scope=shared needs the block's threads to "
            "compute the tile"
        )
    taken = shared_bytes(shared_buffers(block))
    if taken + size > MAX_SHARED_BYTES:
        raise refuse(
            f"has a tile of {size} bytes of accumulators, which with the block's {taken} "
            f"bytes of shared buffers exceeds the {MAX_SHARED_BYTES} bytes of shared memory "
            "a block has; cache a smaller tile"
        )
