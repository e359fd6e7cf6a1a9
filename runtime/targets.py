"""The targets `xtc-opt -t NAME` prints a module as: an llvm-level one as
LLVM IR, the GPU kernels of a gpu-level one as PTX or as LLVM IR for NVPTX."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from xtc.runtime.llvm_ir import llvm_ir
from xtc.runtime.llvm_jit import optimized_llvm_ir
from xtc.runtime.ptx import DEFAULT_ARCH, check_arch, nvvm_ir, ptx


@dataclass(frozen=True)
class LLVMIRTarget(Target):
    """`xtc-opt -t llvm-ir`: the LLVM IR of a module at the llvm level;
    `llvm-ir{optimize=true}` prints it after xtc's -O3 pipeline (LLVM's O2,
    runtime/llvm_jit.py's optimize_at) for the host CPU."""

    name = "llvm-ir"

    optimize: bool = False

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.optimize:
            output.write(optimized_llvm_ir(module))
        else:
            output.write(llvm_ir(module))


@dataclass(frozen=True)
class PTXTarget(Target):
    """`xtc-opt -t ptx`: the PTX of the kernels of a module after
    convert-tir-to-gpu, for `arch` (`ptx{arch=sm_90}`; default sm_80)."""

    name = "ptx"

    arch: str = DEFAULT_ARCH

    def __post_init__(self) -> None:
        check_arch(self.arch)

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(ptx(module, self.arch))


@dataclass(frozen=True)
class NVVMIRTarget(Target):
    """`xtc-opt -t nvvm-ir`: the LLVM IR (NVPTX, NVVM intrinsics, kernels in
    the ptx_kernel calling convention) of the kernels of a module after
    convert-tir-to-gpu, before optimization."""

    name = "nvvm-ir"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(nvvm_ir(module))
