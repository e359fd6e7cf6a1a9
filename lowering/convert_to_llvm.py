"""convert-to-llvm: the last stage of convert-tir-to-llvm, everything left
to xDSL's `llvm` dialect, in three pattern walks:

1. symbols: `func.func` becomes `llvm.func` (memref arguments are `!llvm.ptr`,
   index is i64, block arguments retyped) and `memref.global` becomes
   `llvm.mlir.global`;
2. operations: arith, math, memref, func calls and branches, `tir.prefetch`
   and `tir.assert`, one pattern per op family;
3. clean-up: the casts that bridged memref and pointer values fold away
   (lowering/llvm_emit.py), and anything left that is not `llvm` (or one of
   the vector ops of dialects/llvm_ext.py) is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod
from typing import ClassVar, cast

from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func, llvm, math, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue, Use
from xdsl.irdl import AttrSizedOperandSegments
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from xtc.analysis.walk import ops_within, ops_within_reversed
from xtc.dialects import llvm_ext, tir
from xtc.lowering.llvm_emit import (
    MATH_INTRINSICS,
    PTR,
    SAME_BINARY,
    Emitter,
    Externals,
    as_memref,
    buffer_bytes,
    cast_op,
    constant_op,
    element_bytes,
    element_pointer,
    fail,
    fastmath_of,
    float_suffix,
    fused_multiply_add,
    i32_array,
    int_width,
    integer_attr,
    is_lowered_type,
    llvm_type,
    load_op,
    pointer_of,
    static_memref,
    store_op,
    suffix,
    typed_intrinsic,
)
from xtc.lowering.narrow_floats import (
    Specials,
    decode,
    encode,
    narrow_bits,
    narrow_format,
)
from xtc.passes.typed_applier import TypedPatternApplier

LOWERED_PREFIXES = ("llvm.", f"{llvm_ext.LLVMExt.name}.")
"""The ops of the lowered code: xDSL's llvm dialect, and the vector ops it lacks."""

ALLOC_ALIGNMENT = 64
"""Heap buffers are 64-byte aligned (a cache line, the widest vector)."""
FAULT_CHECK = "xtc_check"
"""`void xtc_check(i1 ok, ptr before, i64 value, ptr after)`, what a
`tir.assert` calls: where `ok` is false, the fault "<before><value><after>"
(just "<before>" when `after` is null) is recorded. runtime/faults.py
defines it (and names it too: the runtime imports no lowering)."""

# ------------------------------------------------------ step 1: symbols


class LowerFunc(RewritePattern):
    """`func.func` -> `llvm.func` (C ABI: a memref argument is a pointer to
    its first element); every block argument gets its llvm type, and memref
    arguments are bridged back to their memref type for the op patterns."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        function_type = op.function_type
        if len(function_type.outputs.data) > 1:
            raise fail(op, f"@{op.sym_name.data} returns several values")
        for position, t in enumerate(function_type.inputs.data):
            _check_signature_type(op, t, f"argument {position}")
        for t in function_type.outputs.data:
            _check_signature_type(op, t, "result")
        inputs = [llvm_type(t) for t in function_type.inputs.data]
        output = llvm_type(function_type.outputs.data[0]) if function_type.outputs.data else None
        if output == PTR:
            raise fail(op, f"@{op.sym_name.data} returns a memref (use an output argument)")
        private = op.sym_visibility is not None and op.sym_visibility.data == "private"
        linkage = "internal" if private and op.body.blocks else "external"
        body = rewriter.move_region_contents_to_new_regions(op.body)
        for block in body.blocks:
            _retype_block_arguments(block, rewriter)
        new = llvm.FuncOp(
            op.sym_name.data,
            llvm.LLVMFunctionType(inputs, output),
            linkage=llvm.LinkageAttr(linkage),
            body=body,
        )
        new.arg_attrs = _argument_attributes(op)
        rewriter.replace(op, new, [])


def _argument_attributes(op: func.FuncOp) -> ArrayAttr[DictionaryAttr]:
    """The function's argument attributes (graph.name, ...) plus, for each
    memref, `llvm.dereferenceable` = its size in bytes: LLVM may then load
    ahead, and the runtime checks the arrays it is given against it."""
    inputs = op.function_type.inputs.data
    given = op.arg_attrs.data if op.arg_attrs is not None else [DictionaryAttr({})] * len(inputs)
    merged: list[DictionaryAttr] = []
    for t, attrs in zip(inputs, given, strict=True):
        entries = dict(attrs.data)
        if _is_memref(t) and (size := buffer_bytes(op, t)) > 0:
            entries["llvm.dereferenceable"] = IntegerAttr(size, i64)
        merged.append(DictionaryAttr(entries))
    return ArrayAttr(merged)


def _is_memref(t: Attribute) -> bool:
    return isinstance(t, MemRefType)


def _check_signature_type(op: func.FuncOp, t: Attribute, what: str) -> None:
    if _is_memref(t):
        static_memref(op, t)
    elif not isinstance(t, IndexType | IntegerType | Float16Type | Float32Type | Float64Type):
        raise fail(op, f"@{op.sym_name.data} {what} has type {t}, which has no llvm lowering")


def _retype_block_arguments(block: Block, rewriter: PatternRewriter) -> None:
    for arg in list(block.args):
        lowered = llvm_type(arg.type)
        if lowered == arg.type:
            continue
        old_type = arg.type
        new_arg = rewriter.replace_value_with_new_type(arg, lowered)
        if _is_memref(old_type):
            bridge = as_memref(new_arg, old_type)
            rewriter.insert(bridge, InsertPoint.at_start(block))
            new_arg.replace_uses_with_if(bridge.results[0], _not_used_by(bridge))


def _not_used_by(op: Operation) -> Callable[[Use], bool]:
    return lambda use: use.operation is not op


class LowerGlobal(RewritePattern):
    """`memref.global` -> `llvm.mlir.global` holding the same data attribute
    (dense or dense_resource; none: zero-filled), 64-byte aligned."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GlobalOp, rewriter: PatternRewriter) -> None:
        memref_type = static_memref(op, op.type)
        element = llvm_type(memref_type.get_element_type())
        count = prod(memref_type.get_shape())
        value = op.initial_value
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            value = None
        linkage = "internal" if op.sym_visibility.data == "private" else "external"
        rewriter.replace(
            op,
            llvm.GlobalOp(
                llvm.LLVMArrayType(count, element),
                op.sym_name.data,
                linkage,
                constant=op.constant is not None,
                value=value,
                alignment=max(ALLOC_ALIGNMENT, op.alignment.value.data if op.alignment else 0),
            ),
            [],
        )


# ---------------------------------------------------- step 2: operations


class LoweringPattern(RewritePattern):
    """A pattern that emits llvm ops and may call C functions. One that
    takes several op classes names them in `op_types` (see
    passes/typed_applier.py)."""

    op_types: ClassVar[tuple[type[Operation], ...]] = ()

    def __init__(self, externals: Externals) -> None:
        self.externals = externals

    def emitter(self, rewriter: PatternRewriter) -> Emitter:
        return Emitter(rewriter, self.externals)


class LowerArithConstant(LoweringPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter) -> None:
        value = op.value
        t = llvm_type(op.result.type)
        narrow = narrow_format(op.result.type)
        if narrow is not None and isinstance(value, FloatAttr):
            value = IntegerAttr(narrow_bits(value), cast(IntegerType, t), truncate_bits=True)
        elif isinstance(value, IntegerAttr):
            value = integer_attr(value.value.data, cast(IntegerType, t))
        elif not isinstance(value, FloatAttr):
            raise fail(op, f"of {value} is not a scalar constant")
        rewriter.replace(op, constant_op(value, t))


class LowerArithBinary(LoweringPattern):
    """Ops with an llvm twin: addi -> add, mulf -> fmul, shrui -> lshr, ..."""

    op_types = tuple(SAME_BINARY)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        twin = SAME_BINARY.get(type(op))
        if twin is None:
            return
        t = llvm_type(op.results[0].type)
        rewriter.replace(op, twin.create(operands=list(op.operands), result_types=[t]))


class LowerNegf(LoweringPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, llvm.FNegOp(op.operand))


class LowerIntegerDivision(LoweringPattern):
    """divsi, divui, remsi, remui, floordivsi, ceildivsi, ceildivui. A zero
    divisor gives 0 (numpy's answer) and INT_MIN / -1 wraps, instead of the
    hardware trap."""

    op_types = (
        arith.DivSIOp,
        arith.DivUIOp,
        arith.RemSIOp,
        arith.RemUIOp,
        arith.FloorDivSIOp,
        arith.CeilDivSIOp,
        arith.CeilDivUIOp,
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(
            op,
            arith.DivSIOp
            | arith.DivUIOp
            | arith.RemSIOp
            | arith.RemUIOp
            | arith.FloorDivSIOp
            | arith.CeilDivSIOp
            | arith.CeilDivUIOp,
        ):
            return
        emit = self.emitter(rewriter)
        a, b = op.operands
        t = llvm_type(op.results[0].type)
        zero = emit.int_const(0, t)
        one = emit.int_const(1, t)
        b_is_zero = emit.icmp("eq", b, zero)
        if isinstance(op, arith.DivUIOp | arith.RemUIOp | arith.CeilDivUIOp):
            divisor = emit.select(b_is_zero, one, b, t)
            quotient = emit.select(b_is_zero, zero, emit.create(llvm.UDivOp, [a, divisor], t), t)
            remainder = emit.select(b_is_zero, zero, emit.create(llvm.URemOp, [a, divisor], t), t)
            if isinstance(op, arith.DivUIOp):
                result = quotient
            elif isinstance(op, arith.RemUIOp):
                result = remainder
            else:
                inexact = emit.icmp("ne", remainder, zero)
                result = emit.create(
                    llvm.AddOp, [quotient, emit.create(llvm.ZExtOp, [inexact], t)], t
                )
            rewriter.replace(op, [], [result])
            return
        minus_one = emit.int_const(-1, t)
        b_is_minus_one = emit.icmp("eq", b, minus_one)
        trapping = emit.create(llvm.OrOp, [b_is_zero, b_is_minus_one], i1)
        divisor = emit.select(trapping, one, b, t)
        quotient = emit.create(llvm.SDivOp, [a, divisor], t)
        quotient = emit.select(b_is_minus_one, emit.create(llvm.SubOp, [zero, a], t), quotient, t)
        quotient = emit.select(b_is_zero, zero, quotient, t)
        remainder = emit.select(trapping, zero, emit.create(llvm.SRemOp, [a, divisor], t), t)
        if isinstance(op, arith.DivSIOp):
            result = quotient
        elif isinstance(op, arith.RemSIOp):
            result = remainder
        else:
            inexact = emit.icmp("ne", remainder, zero)
            signs_differ = emit.icmp("slt", emit.create(llvm.XOrOp, [remainder, b], t), zero)
            if isinstance(op, arith.FloorDivSIOp):
                adjust = emit.create(llvm.AndOp, [inexact, signs_differ], i1)
                result = emit.create(
                    llvm.SubOp, [quotient, emit.create(llvm.ZExtOp, [adjust], t)], t
                )
            else:
                same_sign = emit.create(llvm.XOrOp, [signs_differ, emit.int_const(1, i1)], i1)
                adjust = emit.create(llvm.AndOp, [inexact, same_sign], i1)
                result = emit.create(
                    llvm.AddOp, [quotient, emit.create(llvm.ZExtOp, [adjust], t)], t
                )
        rewriter.replace(op, [], [result])


_INT_MIN_MAX: dict[type[Operation], str] = {
    arith.MinSIOp: "slt",
    arith.MaxSIOp: "sgt",
    arith.MinUIOp: "ult",
    arith.MaxUIOp: "ugt",
}


class LowerIntegerMinMax(LoweringPattern):
    """minsi/maxsi/minui/maxui -> icmp + select."""

    op_types = tuple(_INT_MIN_MAX)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        predicate = _INT_MIN_MAX.get(type(op))
        if predicate is None:
            return
        emit = self.emitter(rewriter)
        a, b = op.operands
        result = emit.select(emit.icmp(predicate, a, b), a, b, op.results[0].type)
        rewriter.replace(op, [], [result])


_FLOAT_MIN_MAX: dict[type[Operation], str] = {
    arith.MaximumfOp: "maximum",
    arith.MinimumfOp: "minimum",
    arith.MaxnumfOp: "maxnum",
    arith.MinnumfOp: "minnum",
}


class LowerFloatMinMax(LoweringPattern):
    """maximumf/minimumf (NaN-propagating, as numpy) -> llvm.maximum/minimum;
    maxnumf/minnumf -> llvm.maxnum/minnum (typed: llvm.maxnum.f32); the
    op's fast-math flags go on the call (nsz: -0 and +0 unordered)."""

    op_types = tuple(_FLOAT_MIN_MAX)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kind = _FLOAT_MIN_MAX.get(type(op))
        if kind is None:
            return
        emit = self.emitter(rewriter)
        operands = list(op.operands)
        result = typed_intrinsic(emit, kind, operands, op.results[0].type, fastmath_of(op))
        rewriter.replace(op, [], [result])


class LowerExtendedArith(LoweringPattern):
    """addui_extended (sum, carry), mului_extended / mulsi_extended (low, high)."""

    op_types = (arith.AddUIExtendedOp, arith.MulUIExtendedOp, arith.MulSIExtendedOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(
            op, arith.AddUIExtendedOp | arith.MulUIExtendedOp | arith.MulSIExtendedOp
        ):
            return
        emit = self.emitter(rewriter)
        a, b = op.operands
        t = llvm_type(op.results[0].type)
        if isinstance(op, arith.AddUIExtendedOp):
            total = emit.create(llvm.AddOp, [a, b], t)
            carry = emit.icmp("ult", total, a)
            rewriter.replace(op, [], [total, carry])
            return
        width = int_width(t)
        wide = IntegerType(2 * width)
        extend = llvm.ZExtOp if isinstance(op, arith.MulUIExtendedOp) else llvm.SExtOp
        product = emit.create(
            llvm.MulOp, [emit.create(extend, [a], wide), emit.create(extend, [b], wide)], wide
        )
        low = emit.create(llvm.TruncOp, [product], t)
        shifted = emit.create(llvm.LShrOp, [product, emit.int_const(width, wide)], wide)
        high = emit.create(llvm.TruncOp, [shifted], t)
        rewriter.replace(op, [], [low, high])


class LowerCompare(LoweringPattern):
    """cmpi -> icmp, cmpf -> fcmp (same predicate numbering); cmpf false/true
    are constants."""

    op_types = (arith.CmpiOp, arith.CmpfOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, arith.CmpiOp):
            rewriter.replace(
                op, llvm.ICmpOp(op.lhs, op.rhs, IntegerAttr(op.predicate.value.data, i64))
            )
        elif isinstance(op, arith.CmpfOp):
            name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            if name in ("false", "true"):
                rewriter.replace(op, llvm.ConstantOp(IntegerAttr(int(name == "true"), i1), i1))
                return
            rewriter.replace(
                op, llvm.FCmpOp(op.lhs, op.rhs, IntegerAttr(op.predicate.value.data, i64))
            )


class LowerSelect(LoweringPattern):
    """A select of values, or of buffers (tir-partition's): of their
    pointers, the result a memref again for the ops that use it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        emit = self.emitter(rewriter)
        if not isinstance(op.result.type, MemRefType):
            rewriter.replace(op, [], [emit.select(op.cond, op.lhs, op.rhs, op.result.type)])
            return
        chosen = emit.select(op.cond, pointer_of(op.lhs, emit), pointer_of(op.rhs, emit), PTR)
        rewriter.replace(op, as_memref(chosen, op.result.type))


class LowerIntegerCast(LoweringPattern):
    """trunci, extsi, extui, index_cast (signed), bitcast."""

    op_types = (arith.TruncIOp, arith.ExtSIOp, arith.ExtUIOp, arith.IndexCastOp, arith.BitcastOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(
            op, arith.TruncIOp | arith.ExtSIOp | arith.ExtUIOp | arith.IndexCastOp | arith.BitcastOp
        ):
            return
        source = op.operands[0]
        target = llvm_type(op.results[0].type)
        if llvm_type(source.type) == target:
            rewriter.replace(op, [], [source])
            return
        emit = self.emitter(rewriter)
        match op:
            case arith.TruncIOp():
                cast_type = llvm.TruncOp
            case arith.ExtSIOp():
                cast_type = llvm.SExtOp
            case arith.ExtUIOp():
                cast_type = llvm.ZExtOp
            case arith.IndexCastOp():
                narrowing = int_width(target) < int_width(source.type)
                cast_type = llvm.TruncOp if narrowing else llvm.SExtOp
            case _:
                cast_type = llvm.BitcastOp
        rewriter.replace(op, [], [emit.create(cast_type, [source], target)])


class LowerFloatCast(LoweringPattern):
    """extf, truncf, sitofp, uitofp, fptosi, fptoui. Float to integer
    saturates (llvm.fpto[su]i.sat: NaN gives 0) rather than giving poison;
    uitofp of i64 halves the value when its top bit is set. A narrow float
    (lowering/narrow_floats.py) is decoded to f32 or encoded from it."""

    narrow_only: ClassVar[bool] = False

    op_types = (
        arith.ExtFOp,
        arith.TruncFOp,
        arith.SIToFPOp,
        arith.UIToFPOp,
        arith.FPToSIOp,
        arith.FPToUIOp,
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.op_types):
            return
        source: SSAValue = op.operands[0]
        source_type = source.type
        source_format = narrow_format(source_type)
        target_format = narrow_format(op.results[0].type)
        if self.narrow_only and source_format is None and target_format is None:
            return
        emit = self.emitter(rewriter)
        if source_format is not None:
            source, source_type = decode(emit, source, source_format), f32
        target = f32 if target_format is not None else llvm_type(op.results[0].type)
        result = _cast(emit, op, source, source_type, target)
        if target_format is not None:
            if target_format.specials is Specials.EXPONENT_ONLY:
                raise fail(op, "to f8E8M0FNU is not lowered: it needs a rounding mode")
            bits = encode(emit, result, target_format)
            # typed back as the narrow float, so that its users (lowered
            # later) still see which format the bits are in
            result = emit.op(cast_op(bits, op.results[0].type))
        rewriter.replace(op, [], [result])


class LowerNarrowFloatCast(LowerFloatCast):
    """The casts from and to narrow floats, in a walk of their own before any
    other lowering: a narrow float's bits are an integer once lowered, so its
    type is read while its producer is still at the tir level."""

    narrow_only: ClassVar[bool] = True


_NARROW_MOVES = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.ConstantOp,
    arith.SelectOp,
    arith.BitcastOp,
)
"""The arith ops that convert or move a narrow float's bits: every other
arith or math op on one computes in f32."""


class WidenNarrowFloatMath(RewritePattern):
    """Arithmetic, comparisons and math on narrow floats in f32: the operands
    extended, the result truncated back, so one rounding per op (as the
    interpreter rounds each op's result to the narrow type)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.name.startswith(("arith.", "math.")) or isinstance(op, _NARROW_MOVES):
            return
        if not any(narrow_format(v.type) for v in (*op.operands, *op.results)):
            return
        operands: list[SSAValue] = []
        for value in op.operands:
            if narrow_format(value.type) is not None:
                value = rewriter.insert(arith.ExtFOp(value, f32)).result
            operands.append(value)
        result_types = [f32 if narrow_format(r.type) else r.type for r in op.results]
        wide = type(op).create(
            operands=operands,
            result_types=result_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        rewriter.insert(wide)
        results = [
            rewriter.insert(arith.TruncFOp(w, r.type)).result if narrow_format(r.type) else w
            for w, r in zip(wide.results, op.results, strict=True)
        ]
        rewriter.replace(op, [], results)


def _cast(
    emit: Emitter, op: Operation, source: SSAValue, source_type: Attribute, target: Attribute
) -> SSAValue:
    """`op`'s conversion of `source` (of `source_type`: a narrow float has been
    decoded to f32 by then) to `target`."""
    if isinstance(op, arith.ExtFOp | arith.TruncFOp) and source_type == target:
        return source  # a narrow float decoded to f32, or f32 to encode
    match op:
        case arith.ExtFOp() | arith.TruncFOp() if float_width(target) > float_width(source_type):
            return emit.create(llvm.FPExtOp, [source], target)
        case arith.ExtFOp() | arith.TruncFOp() if isinstance(target, Float16Type) and isinstance(
            source_type, Float64Type
        ):
            return truncate_to_half(emit, source, target)
        case arith.ExtFOp() | arith.TruncFOp():
            return emit.create(llvm.FPTruncOp, [source], target)
        case arith.SIToFPOp():
            return emit.create(llvm.SIToFPOp, [source], target)
        case arith.UIToFPOp():
            return _unsigned_to_float(emit, source, target)
        case _:
            kind = "fptosi" if isinstance(op, arith.FPToSIOp) else "fptoui"
            name = f"llvm.{kind}.sat.{suffix(target)}.{suffix(source_type)}"
            return emit.value_intrinsic(name, [source], target)


def float_width(t: Attribute) -> int:
    return {"f16": 16, "f32": 32, "f64": 64}[float_suffix(t)]


def _unsigned_to_float(emit: Emitter, source: SSAValue, target: Attribute) -> SSAValue:
    width = int_width(source.type)
    if width < 64:
        return emit.create(llvm.SIToFPOp, [emit.create(llvm.ZExtOp, [source], i64)], target)
    # A value with the top bit set: halve it (keeping the low bit for
    # rounding), convert as signed, double.
    one = emit.int_const(1, i64)
    halved = emit.create(
        llvm.OrOp,
        [emit.create(llvm.LShrOp, [source, one], i64), emit.create(llvm.AndOp, [source, one], i64)],
        i64,
    )
    half_value = emit.create(llvm.SIToFPOp, [halved], target)
    doubled = emit.create(llvm.FAddOp, [half_value, half_value], target)
    direct = emit.create(llvm.SIToFPOp, [source], target)
    top_bit_clear = emit.icmp("sge", source, emit.int_const(0, i64))
    return emit.select(top_bit_clear, direct, doubled, target)


class LowerUnrealizedCast(LoweringPattern):
    """`unrealized_conversion_cast` between iN and uiN (or between memrefs
    that differ only so) is the value itself."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter) -> None:
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            return
        source, target = op.inputs[0].type, op.outputs[0].type
        if isinstance(source, MemRefType | llvm.LLVMPointerType) or isinstance(
            target, MemRefType | llvm.LLVMPointerType
        ):
            return  # bridges: folded in step 3
        if llvm_type(source) == llvm_type(target):
            rewriter.replace(op, [], [op.inputs[0]])


_MATH_LIBM: dict[type[Operation], str] = {
    math.ErfOp: "erf",
    math.CbrtOp: "cbrt",
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
}


class LowerMath(LoweringPattern):
    """Float math: an LLVM intrinsic under its typed name (exp, sqrt, tanh,
    round, ...; LLVM calls libm for those it cannot inline), or a libm call
    (erf, cbrt, log1p, ...; f16 is computed in f32). rsqrt is 1 / sqrt,
    fpowi is pow, and fma on f16 is computed in f32 and rounded back (as
    onnxruntime does; LLVM would widen it to f64 and round through a
    compiler-rt helper)."""

    op_types = (*MATH_INTRINSICS, *_MATH_LIBM, math.FmaOp, math.RsqrtOp, math.FPowIOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kind = type(op)
        emit = self.emitter(rewriter)
        if kind in MATH_INTRINSICS:
            t = op.results[0].type
            result = typed_intrinsic(emit, MATH_INTRINSICS[kind], list(op.operands), t)
        elif kind in _MATH_LIBM:
            result = _libm_call(emit, _MATH_LIBM[kind], op.operands[0])
        elif isinstance(op, math.FmaOp):
            result = fused_multiply_add(emit, list(op.operands), op.result.type)
        elif isinstance(op, math.RsqrtOp):
            one = emit.float_const(1.0, op.result.type)
            root = typed_intrinsic(emit, "sqrt", [op.operand], op.result.type)
            result = emit.create(llvm.FDivOp, [one, root], op.result.type)
        elif isinstance(op, math.FPowIOp):
            t = op.result.type
            exponent = emit.create(llvm.SIToFPOp, [op.rhs], t)
            result = typed_intrinsic(emit, "pow", [op.lhs, exponent], t)
        else:
            return
        rewriter.replace(op, [], [result])


def truncate_to_half(emit: Emitter, x: SSAValue, t: Attribute) -> SSAValue:
    """f64 -> f16 (`t`) rounded once to nearest even, through f32 rounded to
    odd (f32's 24 bits are more than twice f16's 11, so the second rounding
    is exact): LLVM's own f64 -> f16 truncation calls the compiler-rt helper
    __truncdfhf2, which a host without AVX512-FP16 lacks in process."""
    nearest = emit.create(llvm.FPTruncOp, [x], builtin.f32)
    back = emit.create(llvm.FPExtOp, [nearest], x.type)
    inexact = _fcmp(emit, "one", back, x)
    magnitude_back = typed_intrinsic(emit, "fabs", [back], x.type)
    magnitude = typed_intrinsic(emit, "fabs", [x], x.type)
    overshot = _fcmp(emit, "ogt", magnitude_back, magnitude)
    bits = emit.create(llvm.BitcastOp, [nearest], i32)
    toward_zero = emit.create(llvm.SubOp, [bits, emit.create(llvm.ZExtOp, [overshot], i32)], i32)
    odd = emit.create(llvm.OrOp, [toward_zero, emit.create(llvm.ZExtOp, [inexact], i32)], i32)
    rounded_to_odd = emit.create(llvm.BitcastOp, [odd], builtin.f32)
    return emit.create(llvm.FPTruncOp, [rounded_to_odd], t)


def _fcmp(emit: Emitter, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    index = arith.CMPF_COMPARISON_OPERATIONS.index(predicate)
    return emit.op(llvm.FCmpOp(lhs, rhs, IntegerAttr(index, i64)))


def _libm_call(emit: Emitter, base: str, x: SSAValue) -> SSAValue:
    t = x.type
    if isinstance(t, Float16Type):
        wide = emit.create(llvm.FPExtOp, [x], builtin.f32)
        return emit.create(llvm.FPTruncOp, [_libm_call(emit, base, wide)], t)
    name = base + ("f" if isinstance(t, Float32Type) else "")
    float_suffix(t)
    result = emit.call(name, [x], [t], t).returned
    assert result is not None
    return result


class LowerIntegerMath(LoweringPattern):
    """absi, ctlz, cttz, ctpop, ipowi."""

    op_types = (
        math.AbsIOp,
        math.CountLeadingZerosOp,
        math.CountTrailingZerosOp,
        math.CtPopOp,
        math.IPowIOp,
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(
            op,
            math.AbsIOp
            | math.CountLeadingZerosOp
            | math.CountTrailingZerosOp
            | math.CtPopOp
            | math.IPowIOp,
        ):
            return
        emit = self.emitter(rewriter)
        t = llvm_type(op.results[0].type)
        x = op.operands[0]
        match op:
            case math.AbsIOp():
                zero = emit.int_const(0, t)
                negated = emit.create(llvm.SubOp, [zero, x], t)
                result = emit.select(emit.icmp("slt", x, zero), negated, x, t)
            case math.CtPopOp():
                result = emit.value_intrinsic(f"llvm.ctpop.{suffix(t)}", [x], t)
            case math.CountLeadingZerosOp() | math.CountTrailingZerosOp():
                kind = "ctlz" if isinstance(op, math.CountLeadingZerosOp) else "cttz"
                defined_at_zero = emit.int_const(0, i1)
                result = emit.value_intrinsic(f"llvm.{kind}.{suffix(t)}", [x, defined_at_zero], t)
            case _:
                result = _integer_power(emit, x, op.operands[1], t)
        rewriter.replace(op, [], [result])


def _integer_power(emit: Emitter, base: SSAValue, exponent: SSAValue, t: Attribute) -> SSAValue:
    """base ** exponent by square-and-multiply over the exponent's bits,
    without branches; a negative exponent gives 0, or +-1 for base +-1."""
    width = int_width(t)
    zero, one = emit.int_const(0, t), emit.int_const(1, t)
    result, power, bits = one, base, exponent
    for step in range(width - 1):
        odd = emit.create(llvm.TruncOp, [bits], i1)
        result = emit.select(odd, emit.create(llvm.MulOp, [result, power], t), result, t)
        if step < width - 2:
            power = emit.create(llvm.MulOp, [power, power], t)
            bits = emit.create(llvm.LShrOp, [bits, one], t)
    minus_one = emit.int_const(-1, t)
    exponent_odd = emit.create(llvm.TruncOp, [exponent], i1)
    sign = emit.select(exponent_odd, minus_one, one, t)
    negative = emit.select(
        emit.icmp("eq", base, one),
        one,
        emit.select(emit.icmp("eq", base, minus_one), sign, zero, t),
        t,
    )
    return emit.select(emit.icmp("slt", exponent, zero), negative, result, t)


def _is_sub_byte(t: Attribute) -> bool:
    """An integer narrower than a byte (i2, i4): it lives in the low bits
    of a byte, the others zero (as ml_dtypes keeps int4 and uint2)."""
    return isinstance(t, IntegerType) and 1 < t.bitwidth < 8


class LowerLoad(LoweringPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        emit = self.emitter(rewriter)
        address, element, alignment = element_pointer(emit, op, op.memref, op.indices)
        if not _is_sub_byte(element):
            rewriter.replace(op, load_op(address, element, alignment))
            return
        byte = emit.op(llvm.LoadOp(address, i8, alignment=alignment))
        rewriter.replace(op, [], [emit.create(llvm.TruncOp, [byte], element)])


class LowerStore(LoweringPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        emit = self.emitter(rewriter)
        address, element, alignment = element_pointer(emit, op, op.memref, op.indices)
        value: SSAValue = op.value
        if _is_sub_byte(element):
            value = emit.create(llvm.ZExtOp, [value], i8)
        rewriter.replace(op, store_op(value, address, alignment))


class LowerAlloc(LoweringPattern):
    """memref.alloc -> aligned_alloc(64 or more, size rounded up to it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp, rewriter: PatternRewriter) -> None:
        if op.dynamic_sizes or op.symbol_operands:
            raise fail(op, "with dynamic sizes is not supported")
        emit = self.emitter(rewriter)
        alignment = max(ALLOC_ALIGNMENT, op.alignment.value.data if op.alignment else 0)
        size = max(alignment, -(-buffer_bytes(op, op.memref.type) // alignment) * alignment)
        call = emit.call(
            "aligned_alloc",
            [emit.int_const(alignment, i64), emit.int_const(size, i64)],
            [i64, i64],
            PTR,
        )
        assert call.returned is not None
        rewriter.replace(op, as_memref(call.returned, op.memref.type))


class LowerAlloca(LoweringPattern):
    """memref.alloca -> llvm.alloca in the function's entry block, so a
    reduction accumulator declared inside a loop is one stack slot that LLVM
    promotes to a register."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter) -> None:
        if op.dynamic_sizes or op.symbol_operands:
            raise fail(op, "with dynamic sizes is not supported")
        memref_type = static_memref(op, op.memref.type)
        element_type = memref_type.get_element_type()
        function = op.parent_op()
        while function is not None and not isinstance(function, llvm.FuncOp | func.FuncOp):
            function = function.parent_op()
        if function is None:
            raise fail(op, "is not inside a function")
        entry = function.regions[0].blocks.first
        assert entry is not None
        count = llvm.ConstantOp(IntegerAttr(prod(memref_type.get_shape()), i64), i64)
        alignment = op.alignment.value.data if op.alignment else element_bytes(element_type)
        slot = llvm.AllocaOp(count, llvm_type(element_type), alignment=alignment)
        rewriter.insert([count, slot], InsertPoint.at_start(entry))
        rewriter.replace(op, as_memref(slot.res, memref_type))


class LowerDealloc(LoweringPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter) -> None:
        emit = self.emitter(rewriter)
        emit.call("free", [pointer_of(op.memref, emit)], [PTR], None)
        rewriter.erase(op)


class LowerGetGlobal(LoweringPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GetGlobalOp, rewriter: PatternRewriter) -> None:
        emit = self.emitter(rewriter)
        address = emit.op(llvm.AddressOfOp(op.name_.root_reference.data, PTR))
        rewriter.replace(op, as_memref(address, op.memref.type))


class LowerView(LoweringPattern):
    """memref.view -> a GEP of i8 by the byte shift on the source's pointer
    (tir-plan-memory's buffers inside the arena)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ViewOp, rewriter: PatternRewriter) -> None:
        if op.sizes:
            raise fail(op, "with dynamic sizes is not supported")
        static_memref(op, op.result.type)
        emit = self.emitter(rewriter)
        address = emit.op(
            llvm.GEPOp(
                pointer_of(op.source, emit),
                [llvm.GEP_USE_SSA_VAL],
                i8,
                ssa_indices=[op.byte_shift],
                inbounds=True,
            )
        )
        rewriter.replace(op, as_memref(address, op.result.type))


class LowerPrefetch(LoweringPattern):
    """tir.prefetch -> `llvm.prefetch` (read, data cache) of the element at
    the offset. The address is a `getelementptr` without `inbounds`
    (wrapping arithmetic, never poison), so an offset past the buffer (a
    loop's last iterations) needs no clamp: a prefetch is a hint that never
    faults. The clamps (a compare and a select at each end) of its 2
    prefetches took 12 scalar instructions of a micro-kernel's reduction
    loop, beside its 13 FMAs (33 instructions an iteration, now 20):
    SqueezeNet's 1x1 512->1000 conv (NCHW input, 13x13, 2 threads), timed
    alone against the same conv without prefetches, went from 1.04 ms
    against 0.94 (clamped) to 0.81 ms against 0.97 (these)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.PrefetchOp, rewriter: PatternRewriter) -> None:
        emit = self.emitter(rewriter)
        memref_type = static_memref(op, op.buffer.type)
        element = llvm_type(memref_type.get_element_type())
        address = emit.op(
            llvm.GEPOp(
                pointer_of(op.buffer, emit),
                [llvm.GEP_USE_SSA_VAL],
                element,
                ssa_indices=[op.offset],
            )
        )
        read, data = emit.int_const(0, i32), emit.int_const(1, i32)
        locality = emit.int_const(op.locality.value.data, i32)
        emit.intrinsic("llvm.prefetch.p0", [address, read, locality, data], None)
        rewriter.erase(op)


class LowerAssert(LoweringPattern):
    """tir.assert -> `llvm.call @xtc_check(%ok, @before, %value, @after)`:
    the message's text before and after its `{}` as constant strings (the
    whole message and a null `after` when it has no value), the value
    sign-extended to i64 (runtime/faults.py defines @xtc_check: a branch to
    the fault report, which LLVM inlines)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.AssertOp, rewriter: PatternRewriter) -> None:
        emit = self.emitter(rewriter)
        before, after = tir.message_parts(op.message.data)
        before_text = emit.op(llvm.AddressOfOp(self.externals.text(before), PTR))
        if after is None:
            after_text = emit.op(llvm.ZeroOp.create(result_types=[PTR]))
            value = emit.int_const(0, i64)
        else:
            after_text = emit.op(llvm.AddressOfOp(self.externals.text(after), PTR))
            value = _as_i64(emit, cast(SSAValue, op.value))
        arguments = [op.condition, before_text, value, after_text]
        emit.call(FAULT_CHECK, arguments, [i1, PTR, i64, PTR], None)
        rewriter.erase(op)


class LowerCycleCounter(LoweringPattern):
    """tir.cycle_counter -> `llvm.readcyclecounter` (x86's rdtsc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.CycleCounterOp, rewriter: PatternRewriter) -> None:
        value = self.emitter(rewriter).value_intrinsic("llvm.readcyclecounter", [], i64)
        rewriter.replace(op, [], [value])


def _as_i64(emit: Emitter, value: SSAValue) -> SSAValue:
    """An integer or index value as a signed i64."""
    width = int_width(value.type)
    if width < 64:
        return emit.create(llvm.SExtOp, [value], i64)
    if width > 64:
        return emit.create(llvm.TruncOp, [value], i64)
    return value


class LowerCopy(LoweringPattern):
    """memref.copy of contiguous buffers -> llvm.memcpy."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter) -> None:
        for value in (op.source, op.destination):
            memref_type = static_memref(op, value.type)
            if memref_type.get_offset() != 0 or list(memref_type.get_strides() or []) != list(
                memref_type.strides_for_shape(memref_type.get_shape())
            ):
                raise fail(op, f"of the non-contiguous {memref_type} is not supported")
        emit = self.emitter(rewriter)
        size = emit.int_const(buffer_bytes(op, op.source.type), i64)
        not_volatile = emit.int_const(0, i1)
        emit.intrinsic(
            "llvm.memcpy.p0.p0.i64",
            [pointer_of(op.destination, emit), pointer_of(op.source, emit), size, not_volatile],
            None,
        )
        rewriter.erase(op)


class LowerCall(LoweringPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        if len(op.results) > 1:
            raise fail(op, f"of @{op.callee.string_value()} returns several values")
        emit = self.emitter(rewriter)
        args = [pointer_of(a, emit) if isinstance(a.type, MemRefType) else a for a in op.arguments]
        result = llvm_type(op.results[0].type) if op.results else None
        rewriter.replace(op, llvm.CallOp(op.callee, *args, return_type=result))


class LowerReturn(LoweringPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, llvm.ReturnOp.build(operands=[list(op.arguments)]))


class LowerBranch(LoweringPattern):
    op_types = (cf.BranchOp, cf.ConditionalBranchOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        # the ops llvm.BrOp(...) and llvm.CondBrOp(...) build, without IRDL's
        # argument checks (a unit has thousands of branches)
        if isinstance(op, cf.BranchOp):
            branch = llvm.BrOp.create(operands=list(op.arguments), successors=[op.successor])
            rewriter.replace(op, branch)
        elif isinstance(op, cf.ConditionalBranchOp):
            then_arguments, else_arguments = list(op.then_arguments), list(op.else_arguments)
            segments = i32_array((1, len(then_arguments), len(else_arguments)))
            branch = llvm.CondBrOp.create(
                operands=[op.cond, *then_arguments, *else_arguments],
                properties={AttrSizedOperandSegments.attribute_name: segments},
                successors=[op.then_block, op.else_block],
            )
            rewriter.replace(op, branch)


# ------------------------------------------------------ step 3: clean-up


class FoldBridge(RewritePattern):
    """A cast whose source and target have the same llvm type is its source;
    a cast nobody uses goes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter) -> None:
        if all(not result.uses for result in op.results):
            rewriter.erase(op)
            return
        if len(op.inputs) == 1 and llvm_type(op.inputs[0].type) == llvm_type(op.outputs[0].type):
            rewriter.replace(op, [], [op.inputs[0]])


def _erase_dead_ops(module: ModuleOp) -> None:
    """Erases the ops whose results nobody uses and that have no effect,
    users before producers (so a dead chain goes at once)."""
    for op in ops_within_reversed(module):
        if op.results and is_trivially_dead(op):
            Rewriter.erase_op(op)


def _fold_bridges(module: ModuleOp) -> None:
    """FoldBridge on every cast, users before producers: a cast folded or
    erased leaves the casts it used foldable when they are reached (a
    PatternRewriteWalker would visit every op of the module twice)."""
    fold = FoldBridge()
    casts = [op for op in ops_within(module) if isinstance(op, UnrealizedConversionCastOp)]
    for bridge in reversed(casts):
        fold.match_and_rewrite(bridge, PatternRewriter(bridge))


def _has_narrow_floats(module: ModuleOp) -> bool:
    """Whether a value of `module` (a result or a block argument: every
    operand is one) is a narrow float (bf16, the float8 types, f4E2M1FN)."""
    for op in ops_within(module):
        for result in op.results:
            if narrow_format(result.type) is not None:
                return True
        for region in op.regions:
            for block in region.blocks:
                if any(narrow_format(arg.type) is not None for arg in block.args):
                    return True
    return False


def _check_lowered(module: ModuleOp) -> None:
    """A lowering error for an op left unlowered, or a value (a result or a
    block argument: every operand is one of those) of a tir-level type."""
    for op in ops_within(module):
        if op is module:
            continue
        if not op.name.startswith(LOWERED_PREFIXES):
            raise fail(op, "has no lowering to the llvm dialect")
        for value in op.results:
            if not is_lowered_type(value.type):
                raise fail(op, f"still has a value of type {value.type} after lowering")
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if not is_lowered_type(arg.type):
                        raise fail(op, f"still has an argument of type {arg.type} after lowering")


def _operation_patterns(externals: Externals) -> list[RewritePattern]:
    pattern_types: list[type[LoweringPattern]] = [
        LowerArithConstant,
        LowerArithBinary,
        LowerNegf,
        LowerIntegerDivision,
        LowerIntegerMinMax,
        LowerFloatMinMax,
        LowerExtendedArith,
        LowerCompare,
        LowerSelect,
        LowerIntegerCast,
        LowerFloatCast,
        LowerUnrealizedCast,
        LowerMath,
        LowerIntegerMath,
        LowerLoad,
        LowerStore,
        LowerAlloc,
        LowerAlloca,
        LowerDealloc,
        LowerGetGlobal,
        LowerView,
        LowerCopy,
        LowerPrefetch,
        LowerAssert,
        LowerCycleCounter,
        LowerCall,
        LowerReturn,
        LowerBranch,
    ]
    return [pattern_type(externals) for pattern_type in pattern_types]


@dataclass(frozen=True)
class ConvertToLLVM(ModulePass):
    """Lowers what is left of the tir level to xDSL's `llvm` dialect (the last
    stage of convert-tir-to-llvm).

    Expects: functions over static memrefs (`func.func`, `func.call`,
    `func.return`) whose control flow is blocks and branches (`cf`: run
    convert-tir-to-cf first), scalar `arith` and
    `math` ops (index is i64; unsigned integers reach arith through
    `unrealized_conversion_cast`), `memref.load/store/alloc/alloca/dealloc/
    copy/view/global/get_global`, `tir.prefetch`, `tir.assert` and `tir.cycle_counter`; llvm ops
    (vector code, parallel launches) may already be there.

    Produces: `llvm` ops only (and the vector ops of `llvm_ext`). Every
    function is an `llvm.func` whose memref arguments are `!llvm.ptr` (C ABI:
    `void main(float* in0, ..., float* out0)`); private functions get internal
    linkage. A load or store is a GEP with the static strides folded; alloc
    is `aligned_alloc` (64 bytes) and dealloc `free`; alloca is an
    `llvm.alloca` hoisted to the entry block; a view is a GEP of i8 by its
    byte shift on its source's pointer; memref.copy is `llvm.memcpy`; globals
    are `llvm.mlir.global`s holding their dense or dense_resource data. Math
    goes to LLVM intrinsics or libm calls. bf16, the float8 types and
    f4E2M1FN are their bits (i16 or i8), converted through f32 with integer
    arithmetic (lowering/narrow_floats.py); i2 and i4 are loaded and stored
    as a byte. Integer division by zero gives 0
    instead of trapping. A `tir.assert` is a call of `@xtc_check` with its
    message as constant strings `@xtc_text_<n>` (runtime/faults.py defines
    the check, and the fault record it writes). `tir.cycle_counter` is
    `llvm.readcyclecounter`.
    """

    name = "convert-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        externals = Externals()
        if _has_narrow_floats(op):
            PatternRewriteWalker(
                GreedyRewritePatternApplier(
                    [WidenNarrowFloatMath(), LowerNarrowFloatCast(externals)]
                )
            ).rewrite_module(op)
        symbols = TypedPatternApplier([LowerFunc(), LowerGlobal()])
        for symbol in list(op.ops):  # functions and globals are the module's own ops
            symbols.match_and_rewrite(symbol, PatternRewriter(symbol))
        # One walk lowers every op (each pattern lowers its op at once); the
        # ops it leaves dead (an index constant folded into an address) go in
        # one sweep, cheaper than the walker's second walk of every op.
        PatternRewriteWalker(
            TypedPatternApplier(_operation_patterns(externals)), apply_recursively=False
        ).rewrite_module(op)
        _erase_dead_ops(op)
        _fold_bridges(op)
        externals.declare_in(op)
        _check_lowered(op)
