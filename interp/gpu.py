"""numpy semantics of the gpu level (convert-tir-to-gpu's output): a
`gpu.launch_func` runs its kernel once per thread of its grid.

Kernels run in lockstep by default (interp/gpu_lockstep.py): the threads
of many blocks at once, as the lanes of numpy arrays, thousands of times
faster than one after another, with the same results. A kernel holding an
op that lockstep execution does not run, or any kernel inside
`one_thread_at_a_time()` (the reference lockstep is tested against), runs
its threads one after another, as follows.

One thread after another: blocks in order, threads in order within a
block, with `gpu.block_id` / `gpu.thread_id` (and `block_dim` /
`grid_dim`) giving the running thread's place. Serial threads compute
what parallel ones do for kernels whose threads touch disjoint elements,
which tir-bind checks.

A kernel holding `gpu.barrier` (a block in phases, convert-tir-to-gpu) runs
its blocks one after another, and the threads of a block at once, each in
a Python thread with its own interpreter, a `gpu.barrier` waiting for all
of them (threading.Barrier): every thread ends a phase before any starts
the next, as on the GPU. The block's shared buffers (memref.alloca in
memory space 3) are one array per block, which its threads share.
Asynchronous launches, clusters and dynamic shared memory are refused.

A kernel holding warp shuffles (`llvm.call_intrinsic
"llvm.nvvm.shfl.sync.bfly.*"`, the cross-thread reductions of
cuda-default-schedule) runs the same way, its blocks one after another and
a block's threads at once: each shuffle waits for every lane of the warp
(as `shfl.sync` with a full mask does) and returns the value of lane
`lane ^ offset` (its own value where that lane is past the block's end).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import product
from typing import Any

import numpy as np
from xdsl.dialects import gpu, llvm, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

from xtc.analysis.memory_spaces import is_shared
from xtc.interp.gpu_lockstep import refusal, run_lockstep
from xtc.interp.gpu_threads import RUNNING, SHUFFLE, WARP, Warp

Args = tuple[Any, ...]
Results = tuple[Any, ...]
DIMENSIONS = ("x", "y", "z")
SERIAL = contextvars.ContextVar("xtc_gpu_threads_one_at_a_time", default=False)


@contextmanager
def one_thread_at_a_time() -> Iterator[None]:
    """Launches inside run their threads one after another (the reference
    that lockstep execution is tested against)."""
    token = SERIAL.set(True)
    try:
        yield
    finally:
        SERIAL.reset(token)


def _has_shuffle(kernel: gpu.FuncOp) -> bool:
    return any(
        isinstance(op, llvm.CallIntrinsicOp) and op.intrin.data.startswith(SHUFFLE)
        for op in kernel.walk()
    )


def _xyz(sizes: Args) -> tuple[int, int, int]:
    x, y, z = (int(n) for n in sizes)
    return x, y, z


def _places(sizes: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """Every (x, y, z) below `sizes`, x varying fastest (CUDA's order)."""
    x, y, z = sizes
    return [(i, j, k) for k, j, i in product(range(z), range(y), range(x))]


def _run_block(
    kernel: gpu.FuncOp,
    kernel_args: Args,
    workers: list[Interpreter],
    threads: list[tuple[int, int, int]],
    place: dict[str, tuple[int, int, int]],
    shared: dict[memref.AllocaOp, np.ndarray],
) -> None:
    """The threads of one block at once, each in its Python thread with its
    interpreter; the first error of a thread is raised once all stopped
    (a failing thread breaks the barrier, so that none waits forever)."""
    barrier = threading.Barrier(len(threads))
    warps = [Warp(min(WARP, len(threads) - start)) for start in range(0, len(threads), WARP)]
    failures: list[BaseException] = []

    def run(worker: Interpreter, thread_id: tuple[int, int, int], index: int) -> None:
        RUNNING.place = {**place, "thread": thread_id}
        RUNNING.barrier, RUNNING.shared = barrier, shared
        RUNNING.warp, RUNNING.lane = warps[index // WARP], index % WARP
        try:
            worker.run_ssacfg_region(kernel.body, kernel_args, kernel.sym_name.data)
        except threading.BrokenBarrierError:
            pass  # another thread failed: its error is reported
        except BaseException as e:  # noqa: BLE001 - raised below, in the launching thread
            failures.append(e)
            barrier.abort()
            for warp in warps:
                warp.meeting.abort()
        finally:
            RUNNING.barrier, RUNNING.shared, RUNNING.warp = None, None, None

    pool = [  # each in a copy of the caller's context: its numpy error state
        threading.Thread(
            target=contextvars.copy_context().run, args=(run, worker, thread_id, index)
        )
        for index, (worker, thread_id) in enumerate(zip(workers, threads, strict=True))
    ]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    if failures:
        raise failures[0]


@register_impls
class GpuFunctions(InterpreterFunctions):
    """The launch runs the kernel for each (block, thread); the id ops read
    where the running thread is."""

    @property
    def place(self) -> dict[str, tuple[int, int, int]]:
        return RUNNING.place

    @impl(gpu.LaunchFuncOp)
    def run_launch_func(
        self, interpreter: Interpreter, op: gpu.LaunchFuncOp, args: Args
    ) -> Results:
        extras = (op.asyncDependencies, op.asyncToken, op.clusterSizeX, op.dynamicSharedMemorySize)
        if any(e for e in extras if e is not None):
            raise InterpretationError(
                "gpu.launch_func: asynchronous launches, clusters and dynamic shared memory "
                "are not interpreted"
            )
        kernel = SymbolTable.lookup_symbol(op, op.kernel)
        if not isinstance(kernel, gpu.FuncOp):
            raise InterpretationError(f"gpu.launch_func: no gpu.func {op.kernel}")
        self.launch(interpreter, kernel, _xyz(args[0:3]), _xyz(args[3:6]), args[6:])
        return ()

    def launch(
        self,
        interpreter: Interpreter,
        kernel: gpu.FuncOp,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        kernel_args: Args,
    ) -> None:
        """Runs `kernel` once per thread of the grid, one thread after another,
        or, when it holds barriers or shuffles, each block's threads at once
        (the CUDA runtime's interpreter device calls it too); in lockstep
        where it can (the module docstring)."""
        if not SERIAL.get() and refusal(kernel) is None:
            run_lockstep(kernel, grid, block, kernel_args)
            return
        self.place["grid"], self.place["block_dim"] = grid, block
        if any(isinstance(op, gpu.BarrierOp) for op in kernel.walk()) or _has_shuffle(kernel):
            self.launch_in_phases(kernel, grid, block, kernel_args)
            return
        for block_id in _places(grid):
            self.place["block"] = block_id
            for thread_id in _places(block):
                self.place["thread"] = thread_id
                interpreter.run_ssacfg_region(kernel.body, kernel_args, kernel.sym_name.data)

    def launch_in_phases(
        self,
        kernel: gpu.FuncOp,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        kernel_args: Args,
    ) -> None:
        """Each block's threads at once, one Python thread (and interpreter)
        each, sharing the block's shared buffers and barrier, each warp's
        lanes meeting at its shuffles."""
        from xtc.interp import make_interpreter
        from xtc.interp.tir import buffer_for

        module = kernel.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        threads = _places(block)
        workers = [make_interpreter(module) for _ in threads]
        shared_ops = [
            op for op in kernel.walk() if isinstance(op, memref.AllocaOp) and is_shared(op.memref)
        ]
        for block_id in _places(grid):
            shared = {op: buffer_for(op.memref.type) for op in shared_ops}
            place = {"grid": grid, "block_dim": block, "block": block_id}
            _run_block(kernel, kernel_args, workers, threads, place, shared)

    @impl(llvm.CallIntrinsicOp)
    def run_call_intrinsic(
        self, interpreter: Interpreter, op: llvm.CallIntrinsicOp, args: Args
    ) -> Results:
        name = op.intrin.data
        if not name.startswith(SHUFFLE):
            raise InterpretationError(f"llvm.call_intrinsic: {name} is not interpreted")
        if RUNNING.warp is None:
            raise InterpretationError(f"{name}: a shuffle outside a kernel launch")
        _mask, value, offset, _clamp = args
        return (RUNNING.warp.exchange(RUNNING.lane, value, int(offset)),)

    def _read(self, what: str, dimension: gpu.DimensionAttr) -> Results:
        return (self.place[what][DIMENSIONS.index(dimension.data.value)],)

    @impl(gpu.ThreadIdOp)
    def run_thread_id(self, interpreter: Interpreter, op: gpu.ThreadIdOp, args: Args) -> Results:
        return self._read("thread", op.dimension)

    @impl(gpu.BlockIdOp)
    def run_block_id(self, interpreter: Interpreter, op: gpu.BlockIdOp, args: Args) -> Results:
        return self._read("block", op.dimension)

    @impl(gpu.BlockDimOp)
    def run_block_dim(self, interpreter: Interpreter, op: gpu.BlockDimOp, args: Args) -> Results:
        return self._read("block_dim", op.dimension)

    @impl(gpu.GridDimOp)
    def run_grid_dim(self, interpreter: Interpreter, op: gpu.GridDimOp, args: Args) -> Results:
        return self._read("grid", op.dimension)

    @impl(gpu.BarrierOp)
    def run_barrier(self, interpreter: Interpreter, op: gpu.BarrierOp, args: Args) -> Results:
        if RUNNING.barrier is None:
            raise InterpretationError("gpu.barrier outside a launch")
        RUNNING.barrier.wait()
        return ()

    @impl_terminator(gpu.ReturnOp)
    def run_return(
        self, interpreter: Interpreter, op: gpu.ReturnOp, args: Args
    ) -> tuple[ReturnedValues, Results]:
        return ReturnedValues(args), ()
