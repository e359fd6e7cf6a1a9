"""A kernel's workload key: the structural hash by which tuning records
name it. Two kernels share a key when they print the same once their
function name and SSA value names are set aside: same shapes, dtypes, loop
structure (loop names included: schedule steps name them) and computation.
Identical kernels of one model, or of two models, share records."""

from __future__ import annotations

import hashlib

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

from xtc.driver.textual_ir import module_to_text

KERNEL_NAME = "kernel"
"""The name every task's kernel has in its own module."""


def normalized_kernel(kernel: FuncOp) -> FuncOp:
    """A copy of `kernel` named KERNEL_NAME, its SSA values unnamed."""
    copy = kernel.clone()
    copy.sym_name = StringAttr(KERNEL_NAME)
    copy.sym_visibility = None
    for op in copy.walk():
        for value in op.results:
            value.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return copy


def kernel_module_text(kernel: FuncOp) -> str:
    """The normalized kernel alone in a module, as IR text."""
    return module_to_text(ModuleOp([normalized_kernel(kernel)]))


def workload_key(kernel: FuncOp) -> str:
    """The kernel's structural hash (16 hex digits of a sha256)."""
    return hashlib.sha256(kernel_module_text(kernel).encode()).hexdigest()[:16]
