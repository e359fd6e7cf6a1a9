"""numpy semantics of the gpu level (convert-tir-to-gpu's output): a
`gpu.launch_func` runs its kernel once per thread of its grid, one thread
after another (blocks in order, threads in order within a block), with
`gpu.block_id` / `gpu.thread_id` (and `block_dim` / `grid_dim`) giving the
running thread's place. Serial threads compute what parallel ones do for
kernels whose threads touch disjoint elements, which tir-bind checks; a
`gpu.barrier` would need the threads of a block to run in step, so it is
refused, as are asynchronous launches, clusters and dynamic shared memory.

A kernel holding warp shuffles (`llvm.call_intrinsic
"llvm.nvvm.shfl.sync.bfly.*"`, the cross-thread reductions of
cuda-default-schedule) runs each warp's lanes at once instead, one Python
thread and one interpreter per lane, the warps one after another: each
shuffle waits for every lane of the warp (as `shfl.sync` with a full mask
does) and returns the value of lane `lane ^ offset` (its own value where
that lane is past the block's end).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from copy import copy
from dataclasses import fields
from itertools import product
from typing import Any

from xdsl.dialects import gpu, llvm
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

Args = tuple[Any, ...]
Results = tuple[Any, ...]
DIMENSIONS = ("x", "y", "z")
WARP = 32
SHUFFLE = "llvm.nvvm.shfl.sync.bfly."
"""The prefix of the warp shuffle intrinsics interpreted (butterfly: lane ^ offset)."""


class Warp:
    """The lanes of one warp meeting at each shuffle."""

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self.meeting = threading.Barrier(lanes)
        self.values: list[Any] = [None] * lanes

    def exchange(self, lane: int, value: Any, offset: int) -> Any:
        """The value lane `lane ^ offset` brings to this shuffle."""
        self.values[lane] = value
        self.meeting.wait()
        other = lane ^ offset
        got = self.values[other] if other < self.lanes else value
        self.meeting.wait()  # nobody overwrites a value before every lane has read it
        return got


def _has_shuffle(kernel: gpu.FuncOp) -> bool:
    return any(
        isinstance(op, llvm.CallIntrinsicOp) and op.intrin.data.startswith(SHUFFLE)
        for op in kernel.walk()
    )


def _lane_interpreter(interpreter: Interpreter, functions: GpuFunctions) -> Interpreter:
    """A fresh interpreter of the same module and implementations, but
    `functions` for the gpu ops: one lane's own state."""
    lane = Interpreter(interpreter.module, index_bitwidth=interpreter.index_bitwidth)
    impls = copy(interpreter._impls)  # pyright: ignore[reportPrivateUsage]
    for field in fields(impls):
        setattr(impls, field.name, dict(getattr(impls, field.name)))
    lane._impls = impls  # pyright: ignore[reportPrivateUsage]
    lane.register_implementations(functions, override=True)
    return lane


def _run_at_once(runs: list[Callable[[], None]], warp: Warp) -> None:
    """Each of `runs` in its own thread; the first error raised, after all end."""
    errors: list[BaseException] = []

    def guarded(run: Callable[[], None]) -> None:
        try:
            run()
        except threading.BrokenBarrierError:
            pass
        except BaseException as error:  # noqa: BLE001 - re-raised below, in the caller
            errors.append(error)
            warp.meeting.abort()

    threads = [  # each in a copy of the caller's context: its numpy error state
        threading.Thread(target=contextvars.copy_context().run, args=(guarded, run)) for run in runs
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _xyz(sizes: Args) -> tuple[int, int, int]:
    x, y, z = (int(n) for n in sizes)
    return x, y, z


def _places(sizes: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """Every (x, y, z) below `sizes`, x varying fastest (CUDA's order)."""
    x, y, z = sizes
    return [(i, j, k) for k, j, i in product(range(z), range(y), range(x))]


@register_impls
class GpuFunctions(InterpreterFunctions):
    """The launch runs the kernel for each (block, thread); the id ops read
    where the running thread is."""

    def __init__(self) -> None:
        self.place: dict[str, tuple[int, int, int]] = {}
        """"block", "thread", "grid" and "block_dim" of the running thread (x, y, z)."""
        self.warp: Warp | None = None
        """The warp the running lane belongs to, in a kernel with shuffles."""
        self.lane = 0

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
        """Runs `kernel` once per thread of the grid, one thread after another
        (the CUDA runtime's interpreter device calls it too)."""
        self.place["grid"], self.place["block_dim"] = grid, block
        if _has_shuffle(kernel):
            self.launch_in_warps(interpreter, kernel, grid, block, kernel_args)
            return
        for block_id in _places(grid):
            self.place["block"] = block_id
            for thread_id in _places(block):
                self.place["thread"] = thread_id
                interpreter.run_ssacfg_region(kernel.body, kernel_args, kernel.sym_name.data)

    def launch_in_warps(
        self,
        interpreter: Interpreter,
        kernel: gpu.FuncOp,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        kernel_args: Args,
    ) -> None:
        """Runs `kernel` warp after warp, the lanes of each at once."""
        lanes = [GpuFunctions() for _ in range(WARP)]
        interpreters = [_lane_interpreter(interpreter, f) for f in lanes]
        threads = _places(block)
        name = kernel.sym_name.data
        for block_id in _places(grid):
            for start in range(0, len(threads), WARP):
                places = threads[start : start + WARP]
                warp = Warp(len(places))
                runs: list[Callable[[], None]] = []
                for lane, (functions, lane_interpreter, place) in enumerate(
                    zip(lanes, interpreters, places, strict=False)
                ):
                    functions.place = {**self.place, "block": block_id, "thread": place}
                    functions.warp, functions.lane = warp, lane

                    def run(i: Interpreter = lane_interpreter) -> None:
                        i.run_ssacfg_region(kernel.body, kernel_args, name)

                    runs.append(run)
                _run_at_once(runs, warp)

    @impl(llvm.CallIntrinsicOp)
    def run_call_intrinsic(
        self, interpreter: Interpreter, op: llvm.CallIntrinsicOp, args: Args
    ) -> Results:
        name = op.intrin.data
        if not name.startswith(SHUFFLE):
            raise InterpretationError(f"llvm.call_intrinsic: {name} is not interpreted")
        if self.warp is None:
            raise InterpretationError(f"{name}: a shuffle outside a kernel launch")
        _mask, value, offset, _clamp = args
        return (self.warp.exchange(self.lane, value, int(offset)),)

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
        raise InterpretationError(
            "gpu.barrier: the interpreter runs a block's threads one after another, "
            "so it cannot wait for the others"
        )

    @impl_terminator(gpu.ReturnOp)
    def run_return(
        self, interpreter: Interpreter, op: gpu.ReturnOp, args: Args
    ) -> tuple[ReturnedValues, Results]:
        return ReturnedValues(args), ()
