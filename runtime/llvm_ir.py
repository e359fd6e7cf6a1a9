"""LLVM IR text of a module at the llvm level, through xDSL's
`xdsl.backend.llvm.convert`, extended here for what it misses:

- shared memory: an `llvm.mlir.global` of address space 3 (a GPU block's
  shared buffer) starts `undef`;
- global data: `llvm.mlir.global`s holding `dense<...>` or `dense_resource<...>`
  are emitted as byte strings (`[N x i8] c"..."`), which is exact for every
  element type and fast for large weights; a global without data is
  zero-filled;
- linkage and alignment: `llvm.func`s with internal linkage stay internal in
  LLVM (so LLVM's optimizer may inline them and drop them); globals keep their alignment;
- vector instructions the llvm dialect cannot write (tir-lower-vectorized):
  the ops of `llvm_ext` (dialects/llvm_ext.py) become the `fcmp`, `select`,
  `extractelement`, `fptosi` and `fptoui` instructions they are;
- run-time faults: a module whose `tir.assert`s call `@xtc_check` gets its
  definition, and the fault record's, appended (runtime/faults.py).

`xtc-opt -t llvm-ir` prints this text (`llvm-ir{optimize=true}`: after the
-O3 pipeline of runtime/llvm_jit.py, LLVM's O2).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import cast

import llvmlite.ir as ir
from xdsl.backend.llvm import convert as llvm_convert
from xdsl.backend.llvm.convert_op import convert_op as xdsl_convert_op
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IntAttr,
    IntegerType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from xtc.analysis.types import ElementSizeError, element_bytes
from xtc.dialects import llvm_ext
from xtc.dialects.resource_blobs import blob_storage
from xtc.runtime.faults import WHOLE, with_fault_support
from xtc.runtime.work_sharing import work_sharing_ir


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
            if name not in declared and op.addr_space.value.data == 0:
                data[name] = global_bytes(op)
        elif not isinstance(op, llvm.FuncOp):
            raise LLVMIRError(f"'{op.name}' is not an llvm op: run convert-tir-to-llvm first")
    with _data_set_aside(module, data), _extension_ops_translated():
        try:
            llvm_module = llvm_convert.convert_module(module, fallback_target_triple=None)
        except (NotImplementedError, KeyError) as e:
            raise LLVMIRError(f"cannot translate to LLVM IR: {e}") from e
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
        if isinstance(op, llvm.GlobalOp) and op.addr_space.value.data != 0:
            # a GPU block's shared buffer: it starts undefined (PTX gives
            # `.shared` variables no initial value)
            variable = cast(ir.GlobalVariable, llvm_module.get_global(op.sym_name.data))
            variable.initializer = ir.Constant(variable.value_type, ir.Undefined)  # pyright: ignore[reportAttributeAccessIssue]
            variable.align = alignments.get(op.sym_name.data)  # pyright: ignore[reportAttributeAccessIssue]
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


ExtensionTranslation = Callable[[Operation, ir.IRBuilder, dict[SSAValue, ir.Value]], None]


def _translate_vector_fcmp(
    op: Operation, builder: ir.IRBuilder, values: dict[SSAValue, ir.Value]
) -> None:
    fcmp = cast(llvm_ext.VectorFCmpOp, op)
    # llvmlite takes LLVM's predicate names (olt, une, uno, ...) as they are
    # (only C-style ones, "<", get an "o" prefix here)
    values[fcmp.res] = builder.fcmp_ordered(fcmp.predicate.data, values[fcmp.lhs], values[fcmp.rhs])


def _translate_vector_select(
    op: Operation, builder: ir.IRBuilder, values: dict[SSAValue, ir.Value]
) -> None:
    select = cast(llvm_ext.VectorSelectOp, op)
    values[select.res] = builder.select(values[select.cond], values[select.lhs], values[select.rhs])


def _translate_extractelement(
    op: Operation, builder: ir.IRBuilder, values: dict[SSAValue, ir.Value]
) -> None:
    extract = cast(llvm_ext.ExtractElementOp, op)
    values[extract.res] = builder.extract_element(values[extract.vector], values[extract.index])


def _translate_vector_fptosi(
    op: Operation, builder: ir.IRBuilder, values: dict[SSAValue, ir.Value]
) -> None:
    convert = cast(llvm_ext.VectorFPToSIOp, op)
    values[convert.res] = builder.fptosi(values[convert.arg], convert_type(convert.res.type))


def _translate_vector_fptoui(
    op: Operation, builder: ir.IRBuilder, values: dict[SSAValue, ir.Value]
) -> None:
    convert = cast(llvm_ext.VectorFPToUIOp, op)
    values[convert.res] = builder.fptoui(values[convert.arg], convert_type(convert.res.type))

def _translate_addrspacecast(
    op: Operation, builder: ir.IRBuilder, values: dict[SSAValue, ir.Value]
) -> None:
    cast_op = cast(llvm_ext.AddrSpaceCastOp, op)
    target = cast(llvm.LLVMPointerType, cast_op.res.type).addr_space
    space = target.data if isinstance(target, IntAttr) else 0
    # llvmlite's stubs type the casts as returning None
    generic = builder.addrspacecast(values[cast_op.arg], ir.PointerType(addrspace=space))
    values[cast_op.res] = cast(ir.Value, generic)


def _translate_call_intrinsic(
    op: Operation, builder: ir.IRBuilder, values: dict[SSAValue, ir.Value]
) -> None:
    """xDSL declares an intrinsic with the argument types of its first call;
    llvmlite types a global's address by the global ([4 x float]*), so the
    next call with another global (an llvm.memcpy of an [4 x i64]) would
    be refused. Declared first here with untyped pointers, it takes both.
    xDSL refuses fast-math flags on an intrinsic; they are written here
    (`call nsz <16 x float> @llvm.maximum.v16f32`)."""
    call = cast(llvm.CallIntrinsicOp, op)
    name = call.intrin.data
    if name not in builder.module.globals:
        arguments = [_untyped(values[a].type) for a in call.args]
        result = ir.VoidType() if call.ress is None else convert_type(call.ress.type)
        ir.Function(builder.module, ir.FunctionType(result, arguments), name=name)
    flags = [f.value for f in call.fastmathFlags.data]
    if not flags:
        xdsl_convert_op(op, builder, values)
        return
    intrinsic = builder.module.get_global(name)
    result_value = builder.call(intrinsic, [values[a] for a in call.args], fastmath=flags)
    if call.ress is not None:
        values[call.ress] = result_value


def _untyped(t: ir.Type) -> ir.Type:
    return ir.PointerType(addrspace=t.addrspace) if isinstance(t, ir.PointerType) else t


EXTENSION_TRANSLATIONS: dict[type[Operation], ExtensionTranslation] = {
    llvm.CallIntrinsicOp: _translate_call_intrinsic,
    llvm_ext.AddrSpaceCastOp: _translate_addrspacecast,
    llvm_ext.VectorFCmpOp: _translate_vector_fcmp,
    llvm_ext.VectorSelectOp: _translate_vector_select,
    llvm_ext.ExtractElementOp: _translate_extractelement,
    llvm_ext.VectorFPToSIOp: _translate_vector_fptosi,
    llvm_ext.VectorFPToUIOp: _translate_vector_fptoui,
}
"""The LLVM instruction of each `llvm_ext` op (dialects/llvm_ext.py), and of
the llvm ops whose xDSL translation needs help."""


TRANSLATED_BY = "convert_op"
"""The function xdsl.backend.llvm.convert sends each op of a body to."""


@contextmanager
def _extension_ops_translated() -> Iterator[None]:
    """xDSL's translation, for the while, with the `llvm_ext` ops too: it
    sends each op of a function body to `convert_op` (looked up in its
    module when called), which raises on any op not of xDSL's llvm dialect;
    the `llvm_ext` ones go to EXTENSION_TRANSLATIONS instead."""

    def convert_op(
        op: Operation,
        builder: ir.IRBuilder,
        values: dict[SSAValue, ir.Value],
        blocks: dict[Block, ir.Block] | None = None,
    ) -> None:
        translation = EXTENSION_TRANSLATIONS.get(type(op))
        if translation is None:
            xdsl_convert_op(op, builder, values, blocks)
        else:
            translation(op, builder, values)

    setattr(llvm_convert, TRANSLATED_BY, convert_op)
    try:
        yield
    finally:
        setattr(llvm_convert, TRANSLATED_BY, xdsl_convert_op)


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
    """A dense_resource blob's bytes (the stored object, not a copy)."""
    data = blob_storage().data(key)
    if data is None:
        raise LLVMIRError(f"dense_resource<{key}> has no data")
    return data


def _element_size(t: Attribute) -> int:
    try:
        return element_bytes(t)
    except ElementSizeError:
        raise LLVMIRError(f"no memory layout for global element type {t}") from None


def llvm_ir(module: ModuleOp) -> str:
    """The LLVM IR text of an llvm-level module (before optimization), with
    the runtime functions it calls (as the JIT runs them)."""
    return with_runtime_functions(translate_module(module))


def with_runtime_functions(
    llvm_module: ir.Module, thread_local: bool = False, always: bool = False, role: str = WHOLE
) -> str:
    """The module's LLVM IR text with the runtime functions it calls
    defined: the fault functions of its `tir.assert`s (runtime/faults.py's
    with_fault_support, whose options these are) and the work sharing of
    its parallel loops (runtime/work_sharing.py)."""
    sharing = work_sharing_ir(llvm_module)
    return with_fault_support(llvm_module, thread_local, always, role) + sharing
