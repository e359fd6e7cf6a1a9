"""LLVM IR text of a module at the llvm level, through xDSL's
`xdsl.backend.llvm.convert`, extended here for what it misses:

- global data: `llvm.mlir.global`s holding `dense<...>` or `dense_resource<...>`
  are emitted as byte strings (`[N x i8] c"..."`), which is exact for every
  element type and fast for large weights; a global without data is
  zero-filled;
- linkage and alignment: `llvm.func`s with internal linkage stay internal in
  LLVM (so O3 may inline them and drop them); globals keep their alignment;
- vector instructions the llvm dialect cannot write (lowering/vectorize_loops.py):
  calls of the placeholder intrinsics `llvm.xtc.fcmp.<predicate>.<type>`,
  `llvm.xtc.select.<type>` and `llvm.xtc.extractelement.<type>` become `fcmp`, `select`
  and `extractelement` instructions;
- run-time faults: a module whose `tir.assert`s call `@xtc_check` gets its
  definition, and the fault record's, appended (runtime/faults.py).

`xtc-opt -t llvm-ir` prints this text (`llvm-ir{optimize=true}`: after the
O3 pipeline of runtime/llvm_jit.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import cast

import llvmlite.ir as ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    Builtin,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IntegerType,
    ModuleOp,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import DiagnosticException

from xtc.analysis.types import ElementSizeError, element_bytes
from xtc.runtime.faults import with_fault_support


class LLVMIRError(DiagnosticException):
    """A module that cannot become LLVM IR (not at the llvm level, bad data)."""


def translate_module(module: ModuleOp, declared: Collection[str] = ()) -> ir.Module:
    """The llvmlite IR module of an llvm-level xDSL module. The globals named
    in `declared` become external declarations (their data is linked in from
    elsewhere: see runtime/library.py)."""
    data: dict[str, bytes] = {}
    alignments: dict[str, int] = {}
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            name = op.sym_name.data
            if op.alignment is not None:
                alignments[name] = op.alignment.value.data
            if name not in declared:
                data[name] = global_bytes(op)
        elif not isinstance(op, llvm.FuncOp):
            raise LLVMIRError(f"'{op.name}' is not an llvm op: run convert-tir-to-llvm first")
    with _data_set_aside(module, data):
        try:
            llvm_module = convert_module(module, fallback_target_triple=None)
        except (NotImplementedError, KeyError) as e:
            raise LLVMIRError(f"cannot translate to LLVM IR: {e}") from e
    _expand_placeholders(llvm_module)
    for name in declared:
        variable = cast(ir.GlobalVariable, llvm_module.get_global(name))
        variable.linkage = "external"
        variable.align = alignments.get(name)  # pyright: ignore[reportAttributeAccessIssue]
    for name, raw in data.items():
        variable = cast(ir.GlobalVariable, llvm_module.get_global(name))
        if variable.linkage == "external":
            # A definition has LLVM's default linkage: llvmlite would print
            # `external global ... <data>`, which LLVM refuses.
            variable.linkage = ""
        variable.align = alignments.get(name)  # pyright: ignore[reportAttributeAccessIssue]
        # llvmlite declares these attributes as None (no stubs): set them anyway.
        initializer = ir.Constant(ir.ArrayType(ir.IntType(8), len(raw)), bytearray(raw))
        variable.initializer = initializer  # pyright: ignore[reportAttributeAccessIssue]
    for op in module.ops:
        if isinstance(op, llvm.FuncOp) and op.body.blocks:
            if op.linkage.linkage.data in ("internal", "private"):
                cast(ir.Function, llvm_module.get_global(op.sym_name.data)).linkage = "internal"
    return llvm_module


@contextmanager
def _data_set_aside(module: ModuleOp, data: dict[str, bytes]) -> Iterator[None]:
    """The globals' values taken out for the while (xDSL would print the
    data as text, slowly; translate_module puts it in as bytes), the global
    of `data` typed as bytes; all put back after, so the module is left as
    it was (without cloning it: weights are large)."""
    saved: list[tuple[llvm.GlobalOp, Attribute | None, Attribute]] = []
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            saved.append((op, op.properties.pop("value", None), op.global_type))
            name = op.sym_name.data
            if name in data:
                op.global_type = llvm.LLVMArrayType(len(data[name]), IntegerType(8))
    try:
        yield
    finally:
        for op, value, global_type in saved:
            op.global_type = global_type
            if value is not None:
                op.properties["value"] = value


PLACEHOLDER_PREFIX = "llvm.xtc."
"""Functions whose calls stand for an LLVM instruction (see the module docstring)."""


def _expand_placeholders(llvm_module: ir.Module) -> None:
    """Puts in place of each call of a placeholder intrinsic its instruction,
    under the call's name (the uses print the name, so they need no change),
    and drops the placeholders' declarations."""
    placeholders = [f for f in llvm_module.functions if f.name.startswith(PLACEHOLDER_PREFIX)]
    if not placeholders:
        return
    for function in llvm_module.functions:
        for block in function.blocks:
            for position, instruction in enumerate(block.instructions):
                if not isinstance(instruction, ir.CallInstr):
                    continue
                name = instruction.callee.name
                if name.startswith(PLACEHOLDER_PREFIX):
                    replacement = _placeholder_instruction(block, name, list(instruction.args))
                    replacement._name = instruction.name  # pyright: ignore[reportPrivateUsage]
                    block.instructions[position] = replacement
    for placeholder in placeholders:
        del llvm_module.globals[placeholder.name]


def _placeholder_instruction(block: ir.Block, name: str, args: list[ir.Value]) -> ir.Instruction:
    """The instruction a call of the placeholder `name` stands for."""
    parts = name[len(PLACEHOLDER_PREFIX) :].split(".")
    match parts, args:
        case ["fcmp", predicate, *_], [lhs, rhs] if predicate in ir.instructions.FCMPInstr.VALID_OP:
            return ir.instructions.FCMPInstr(block, predicate, lhs, rhs)
        case ["select", *_], [condition, lhs, rhs]:
            return ir.instructions.SelectInstr(block, condition, lhs, rhs)
        case ["extractelement", *_], [vector, index]:
            return ir.instructions.ExtractElement(block, vector, index)
        case _:
            raise LLVMIRError(f"unknown placeholder intrinsic @{name} of {len(args)} arguments")


def global_bytes(op: llvm.GlobalOp) -> bytes:
    """The bytes a global starts with: its data in the element type's memory
    layout (i1 takes a byte), or zeros."""
    global_type = op.global_type
    if not isinstance(global_type, llvm.LLVMArrayType):
        raise LLVMIRError(f"global @{op.sym_name.data}: expected an !llvm.array type")
    count = global_type.size.data
    element_size = _element_size(global_type.type)
    size = count * element_size
    value = op.value
    if value is None:
        return bytes(size)
    match value:
        case DenseIntOrFPElementsAttr():
            raw = value.data.data
        case DenseResourceAttr():
            raw = _resource_bytes(value.resource_handle.data)
        case _:
            raise LLVMIRError(f"global @{op.sym_name.data}: unsupported data {value}")
    if global_type.type == IntegerType(1):
        raw = bytes(1 if b else 0 for b in raw)  # xDSL stores `true` as 0xff
    if len(raw) == element_size and size != element_size:
        raw = raw * count  # a splat
    if len(raw) != size:
        raise LLVMIRError(
            f"global @{op.sym_name.data}: data holds {len(raw)} bytes, {global_type} needs {size}"
        )
    return raw


def _resource_bytes(key: str) -> bytes:
    """A dense_resource blob's bytes (MLIR's blob format: a little-endian u32
    alignment, then the data, hex-encoded)."""
    storage = Builtin.get_interface(OpAsmDialectInterface)
    blob = storage.lookup(key) if storage is not None else None
    if not blob:
        raise LLVMIRError(f"dense_resource<{key}> has no data")
    return bytes.fromhex(blob[2:])[4:]


def _element_size(t: Attribute) -> int:
    try:
        return element_bytes(t)
    except ElementSizeError:
        raise LLVMIRError(f"no memory layout for global element type {t}") from None


def llvm_ir(module: ModuleOp) -> str:
    """The LLVM IR text of an llvm-level module (before optimization), with
    the fault functions its `tir.assert`s call (runtime/faults.py; as the
    JIT runs them)."""
    return with_fault_support(translate_module(module))
