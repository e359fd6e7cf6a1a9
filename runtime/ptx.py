"""PTX of a module's GPU kernels (after convert-tir-to-gpu), through
llvmlite's NVPTX back end: the kernels at the llvm level
(lowering/convert_gpu_to_nvvm.py), as LLVM IR for `nvptx64-nvidia-cuda`
with each kernel in the `ptx_kernel` calling convention, CUDA's libdevice
linked in where a kernel calls its math (`__nv_expf`: its functions
internal, so that O3 keeps only those called; LLVM's NVVMReflect, in the
NVPTX pipeline, answers its `__nvvm_reflect` questions: no flush-to-zero,
the chosen architecture), optimized at O3 for the chosen
architecture, then printed as PTX. Needs no CUDA toolkit
and no GPU; `ptxas` (when installed) turns the text into a cubin.

`xtc-opt -t ptx` prints the PTX (`ptx{arch=sm_90}`), `-t nvvm-ir` the
LLVM IR before optimization."""

from __future__ import annotations

import re

import llvmlite.binding as llvm_binding
import llvmlite.ir as ir
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from xtc.lowering.convert_gpu_to_nvvm import gpu_kernels, kernels_to_llvm
from xtc.lowering.libdevice import HOW_TO_GET, find_libdevice
from xtc.runtime.llvm_ir import translate_module
from xtc.runtime.llvm_jit import optimize_at

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_80"
ARCH_PATTERN = re.compile(r"sm_(\d{2,3})a?")
"""`sm_80`, `sm_90`, `sm_90a`: what ptxas -arch and LLVM's NVPTX take."""
MIN_ARCH = 50
"""LLVM's oldest NVPTX architecture still supported by CUDA 12 and later."""


class PTXError(DiagnosticException):
    """A module or an option the PTX emission cannot take."""


def check_arch(arch: str) -> None:
    """Refuses a name that is not a CUDA architecture LLVM knows (`sm_80`)."""
    match = ARCH_PATTERN.fullmatch(arch)
    if match is None or int(match.group(1)) < MIN_ARCH:
        raise PTXError(f"arch '{arch}' is not a CUDA architecture like sm_80 or sm_90 (sm_50 up)")


def nvptx_llvm_module(module: ModuleOp) -> ir.Module:
    """The LLVM IR module of the kernels, for NVPTX, kernels marked."""
    names = [k.sym_name.data for k in gpu_kernels(module)]
    llvm_module = translate_module(kernels_to_llvm(module))
    llvm_module.triple = NVPTX_TRIPLE
    for name in names:
        kernel = llvm_module.get_global(name)
        assert isinstance(kernel, ir.Function)
        kernel.calling_convention = "ptx_kernel"
    return llvm_module


def nvvm_ir(module: ModuleOp) -> str:
    """The LLVM IR text of the kernels (before optimization)."""
    return str(nvptx_llvm_module(module))


def nvptx_target_machine(arch: str = DEFAULT_ARCH) -> llvm_binding.TargetMachine:
    check_arch(arch)
    llvm_binding.initialize_all_targets()
    llvm_binding.initialize_all_asmprinters()
    target = llvm_binding.Target.from_triple(NVPTX_TRIPLE)
    return target.create_target_machine(cpu=arch, opt=3)


def ptx(module: ModuleOp, arch: str = DEFAULT_ARCH) -> str:
    """The PTX of the module's kernels for `arch`, after LLVM's O3."""
    machine = nvptx_target_machine(arch)
    ref = llvm_binding.parse_assembly(nvvm_ir(module))
    ref.triple = NVPTX_TRIPLE
    ref.data_layout = str(machine.target_data)
    ref.verify()
    if any(f.is_declaration and f.name.startswith("__nv_") for f in ref.functions):
        _link_libdevice(ref, machine)
    optimize_at(ref, 3, machine)
    return machine.emit_assembly(ref)


def module_ptx(module: ModuleOp, arch: str = DEFAULT_ARCH) -> str:
    """The PTX of the module's kernels, or a PTX module with no entries
    where it has none (a model whose tensors are all empty launches
    nothing)."""
    if gpu_kernels(module):
        return ptx(module, arch)
    machine = nvptx_target_machine(arch)
    ref = llvm_binding.parse_assembly("")
    ref.triple = NVPTX_TRIPLE
    ref.data_layout = str(machine.target_data)
    return machine.emit_assembly(ref)


def _link_libdevice(ref: llvm_binding.ModuleRef, machine: llvm_binding.TargetMachine) -> None:
    """Links CUDA's libdevice into `ref`, its functions internal."""
    path = find_libdevice()
    if path is None:
        raise PTXError(f"the kernels call CUDA's libdevice math: {HOW_TO_GET}")
    library = llvm_binding.parse_bitcode(path.read_bytes())
    library.triple = NVPTX_TRIPLE
    library.data_layout = str(machine.target_data)
    defined = [f.name for f in library.functions if not f.is_declaration]
    ref.link_in(library)
    for name in defined:
        ref.get_function(name).linkage = llvm_binding.Linkage.internal
