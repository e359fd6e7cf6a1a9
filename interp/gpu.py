"""numpy semantics of the gpu level (convert-tir-to-gpu's output): a
`gpu.launch_func` runs its kernel once per thread of its grid, one thread
after another (blocks in order, threads in order within a block), with
`gpu.block_id` / `gpu.thread_id` (and `block_dim` / `grid_dim`) giving the
running thread's place. Serial threads compute what parallel ones do for
kernels whose threads touch disjoint elements, which tir-bind checks; a
`gpu.barrier` would need the threads of a block to run in step, so it is
refused, as are asynchronous launches, clusters and dynamic shared memory.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from xdsl.dialects import gpu
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
        for block_id in _places(grid):
            self.place["block"] = block_id
            for thread_id in _places(block):
                self.place["thread"] = thread_id
                interpreter.run_ssacfg_region(kernel.body, kernel_args, kernel.sym_name.data)

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
