"""The targets `xtc-opt -t NAME` prints an llvm-level module as."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from xtc.runtime.llvm_ir import llvm_ir
from xtc.runtime.llvm_jit import optimized_llvm_ir


@dataclass(frozen=True)
class LLVMIRTarget(Target):
    """`xtc-opt -t llvm-ir`: the LLVM IR of a module at the llvm level;
    `llvm-ir{optimize=true}` prints it after O3 for the host CPU."""

    name = "llvm-ir"

    optimize: bool = False

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.optimize:
            output.write(optimized_llvm_ir(module))
        else:
            output.write(llvm_ir(module))
