"""Shared-memory tiling for cuda-default-schedule (`shared_tiling=true`): a
reduction kernel (a matmul, a convolution) computed by blocks of output
tiles whose operands go through shared memory, one reduction tile at a
time, as the schedule primitives build it:

    for F (blockIdx.x: the outer spatial loops and the tiles, fused) {
      acc[TA][TB]                                     tir-cache-write at F
      for a_i (threadIdx.y) { for b_i (threadIdx.x) { acc = identity } }
      for r_o (serial: the reduction in tiles of BK) {
        X_shared = the tile of each operand           tir-cache-read scope=shared at r_o
        copies by the block's threads; barrier
        for a_i { for b_i { for r_i, r_2.. { acc[a_i][b_i] += .. X_shared .. } } }
        barrier
      }
      for a_i { for b_i { out = epilogue(acc[a_i][b_i]) } }
    }

b is the innermost spatial loop (coalesced: neighbouring threads,
neighbouring outputs) and a the spatial loop that the most loads along b
do not depend on (register_tiling.reuse_axis: the output channels of a
convolution, the rows of a matmul), else the loop outside b; a TA x TB
tile of outputs per block, a thread each, the other spatial loops fused
with the tiles' into the block index; r_1 is the outermost reduction loop. LLVM keeps
each thread's accumulator in a register (the tile array is indexed by the
thread ids only). A kernel that does not fit (no reduction, tiles of fewer
than MIN_THREADS threads, no reduction tile dividing r_1, an operand tile
over the block's shared memory) is left to the default schedule.

With `per_thread=K` (K > 1; cuda-default-schedule{shared_outputs_per_thread=K})
the block's tile is K times longer along a (up to TILE*K outputs, a
multiple of K) with the same threads: each thread computes K neighbouring
outputs along a (register_tiling.tile_outputs on the init, compute and
write-back nests of a_i x b_i), so each value of b's operand loaded from
shared memory into a register serves K accumulators. A kernel whose a
extent K does not divide is tiled with one output per thread."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.pattern_rewriter import PatternRewriter

from xtc.dialects.tir import ForOp
from xtc.passes.register_tiling import reuse_axis, tile_outputs
from xtc.passes.schedule_pass import SchedulePass
from xtc.passes.tir_bind import TirBind
from xtc.passes.tir_cache_read import TirCacheRead
from xtc.passes.tir_cache_write import TirCacheWrite
from xtc.passes.tir_fuse import TirFuse
from xtc.passes.tir_loops import (
    ScheduleError,
    find_loop,
    loop_name,
    only_inner_loop,
    set_kind,
)
from xtc.passes.tir_reorder import TirReorder
from xtc.passes.tir_split import TirSplit

TILE = 16
"""The most outputs of a block along each of its two loops."""
MIN_THREADS = 64
"""The fewest threads a block may have (two warps)."""
REDUCTION_TILES = (16, 8, 32, 4)
"""The reduction tile sizes tried, best first."""


def _largest_divisor(extent: int, most: int) -> int:
    return max(d for d in range(1, min(extent, most) + 1) if extent % d == 0)


def _reduction_loops(inner: ForOp) -> list[ForOp]:
    """The perfect nest of reduction loops in the innermost spatial body."""
    first = next((op for op in inner.body.block.ops if isinstance(op, ForOp)), None)
    if first is None:
        return []
    nest = [first]
    while (deeper := only_inner_loop(nest[-1])) is not None:
        nest.append(deeper)
    return nest


def _read_positions(func: FuncOp, reduction: ForOp) -> list[int]:
    """The positions of the function's arguments the reduction reads."""
    read = {op.memref for op in reduction.walk() if isinstance(op, memref.LoadOp)}
    return [position for position, arg in enumerate(func.args) if arg in read]


@dataclass(frozen=True, kw_only=True)
class BindFused(SchedulePass):
    """The fused loop of independent loops bound to blockIdx.x, unchecked
    (as cuda-default-schedule binds its fused loop)."""

    name = "cuda-shared-tiling-bind"

    loop: str

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        set_kind(self.find_loop(func, self.loop), "blockIdx.x", rewriter)


def _tile_axes(chain: list[ForOp]) -> tuple[ForOp, ForOp]:
    """The loops a and b of the block's tile (the module docstring)."""
    reusing = (reuse_axis(chain, outputs) for outputs in (TILE, 8, 4, 2))
    return next((loop for loop in reusing if loop is not None), chain[-2]), chain[-1]


def thread_outputs(chain: list[ForOp], per_thread: int) -> int:
    """The outputs per thread along a: `per_thread` where it divides a's
    extent, else 1."""
    if len(chain) < 2:
        return 1
    a, _ = _tile_axes(chain)
    return per_thread if a.extent % per_thread == 0 else 1


def shared_tiling_steps(
    func: FuncOp, chain: list[ForOp], per_thread: int = 1
) -> list[SchedulePass] | None:
    """The schedule passes that tile `func` through shared memory (the
    module docstring), `chain` its independent spatial loops outermost
    first, the block's tile along a `per_thread` (a divisor of a's extent)
    times its threads; None when the kernel does not fit."""
    if len(chain) < 2:
        return None
    reduction = _reduction_loops(chain[-1])
    if not reduction:
        return None
    a, b = _tile_axes(chain)
    ta = per_thread * _largest_divisor(a.extent // per_thread, TILE)
    tb = _largest_divisor(b.extent, TILE)
    if ta // per_thread * tb < MIN_THREADS:
        return None
    r = reduction[0]
    bk = next((k for k in REDUCTION_TILES if r.extent % k == 0 and r.extent > k), None)
    if bk is None:
        return None
    name = func.sym_name.data
    na, nb, nr = loop_name(a), loop_name(b), loop_name(r)
    rest = [loop_name(loop) for loop in reduction[1:]]
    outer = [loop_name(loop) for loop in chain if loop is not a and loop is not b]
    steps: list[SchedulePass] = [
        TirSplit(func=name, loop=na, factor=ta),
        TirSplit(func=name, loop=nb, factor=tb),
        TirReorder(func=name, order=(*outer, f"{na}_o", f"{nb}_o", f"{na}_i", f"{nb}_i")),
    ]
    fused = f"{nb}_o"
    for loop in reversed([*outer, f"{na}_o"]):
        steps.append(TirFuse(func=name, outer=loop, inner=fused))
        fused = f"{loop}_{fused}"
    steps += [
        # tir-bind cannot follow the fused index (a division and a remainder):
        # its iterations differ in an original independent loop, so they write apart
        BindFused(func=name, loop=fused),
        TirBind(func=name, loop=f"{na}_i", axis="threadIdx.y"),
        TirBind(func=name, loop=f"{nb}_i", axis="threadIdx.x"),
        TirCacheWrite(func=name, loop=fused),
        TirSplit(func=name, loop=nr, factor=bk),
        TirReorder(func=name, order=(f"{nr}_o", f"{na}_i", f"{nb}_i", f"{nr}_i", *rest)),
    ]
    return steps


def _tile_thread_nests(func: FuncOp, a: str, b: str, per_thread: int) -> None:
    """Gives each thread `per_thread` outputs along `a`_i in the init,
    compute and write-back nests of `a`_i x `b`_i (tile_outputs)."""
    for suffix in ("_init", "", "_wb"):
        outer = find_loop(BindFused.name, func, f"{a}_i{suffix}")
        inner = only_inner_loop(outer)
        if inner is None or loop_name(inner) != f"{b}_i{suffix}":
            raise ScheduleError(BindFused.name, f"no thread nest '{a}_i{suffix}' x '{b}_i'", outer)
        tile_outputs([outer, inner], outer, per_thread)


def apply_shared_tiling(
    ctx: Context, module: ModuleOp, func: FuncOp, chain: list[ForOp], per_thread: int = 1
) -> bool:
    """Tiles `func` through shared memory when it fits (the module
    docstring), `per_thread` outputs per thread where a's extent allows;
    whether it did. Each operand is cached where its tile fits the block's
    shared memory, others are read from global memory; a kernel none of
    whose operands could be cached is restored."""
    per_thread = thread_outputs(chain, per_thread)
    steps = shared_tiling_steps(func, chain, per_thread)
    if steps is None:
        return False
    reduction = _reduction_loops(chain[-1])
    operands = _read_positions(func, reduction[0])
    if not operands:
        return False
    a, b = (loop_name(loop) for loop in _tile_axes(chain))
    original = func.clone()
    try:
        for step in steps:
            step.apply_to(func)
        if per_thread > 1:
            _tile_thread_nests(func, a, b, per_thread)
    except ScheduleError:
        _restore(func, original)
        return False
    name = func.sym_name.data
    tile_loop = f"{loop_name(reduction[0])}_o"
    cached = 0
    for position in operands:
        try:
            TirCacheRead(func=name, loop=tile_loop, buffer=position, scope="shared").apply_to(func)
            cached += 1
        except ScheduleError:
            continue  # its tile is too large or not affine: read from global memory
    if cached == 0:
        _restore(func, original)
        return False
    return True


def _restore(func: FuncOp, original: FuncOp) -> None:
    """`func`'s body back as it was before a schedule that did not fit."""
    func.body.detach_block(func.body.block).erase()
    func.body.add_block(original.body.detach_block(original.body.block))
