"""Lockstep execution of a `gpu.func`: the threads of many blocks run at
once as the lanes of numpy arrays (interp/lanes.py), op by op, the way a
GPU's warps run them. It computes what running the threads one after
another computes (interp/gpu.py), for kernels whose threads touch disjoint
elements between barriers, which tir-bind and convert-tir-to-gpu ensure;
and it runs a model's kernels thousands of times faster.

- The grid runs in chunks of whole blocks (about CHUNK_LANES threads).
- A value the same in every lane (a constant, a loop's induction variable,
  what is computed from them) stays one numpy scalar.
- `gpu.barrier` needs nothing: every lane ends an op before any starts the
  next one.
- An `scf.if` whose condition differs between lanes runs each region on
  the lanes that take it only (a frame of the selected lanes), then merges
  the results it yields.
- A buffer is a kernel argument (shared by the grid), a shared one (one
  array per block: memory space 3) or a thread's own (one array per
  thread); a memref.alloca is allocated once per chunk, statically, as
  CUDA does.
- A warp shuffle (`llvm.nvvm.shfl.sync.bfly.*`) reads lane `lane ^ offset`
  of the same warp, its own value where that lane is past the block's end.
- A store from many lanes to one element keeps the last lane's value, as
  the serial order does.

`refusal(kernel)` says which op it does not run (the caller then runs the
threads one after another).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import arith, gpu, llvm, memref, scf
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import InterpretationError

from xtc.analysis.memory_spaces import is_shared
from xtc.dialects.tir import AssertOp, ForOp, format_message
from xtc.interp import RunTimeFault
from xtc.interp.gpu_threads import SHUFFLE, WARP
from xtc.interp.lanes import Lanes, constant, dtype_of, evaluate, is_lane_wise

CHUNK_LANES = 1 << 17
"""About how many threads run at once (whole blocks; at least one block)."""

DIMENSIONS = ("x", "y", "z")
PLACES = (gpu.ThreadIdOp, gpu.BlockIdOp, gpu.BlockDimOp, gpu.GridDimOp)
RUN_HERE = (
    *PLACES,
    gpu.BarrierOp,
    gpu.ReturnOp,
    memref.AllocaOp,
    memref.LoadOp,
    memref.StoreOp,
    ForOp,
    scf.IfOp,
    scf.YieldOp,
    AssertOp,
    arith.ConstantOp,
)


@dataclass
class Buffer:
    """A memref: `array` indexed as the memref is, after a leading index
    of the block (per="block") or the thread (per="thread") in the chunk."""

    array: np.ndarray
    per: str = "grid"


@dataclass
class Chunk:
    """The blocks that run at once: `blocks` of them from `first_block`
    (linear, x fastest), each of `threads` threads; lane l is thread
    l % threads of block first_block + l // threads."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    first_block: int
    blocks: int
    buffers: dict[Operation, Buffer] = field(default_factory=dict)
    constants: dict[Operation, Lanes] = field(default_factory=dict)

    @property
    def threads(self) -> int:
        return prod(self.block)

    @property
    def lanes(self) -> int:
        return self.blocks * self.threads


class Frame:
    """The values of the running lanes (`lanes`, numbers in the chunk). A
    frame of an `scf.if` region holds the lanes `select` of its parent's
    and reads the parent's values at those lanes."""

    def __init__(
        self,
        chunk: Chunk,
        lanes: np.ndarray,
        parent: Frame | None = None,
        select: np.ndarray | None = None,
    ) -> None:
        self.chunk, self.lanes, self.parent, self.select = chunk, lanes, parent, select
        self.values: dict[SSAValue, Any] = {}

    def get(self, value: SSAValue) -> Any:
        found = self.values.get(value)
        if found is not None:
            return found
        if self.parent is None:
            raise InterpretationError(f"lockstep: no value for {value}")
        found = self.parent.get(value)
        if isinstance(found, np.ndarray):
            found = found[self.select]
        self.values[value] = found
        return found

    def blocks_of_lanes(self) -> Lanes:
        """Each lane's block within the chunk."""
        if self.chunk.blocks == 1:
            return np.int64(0)
        return self.lanes // self.chunk.threads

    def place(self, op: Operation) -> Lanes:
        """What gpu.thread_id / block_id / block_dim / grid_dim reads."""
        axis = DIMENSIONS.index(op.dimension.data.value)
        chunk = self.chunk
        if isinstance(op, gpu.BlockDimOp):
            return np.int64(chunk.block[axis])
        if isinstance(op, gpu.GridDimOp):
            return np.int64(chunk.grid[axis])
        if isinstance(op, gpu.ThreadIdOp):
            sizes, linear = chunk.block, self.lanes % chunk.threads
        else:
            sizes, linear = chunk.grid, chunk.first_block + self.blocks_of_lanes()
        if sizes[axis] == 1:
            return np.int64(0)
        return (linear // prod(sizes[:axis])) % sizes[axis]


def refusal(kernel: gpu.FuncOp) -> str | None:
    """The first op of `kernel` that lockstep execution does not run, else None."""
    if len(kernel.body.blocks) != 1:
        return "a kernel of several blocks"
    for op in kernel.body.walk():
        if op is kernel:
            continue
        if isinstance(op, RUN_HERE) or is_lane_wise(op):
            continue
        if isinstance(op, llvm.CallIntrinsicOp) and op.intrin.data.startswith(SHUFFLE):
            continue
        return op.name
    return None


def run_lockstep(
    kernel: gpu.FuncOp,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    args: tuple[Any, ...],
) -> None:
    """Runs `kernel` over the grid, chunk after chunk of blocks."""
    params = [
        Buffer(a) if isinstance(a, np.ndarray) else dtype_of(t).type(a)
        for a, t in zip(args, kernel.function_type.inputs.data, strict=True)
    ]
    blocks = prod(grid)
    per_chunk = max(1, CHUNK_LANES // max(1, prod(block)))
    with np.errstate(all="ignore"):
        for first in range(0, blocks, per_chunk):
            chunk = Chunk(grid, block, first, min(per_chunk, blocks - first))
            frame = Frame(chunk, np.arange(chunk.lanes, dtype=np.int64))
            frame.values.update(zip(kernel.body.block.args, params, strict=True))
            _run(kernel.body.block, frame)


def _run(block: Block, frame: Frame) -> list[Any]:
    """Runs the ops of `block` on the frame's lanes; the values its
    terminator (scf.yield, gpu.return) yields."""
    values = frame.values
    for op in block.ops:
        if isinstance(op, scf.YieldOp | gpu.ReturnOp):
            return [frame.get(v) for v in op.operands]
        if isinstance(op, arith.ConstantOp):
            found = frame.chunk.constants.get(op)
            if found is None:
                found = frame.chunk.constants[op] = constant(op)
            values[op.result] = found
        else:
            _run_op(op, frame)
    return []


def _run_op(op: Operation, frame: Frame) -> None:
    values = frame.values
    if isinstance(op, ForOp):
        induction = op.body.block.args[0]
        lower, upper, step = (a.value.data for a in (op.lower, op.upper, op.step))
        for i in range(lower, upper, step):
            values[induction] = np.int64(i)
            _run(op.body.block, frame)
    elif isinstance(op, scf.IfOp):
        values.update(zip(op.results, _run_if(op, frame), strict=True))
    elif isinstance(op, memref.LoadOp):
        buffer, index = _address(op, frame, op.memref, op.indices)
        values[op.res] = _load(op, buffer, index)
    elif isinstance(op, memref.StoreOp):
        buffer, index = _address(op, frame, op.memref, op.indices)
        _store(op, buffer, index, frame.get(op.value))
    elif isinstance(op, memref.AllocaOp):
        values[op.memref] = _alloca(op, frame.chunk)
    elif isinstance(op, PLACES):
        values[op.result] = frame.place(op)
    elif isinstance(op, gpu.BarrierOp):
        pass  # every lane ended the ops before it
    elif isinstance(op, llvm.CallIntrinsicOp):
        _mask, value, offset, _clamp = (frame.get(o) for o in op.args)
        values[op.results[0]] = _shuffle(frame, value, int(offset))
    elif isinstance(op, AssertOp):
        _check(op, frame)
    else:
        values[op.results[0]] = evaluate(op, [frame.get(o) for o in op.operands])


def _run_if(op: scf.IfOp, frame: Frame) -> list[Any]:
    condition = frame.get(op.cond)
    if np.ndim(condition) == 0 or condition.all() or not condition.any():
        taken = bool(condition if np.ndim(condition) == 0 else condition[0])
        region = op.true_region if taken else op.false_region
        return _run(region.block, frame) if region.blocks else []
    taken = np.flatnonzero(condition)
    others = np.flatnonzero(~condition)
    then_values = _run(op.true_region.block, _subframe(frame, taken))
    if not op.false_region.blocks:
        return []
    else_values = _run(op.false_region.block, _subframe(frame, others))
    merged: list[Any] = []
    for result, then_value, else_value in zip(op.results, then_values, else_values, strict=True):
        out = np.empty(len(condition), dtype_of(result.type))
        out[taken], out[others] = then_value, else_value
        merged.append(out)
    return merged


def _subframe(frame: Frame, select: np.ndarray) -> Frame:
    return Frame(frame.chunk, frame.lanes[select], frame, select)


def _alloca(op: memref.AllocaOp, chunk: Chunk) -> Buffer:
    """The chunk's array for a buffer of the kernel: one per block for a
    shared one, one per thread otherwise."""
    buffer = chunk.buffers.get(op)
    if buffer is None:
        memref_type = op.memref.type
        shape = tuple(memref_type.get_shape())
        dtype = dtype_of(memref_type.get_element_type())
        if is_shared(op.memref):
            buffer = Buffer(np.zeros((chunk.blocks, *shape), dtype), "block")
        else:
            buffer = Buffer(np.zeros((chunk.lanes, *shape), dtype), "thread")
        chunk.buffers[op] = buffer
    return buffer


Address = tuple[Any, ...]


def _address(op: Operation, frame: Frame, memory: SSAValue, indices: Any) -> tuple[Buffer, Address]:
    buffer: Buffer = frame.get(memory)
    index = tuple(frame.get(i) for i in indices)
    shape = buffer.array.shape[0 if buffer.per == "grid" else 1 :]
    if len(index) != len(shape):
        raise InterpretationError(f"{op.name}: {len(index)} indices into {list(shape)}")
    for i, size in zip(index, shape, strict=True):
        if np.ndim(i) == 0:
            bad = i < 0 or i >= size
        else:
            bad = i.min() < 0 or i.max() >= size
        if bad:
            raise InterpretationError(
                f"{op.name}: index {_first_bad(index, shape)} out of {list(shape)}"
            )
    if buffer.per == "thread":
        return buffer, (frame.lanes, *index)
    if buffer.per == "block":
        return buffer, (frame.blocks_of_lanes(), *index)
    return buffer, index


def _first_bad(index: Address, shape: tuple[int, ...]) -> list[int]:
    """The index of the first lane whose index is out of `shape`."""
    lanes = np.broadcast_arrays(*(np.asarray(i) for i in index))
    bad = np.zeros(lanes[0].shape, bool)
    for i, size in zip(lanes, shape, strict=True):
        bad |= (i < 0) | (i >= size)
    first = np.flatnonzero(bad.reshape(-1))[0]
    return [int(i.reshape(-1)[first]) for i in lanes]


def _load(op: memref.LoadOp, buffer: Buffer, index: Address) -> Lanes:
    return buffer.array[index]


def _store(op: memref.StoreOp, buffer: Buffer, index: Address, value: Lanes) -> None:
    if np.ndim(value) and all(np.ndim(i) == 0 for i in index):
        value = value[-1]  # every lane stores to one element: the last one's stays
    buffer.array[index] = value


def _shuffle(frame: Frame, value: Lanes, offset: int) -> Lanes:
    """Each lane gets the value of thread `thread ^ offset` of its warp
    (its own where that thread is past the block's end, or not running)."""
    if np.ndim(value) == 0:
        return value
    if not 0 <= offset < WARP:
        raise InterpretationError(f"a warp shuffle by {offset} lanes")
    threads = frame.chunk.threads
    thread = frame.lanes % threads
    partner = thread ^ offset
    source = frame.lanes - thread + partner
    valid = partner < threads
    count = len(frame.lanes)
    if count == frame.chunk.lanes:  # every lane runs: a lane's position is its number
        position = np.where(valid, source, frame.lanes)
    else:
        positions = np.full(frame.chunk.lanes, -1, np.int64)
        positions[frame.lanes] = np.arange(count)
        found = positions[np.where(valid, source, frame.lanes)]
        position = np.where(found >= 0, found, np.arange(count))
    return value[position]


def _check(op: AssertOp, frame: Frame) -> None:
    """A failed tir.assert in any lane stops the run (the first lane's)."""
    condition, *value = (frame.get(o) for o in op.operands)
    if np.all(condition):
        return
    first = 0 if np.ndim(condition) == 0 else int(np.flatnonzero(~condition)[0])
    shown = None
    if value:
        v = value[0]
        shown = int(v if np.ndim(v) == 0 else v[first])
    raise RunTimeFault(format_message(op.message.data, shown))
