"""The native counterpart of `xtc.interp.run` for tir-level modules: lower
to LLVM, JIT-compile for the host and call the entry function on numpy
inputs (tests compare the two, before and after a pass)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.graph.constant import numpy_dtype
from xtc.driver.pipelines import apply_pipeline
from xtc.interp.tir import output_arguments
from xtc.runtime.llvm_jit import aligned_copy, aligned_empty, compile_module


def run_native(
    tir: ModuleOp,
    inputs: Sequence[np.ndarray],
    lowering: str = "convert-tir-to-llvm",
    function: str | None = None,
) -> list[np.ndarray]:
    """Lowers a copy of `tir` to LLVM (the `lowering` pipeline), JIT-compiles
    it and calls `function` (default: `@main`, else the module's only
    function, as `interp.run` picks it; a private one is made public in the
    copy) on aligned copies of `inputs`; returns the output arguments it
    filled. A run-time check that fails raises InputError with its message
    (as `interp.run` raises RunTimeFault). Output arguments may sit
    anywhere in the signature; `inputs` fill the others in order."""
    module = tir.clone()
    entry = interp.entry_function(module, function)
    entry.sym_visibility = None  # private functions get internal linkage: not callable
    types = entry.function_type.inputs.data
    outputs = {position: _empty_buffer(types[position]) for position in output_arguments(entry)}
    if len(inputs) != len(types) - len(outputs):
        name = entry.sym_name.data
        raise ValueError(f"@{name} takes {len(types) - len(outputs)} inputs, got {len(inputs)}")
    given = iter(inputs)
    arrays = [outputs[i] if i in outputs else aligned_copy(next(given)) for i in range(len(types))]
    jit = compile_module(apply_pipeline(module, lowering))
    jit.call(entry.sym_name.data, arrays)
    return [outputs[i] for i in output_arguments(entry)]


def _empty_buffer(t: Attribute) -> np.ndarray:
    memref_type = cast(MemRefType[Attribute], t)
    return aligned_empty(
        tuple(memref_type.get_shape()), numpy_dtype(memref_type.get_element_type())
    )
