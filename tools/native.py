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
from xtc.interp.tir import output_arguments
from xtc.runtime.llvm_jit import aligned_copy, aligned_empty, compile_module
from xtc.tools.pipelines import apply_pipeline


def run_native(
    tir: ModuleOp, inputs: Sequence[np.ndarray], lowering: str = "convert-tir-to-llvm"
) -> list[np.ndarray]:
    """Lowers a copy of `tir` to LLVM (the `lowering` pipeline), JIT-compiles
    it and calls `main` on aligned copies of `inputs`; returns the output
    arguments it filled. A run-time check that fails raises InputError with
    its message (as `interp.run` raises RunTimeFault)."""
    main = interp.entry_function(tir)
    types = main.function_type.inputs.data
    outputs: list[np.ndarray] = []
    for position in output_arguments(main):
        t = cast(MemRefType[Attribute], types[position])
        outputs.append(aligned_empty(tuple(t.get_shape()), numpy_dtype(t.get_element_type())))
    jit = compile_module(apply_pipeline(tir.clone(), lowering))
    jit.call("main", [*(aligned_copy(a) for a in inputs), *outputs])
    return outputs
