"""numpy semantics of the tir level: a memref is a numpy array (C order),
`tir.for` runs its body for each value of its induction variable, and the
memref ops allocate, read, write and copy arrays. `memref.global` data comes
from its dense / dense_resource attribute.

A function at this level returns its results through output arguments: the
ones marked with the arg attribute `graph.output = <result index>`
(convert-te-to-tir marks them). `output_arguments` finds them so that
`xtc.interp.run` can allocate the outputs and return them.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

from xtc.dialects.graph.constant import array_from_attr, numpy_dtype
from xtc.dialects.tir import (
    OUTPUT_ATTR,
    AssertOp,
    CycleCounterOp,
    ForOp,
    PrefetchOp,
    format_message,
)
from xtc.interp import RunTimeFault
from xtc.interp.gpu_threads import shared_buffer
from xtc.interp.graph.random import fresh_entropy
from xtc.interp.scalar import as_signed, width_of
from xtc.interp.te import load_element, store_element

Args = tuple[Any, ...]
Results = tuple[Any, ...]

"""Arg attribute of an output argument: the index of the result it holds."""


def output_arguments(func: FuncOp) -> list[int]:
    """The positions of the function's output arguments, in result order."""
    if func.arg_attrs is None:
        return []
    marked: list[tuple[int, int]] = []
    for position, attrs in enumerate(func.arg_attrs.data):
        index = attrs.data.get(OUTPUT_ATTR)
        if isinstance(index, IntegerAttr):
            marked.append((cast(IntegerAttr[Any], index).value.data, position))
    return [position for _, position in sorted(marked)]


def buffer_for(t: Attribute) -> np.ndarray:
    """A zero-filled array for a memref type (`memref<Nxi8>`, an arena, is
    int8: any 1-byte dtype can be viewed as the buffers it holds)."""
    if not isinstance(t, MemRefType):
        raise InterpretationError(f"{t} is not a memref type")
    memref_type = cast(MemRefType[Attribute], t)
    return np.zeros(tuple(memref_type.get_shape()), numpy_dtype(memref_type.get_element_type()))


@register_impls
class TirFunctions(InterpreterFunctions):
    @impl(ForOp)
    def run_for(self, interpreter: Interpreter, op: ForOp, args: Args) -> Results:
        lower, upper, step = (a.value.data for a in (op.lower, op.upper, op.step))
        with np.errstate(all="ignore"):
            for i in range(lower, upper, step):
                interpreter.run_ssacfg_region(op.body, (i,), "tir.for")
        return ()

    @impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: Args) -> Results:
        return (buffer_for(op.memref.type),)

    @impl(memref.AllocaOp)
    def run_alloca(self, interpreter: Interpreter, op: memref.AllocaOp, args: Args) -> Results:
        shared = shared_buffer(op)  # a GPU block's, shared by its threads
        return (buffer_for(op.memref.type) if shared is None else shared,)

    @impl(memref.ViewOp)
    def run_view(self, interpreter: Interpreter, op: memref.ViewOp, args: Args) -> Results:
        source, byte_shift, *_ = args
        return (arena_view(op, cast(np.ndarray, source), int(byte_shift)),)

    @impl(memref.DeallocOp)
    def run_dealloc(self, interpreter: Interpreter, op: memref.DeallocOp, args: Args) -> Results:
        return ()

    @impl(PrefetchOp)
    def run_prefetch(self, interpreter: Interpreter, op: PrefetchOp, args: Args) -> Results:
        return ()  # a cache hint: no effect on any value

    @impl(AssertOp)
    def run_assert(self, interpreter: Interpreter, op: AssertOp, args: Args) -> Results:
        """A failed check stops the run (native code records the first one
        and reports it when the run ends: the same message)."""
        condition, *value = args
        if not condition:
            shown = as_signed(value[0], min(64, width_of(op.operands[1].type))) if value else None
            raise RunTimeFault(format_message(op.message.data, shown))
        return ()

    @impl(CycleCounterOp)
    def run_cycle_counter(
        self, interpreter: Interpreter, op: CycleCounterOp, args: Args
    ) -> Results:
        """Fresh entropy, as graph.fresh_seed in the graph interpreter."""
        return (fresh_entropy(),)

    @impl(memref.LoadOp)
    def run_load(self, interpreter: Interpreter, op: memref.LoadOp, args: Args) -> Results:
        array, *indices = args
        return (load_element(op, array, tuple(indices)),)

    @impl(memref.StoreOp)
    def run_store(self, interpreter: Interpreter, op: memref.StoreOp, args: Args) -> Results:
        value, array, *indices = args
        store_element(op, array, tuple(indices), value)
        return ()

    @impl(memref.CopyOp)
    def run_copy(self, interpreter: Interpreter, op: memref.CopyOp, args: Args) -> Results:
        source, destination = cast(tuple[np.ndarray, np.ndarray], args)
        if source.shape != destination.shape:
            raise InterpretationError(
                f"memref.copy from {list(source.shape)} to {list(destination.shape)}"
            )
        destination[...] = source
        return ()

    @impl(memref.GetGlobalOp)
    def run_get_global(
        self, interpreter: Interpreter, op: memref.GetGlobalOp, args: Args
    ) -> Results:
        # One array per global and interpreter: a global's writes persist.
        arrays: dict[str, np.ndarray] = interpreter.get_data(TirFunctions, "globals", dict)
        name = op.name_.string_value()
        if name not in arrays:
            arrays[name] = _global_array(op)
        return (arrays[name],)


def arena_view(op: memref.ViewOp, arena: np.ndarray, byte_shift: int) -> np.ndarray:
    """The bytes [byte_shift, byte_shift + size) of a 1-D byte array seen as
    the view's memref type: a numpy view, so buffers that share bytes really
    share them (a wrong memory plan shows as wrong numbers)."""
    if op.sizes:
        raise InterpretationError("memref.view with dynamic sizes is not supported")
    if arena.ndim != 1 or arena.dtype.itemsize != 1:
        raise InterpretationError(f"memref.view of a {arena.dtype} array of shape {arena.shape}")
    result_type = cast(MemRefType[Attribute], op.result.type)
    shape = tuple(result_type.get_shape())
    dtype = numpy_dtype(result_type.get_element_type())
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if byte_shift < 0 or byte_shift + size > arena.shape[0]:
        raise InterpretationError(
            f"memref.view of bytes [{byte_shift}, {byte_shift + size}) "
            f"outside a buffer of {arena.shape[0]} bytes"
        )
    return arena[byte_shift : byte_shift + size].view(dtype).reshape(shape)


def _global_array(op: memref.GetGlobalOp) -> np.ndarray:
    symbol = SymbolTable.lookup_symbol(op, op.name_)
    if not isinstance(symbol, memref.GlobalOp):
        raise InterpretationError(f"memref.get_global: no memref.global @{op.name_.string_value()}")
    if isinstance(symbol.initial_value, UnitAttr):
        return buffer_for(symbol.type)
    array = array_from_attr(symbol.initial_value)
    if symbol.constant is not None:
        array.flags.writeable = False
    return array
