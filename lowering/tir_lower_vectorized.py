"""tir-lower-vectorized: vectorized `tir.for` loops as vector code, a stage
of convert-tir-to-llvm that runs after tir-lower-unrolled, while loops are
still `tir.for`s with their body one block and the rest is still tir-level
ops. The vector code is emitted as llvm ops at once; the scalar ops it keeps
or copies per lane are lowered by convert-to-llvm like any other.

A `vectorized` loop of N iterations (1 < N <= 64) becomes
straight-line code over N-lane vectors (`vector<N x T>`, T the llvm type;
LLVM splits widths wider than a register). Every value of the body is
*uniform*, the same in every iteration (it stays scalar and is computed
once), or *varying*; an integer value also carries its *stride*, the
difference between neighbouring lanes, when it is affine in the induction
variable (`iv * c + uniform`). Then:

- a varying arith / math op becomes the llvm vector op or intrinsic
  (`fmul <16 x float>`, `llvm.fma.v16f32`, `llvm.smax.v8i32`, ...); one with
  no vector form (integer division, libm's erf, ...) runs once per lane on
  scalars (the scalar lowering then applies) and the lanes are put back into
  a vector; a uniform operand of a vector op is splatted; `a * b + c`, the
  product used only there, is `llvm.fmuladd` (one FMA where the CPU has it,
  as C compilers contract such an expression); a float-to-integer cast of
  f32 or f64 lanes, which saturates, is NaN lanes zeroed, a clamp and a plain
  `fptosi` / `fptoui` (x86 does the `.sat` intrinsic one lane at a time);
- a load whose indices are uniform is one scalar load; one whose address has
  stride 1 is one vector load; one whose stride is a constant s from 2 to 4
  (a stride-2 convolution along its output row), of a float or a
  whole-byte integer, is one masked load of the elements from lane 0's
  through the last lane's, `llvm.masked.load` of a `<N*s x T>` vector with
  its first (N-1)*s+1 lanes enabled (nothing past the last lane's element is
  read, so a buffer may end there), then a `shufflevector` of lanes 0, s,
  2s, ... (AVX-512: masked `vmovups`, then `vpermps` / `vpermt2ps`); any other (a
  negative, wider or unknown stride, i1 elements) is a gather (a scalar load
  per lane into `insertelement`s);
- a store whose address has stride 1 is one vector store; any other stride
  stores each lane on its own;
- a run-time check (`tir.assert`) that is uniform runs once (it is the
  same check in every iteration); a varying one is one check of all the
  lanes: the vector of conditions as an N-bit mask, all ones when every
  lane passes, and the value of the first lane that fails (`cttz` of the
  failing lanes' mask, then an `extractelement`), so that the fault is the
  one the serial loop reports, for one branch per vector.

A loop this cannot express keeps its iterations, as a serial loop: correct,
only slower (and LLVM's own loop vectorizer may still take it), and a
`vectorize-missed` remark names the loop and the reason (xtc/remarks.py;
`xtc-opt --remarks`). That is the
case for a body with a region (a nested loop, `scf.if`), a call or any op
with effects other than loads and stores, a loop-carried dependence through
memory (a buffer that is written and also read or written at other indices,
or written at one element by every iteration, as a reduction into a scalar),
a store to elements that may coincide across lanes (a non-affine index), and
an extent above 64. Accesses are compared per buffer value: two different
memref values are taken not to overlap (as TVM takes distinct buffers).

xDSL's llvm dialect has no vector `fcmp`, no `select` on a vector of
conditions and no `extractelement`; those are the ops of `llvm_ext`
(dialects/llvm_ext.py), which runtime/llvm_ir.py translates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, llvm, math, memref
from xdsl.dialects.builtin import (
    AnyFloat,
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
    StringAttr,
    UnrealizedConversionCastOp,
    VectorType,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from xtc import remarks
from xtc.analysis.host_cpu import has_features
from xtc.analysis.loops import constant_int, linear_index
from xtc.analysis.vectorizable import loop_kept_serial
from xtc.dialects import tir
from xtc.dialects.graph.constant import numpy_dtype
from xtc.dialects.llvm_ext import (
    ExtractElementOp,
    VectorFCmpOp,
    VectorFPToSIOp,
    VectorFPToUIOp,
    VectorSelectOp,
)
from xtc.lowering.llvm_emit import (
    MATH_INTRINSICS,
    SAME_BINARY,
    Emitter,
    Externals,
    SharedValues,
    cast_op,
    constant_op,
    element_bytes,
    element_pointer,
    fastmath_of,
    fused_multiply_add,
    gep,
    insert_element_op,
    integer_constant,
    llvm_type,
    load_op,
    shuffle_vector_op,
    store_op,
    vector_of,
)
from xtc.lowering.tir_lower_unrolled import loops_inner_first_in_order, unroll_loop

MAX_WIDE_LOAD_STRIDE = 4
"""The widest address stride loaded as one masked wide load and a shuffle:
the wide load reads stride times the lanes, so wider strides would read
mostly elements no lane uses (a gather then costs less)."""

PASS = "tir-lower-vectorized"


@dataclass(frozen=True)
class TirLowerVectorized(ModulePass):
    """Turns every `vectorized` loop into straight-line vector code, innermost
    first, or into a `serial` loop where it cannot (with a
    `vectorize-missed` remark naming the loop and why); see the module
    docstring for what is vectorized and how.

    Expects: tir-level functions whose unrolled loops are gone
    (tir-lower-unrolled); a vectorized loop's body is one block.

    Produces: no `vectorized` loop. Its code is llvm vector ops (and the
    `llvm_ext` ones: vector fcmp, select, extractelement) over values that
    keep their tir-level scalar ops per lane where they have no vector form;
    convert-to-llvm lowers those with the rest.
    """

    name = "tir-lower-vectorized"

    vnni: str = "host"
    """8-bit dot products as VNNI `vpdpbusd`: "host" where this CPU has it
    (and XTC_VNNI is not 0), "on" always (code for a CPU with VNNI),
    "off" never."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.vnni not in ("host", "on", "off"):
            raise DiagnosticException(
                f'{self.name}: vnni is "{self.vnni}", expected "host", "on" or "off"'
            )
        scalars, shared = LLVMScalars(), SharedValues()
        for loop in loops_inner_first_in_order(op, "vectorized"):
            vectorize_loop(loop, scalars, self.vnni, shared)


# --------------------------------------------------------------- analysis


def _is_scalar(t: Attribute) -> bool:
    return isinstance(t, IndexType | IntegerType | Float16Type | Float32Type | Float64Type)


def _is_integer(t: Attribute) -> bool:
    return isinstance(t, IndexType | IntegerType)


@dataclass
class LoopAnalysis:
    """Which values of a loop body vary across iterations, with the stride of
    those that are affine in the induction variable (None: not affine)."""

    loop: tir.ForOp
    strides: dict[SSAValue, int | None] = field(default_factory=dict[SSAValue, int | None])

    def varies(self, value: SSAValue) -> bool:
        return value in self.strides

    def stride(self, value: SSAValue) -> int | None:
        """0 for a uniform value."""
        return self.strides.get(value, 0)

    def op_varies(self, op: Operation) -> bool:
        return any(self.varies(operand) for operand in op.operands)

    def address_stride(self, memref_value: SSAValue, indices: Sequence[SSAValue]) -> int | None:
        """The distance in elements between neighbouring lanes' addresses of
        memref[indices], or None when it is not constant."""
        memref_type = memref_value.type
        if not isinstance(memref_type, MemRefType):
            return None
        layout_strides = cast(MemRefType[Attribute], memref_type).get_strides()
        if layout_strides is None:
            return None
        total = 0
        for index, layout_stride in zip(indices, layout_strides, strict=True):
            stride = self.stride(index)
            if stride == 0:
                continue
            if stride is None or layout_stride is None:
                return None
            total += stride * layout_stride
        return total


def _affine_stride(op: Operation, analysis: LoopAnalysis) -> int | None:
    """The stride of an integer op's result from its operands' strides."""
    strides = [analysis.stride(operand) for operand in op.operands]
    match op:
        case arith.AddiOp() | arith.SubiOp():
            if None in strides:
                return None
            lhs, rhs = cast(list[int], strides)
            return lhs + rhs if isinstance(op, arith.AddiOp) else lhs - rhs
        case arith.MuliOp():
            for position in (0, 1):
                factor = constant_int(op.operands[1 - position])
                stride = strides[position]
                if factor is not None and stride is not None:
                    return stride * factor
            return None
        case arith.IndexCastOp() | arith.ExtSIOp():
            return strides[0]
        case _:
            return None


def analyze_loop(loop: tir.ForOp) -> LoopAnalysis | str:
    """The uniform / varying values of a vectorized loop's body, or the
    reason it cannot be vectorized."""
    reason = loop_kept_serial(loop)
    if reason is not None:
        return reason
    analysis = LoopAnalysis(loop)
    analysis.strides[loop.induction_variable] = loop.step.value.data
    accesses: dict[SSAValue, list[memref.LoadOp | memref.StoreOp]] = {}
    for op in loop.body.block.ops:
        reason = _unsupported(op, analysis)
        if reason is not None:
            return reason
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            accesses.setdefault(op.memref, []).append(op)
        if analysis.op_varies(op):
            stride = _affine_stride(op, analysis)
            for result in op.results:
                analysis.strides[result] = stride
    for memref_value, ops in accesses.items():
        reason = _memory_dependence(memref_value, ops, analysis)
        if reason is not None:
            return reason
    return analysis


def _unsupported(op: Operation, analysis: LoopAnalysis) -> str | None:
    """Why `op` keeps its loop serial, given which values vary (what keeps
    it serial whatever varies was checked first: loop_kept_serial), or None."""
    if isinstance(op, tir.AssertOp):
        return None  # its effect is the fault it records: a copy per lane keeps it
    if isinstance(op, memref.LoadOp | memref.StoreOp):
        if analysis.varies(op.memref):
            return f"'{op.name}' of a buffer that varies"
        return None
    if not analysis.op_varies(op):
        return None
    if not op.name.startswith(("arith.", "math.")) and not _is_scalar_alias(op):
        return f"'{op.name}' has no vector form"
    if not all(_is_scalar(value.type) for value in (*op.operands, *op.results)):
        return f"'{op.name}' is not on scalars"
    return None


def _is_scalar_alias(op: Operation) -> bool:
    """An unrealized cast between types with the same llvm type (ui8 / i8)."""
    return (
        isinstance(op, UnrealizedConversionCastOp)
        and len(op.inputs) == 1
        and len(op.outputs) == 1
        and _is_scalar(op.inputs[0].type)
        and llvm_type(op.inputs[0].type) == llvm_type(op.outputs[0].type)
    )


def _index_key(indices: Sequence[SSAValue]) -> tuple[object, ...]:
    """Indices compared as SSA values, constants by value."""
    return tuple(
        ("constant", constant) if (constant := constant_int(index)) is not None else index
        for index in indices
    )


def _memory_dependence(
    memref_value: SSAValue,
    ops: Sequence[memref.LoadOp | memref.StoreOp],
    analysis: LoopAnalysis,
) -> str | None:
    """Why the accesses to one buffer tie iterations together, or None. A
    buffer only read is free; one written must be accessed at the same
    indices everywhere in the body, with a non-zero stride, so that each
    lane touches its own elements."""
    stores = [op for op in ops if isinstance(op, memref.StoreOp)]
    if not stores:
        return None
    name = memref_value.name_hint or "a buffer"
    if len({_index_key(op.indices) for op in ops}) > 1:
        return f"%{name} is written and accessed at other indices in the same body"
    stride = analysis.address_stride(memref_value, stores[0].indices)
    if stride is None or stride == 0:
        return f"the lanes' stores to %{name} may hit the same element"
    return None


# -------------------------------------------------------------- emitting


@dataclass
class LLVMScalars:
    """Scalars with their llvm type (index as i64), for the llvm ops of the
    vector code: one cast per value in the whole pass (a constant for an
    integer constant), placed right after the value's definition so that it
    dominates every use; convert-to-llvm folds the casts away."""

    lowered: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    def of(self, value: SSAValue) -> SSAValue:
        t = llvm_type(value.type)
        if t == value.type:
            return value
        if value not in self.lowered:
            owner = value.owner
            if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
                data = IntegerAttr(owner.value.value.data, cast(IntegerType, t), truncate_bits=True)
                lowered: Operation = constant_op(data, t)
            else:
                lowered = cast_op(value, t)
            where = (
                InsertPoint.after(owner)
                if isinstance(owner, Operation)
                else InsertPoint.at_start(owner)
            )
            Rewriter.insert_op(lowered, where)
            self.lowered[value] = lowered.results[0]
        return self.lowered[value]


def vectorize_loop(
    loop: tir.ForOp,
    scalars: LLVMScalars | None = None,
    vnni: str = "host",
    shared: SharedValues | None = None,
) -> None:
    """Replaces a vectorized loop by vector code, or makes it serial (see
    the module docstring). An extent of 0 or 1 is unrolled. `scalars` and
    `shared` are kept by the loops of one pass (`shared` only where the
    loops come in the order of loops_inner_first_in_order)."""
    if loop.extent <= 1:
        unroll_loop(loop)
        return
    analysis = analyze_loop(loop)
    if isinstance(analysis, str):
        _report_scalar_fallback(loop, analysis)
        loop.kind = StringAttr("serial")
        return
    code = _VectorCode(analysis, scalars or LLVMScalars(), shared)
    code.vnni = vnni == "on" or (vnni == "host" and vnni_lanes_available(loop.extent))
    code.emit_loop()


def _loop_place(loop: tir.ForOp) -> tuple[str, str]:
    """(the name of the function holding `loop`, the loop's name)."""
    function = loop.parent_op()
    while function is not None and not isinstance(function, FuncOp):
        function = function.parent_op()
    return (function.sym_name.data if function is not None else "?"), loop.loop_name.data


def _report_scalar_fallback(loop: tir.ForOp, reason: str) -> None:
    function_name, name = _loop_place(loop)
    remarks.report(
        remarks.Remark(
            "missed",
            remarks.VECTORIZE_MISSED,
            PASS,
            f"loop '{name}' in @{function_name} not vectorized: {reason}",
            function_name,
            name,
            loop,
        )
    )


def _masks_whole_loads(op: memref.LoadOp) -> bool:
    """Whether a contiguous load of a lane count that is not a power of two
    is a masked load of the next power of two: of a float or whole-byte
    integer, not from a stack buffer (LLVM keeps an `alloca` accumulator in
    registers only while it is read by plain loads)."""
    return _loads_exactly(op.res.type) and not isinstance(op.memref.owner, memref.AllocaOp)


def _loads_exactly(t: Attribute) -> bool:
    """Whether a vector of `t` lies in memory as its elements do in a buffer:
    floats and whole-byte integers (not i1, a byte per element in a buffer)."""
    element = llvm_type(t)
    if isinstance(element, IntegerType):
        return element.bitwidth in (8, 16, 32, 64)
    return isinstance(element, Float16Type | Float32Type | Float64Type)


def _vector_suffix(t: VectorType[Attribute]) -> str:
    """The type part of an overloaded intrinsic's name: v16f32, v8i1."""
    element = t.get_element_type()
    match element:
        case IntegerType():
            name = f"i{element.width.data}"
        case Float16Type():
            name = "f16"
        case Float32Type():
            name = "f32"
        case _:
            name = "f64"
    return f"v{t.get_shape()[0]}{name}"


# ops that are one overloaded LLVM intrinsic over all their operands
_INTRINSICS: dict[type[Operation], str] = {
    **MATH_INTRINSICS,
    math.CtPopOp: "ctpop",
    arith.MaxnumfOp: "maxnum",
    arith.MinnumfOp: "minnum",
    arith.MaximumfOp: "maximum",
    arith.MinimumfOp: "minimum",
    arith.MaxSIOp: "smax",
    arith.MinSIOp: "smin",
    arith.MaxUIOp: "umax",
    arith.MinUIOp: "umin",
}

# integer intrinsics that take a trailing `i1 false` (not poison at 0 / INT_MIN)
_INTEGER_INTRINSICS_WITH_FLAG: dict[type[Operation], str] = {
    math.AbsIOp: "abs",
    math.CountLeadingZerosOp: "ctlz",
    math.CountTrailingZerosOp: "cttz",
}

_CASTS: dict[type[Operation], type[IRDLOperation]] = {
    arith.TruncIOp: llvm.TruncOp,
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.BitcastOp: llvm.BitcastOp,
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.SIToFPOp: llvm.SIToFPOp,
}


class _NotWidenedYet(Exception):
    """A varying value whose vector is asked for before it exists (see
    _VectorCode.widen_with_operands)."""

    def __init__(self, value: SSAValue) -> None:
        super().__init__()
        self.value = value


class _VectorCode:
    """Emits the vector code of one analysed loop before it, then erases it.
    Ops are visited in body order: uniform ones move out of the loop, loads
    and stores are emitted where they stand (keeping the order of memory
    accesses), other varying ops are widened when something uses them."""

    def __init__(
        self, analysis: LoopAnalysis, scalars: LLVMScalars, shared: SharedValues | None
    ) -> None:
        self.analysis = analysis
        self.loop = analysis.loop
        self.lanes = self.loop.extent
        self.rewriter = PatternRewriter(self.loop)
        self.emit = Emitter(self.rewriter, Externals(), shared)
        self.vectors: dict[SSAValue, SSAValue] = {}
        self.lane_values: dict[tuple[SSAValue, int], SSAValue] = {}
        self.lane_indices: dict[int, SSAValue] = {}
        self.scalars = scalars
        self.first_iteration: SSAValue | None = None
        self.widening = False
        self.reported_widening = False
        self.vnni = False

    def emit_loop(self) -> None:
        """Replaces the loop by its vector code."""
        for op in list(self.loop.body.block.ops):
            if isinstance(op, memref.StoreOp):
                self.store(op)
            elif not self.analysis.op_varies(op):
                op.detach()
                self.rewriter.insert(op)
            elif isinstance(op, memref.LoadOp):
                self.load(op)
            elif isinstance(op, tir.AssertOp):
                self.check(op)
        self.rewriter.erase(self.loop)

    def check(self, op: tir.AssertOp) -> None:
        """A varying run-time check as one check of all the lanes (see the
        module docstring)."""
        mask_type = IntegerType(self.lanes)
        passing = self.emit.create(llvm.BitcastOp, [self.vector(op.condition)], mask_type)
        every_lane = self.emit.int_const(-1, mask_type)
        all_pass = self.emit.icmp("eq", passing, every_lane)
        if op.value is None:
            self.rewriter.insert(tir.AssertOp(all_pass, op.message.data))
            return
        failing = self.emit.create(llvm.XOrOp, [passing, every_lane], mask_type)
        defined_at_zero = self.emit.int_const(0, i1)
        first = self.emit.value_intrinsic(
            f"llvm.cttz.i{self.lanes}", [failing, defined_at_zero], mask_type
        )
        if self.lanes < 32:
            first = self.emit.create(llvm.ZExtOp, [first], i32)
        elif self.lanes > 32:
            first = self.emit.create(llvm.TruncOp, [first], i32)
        # No lane fails: cttz gives the lane count, out of the vector; lane 0 then.
        lane = self.emit.select(all_pass, self.lane_index(0), first, i32)
        value = self.emit.op(ExtractElementOp(self.vector(op.value), lane))
        self.rewriter.insert(tir.AssertOp(all_pass, op.message.data, value))

    # ------------------------------------------------------------ values

    def vector_type(self, t: Attribute) -> VectorType[Attribute]:
        """One lane per iteration of the llvm type of `t`."""
        return vector_of(llvm_type(t), self.lanes)

    def vector(self, value: SSAValue) -> SSAValue:
        """`value` in every lane, as one vector."""
        if value not in self.vectors:
            if value is self.loop.induction_variable:
                lower, step = self.loop.lower.value.data, self.loop.step.value.data
                lanes = [lower + lane * step for lane in range(self.lanes)]
                self.vectors[value] = self.constant_vector(lanes, value.type)
            elif not self.analysis.varies(value):
                self.vectors[value] = self.splat(value)
            elif self.widening:
                raise _NotWidenedYet(value)
            else:
                self.widen_with_operands(value)
        return self.vectors[value]

    def widen_with_operands(self, value: SSAValue) -> None:
        """Widens the op of `value` and, first, the varying ops it needs, with
        a stack instead of recursion (a chain of 5000 elementwise ops is 5000
        deep): an op that asks for an operand not widened yet is retried once
        that operand is (what it emitted before asking is cached, so a retry
        emits nothing twice)."""
        pending = [value]
        self.widening = True
        try:
            while pending:
                wanted = pending[-1]
                if wanted in self.vectors:
                    pending.pop()
                    continue
                try:
                    self.widen(cast(Operation, wanted.owner))
                except _NotWidenedYet as missing:
                    pending.append(missing.value)
        finally:
            self.widening = False

    def lane(self, value: SSAValue, lane: int) -> SSAValue:
        """`value` in one lane, as a scalar of its own type. Integer values
        of integers (index arithmetic) are recomputed on scalars; others are
        extracted from their vector (a float converted to an index, as
        Resize's source columns, is one vector conversion, not a saturating
        one per lane, which x86 does with compares and branches)."""
        if not self.analysis.varies(value):
            return value
        key = (value, lane)
        if key not in self.lane_values:
            owner = value.owner
            if value is self.loop.induction_variable:
                lower, step = self.loop.lower.value.data, self.loop.step.value.data
                index = self.rewriter.insert(
                    arith.ConstantOp(IntegerAttr(lower + lane * step, IndexType()))
                )
                self.lane_values[key] = index.result
            elif (
                isinstance(owner, Operation)
                and owner.name.startswith("arith.")
                and all(_is_integer(result.type) for result in owner.results)
                and all(_is_integer(operand.type) for operand in owner.operands)
            ):
                self.scalar_copy(owner, lane)
            else:
                element = self.extract(self.vector(value), lane)
                self.lane_values[key] = self.from_llvm_scalar(element, value.type)
        return self.lane_values[key]

    def scalar_copy(self, op: Operation, lane: int) -> Sequence[SSAValue]:
        """`op` on one lane's operands (lowered later as any scalar op)."""
        mapping = {operand: self.lane(operand, lane) for operand in op.operands}
        copy = self.rewriter.insert(op.clone(value_mapper=mapping))
        for result, lane_result in zip(op.results, copy.results, strict=True):
            self.lane_values[(result, lane)] = lane_result
        return copy.results

    def llvm_lane_zero(self, index: SSAValue) -> SSAValue:
        """An index in lane 0 as an i64, for the llvm ops of an address (the
        induction variable's first value as an i64 constant at once)."""
        if index is not self.loop.induction_variable:
            return self.to_llvm_scalar(self.lane(index, 0))
        if self.first_iteration is None:
            self.first_iteration = self.emit.int_const(self.loop.lower.value.data, i64)
        return self.first_iteration

    def lane_index(self, lane: int) -> SSAValue:
        """The i32 constant `lane` (for insertelement / extractelement)."""
        if lane not in self.lane_indices:
            self.lane_indices[lane] = self.emit.int_const(lane, i32)
        return self.lane_indices[lane]

    def to_llvm_scalar(self, value: SSAValue) -> SSAValue:
        """`value` with its llvm type (index as i64): see LLVMScalars."""
        return self.scalars.of(value)

    def from_llvm_scalar(self, value: SSAValue, t: Attribute) -> SSAValue:
        """An llvm-typed scalar seen as type `t` (i64 as index)."""
        if value.type == t:
            return value
        return self.emit.op(cast_op(value, t))

    def constant_vector(self, values: Sequence[int] | Sequence[float], t: Attribute) -> SSAValue:
        """A constant vector of elements of type `t`."""
        element = llvm_type(t)
        if isinstance(element, IntegerType):
            vector_type = vector_of(IntegerType(element.bitwidth), self.lanes)
            if isinstance(t, AnyFloat):  # a narrow float (bf16, float8): its bits
                bits = np.array(values, numpy_dtype(t)).view(f"u{element.bitwidth // 8}")
                values = [int(b) for b in bits]
            data = DenseIntOrFPElementsAttr.from_list(vector_type, [int(v) for v in values])
        else:
            vector_type = vector_of(element, self.lanes)
            data = DenseIntOrFPElementsAttr.from_list(vector_type, [float(v) for v in values])
        return self.emit.op(constant_op(data, vector_type))

    def splat(self, value: SSAValue) -> SSAValue:
        """A vector of a uniform value in every lane (a constant when it is one)."""
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr | FloatAttr):
            constant = owner.value.value.data
            return self.constant_vector([constant] * self.lanes, value.type)
        vector_type = self.vector_type(value.type)
        undefined = self.emit.undef(vector_type)
        first = self.emit.op(
            insert_element_op(undefined, self.to_llvm_scalar(value), self.lane_index(0))
        )
        mask = (0,) * self.lanes
        return self.emit.op(shuffle_vector_op(first, undefined, mask, vector_type))

    def build_vector(self, scalars: Sequence[SSAValue], t: Attribute) -> SSAValue:
        """A vector of one scalar per lane."""
        vector = self.emit.undef(self.vector_type(t))
        for lane, scalar in enumerate(scalars):
            vector = self.emit.op(
                insert_element_op(vector, self.to_llvm_scalar(scalar), self.lane_index(lane))
            )
        return vector

    def extract(self, vector: SSAValue, lane: int) -> SSAValue:
        """One lane of a vector."""
        return self.emit.op(ExtractElementOp(vector, self.lane_index(lane)))

    # ------------------------------------------------------------ memory

    def load(self, op: memref.LoadOp) -> None:
        """A varying load: one vector load at stride 1, a masked wide load and
        a shuffle at a small constant stride, else a gather."""
        stride = self.analysis.address_stride(op.memref, op.indices)
        if stride == 1 and self.lanes & (self.lanes - 1) and _masks_whole_loads(op):
            self.record(op.res, self.masked_load(op, 1, 1 << self.lanes.bit_length()))
        elif stride == 1:
            self.record(op.res, self.contiguous_load(op))
        elif (
            stride is not None
            and 2 <= stride <= MAX_WIDE_LOAD_STRIDE
            and _loads_exactly(op.res.type)
        ):
            self.record(op.res, self.strided_load(op, stride))
        else:
            self.record(op.res, self.gather(op))

    def contiguous_load(self, op: memref.LoadOp) -> SSAValue:
        """The lanes of a load of neighbouring elements: one vector load."""
        vector_type = self.vector_type(op.res.type)
        in_memory = self.memory_type(vector_type)
        address = self.vector_address(op, in_memory)
        alignment = element_bytes(op.res.type)
        loaded = self.emit.op(load_op(address, in_memory, alignment))
        if in_memory != vector_type:
            loaded = self.emit.create(llvm.TruncOp, [loaded], vector_type)
        return loaded

    def gather(self, op: memref.LoadOp) -> SSAValue:
        """The lanes of any load: a scalar load per lane into a vector."""
        gathered: list[SSAValue] = []
        for lane in range(self.lanes):
            indices = [self.lane(index, lane) for index in op.indices]
            scalar = self.rewriter.insert(memref.LoadOp.get(op.memref, indices)).res
            self.lane_values[(op.res, lane)] = scalar
            gathered.append(scalar)
        return self.build_vector(gathered, op.res.type)

    def strided_load(self, op: memref.LoadOp, stride: int) -> SSAValue:
        """The lanes of a load `stride` elements apart: the elements from lane
        0's to the last lane's as one masked load of a `<lanes * stride x T>`
        vector (the lanes past the last one's element disabled, so none is
        read), then a shuffle of every `stride`-th."""
        return self.masked_load(op, stride, self.lanes * stride)

    def masked_load(self, op: memref.LoadOp, stride: int, width: int) -> SSAValue:
        """The lanes of a load `stride` elements apart, from one masked load of
        a `<width x T>` vector (only the elements from lane 0's to the last
        lane's enabled) and a shuffle. At stride 1, a width of the next power
        of two: LLVM splits a contiguous `<14 x float>` load into 8 + 4 + 2
        lanes and two inserts (five instructions), one masked `vmovups` here."""
        element = llvm_type(op.res.type)
        wide_type = vector_of(element, width)
        needed = (self.lanes - 1) * stride + 1
        mask_type = vector_of(i1, width)
        enabled = [1] * needed + [0] * (width - needed)
        mask = self.emit.op(
            llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(mask_type, enabled), mask_type)
        )
        alignment = self.emit.int_const(element_bytes(op.res.type), i32)
        unused = self.emit.undef(wide_type)
        # the alignment argument is the pre-LLVM-22 form, which LLVM's IR
        # reader upgrades (to an `align` on the pointer), as for xDSL's masked store
        name = f"llvm.masked.load.{_vector_suffix(wide_type)}.p0"
        address = self.vector_address(op, wide_type)
        wide = self.emit.value_intrinsic(name, [address, alignment, mask, unused], wide_type)
        picked = tuple(lane * stride for lane in range(self.lanes))
        vector_type = self.vector_type(op.res.type)
        return self.emit.op(shuffle_vector_op(wide, unused, picked, vector_type))

    def store(self, op: memref.StoreOp) -> None:
        """One vector store at stride 1, else a scalar store per lane."""
        if self.analysis.address_stride(op.memref, op.indices) == 1:
            value = self.vector(op.value)
            in_memory = self.memory_type(self.vector_type(op.value.type))
            if in_memory != value.type:
                value = self.emit.create(llvm.ZExtOp, [value], in_memory)
            address = self.vector_address(op, in_memory)
            alignment = element_bytes(op.value.type)
            self.rewriter.insert(store_op(value, address, alignment))
            return
        for lane in range(self.lanes):
            indices = [self.lane(index, lane) for index in op.indices]
            self.rewriter.insert(memref.StoreOp.get(self.lane(op.value, lane), op.memref, indices))

    def memory_type(self, t: VectorType[Attribute]) -> VectorType[Attribute]:
        """How a vector is laid out in a buffer: i1, i2 and i4 take a byte
        per element there (a `<N x i4>` load would read N * 4 bits)."""
        element = t.get_element_type()
        if isinstance(element, IntegerType) and element.bitwidth < 8:
            return vector_of(i8, self.lanes)
        return t

    def vector_address(
        self, op: memref.LoadOp | memref.StoreOp, vector_type: VectorType[Attribute]
    ) -> SSAValue:
        """The address of lane 0's element, as a pointer to a vector (with a
        SharedValues, the one computed for an earlier loop of the block when
        it is the same)."""
        lane_zero = [self.llvm_lane_zero(index) for index in op.indices]
        indices = tuple(
            ("constant", known) if (known := integer_constant(index)) is not None else index
            for index in lane_zero
        )
        key = ("address", op.memref, indices, vector_type)
        computed = self.emit.known(key)
        if computed is not None:
            return computed
        address, _, _ = element_pointer(self.emit, op, op.memref, lane_zero)
        # llvmlite types an alloca's pointer by its element and refuses to
        # store a vector through it: a GEP by 0 over the vector type retypes it.
        return self.emit.record(key, self.emit.op(gep(address, vector_type, 0)))

    def byte_words(self, load: memref.LoadOp) -> SSAValue | None:
        """Four neighbouring bytes from `load`'s element per lane, as a
        `<4·lanes x i8>` vector: one i32 load broadcast when the address is
        the same in every lane, one vector load when lanes are 4 bytes
        apart; None otherwise."""
        stride = self.analysis.address_stride(load.memref, load.indices)
        bytes_type = vector_of(i8, DOT_DEPTH * self.lanes)
        if stride == DOT_DEPTH:
            address = self.vector_address(load, bytes_type)
            return self.emit.op(llvm.LoadOp(address, bytes_type, alignment=1))
        if stride != 0:
            return None
        lane_zero = [self.llvm_lane_zero(index) for index in load.indices]
        element, _, _ = element_pointer(self.emit, load, load.memref, lane_zero)
        word = self.emit.op(llvm.LoadOp(element, i32, alignment=1))
        words = self.splat_llvm(word, i32)
        return self.emit.create(llvm.BitcastOp, [words], bytes_type)

    def splat_llvm(self, value: SSAValue, t: Attribute) -> SSAValue:
        """A vector of an llvm scalar of type `t` in every lane."""
        vector_type = self.vector_type(t)
        undefined = self.emit.undef(vector_type)
        first = self.emit.op(insert_element_op(undefined, value, self.lane_index(0)))
        mask = (0,) * self.lanes
        return self.emit.op(shuffle_vector_op(first, undefined, mask, vector_type))

    def report_widened_dot_product(self) -> None:
        """A `dot-product-widened` remark, once per loop."""
        if self.reported_widening:
            return
        self.reported_widening = True
        function, name = _loop_place(self.loop)
        remarks.report(
            remarks.Remark(
                "missed",
                remarks.DOT_PRODUCT_WIDENED,
                PASS,
                f"loop '{name}' in @{function}: 8-bit dot products widened to i32 "
                f"(no VNNI for {self.lanes} lanes: the CPU lacks it, or XTC_VNNI=0)",
                function,
                name,
                self.loop,
            )
        )

    # ------------------------------------------------------------ widening

    def widen(self, op: Operation) -> None:
        """Records the vectors of a varying arith / math op's results."""
        widened = self.vector_op(op)
        if widened is None:
            self.scalarize(op)
        else:
            self.record(op.results[0], widened)

    def record(self, value: SSAValue, vector: SSAValue) -> None:
        """`vector` holds `value`'s lanes (and takes its name if it has none)."""
        if vector.name_hint is None:
            vector.name_hint = value.name_hint
        self.vectors[value] = vector

    def scalarize(self, op: Operation) -> None:
        """`op` once per lane on scalars, the lanes gathered into vectors."""
        copies = [self.scalar_copy(op, lane) for lane in range(self.lanes)]
        for position, result in enumerate(op.results):
            lanes = [copy[position] for copy in copies]
            self.record(result, self.build_vector(lanes, result.type))

    def vector_op(self, op: Operation) -> SSAValue | None:
        """The vector form of `op`'s single result, or None when it has none."""
        for form in _VECTOR_FORMS:
            widened = form(self, op)
            if widened is not None:
                return widened
        return None

    def operands(self, op: Operation) -> list[SSAValue]:
        """The vectors of `op`'s operands."""
        return [self.vector(operand) for operand in op.operands]

    def result_type(self, op: Operation) -> VectorType[Attribute]:
        """The vector type of `op`'s first result."""
        return self.vector_type(op.results[0].type)

    def intrinsic(self, name: str, op: Operation, extra: Sequence[SSAValue] = ()) -> SSAValue:
        """`llvm.<name>.<vector type>` over `op`'s operand vectors and `extra`."""
        t = self.result_type(op)
        full_name = f"llvm.{name}.{_vector_suffix(t)}"
        operands = [*self.operands(op), *extra]
        return self.emit.value_intrinsic(full_name, operands, t, fastmath_of(op))


def _widen_alias(code: _VectorCode, op: Operation) -> SSAValue | None:
    """A cast between types with one llvm type (ui8 / i8, index / i64) is its
    operand's vector."""
    if _is_scalar_alias(op) or (
        isinstance(op, arith.IndexCastOp | arith.BitcastOp)
        and llvm_type(op.operands[0].type) == llvm_type(op.results[0].type)
    ):
        return code.vector(op.operands[0])
    return None


def _widen_multiply_add(code: _VectorCode, op: Operation) -> SSAValue | None:
    """`a * b + c`, the product used only there, is `llvm.fmuladd` (fused
    where the CPU has FMA), as C compilers contract such an expression."""
    if not isinstance(op, arith.AddfOp):
        return None
    for product, addend in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        multiply = product.owner
        if (
            isinstance(multiply, arith.MulfOp)
            and code.analysis.varies(product)
            and product.has_one_use()
        ):
            operands = [code.vector(multiply.lhs), code.vector(multiply.rhs), code.vector(addend)]
            t = code.result_type(op)
            return code.emit.value_intrinsic(f"llvm.fmuladd.{_vector_suffix(t)}", operands, t)
    return None


def _widen_arithmetic(code: _VectorCode, op: Operation) -> SSAValue | None:
    """Ops with an llvm twin (addi -> add, mulf -> fmul, ...) and negf."""
    twin = SAME_BINARY.get(type(op))
    if twin is not None:
        return code.emit.create(twin, code.operands(op), code.result_type(op))
    if isinstance(op, arith.NegfOp):
        return code.emit.op(llvm.FNegOp(code.vector(op.operand)))
    return None


def _widen_compare_and_select(code: _VectorCode, op: Operation) -> SSAValue | None:
    """cmpi -> icmp; cmpf and a select on varying conditions -> the
    `llvm_ext` vector ops; a select on a uniform condition -> llvm.select."""
    match op:
        case arith.CmpiOp():
            lhs, rhs = code.operands(op)
            return code.emit.op(llvm.ICmpOp(lhs, rhs, IntegerAttr(op.predicate.value.data, i64)))
        case arith.CmpfOp():
            predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            if predicate in ("false", "true"):
                return code.constant_vector([int(predicate == "true")] * code.lanes, i1)
            lhs, rhs = code.operands(op)
            return code.emit.op(VectorFCmpOp(predicate, lhs, rhs))
        case arith.SelectOp():
            lhs, rhs = code.vector(op.lhs), code.vector(op.rhs)
            if not code.analysis.varies(op.cond):
                return code.emit.op(llvm.SelectOp(op.cond, lhs, rhs))
            return code.emit.op(VectorSelectOp(code.vector(op.cond), lhs, rhs))
        case _:
            return None


def _widen_cast(code: _VectorCode, op: Operation) -> SSAValue | None:
    """Integer and float casts as the scalar lowering does them (float to
    integer saturates); uitofp of i64 has none (it runs per lane)."""
    if len(op.operands) != 1:
        return None
    source = op.operands[0]
    match op:
        case arith.IndexCastOp():
            narrowing = _width(op.results[0].type) < _width(source.type)
            twin = llvm.TruncOp if narrowing else llvm.SExtOp
            return code.emit.create(twin, [code.vector(source)], code.result_type(op))
        case arith.UIToFPOp():
            if _width(source.type) >= 64:
                return None  # per lane, as the scalar lowering's halving
            # a byte or a half word is a non-negative i32 (one vcvtdq2ps), a word an i64
            signed = i32 if _width(source.type) < 32 else i64
            wide = code.emit.create(llvm.ZExtOp, [code.vector(source)], code.vector_type(signed))
            return code.emit.create(llvm.SIToFPOp, [wide], code.result_type(op))
        case arith.TruncFOp() if isinstance(source.type, Float64Type) and isinstance(
            op.results[0].type, Float16Type
        ):
            return None  # per lane, through f32 rounded to odd as the scalar lowering
        case arith.FPToSIOp() | arith.FPToUIOp():
            return _saturating_float_to_int(code, op)
        case _:
            twin = _CASTS.get(type(op))
            if twin is None:
                return None
            return code.emit.create(twin, [code.vector(source)], code.result_type(op))


def _saturating_float_to_int(code: _VectorCode, op: Operation) -> SSAValue:
    """fptosi / fptoui that saturate (NaN gives 0) as the scalar lowering's
    `llvm.fpto[su]i.sat`, written out for f32 and f64 lanes: NaN lanes
    zeroed, the lanes clamped to [min, the largest float below max + 1],
    converted plainly, and the lanes at or above max + 1 set to max. x86
    lowers the intrinsic on vectors one lane at a time, compares and
    branches (a quantize epilogue's float-to-u8 cast: ~10 instructions a
    lane); this is a few vector instructions in all."""
    source = op.operands[0]
    t = code.result_type(op)
    source_type = code.vector_type(source.type)
    signed = isinstance(op, arith.FPToSIOp)
    if not isinstance(source.type, Float32Type | Float64Type):
        kind = "fptosi" if signed else "fptoui"
        name = f"llvm.{kind}.sat.{_vector_suffix(t)}.{_vector_suffix(source_type)}"
        return code.emit.value_intrinsic(name, [code.vector(source)], t)
    width = _width(op.results[0].type)
    low, top = (-(1 << (width - 1)), 1 << (width - 1)) if signed else (0, 1 << width)
    dtype = np.float32 if isinstance(source.type, Float32Type) else np.float64
    below_top = float(np.nextafter(dtype(top), dtype(0)))
    lanes = code.lanes
    x = code.vector(source)
    ordered = code.emit.op(VectorFCmpOp("ord", x, x))
    zeros = code.constant_vector([0.0] * lanes, source.type)
    value = code.emit.op(VectorSelectOp(ordered, x, zeros))
    if _clamped_within(source, -(1 << 31), 1 << 31) and _clamped_within(source, low, top):
        # A clip before the cast (a quantize's [0, 255]) leaves only NaN to
        # saturate: converted in i32, one instruction, then widened.
        narrow = code.vector_type(i32)
        converted = code.emit.op(VectorFPToSIOp(value, narrow))
        if width == 32:
            return converted
        resize = llvm.SExtOp if width > 32 else llvm.TruncOp
        return code.emit.create(resize, [converted], t)
    for name, bound in (("maxnum", float(low)), ("minnum", below_top)):
        limit = code.constant_vector([bound] * lanes, source.type)
        intrinsic = f"llvm.{name}.{_vector_suffix(source_type)}"
        value = code.emit.value_intrinsic(intrinsic, [value, limit], source_type)
    conversion = VectorFPToSIOp if signed else VectorFPToUIOp
    converted = code.emit.op(conversion(value, t))
    tops = code.constant_vector([float(top)] * lanes, source.type)
    over = code.emit.op(VectorFCmpOp("oge", x, tops))
    largest = code.constant_vector([_as_signed(top - 1, width)] * lanes, op.results[0].type)
    return code.emit.op(VectorSelectOp(over, largest, converted))


def _clamped_within(value: SSAValue, low: int, top: int) -> bool:
    """Whether `value` is `maximumf` / `minimumf` of constants (a clip,
    either way round) that keep it, NaN aside, within [low, top)."""
    lowest, highest = -np.inf, np.inf
    for _ in range(2):
        clamp = value.owner
        if not isinstance(clamp, arith.MaximumfOp | arith.MinimumfOp):
            break
        bound = next(
            (
                (operand, other)
                for operand, other in ((clamp.lhs, clamp.rhs), (clamp.rhs, clamp.lhs))
                if isinstance(operand.owner, arith.ConstantOp)
                and isinstance(operand.owner.value, FloatAttr)
            ),
            None,
        )
        if bound is None:
            break
        constant = float(cast(FloatAttr, cast(arith.ConstantOp, bound[0].owner).value).value.data)
        if isinstance(clamp, arith.MaximumfOp):
            lowest = max(lowest, constant)
        else:
            highest = min(highest, constant)
        value = bound[1]
    return low <= lowest and highest < top


def _as_signed(value: int, width: int) -> int:
    """The `width`-bit pattern of a non-negative `value` read as signed."""
    return value - (1 << width) if value >= 1 << (width - 1) else value


def _width(t: Attribute) -> int:
    lowered = llvm_type(t)
    assert isinstance(lowered, IntegerType)
    return lowered.bitwidth


def _widen_math(code: _VectorCode, op: Operation) -> SSAValue | None:
    """Ops that are an overloaded LLVM intrinsic; rsqrt is 1 / sqrt, fpowi is
    pow of the converted exponent. libm-only functions have none."""
    name = _INTRINSICS.get(type(op))
    if name is not None:
        return code.intrinsic(name, op)
    name = _INTEGER_INTRINSICS_WITH_FLAG.get(type(op))
    if name is not None:
        code.operands(op)  # widened before the flag is emitted (a retry emits nothing twice)
        return code.intrinsic(name, op, [code.emit.int_const(0, i1)])
    t = code.result_type(op)
    match op:
        case math.RsqrtOp():
            root = code.emit.value_intrinsic(f"llvm.sqrt.{_vector_suffix(t)}", code.operands(op), t)
            one = code.constant_vector([1.0] * code.lanes, op.result.type)
            return code.emit.op(llvm.FDivOp(one, root))
        case math.FmaOp():
            return fused_multiply_add(code.emit, code.operands(op), t)
        case math.FPowIOp():
            base, exponent = code.operands(op)
            exponent = code.emit.create(llvm.SIToFPOp, [exponent], t)
            return code.emit.value_intrinsic(f"llvm.pow.{_vector_suffix(t)}", [base, exponent], t)
        case _:
            return None


DOT_DEPTH = 4
"""Byte products one `vpdpbusd` lane sums."""
_VNNI_INTRINSICS = {16: "llvm.x86.avx512.vpdpbusd.512", 8: "llvm.x86.avx512.vpdpbusd.256"}
"""The VNNI dot product of a vector of i32 lanes, by lanes."""


@dataclass(frozen=True)
class DotProduct:
    """`acc + Σ_{t<4} zext(u[.., e + t]) · sext(s[.., f + t])` in i32, u8
    values by i8 values four neighbours at a time: one `vpdpbusd` per vector
    where the CPU has VNNI. `unsigned` and `signed` are the loads at t = 0."""

    accumulator: SSAValue
    unsigned: memref.LoadOp
    signed: memref.LoadOp


def vnni_lanes_available(lanes: int) -> bool:
    """Whether this CPU has the VNNI dot product over `lanes` i32 lanes
    (avx512_vnni for 16; avx512_vnni with avx512vl, or avx_vnni, for 8),
    and XTC_VNNI does not turn it off (analysis/host_cpu.py)."""
    if lanes == 16:
        return has_features("avx512vnni")
    if lanes == 8:
        return has_features("avxvnni") or has_features("avx512vnni", "avx512vl")
    return False


def match_dot_product(op: Operation) -> DotProduct | None:
    """`op` as a DotProduct (see there), None when it is not one."""
    if not isinstance(op, arith.AddiOp) or op.result.type != i32:
        return None
    for total, accumulator in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        products = _summed_products(total)
        if products is None:
            continue
        pairs = [_byte_operands(product) for product in products]
        if any(pair is None for pair in pairs):
            continue
        ordered = sorted(
            cast(list[tuple[memref.LoadOp, memref.LoadOp]], pairs),
            key=lambda pair: linear_index(pair[0].indices[-1]).constant,
        )
        unsigned, signed = [u for u, _ in ordered], [s for _, s in ordered]
        if _neighbours(unsigned) and _neighbours(signed):
            return DotProduct(accumulator, unsigned[0], signed[0])
    return None


def _summed_products(total: SSAValue) -> list[arith.MuliOp] | None:
    """The DOT_DEPTH products that `total`, a tree of addi each used once,
    sums; None when it is not such a sum."""
    leaves: list[SSAValue] = []
    pending = [total]
    while pending:
        value = pending.pop()
        owner = value.owner
        if isinstance(owner, arith.AddiOp) and (value is total or value.has_one_use()):
            pending += [owner.lhs, owner.rhs]
        else:
            leaves.append(value)
    products = [leaf.owner for leaf in leaves]
    if len(products) != DOT_DEPTH or not all(
        isinstance(p, arith.MuliOp) and p.result.has_one_use() for p in products
    ):
        return None
    return cast(list[arith.MuliOp], products)


def _byte_operands(product: arith.MuliOp) -> tuple[memref.LoadOp, memref.LoadOp] | None:
    """(the u8 load, the i8 load) of zext(u8) · sext(i8), in either order."""
    for unsigned, signed in ((product.lhs, product.rhs), (product.rhs, product.lhs)):
        u, s = _widened_byte(unsigned, arith.ExtUIOp), _widened_byte(signed, arith.ExtSIOp)
        if u is not None and s is not None:
            return u, s
    return None


def _widened_byte(value: SSAValue, extension: type[Operation]) -> memref.LoadOp | None:
    """The load of a byte that `value` widens to i32 with `extension`."""
    widen = value.owner
    if not isinstance(widen, extension) or widen.operands[0].type != IntegerType(8):
        return None
    loaded = widen.operands[0].owner
    if isinstance(loaded, UnrealizedConversionCastOp):
        loaded = loaded.inputs[0].owner
    return loaded if isinstance(loaded, memref.LoadOp) and loaded.indices else None


def _neighbours(loads: Sequence[memref.LoadOp]) -> bool:
    """Whether the loads read elements 4k, 4k + 1, ... of one buffer's last
    axis, at the same other indices."""
    first = loads[0]
    shape = cast(MemRefType[Attribute], first.memref.type).get_shape()
    forms = [[linear_index(index) for index in load.indices] for load in loads]
    start = forms[0][-1].constant
    return (
        shape[-1] % DOT_DEPTH == 0
        and start % DOT_DEPTH == 0
        and all(load.memref is first.memref for load in loads)
        and all(form[:-1] == forms[0][:-1] for form in forms)
        and all(
            form[-1].terms == forms[0][-1].terms and form[-1].constant == start + t
            for t, form in enumerate(forms)
        )
    )


def _widen_dot_product(code: _VectorCode, op: Operation) -> SSAValue | None:
    """A DotProduct as one `vpdpbusd` (`llvm.x86.avx512.vpdpbusd.512`, or
    .256 for 8 lanes) where the CPU has VNNI: the u8 and i8 sides each one
    32-bit word per lane, broadcast when it is the same in every lane (the
    activation) or one 64-byte load when the lanes are consecutive words
    (the packed weight). Elsewhere None: the products widen to i32 (with a
    `dot-product-widened` remark)."""
    dot = match_dot_product(op)
    if dot is None:
        return None
    if not code.vnni or code.lanes not in _VNNI_INTRINSICS:
        code.report_widened_dot_product()
        return None
    words = [code.byte_words(load) for load in (dot.unsigned, dot.signed)]
    if words[0] is None or words[1] is None:
        return None
    accumulator = code.vector(dot.accumulator)
    return code.emit.value_intrinsic(
        _VNNI_INTRINSICS[code.lanes], [accumulator, words[0], words[1]], code.result_type(op)
    )


_VECTOR_FORMS: tuple[Callable[[_VectorCode, Operation], SSAValue | None], ...] = (
    _widen_dot_product,
    _widen_alias,
    _widen_multiply_add,
    _widen_arithmetic,
    _widen_compare_and_select,
    _widen_cast,
    _widen_math,
)
