"""The `llvm_ext` dialect: the LLVM vector instructions that xDSL's `llvm`
dialect cannot write and the vectorized code needs (tir-lower-vectorized):
a lane-wise float comparison, a lane-wise select, the extraction of one
lane and the plain (not saturating) float-to-integer conversions of
vectors; and the pointer cast between address spaces the GPU's shared memory
needs (lowering/convert_gpu_to_nvvm.py). Each is the LLVM instruction of
the same name; runtime/llvm_ir.py translates them.
"""

from __future__ import annotations

from typing import ClassVar, cast

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import AnyFloat, IntegerType, StringAttr, VectorType, i1
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

FCMP_PREDICATES = tuple(p for p in arith.CMPF_COMPARISON_OPERATIONS if p not in ("false", "true"))
"""LLVM's `fcmp` predicates (oeq, olt, une, ...; arith's less the constant ones)."""


def _vector(t: Attribute) -> VectorType[Attribute]:
    return cast(VectorType[Attribute], t)


def _lanes(t: Attribute) -> tuple[int, ...]:
    return _vector(t).get_shape()


@irdl_op_definition
class VectorFCmpOp(IRDLOperation):
    """`fcmp <predicate>` lane by lane of two float vectors: a vector of i1
    (xDSL's `llvm.fcmp` compares scalars only)."""

    name = "llvm_ext.vector_fcmp"

    T: ClassVar = VarConstraint("T", base(VectorType))

    predicate = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(VectorType)

    traits = traits_def(Pure())

    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($res)"

    def __init__(self, predicate: str, lhs: SSAValue, rhs: SSAValue) -> None:
        lanes = _lanes(lhs.type)
        super().__init__(
            operands=[lhs, rhs],
            result_types=[VectorType(i1, lanes)],
            properties={"predicate": StringAttr(predicate)},
        )

    def verify_(self) -> None:
        if self.predicate.data not in FCMP_PREDICATES:
            raise VerifyException(
                f"'{self.name}' predicate \"{self.predicate.data}\" is not one of "
                + ", ".join(FCMP_PREDICATES)
            )
        if not isinstance(_vector(self.lhs.type).get_element_type(), AnyFloat):
            raise VerifyException(f"'{self.name}' compares float vectors, got {self.lhs.type}")
        if self.res.type != VectorType(i1, _lanes(self.lhs.type)):
            raise VerifyException(
                f"'{self.name}' of {self.lhs.type} gives vector<{_lanes(self.lhs.type)[0]}xi1>, "
                f"not {self.res.type}"
            )


@irdl_op_definition
class VectorSelectOp(IRDLOperation):
    """`select` lane by lane: each lane of the result is `lhs`'s where the
    condition's lane is true, else `rhs`'s (xDSL's `llvm.select` takes one i1)."""

    name = "llvm_ext.vector_select"

    T: ClassVar = VarConstraint("T", base(VectorType))

    cond = operand_def(VectorType)
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($res)"

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        expected = VectorType(i1, _lanes(self.res.type))
        if self.cond.type != expected:
            raise VerifyException(
                f"'{self.name}' of {self.res.type} needs a {expected} condition, "
                f"got {self.cond.type}"
            )


@irdl_op_definition
class ExtractElementOp(IRDLOperation):
    """`extractelement`: the lane `index` (an integer) of a vector (xDSL's
    llvm dialect has `insertelement` only)."""

    name = "llvm_ext.extractelement"

    vector = operand_def(VectorType)
    index = operand_def(IntegerType)
    res = result_def(AnyAttr())

    traits = traits_def(Pure())

    assembly_format = (
        "$vector `[` $index `:` type($index) `]` attr-dict `:` type($vector) `->` type($res)"
    )

    def __init__(self, vector: SSAValue, index: SSAValue) -> None:
        element = _vector(vector.type).get_element_type()
        super().__init__(operands=[vector, index], result_types=[element])

    def verify_(self) -> None:
        element = _vector(self.vector.type).get_element_type()
        if self.res.type != element:
            raise VerifyException(
                f"'{self.name}' of {self.vector.type} gives {element}, not {self.res.type}"
            )


class _VectorFloatToInt(IRDLOperation):
    """A float vector converted lane by lane to an integer vector of as
    many lanes, truncated toward zero; a lane out of the integer's range
    (or NaN) gives poison, so the caller clamps first (xDSL's llvm dialect
    has no `fptosi` / `fptoui`; the saturating intrinsics it can call are
    done lane by lane on x86)."""

    arg = operand_def(VectorType)
    res = result_def(VectorType)

    traits = traits_def(Pure())

    assembly_format = "$arg attr-dict `:` type($arg) `to` type($res)"

    def __init__(self, arg: SSAValue, target: VectorType[Attribute]) -> None:
        super().__init__(operands=[arg], result_types=[target])

    def verify_(self) -> None:
        source, target = _vector(self.arg.type), _vector(self.res.type)
        if not isinstance(source.get_element_type(), AnyFloat):
            raise VerifyException(f"'{self.name}' converts a float vector, got {source}")
        if not isinstance(target.get_element_type(), IntegerType):
            raise VerifyException(f"'{self.name}' gives an integer vector, got {target}")
        if source.get_shape() != target.get_shape():
            raise VerifyException(f"'{self.name}' of {source} cannot give {target}: lanes differ")


@irdl_op_definition
class VectorFPToSIOp(_VectorFloatToInt):
    """`fptosi` of a vector (signed result)."""

    name = "llvm_ext.fptosi"


@irdl_op_definition
class VectorFPToUIOp(_VectorFloatToInt):
    """`fptoui` of a vector (unsigned result)."""

    name = "llvm_ext.fptoui"


@irdl_op_definition
class AddrSpaceCastOp(IRDLOperation):
    """`addrspacecast`: a pointer of one address space as a pointer of
    another (a GPU block's shared buffer, addrspace 3, as a generic
    pointer, which every load and store takes)."""

    name = "llvm_ext.addrspacecast"

    arg = operand_def(llvm.LLVMPointerType)
    res = result_def(llvm.LLVMPointerType)

    traits = traits_def(Pure())

    assembly_format = "$arg attr-dict `:` type($arg) `to` type($res)"

    def __init__(self, arg: SSAValue, target: llvm.LLVMPointerType) -> None:
        super().__init__(operands=[arg], result_types=[target])


LLVMExt = Dialect(
    "llvm_ext",
    [
        VectorFCmpOp,
        VectorSelectOp,
        ExtractElementOp,
        VectorFPToSIOp,
        VectorFPToUIOp,
        AddrSpaceCastOp,
    ],
    [],
)
