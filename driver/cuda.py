"""`xtc.compile(model, target="cuda")` and `xtc compile --target cuda`: an
ONNX model to the PTX of its kernels, and a CUDA model that runs them
(runtime/cuda_model.py): the PTX, a cubin when `ptxas` is on PATH, the
launch plan of the host code and the weights (runtime/cuda_plan.py).

The pipeline is the CPU one up to the tir level (graph passes and fused
kernels from -O1 on), with tir-expand-math at every level (its polynomials
for f32 exp, erf and tanh inline; other math calls CUDA's libdevice, linked into
the PTX where it is installed: lowering/libdevice.py), then
cuda-default-schedule (one thread per output element) and
convert-tir-to-gpu; the kernels become PTX through runtime/ptx.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import onnx
from xdsl.dialects.builtin import ModuleOp

from xtc.driver.compiler import (
    CPU_GRAPH_PASSES,
    FAST_MATH,
    FUSED_LOWERINGS,
    GRAPH_PASSES,
    CompileError,
)

if TYPE_CHECKING:
    from xtc.driver.specializing import CompilingSpecializedModel
    from xtc.frontend.converters import NeedsConstantError
    from xtc.runtime.cuda_model import CudaModel

GPU_LOWERINGS = ("cuda-default-schedule", "convert-tir-to-gpu")


def cuda_pipeline(
    opt_level: int = 3,
    outputs_per_thread: int = 1,
    shared_tiling: bool = True,
    cross_thread: bool = True,
) -> str:
    """The passes from the graph level to the gpu level, as an `xtc-opt -p`
    string; `outputs_per_thread` > 1 register-tiles reduction nests
    (`cuda-default-schedule{outputs_per_thread=K}`); `shared_tiling=False`
    keeps them out of shared memory (`cuda-default-schedule{shared_tiling=false}`);
    `cross_thread=False` keeps one thread per output where few outputs have
    long reductions (`cuda-default-schedule{cross_thread=false}`)."""
    from xtc.passes.cuda_default_schedule import MAX_OUTPUTS_PER_THREAD

    if not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
        raise CompileError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
    if not isinstance(outputs_per_thread, int) or not (
        1 <= outputs_per_thread <= MAX_OUTPUTS_PER_THREAD
    ):
        raise CompileError(
            f"outputs_per_thread must be an integer in [1, {MAX_OUTPUTS_PER_THREAD}], "
            f"got {outputs_per_thread!r}"
        )
    lowerings = GPU_LOWERINGS
    options = [f"outputs_per_thread={outputs_per_thread}"] if outputs_per_thread > 1 else []
    options += [] if shared_tiling else ["shared_tiling=false"]
    options += [] if cross_thread else ["cross_thread=false"]
    if options:
        schedule = f"cuda-default-schedule{{{' '.join(options)}}}"
        lowerings = (schedule, *GPU_LOWERINGS[1:])
    if opt_level == 0:
        return ",".join(("convert-graph-to-te", "convert-te-to-tir", *FAST_MATH, *lowerings))
    graph = tuple(name for name in GRAPH_PASSES if name not in CPU_GRAPH_PASSES)
    return ",".join((*graph, *FUSED_LOWERINGS, "convert-te-to-tir", *FAST_MATH, *lowerings))


def compile_graph_to_gpu(
    module: ModuleOp,
    opt_level: int = 3,
    outputs_per_thread: int = 1,
    shared_tiling: bool = True,
    cross_thread: bool = True,
) -> ModuleOp:
    """A graph-level module at the gpu level (a copy; `module` is
    unchanged), its host code checked against the host contract
    (xtc.lowering.convert_tir_to_gpu)."""
    from xtc.dialects.graph.control import IfOp, LoopOp
    from xtc.driver.pipelines import apply_pipeline
    from xtc.lowering.convert_tir_to_gpu import GPULoweringError, check_host_code

    control = next((op for op in module.walk() if isinstance(op, IfOp | LoopOp)), None)
    if control is not None:
        raise CompileError(
            f"the cuda target does not compile control flow decided at run time "
            f"({control.name}); compile for llvm"
        )
    gpu = apply_pipeline(
        module.clone(), cuda_pipeline(opt_level, outputs_per_thread, shared_tiling, cross_thread)
    )
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
    from xtc.runtime.ptx import check_arch, module_ptx

    check_arch(arch)
    gpu = compile_graph_to_gpu(import_model(model, input_shapes), opt_level)
    return module_ptx(gpu, arch)


PTXAS_TIMEOUT_S = 600


class PtxasError(CompileError):
    """ptxas refused the PTX of a model."""


def compile_cuda_model(
    model: onnx.ModelProto | str | os.PathLike[str] | ModuleOp,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    opt_level: int = 3,
    arch: str = "sm_80",
    device: str = "cuda",
    outputs_per_thread: int = 1,
    shared_tiling: bool = True,
    cross_thread: bool = True,
) -> CudaModel | CompilingSpecializedModel:
    """`model` (ONNX, or a module at the graph level) compiled for CUDA: a
    CudaModel on `device` ("cuda", or "interp" to run the kernels in the
    interpreter), its files in a temporary directory (`.export` writes
    them as model.tar); `outputs_per_thread`, `shared_tiling` and
    `cross_thread` as cuda_pipeline takes them. A PTX that ptxas refuses
    raises PtxasError. An ONNX model whose shapes depend on the values of
    some inputs is a CompilingSpecializedModel
    (driver/specializing.py) whose specializations are CudaModels."""
    from xtc.dialects.resource_blobs import blob_storage
    from xtc.driver.compiler import _model_name, base_manifest, model_directory, tensor_specs
    from xtc.frontend.converters import NeedsConstantError
    from xtc.frontend.onnx import import_model
    from xtc.runtime.archive import MANIFEST_NAME
    from xtc.runtime.cuda_model import (
        KERNELS_IR_NAME,
        PLAN_NAME,
        PTX_NAME,
        WEIGHTS_NAME,
        open_cuda_model,
    )
    from xtc.runtime.ptx import check_arch, module_ptx

    check_arch(arch)
    started = time.perf_counter()
    request = CudaRequest(
        input_shapes, opt_level, arch, device, outputs_per_thread, shared_tiling, cross_thread
    )
    with blob_storage().scope():
        if isinstance(model, ModuleOp):
            graph, name = model, "model"
        else:
            name = _model_name(model)
            try:
                graph = import_model(model, input_shapes, control_regions=False)
            except NeedsConstantError as needs:
                specialized = _specialized(model, needs, request)
                if specialized is None:
                    raise
                return specialized
        with model_directory("xtc-cuda-model-") as (directory, owner):
            inputs, outputs = tensor_specs(graph)
            gpu = compile_graph_to_gpu(
                graph, opt_level, outputs_per_thread, shared_tiling, cross_thread
            )
            plan = _plan(gpu)
            (directory / PTX_NAME).write_text(module_ptx(gpu, arch))
            (directory / KERNELS_IR_NAME).write_text(_kernels_text(gpu))
            (directory / PLAN_NAME).write_text(json.dumps(plan.to_json()) + "\n")
            (directory / WEIGHTS_NAME).write_bytes(plan.weights)
            target = {"name": "cuda", "arch": arch}
            pipeline = cuda_pipeline(opt_level, outputs_per_thread, shared_tiling, cross_thread)
            manifest = base_manifest(name, inputs, outputs, target, opt_level, pipeline)
            manifest |= {
                "kernels": len({launch.kernel for launch in plan.launches}),
                "launches": len(plan.launches),
                "weights_bytes": len(plan.weights),
                "temporary_bytes": sum(b.nbytes for b in plan.buffers if b.kind == "temporary"),
                "cubin_arch": _cubin(directory, arch),
                "compile_seconds": round(time.perf_counter() - started, 3),
            }
            (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
            return open_cuda_model(directory, manifest, owner, device)


@dataclass(frozen=True)
class CudaRequest:
    """compile_cuda_model's options, given again to each specialization."""

    input_shapes: Mapping[str, Sequence[int]] | None
    opt_level: int
    arch: str
    device: str
    outputs_per_thread: int
    shared_tiling: bool
    cross_thread: bool


def _specialized(
    model: onnx.ModelProto | str | os.PathLike[str],
    needs: NeedsConstantError,
    request: CudaRequest,
) -> CompilingSpecializedModel | None:
    """compile_cuda_model of a model whose import needs the value `needs`
    names: specialized on the graph inputs it comes from (None when none
    does), each specialization a CudaModel compiled with `request`."""
    from xtc.driver.compiler import _model_name
    from xtc.driver.specializing import compile_specialized
    from xtc.runtime.cuda_model import CudaModel

    def compile_frozen(frozen: onnx.ModelProto) -> CudaModel:
        names = {i.name for i in frozen.graph.input}
        shapes = {n: s for n, s in (request.input_shapes or {}).items() if n in names}
        compiled = compile_cuda_model(
            frozen, shapes, request.opt_level, request.arch, request.device,
            request.outputs_per_thread, request.shared_tiling, request.cross_thread,
        )  # fmt: skip
        assert isinstance(compiled, CudaModel)  # frozen: nothing left to specialize
        return compiled

    return compile_specialized(
        model, needs, _model_name(model), compile_frozen, request.input_shapes, False
    )


def _plan(gpu: ModuleOp) -> Any:
    from xtc.runtime.cuda_plan import PlanError, build_plan

    try:
        return build_plan(gpu)
    except PlanError as e:
        raise CompileError(str(e)) from None


def _kernels_text(gpu: ModuleOp) -> str:
    """The module's gpu.module alone, as text (what the interpreter device runs)."""
    from xdsl.dialects import gpu as gpu_dialect

    from xtc.driver.textual_ir import module_to_text

    kernels = [op.clone() for op in gpu.ops if isinstance(op, gpu_dialect.ModuleOp)]
    return module_to_text(ModuleOp(kernels))


def _cubin(directory: Path, arch: str) -> str | None:
    """Runs ptxas on the PTX when it is on PATH; the cubin's arch, or None
    (no ptxas: the driver JITs the PTX). A ptxas failure is a CompileError."""
    from xtc.runtime.cuda_model import CUBIN_NAME, PTX_NAME

    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return None
    command = [ptxas, f"-arch={arch}", "-o", str(directory / CUBIN_NAME), str(directory / PTX_NAME)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PTXAS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["(no message)"])[0]
        raise PtxasError(f"ptxas refused the PTX for {arch}: {first}")
    return arch
