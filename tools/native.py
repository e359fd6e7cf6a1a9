"""Graph module -> native code, the compiled path: the graph passes, the
lowerings to te, tir and LLVM, then llvmlite's JIT. `NativeModel(module)`
compiles; `.run(inputs)` checks the inputs like the interpreter does, copies
them into 64-byte aligned buffers and calls the native `main` once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.graph.constant import numpy_dtype
from xtc.tools.pipelines import apply_pipeline

GRAPH_PASSES = "graph-simplify-inference,graph-fold-constants,dce"
LOWERINGS = "convert-graph-to-te,convert-te-to-tir,convert-tir-to-llvm"
PIPELINE = f"{GRAPH_PASSES},{LOWERINGS}"


class NativeModel:
    """A graph module compiled to native code in this process."""

    def __init__(self, module: ModuleOp, pipeline: str = PIPELINE) -> None:
        from xtc.runtime.llvm_jit import compile_module

        self.graph_main = interp.entry_function(module)
        self.output_types = [
            (tuple(t.get_shape()), numpy_dtype(t.get_element_type()))
            for t in self.graph_main.function_type.outputs.data
            if isinstance(t, TensorType)
        ]
        lowered = module.clone()
        apply_pipeline(lowered, pipeline)
        self.llvm_module = lowered
        self.jit = compile_module(lowered)

    def run(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
        from xtc.runtime.llvm_jit import aligned_copy, aligned_empty

        arg_types: list[Attribute] = list(self.graph_main.function_type.inputs.data)
        arrays = interp.check_inputs(self.graph_main, arg_types, inputs)
        buffers = [aligned_copy(a) for a in arrays]
        outputs = [aligned_empty(shape, dtype) for shape, dtype in self.output_types]
        self.jit.call("main", [*buffers, *outputs])
        return outputs
