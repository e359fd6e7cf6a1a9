"""`xtc compile --target cuda`, first slice: an ONNX model to the PTX of
its kernels, checked by the pipeline only (no host library, no CUDA
runtime yet: the artifact cannot run).

The pipeline is the CPU one up to the tir level (graph passes and fused
kernels from -O1 on), with tir-expand-math at every level (its polynomials
for f32 exp and erf need no libdevice, which is not linked yet), then
cuda-default-schedule (one thread per output element) and
convert-tir-to-gpu; the kernels become PTX through runtime/ptx.py.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import onnx
from xdsl.dialects.builtin import ModuleOp

from xtc.driver.compiler import FAST_MATH, FUSED_LOWERINGS, GRAPH_PASSES, CompileError

GPU_LOWERINGS = ("cuda-default-schedule", "convert-tir-to-gpu")


def cuda_pipeline(opt_level: int = 3) -> str:
    """The passes from the graph level to the gpu level, as an `xtc-opt -p` string."""
    if not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
        raise CompileError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
    if opt_level == 0:
        return ",".join(("convert-graph-to-te", "convert-te-to-tir", *FAST_MATH, *GPU_LOWERINGS))
    return ",".join(
        (*GRAPH_PASSES, *FUSED_LOWERINGS, "convert-te-to-tir", *FAST_MATH, *GPU_LOWERINGS)
    )


def compile_graph_to_gpu(module: ModuleOp, opt_level: int = 3) -> ModuleOp:
    """A graph-level module at the gpu level (a copy; `module` is
    unchanged), its host code checked against the host contract
    (xtc.lowering.convert_tir_to_gpu)."""
    from xtc.driver.pipelines import apply_pipeline
    from xtc.lowering.convert_tir_to_gpu import GPULoweringError, check_host_code

    gpu = apply_pipeline(module.clone(), cuda_pipeline(opt_level))
    try:
        check_host_code(gpu)
    except GPULoweringError as error:
        raise CompileError(str(error)) from None
    return gpu


def compile_cuda(
    model: onnx.ModelProto | str | os.PathLike[str],
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    opt_level: int = 3,
    arch: str = "sm_80",
) -> str:
    """The PTX of the kernels of `model` (an onnx.ModelProto or a path) for `arch`."""
    from xtc.frontend.onnx import import_model
    from xtc.runtime.ptx import check_arch, ptx

    check_arch(arch)
    gpu = compile_graph_to_gpu(import_model(model, input_shapes), opt_level)
    return ptx(gpu, arch)
