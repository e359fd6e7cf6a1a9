"""What the stages of convert-tir-to-llvm share to emit `llvm` ops: the
llvm type of a tir-level type, the error they raise, an `Emitter` that
inserts llvm ops, the C functions and strings the code needs (`Externals`),
and the address of a buffer element.

A memref value is bridged while the lowering runs: producers become a
pointer followed by `builtin.unrealized_conversion_cast` back to the memref
type, so consumers still see the shape and strides they need and take the
pointer from the cast (`pointer_of`); convert-to-llvm folds the casts away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from math import prod
from typing import cast

from xdsl.dialects import arith, builtin, func, llvm, math
from xdsl.dialects.builtin import (
    AnyFloat,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    UnrealizedConversionCastOp,
    VectorType,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.utils.exceptions import DiagnosticException

from xtc.analysis import types as analysis_types

PTR = llvm.LLVMPointerType()
LOWERING = "convert-tir-to-llvm"
"""The name errors of every stage start with: the lowering a user runs."""
TEXT_PREFIX = "xtc_text_"
"""Constant strings of the lowered code (fault messages) are `@xtc_text_<n>`."""


class LoweringError(DiagnosticException):
    """The input has something convert-tir-to-llvm cannot lower; `op` is the
    offending operation when there is one (for a located diagnostic)."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message)
        self.op = op


def fail(op: Operation, message: str) -> LoweringError:
    return LoweringError(f"{LOWERING}: '{op.name}' {message}", op)


# ----------------------------------------------------------------- types


_KEPT_CLASSES: set[type[Attribute]] = set()
"""Type classes whose every type is its own llvm-level type (f32, vectors,
the llvm dialect's types...): llvm_type's fast path, learnt as it goes (a
lowering asks for some hundred thousand types)."""


def llvm_type(t: Attribute) -> Attribute:
    """The llvm-level type of a tir-level type: index is i64, integers are
    signless, memrefs are pointers, bf16 and the float8 and float4 types are
    their bits (lowering/narrow_floats.py); other floats stay."""
    kind = type(t)
    if kind in _KEPT_CLASSES:
        return t
    # The common types that are not kept, before _llvm_type's float test (an
    # isinstance of a union of ABCs, a few microseconds a call).
    if kind is IntegerType:
        integer = cast(IntegerType, t)
        if integer.signedness.data == Signedness.SIGNLESS:
            return t
    elif kind is IndexType:
        return i64
    elif kind is MemRefType:
        return PTR
    lowered = _llvm_type(t)
    if lowered is t and not isinstance(t, IntegerType):  # signed integers are not kept
        _KEPT_CLASSES.add(kind)
    return lowered


def _llvm_type(t: Attribute) -> Attribute:
    if isinstance(t, AnyFloat) and not isinstance(t, Float16Type | Float32Type | Float64Type):
        try:  # a narrow float: an integer of its storage's width
            return IntegerType(8 * analysis_types.element_bytes(t))
        except analysis_types.ElementSizeError:
            return t
    match t:
        case IndexType():
            return i64
        case IntegerType():
            return IntegerType(t.bitwidth) if t.signedness.data != Signedness.SIGNLESS else t
        case MemRefType():
            return PTR
        case _:
            return t


def is_lowered_type(t: Attribute) -> bool:
    lowered = llvm_type(t)
    return lowered is t or lowered == t


def int_width(t: Attribute) -> int:
    lowered = llvm_type(t)
    assert isinstance(lowered, IntegerType), lowered
    return lowered.bitwidth


def element_bytes(t: Attribute) -> int:
    """Bytes one element of this type takes in a buffer (xtc.analysis.types);
    a lowering error for a type with no layout."""
    try:
        return analysis_types.element_bytes(t)
    except analysis_types.ElementSizeError as e:
        raise LoweringError(f"{LOWERING}: {e}") from None


def static_memref(op: Operation, t: Attribute) -> MemRefType[Attribute]:
    if not isinstance(t, MemRefType):
        raise fail(op, f"expects a memref, got {t}")
    memref_type = cast(MemRefType[Attribute], t)
    shape = memref_type.get_shape()
    strides = memref_type.get_strides()
    if any(d < 0 for d in shape) or strides is None or any(s is None for s in strides):
        raise fail(op, f"needs a static shape and strides, got {memref_type}")
    if memref_type.get_offset() is None:
        raise fail(op, f"needs a static offset, got {memref_type}")
    element_bytes(memref_type.get_element_type())
    return memref_type


def buffer_bytes(op: Operation, t: Attribute) -> int:
    memref_type = static_memref(op, t)
    return prod(memref_type.get_shape()) * element_bytes(memref_type.get_element_type())


def float_suffix(t: Attribute) -> str:
    match t:
        case Float16Type():
            return "f16"
        case Float32Type():
            return "f32"
        case Float64Type():
            return "f64"
        case _:
            raise LoweringError(f"{LOWERING}: {t} is not f16, f32 or f64")


def suffix(t: Attribute) -> str:
    """The type suffix of an overloaded intrinsic's name (`llvm.tanh.f32`)."""
    lowered = llvm_type(t)
    if isinstance(lowered, IntegerType):
        return f"i{lowered.bitwidth}"
    return float_suffix(lowered)


# ---------------------------------------------------------------- emitting


@dataclass
class Externals:
    """C functions the lowered code calls (malloc, free, libm) and the
    constant strings it points to (fault messages): declared, and defined,
    in the module once the walk is done."""

    signatures: dict[str, llvm.LLVMFunctionType] = field(
        default_factory=dict[str, llvm.LLVMFunctionType]
    )
    texts: dict[str, str] = field(default_factory=dict[str, str])
    """Each string's global, by content."""

    def need(self, name: str, inputs: Sequence[Attribute], output: Attribute | None) -> None:
        self.signatures[name] = llvm.LLVMFunctionType(inputs, output)

    def text(self, content: str) -> str:
        """The name of a constant global holding `content` as a C string
        (UTF-8, NUL-terminated); equal strings share one."""
        if content not in self.texts:
            self.texts[content] = f"{TEXT_PREFIX}{len(self.texts)}"
        return self.texts[content]

    def declare_in(self, module: ModuleOp) -> None:
        defined = {
            op.sym_name.data
            for op in module.ops
            if isinstance(op, llvm.FuncOp | func.FuncOp | llvm.GlobalOp)
        }
        for name, signature in sorted(self.signatures.items()):
            if name not in defined:
                module.body.block.add_op(
                    llvm.FuncOp(name, signature, linkage=llvm.LinkageAttr("external"))
                )
        for content, name in self.texts.items():
            if name in defined:
                raise LoweringError(f"{LOWERING}: @{name} is already defined")
            data = content.encode() + b"\0"
            value = DenseIntOrFPElementsAttr(TensorType(i8, [len(data)]), BytesAttr(data))
            module.body.block.add_op(
                llvm.GlobalOp(
                    llvm.LLVMArrayType(len(data), i8), name, "internal", constant=True, value=value
                )
            )


@dataclass
class SharedValues:
    """Values that Emitters made, by block and by what they compute: the
    integer constants, undefined values, memrefs' pointers, the integer
    arithmetic of SHARED_ARITHMETIC and (under the caller's keys)
    addresses. An Emitter given one returns the value of an equal op made
    earlier in the block it inserts into, instead of making the op again.

    That value stands before the insertion point only where every Emitter
    sharing it inserts before the op it lowers and a block's ops are
    lowered in order: tir-lower-vectorized's loops, each one's vector code
    inserted before it, inner loops first and the loops of a block in
    order. The copies of an unrolled loop (a register tile's rows) compute
    the same addresses and constants: on ResNet-50's kernels, the vector
    code is 19k ops instead of 28k, which tir-cse merged to the same 15k."""

    values: dict[tuple[object, ...], SSAValue] = field(
        default_factory=dict[tuple[object, ...], SSAValue]
    )


SHARED_ARITHMETIC: frozenset[type[IRDLOperation]] = frozenset(
    (llvm.AddOp, llvm.SubOp, llvm.MulOp, llvm.SExtOp, llvm.ZExtOp, llvm.TruncOp)
)
"""The ops `Emitter.create` shares (SharedValues): pure integer ops."""


class Emitter:
    """Inserts llvm ops before the op being lowered; every method returns the
    new value (or, with `shared`, an equal one made before: SharedValues)."""

    def __init__(
        self,
        rewriter: PatternRewriter,
        externals: Externals,
        shared: SharedValues | None = None,
    ) -> None:
        self.rewriter = rewriter
        self.externals = externals
        self.shared = shared

    def op(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op)
        return op.results[0]

    def known(self, key: tuple[object, ...]) -> SSAValue | None:
        """The value recorded under `key` in the block this Emitter inserts
        into (None without `shared`, or when there is none)."""
        if self.shared is None:
            return None
        return self.shared.values.get((self.rewriter.insertion_point.block, *key))

    def record(self, key: tuple[object, ...], value: SSAValue) -> SSAValue:
        """`value`, recorded under `key` for the block (with `shared`)."""
        if self.shared is not None:
            self.shared.values[(self.rewriter.insertion_point.block, *key)] = value
        return value

    def made_once(self, key: tuple[object, ...], make: Callable[[], Operation]) -> SSAValue:
        """The value recorded under `key` in the block, else that of the op
        `make()` builds, inserted and recorded."""
        known = self.known(key)
        return known if known is not None else self.record(key, self.op(make()))

    def create(
        self, op_type: type[IRDLOperation], operands: Sequence[SSAValue], result: Attribute
    ) -> SSAValue:
        """An op whose result type is given, not taken from its operands (those
        may still have their tir-level type while the walk runs)."""

        def make() -> Operation:
            return op_type.create(operands=list(operands), result_types=[result])

        if op_type not in SHARED_ARITHMETIC:
            return self.op(make())
        return self.made_once((op_type, *operands, result), make)

    def int_const(self, value: int, t: Attribute) -> SSAValue:
        t = cast(IntegerType, llvm_type(t))
        return self.made_once(("int", value, t), lambda: constant_op(integer_attr(value, t), t))

    def undef(self, t: Attribute) -> SSAValue:
        """An undefined value of type `t` (a vector's lanes before they are
        inserted, or the lanes a shuffle does not pick)."""
        return self.made_once(("undef", t), lambda: undef_op(t))

    def float_const(self, value: float, t: Attribute) -> SSAValue:
        return self.op(constant_op(FloatAttr(value, cast(AnyFloat, t)), t))

    def icmp(self, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        index = arith.CMPI_COMPARISON_OPERATIONS.index(predicate)
        return self.op(llvm.ICmpOp(lhs, rhs, IntegerAttr(index, i64)))

    def select(self, cond: SSAValue, then: SSAValue, other: SSAValue, t: Attribute) -> SSAValue:
        return self.op(
            llvm.SelectOp.create(operands=[cond, then, other], result_types=[llvm_type(t)])
        )

    def intrinsic(
        self,
        name: str,
        args: Sequence[SSAValue],
        result: Attribute | None,
        fastmath: llvm.FastMathAttr | None = None,
    ) -> SSAValue | None:
        # the op llvm.CallIntrinsicOp(name, args, results) builds (its
        # properties in that order), without IRDL's argument matching
        op = llvm.CallIntrinsicOp.create(
            operands=list(args),
            result_types=[llvm_type(result)] if result is not None else [],
            properties={
                "intrin": StringAttr(name),
                "op_bundle_sizes": i32_array(()),
                "operandSegmentSizes": i32_array((len(args), 0)),
                "fastmathFlags": fastmath if fastmath is not None else _NO_FASTMATH,
            },
        )
        self.rewriter.insert(op)
        return op.ress

    def value_intrinsic(
        self,
        name: str,
        args: Sequence[SSAValue],
        result: Attribute,
        fastmath: llvm.FastMathAttr | None = None,
    ) -> SSAValue:
        value = self.intrinsic(name, args, result, fastmath)
        assert value is not None
        return value

    def call(
        self,
        name: str,
        args: Sequence[SSAValue],
        inputs: Sequence[Attribute],
        result: Attribute | None,
    ) -> llvm.CallOp:
        self.externals.need(name, inputs, result)
        call = llvm.CallOp(name, *args, return_type=result)
        self.rewriter.insert(call)
        return call


@lru_cache(maxsize=4096)
def integer_attr(value: int, t: IntegerType) -> IntegerAttr[IntegerType]:
    """IntegerAttr(value, t), its bits truncated to t's width: one attribute
    per value and type (attributes are immutable; building and verifying
    one costs more than the op that holds it)."""
    return IntegerAttr(value, t, truncate_bits=True)


def cast_op(value: SSAValue, t: Attribute) -> UnrealizedConversionCastOp:
    """`builtin.unrealized_conversion_cast value to t`, built without IRDL's
    argument matching (as constant_op)."""
    return UnrealizedConversionCastOp.create(operands=[value], result_types=[t])


def constant_op(value: Attribute, t: Attribute) -> llvm.ConstantOp:
    """llvm.ConstantOp(value, t), built without IRDL's argument matching (a
    third of the time: a lowering makes tens of thousands of constants)."""
    return llvm.ConstantOp.create(result_types=[t], properties={"value": value})


@lru_cache(maxsize=1024)
def vector_of(element: Attribute, lanes: int) -> VectorType[Attribute]:
    """VectorType(element, [lanes]): one attribute per element type and
    width (building and verifying a vector type costs more than a cached
    lookup, and a vector lowering asks for thousands)."""
    return VectorType(element, [lanes])


@lru_cache(maxsize=1024)
def i32_array(values: tuple[int, ...]) -> DenseArrayBase:
    """DenseArrayBase.from_list(i32, values), one attribute per tuple of
    values (GEP indices, shuffle masks, operand segment sizes)."""
    return DenseArrayBase.from_list(i32, values)


_NO_FASTMATH = llvm.FastMathAttr(None)


def undef_op(t: Attribute) -> llvm.UndefOp:
    """llvm.UndefOp(t), built without IRDL's argument matching (as constant_op)."""
    return llvm.UndefOp.create(result_types=[t])


def insert_element_op(
    vector: SSAValue, value: SSAValue, position: SSAValue
) -> llvm.InsertElementOp:
    """llvm.InsertElementOp(vector, value, position), built without IRDL's
    argument matching."""
    return llvm.InsertElementOp.create(
        operands=[vector, value, position], result_types=[vector.type]
    )


def shuffle_vector_op(
    first: SSAValue, second: SSAValue, mask: tuple[int, ...], t: Attribute
) -> llvm.ShuffleVectorOp:
    """llvm.ShuffleVectorOp(first, second, mask as i32s, t), built without
    IRDL's argument matching."""
    return llvm.ShuffleVectorOp.create(
        operands=[first, second], properties={"mask": i32_array(mask)}, result_types=[t]
    )


_NO_WRAP = IntegerAttr(0, 32)


def gep(
    base: SSAValue,
    element: Attribute,
    index: SSAValue | int,
    inbounds: bool = False,
) -> llvm.GEPOp:
    """`getelementptr element, base, index` (an SSA index or a constant one):
    llvm.GEPOp with its properties shared between ops."""
    properties: dict[str, Attribute] = {
        "elem_type": element,
        "noWrapFlags": _NO_WRAP,
        "rawConstantIndices": i32_array(
            (llvm.GEP_USE_SSA_VAL,) if isinstance(index, SSAValue) else (index,)
        ),
    }
    if inbounds:
        properties["inbounds"] = builtin.UnitAttr()
    return llvm.GEPOp.create(
        operands=[base, *([index] if isinstance(index, SSAValue) else [])],
        result_types=[PTR],
        properties=properties,
    )


def load_op(pointer: SSAValue, t: Attribute, alignment: int) -> llvm.LoadOp:
    """`load t, ptr pointer, align alignment`: llvm.LoadOp with shared
    properties."""
    return llvm.LoadOp.create(
        operands=[pointer],
        result_types=[t],
        properties={"ordering": integer_attr(0, i64), "alignment": integer_attr(alignment, i64)},
    )


def store_op(value: SSAValue, pointer: SSAValue, alignment: int) -> llvm.StoreOp:
    """`store value, ptr pointer, align alignment`: llvm.StoreOp with shared
    properties."""
    return llvm.StoreOp.create(
        operands=[value, pointer],
        properties={"ordering": integer_attr(0, i64), "alignment": integer_attr(alignment, i64)},
    )


def pointer_of(value: SSAValue, emit: Emitter) -> SSAValue:
    """The pointer behind a memref value (see the module docstring)."""
    if isinstance(value.type, llvm.LLVMPointerType):
        return value
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and isinstance(
        owner.inputs[0].type, llvm.LLVMPointerType
    ):
        return owner.inputs[0]
    return emit.made_once(("pointer", value), lambda: cast_op(value, PTR))


def as_memref(pointer: SSAValue, t: Attribute) -> UnrealizedConversionCastOp:
    return cast_op(pointer, t)


SAME_BINARY: dict[type[Operation], type[IRDLOperation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}


def typed_intrinsic(
    emit: Emitter,
    name: str,
    args: Sequence[SSAValue],
    t: Attribute,
    fastmath: llvm.FastMathAttr | None = None,
) -> SSAValue:
    """`llvm.<name>.<type>(args)` of result type `t` (a scalar)."""
    return emit.value_intrinsic(f"llvm.{name}.{suffix(t)}", args, t, fastmath)


def fastmath_of(op: Operation) -> llvm.FastMathAttr | None:
    """The llvm fast-math flags of an arith op's own (`arith.maximumf
    fastmath<nsz>`: llvm.maximum nsz), None where it has none."""
    flags = getattr(op, "fastmath", None)
    if not isinstance(flags, arith.FastMathFlagsAttr) or not flags.data:
        return None
    return llvm.FastMathAttr([llvm.FastMathFlag(flag.value) for flag in flags.data])


def fused_multiply_add(emit: Emitter, operands: Sequence[SSAValue], t: Attribute) -> SSAValue:
    """a * b + c rounded once (`llvm.fma`); on f16 computed in f32 and
    rounded back to f16. `t` is a float type or a vector of one."""
    element = t.get_element_type() if isinstance(t, VectorType) else t
    if not isinstance(element, Float16Type):
        return emit.value_intrinsic(f"llvm.fma.{type_suffix(t)}", operands, t)
    wide = _with_element(t, builtin.f32)
    extended = [emit.create(llvm.FPExtOp, [x], wide) for x in operands]
    product = emit.value_intrinsic(f"llvm.fma.{type_suffix(wide)}", extended, wide)
    return emit.create(llvm.FPTruncOp, [product], t)


def type_suffix(t: Attribute) -> str:
    """An overloaded intrinsic's type suffix for a scalar or vector: f32, v16f16."""
    if isinstance(t, VectorType):
        vector = cast(VectorType[Attribute], t)
        return f"v{vector.get_shape()[0]}{suffix(vector.get_element_type())}"
    return suffix(t)


def _with_element(t: Attribute, element: Attribute) -> Attribute:
    """`t` with its element type replaced (a scalar type is its own element)."""
    if isinstance(t, VectorType):
        return VectorType(element, cast(VectorType[Attribute], t).get_shape())
    return element


def element_pointer(
    emit: Emitter, op: Operation, memref_value: SSAValue, indices: Sequence[SSAValue]
) -> tuple[SSAValue, Attribute, int]:
    """The address of memref[indices] (static strides and offset folded in)
    with the element's llvm type and alignment. Constant indices are folded
    into the offset (an unrolled copy's indices are mostly constants): the
    address is one GEP of the variable terms plus that offset, or of the
    offset alone."""
    memref_type = static_memref(op, memref_value.type)
    element = llvm_type(memref_type.get_element_type())
    base = pointer_of(memref_value, emit)
    strides = cast(Sequence[int], memref_type.get_strides())
    offset = memref_type.get_offset() or 0
    linear: SSAValue | None = None
    for index, stride in zip(indices, strides, strict=True):
        known = integer_constant(index)
        if known is not None:
            offset += known * stride
            continue
        term = (
            index
            if stride == 1
            else emit.create(llvm.MulOp, [index, emit.int_const(stride, i64)], i64)
        )
        linear = term if linear is None else emit.create(llvm.AddOp, [linear, term], i64)
    alignment = element_bytes(memref_type.get_element_type())
    if linear is None and offset == 0 and (not indices or not _is_global_address(base)):
        return base, element, alignment
    if linear is None and _I32_MIN <= offset <= _I32_MAX:
        return emit.op(gep(base, element, offset, inbounds=True)), element, alignment
    if offset:
        constant = emit.int_const(offset, i64)
        linear = constant if linear is None else emit.create(llvm.AddOp, [linear, constant], i64)
    assert linear is not None
    return emit.op(gep(base, element, linear, inbounds=True)), element, alignment


def _is_global_address(pointer: SSAValue) -> bool:
    """A global's address: its element at offset 0 still takes a GEP, which
    the translation with typed pointers (the NVPTX path) needs to cast the
    global's array type to the element's (`[8 x i8]*` to `i64*`)."""
    return isinstance(pointer.owner, llvm.AddressOfOp)


_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1
"""The range of a GEP's constant index (an i32 property)."""


def integer_constant(value: SSAValue) -> int | None:
    """The value of an integer constant (`arith.constant` or
    `llvm.mlir.constant`, index or integer), None for any other value."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp | llvm.ConstantOp):
        constant = owner.value
        if isinstance(constant, IntegerAttr) and isinstance(value.type, IntegerType | IndexType):
            return constant.value.data
    return None


# math: ops with an LLVM intrinsic, libm calls. Every intrinsic is called
# under its typed name (`llvm.floor.f32`): xDSL's llvm ops for these (FFloorOp,
# ...) declare one untyped `llvm.floor`, so a module using floor on f32 and on
# f64 would declare it twice with two types.
MATH_INTRINSICS: dict[type[Operation], str] = {
    math.AbsFOp: "fabs",
    math.CeilOp: "ceil",
    math.FloorOp: "floor",
    math.SqrtOp: "sqrt",
    math.ExpOp: "exp",
    math.Exp2Op: "exp2",
    math.LogOp: "log",
    math.Log2Op: "log2",
    math.Log10Op: "log10",
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.CopySignOp: "copysign",
    math.PowFOp: "pow",
    math.TruncOp: "trunc",
    math.RoundOp: "round",
    math.RoundEvenOp: "roundeven",
    math.TanOp: "tan",
    math.TanhOp: "tanh",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.AtanOp: "atan",
    math.Atan2Op: "atan2",
}
