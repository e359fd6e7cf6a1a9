"""convert-te-to-tir: tensor expressions to loop nests over buffers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects import tensor as xtensor
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
    i1,
    i64,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolOpInterface
from xdsl.utils.exceptions import DiagnosticException

from xtc.dialects.graph import control
from xtc.dialects.graph.constant import ConstantOp, blob_data
from xtc.dialects.te import ComputeOp, ReduceOp, YieldOp
from xtc.dialects.tir import CONCAT_AXIS_ATTR, OUTPUT_ATTR, ForOp

"""Arg attribute of an output argument: the index of the result it holds."""
NAME_ATTR = "graph.name"
BUFFER_ALIGNMENT = 64

OnYield = Callable[[SSAValue, Builder], None]


class IllegalLoweringInput(DiagnosticException):
    """The input is not te-level IR; `op` is the offending operation."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(f"convert-te-to-tir: '{op.name}' {message}")
        self.op = op


def buffer_type(t: Attribute) -> MemRefType[Attribute]:
    tensor_type = cast(TensorType[Attribute], t)
    return MemRefType(tensor_type.get_element_type(), tensor_type.get_shape())


def _as_buffer(t: Attribute) -> Attribute:
    """A tensor argument's memref; other arguments keep their type (isinstance:
    `isa` of a generic type builds its constraint at each call)."""
    return buffer_type(t) if isinstance(t, TensorType) else t


def _integer(t: Attribute) -> tuple[int, Signedness] | None:
    """(width, signedness) of an integer type, None for other types."""
    if not isinstance(t, IntegerType):
        return None
    integer = cast(IntegerType[int, Signedness], t)
    return integer.width.data, integer.signedness.data


def _signless(t: Attribute) -> Attribute:
    integer = _integer(t)
    if integer is not None and integer[1] != Signedness.SIGNLESS:
        return IntegerType(integer[0])
    return t


def _reads_unsigned(t: Attribute) -> bool:
    """Unsigned elements and i1 compare as unsigned (true > false)."""
    integer = _integer(t)
    return integer is not None and (integer[1] == Signedness.UNSIGNED or integer[0] == 1)


def reduce_identity(kind: str, t: Attribute) -> float | int:
    """sum 0, prod 1, max the lowest value (-inf), min the highest (+inf)."""
    if isinstance(t, AnyFloat):
        return {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}[kind]
    width = cast(IntegerType[int, Signedness], t).width.data
    if _reads_unsigned(t):
        low, high = 0, (1 << width) - 1
    else:
        low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    return {"sum": 0, "prod": 1, "max": low, "min": high}[kind]


def _combine_op(kind: str, t: Attribute) -> type[Operation]:
    if isinstance(t, AnyFloat):
        table = {"sum": arith.AddfOp, "prod": arith.MulfOp}
        table |= {"max": arith.MaximumfOp, "min": arith.MinimumfOp}
    elif _reads_unsigned(t):
        table = {"sum": arith.AddiOp, "prod": arith.MuliOp}
        table |= {"max": arith.MaxUIOp, "min": arith.MinUIOp}
    else:
        table = {"sum": arith.AddiOp, "prod": arith.MuliOp}
        table |= {"max": arith.MaxSIOp, "min": arith.MinSIOp}
    return table[kind]


def _combine_properties(combine: type[Operation]) -> dict[str, Attribute]:
    """A float max / min reduction's fold is `nsz`: which zero a window of -0
    and +0 gives is unspecified (as for np.max), and x86 takes three
    instructions a vector for llvm.maximum nsz against six with the zeros
    ordered. NaN still propagates."""
    if combine in (arith.MaximumfOp, arith.MinimumfOp):
        return {"fastmath": arith.FastMathFlagsAttr((arith.FastMathFlag.NO_SIGNED_ZEROS,))}
    return {}


def _reinterpret(builder: Builder, value: SSAValue, t: Attribute) -> SSAValue:
    """iN <-> uiN (arith computes on signless integers)."""
    if value.type == t:
        return value
    return builder.insert(UnrealizedConversionCastOp.get([value], [t])).results[0]


def _constant(builder: Builder, value: float | int, t: Attribute) -> SSAValue:
    """An arith.constant of `t`, unsigned types through their signless twin."""
    signless = _signless(t)
    if isinstance(signless, AnyFloat):
        attr: Attribute = FloatAttr(float(value), signless)
    else:
        integer_type = cast(IntegerType[int, Signedness], signless)
        width = integer_type.width.data
        bits = int(value) & ((1 << width) - 1)
        signed = bits - (1 << width) if width > 1 and bits >> (width - 1) else bits
        attr = IntegerAttr(signed, integer_type)
    constant = builder.insert(arith.ConstantOp(attr)).result
    return _reinterpret(builder, constant, t)


def _inline_dense(attr: DenseIntOrFPElementsAttr | DenseResourceAttr) -> DenseIntOrFPElementsAttr:
    """The constant as an inline dense attribute: xDSL 0.74's memref.global
    takes no dense_resource. A blob's bytes are shared, not copied (a blob
    already holds i1 as one byte each, as dense<> does)."""
    if isinstance(attr, DenseIntOrFPElementsAttr):
        return attr
    data = blob_data(attr, checked=True)
    return DenseIntOrFPElementsAttr(cast(TensorType[IntegerType], attr.type), BytesAttr(data))


@dataclass
class _Symbols:
    """The module's symbol names, to give each new global a fresh one."""

    taken: set[str]

    def fresh(self, base: str) -> str:
        name, n = base, 0
        while name in self.taken:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name


TE_OPS_ATTR = "te.ops"
"""convert-graph-to-te's kernel attribute: the graph ops it computes."""


def concat_axis(func: FuncOp) -> int | None:
    """The axis of a kernel that is one graph.concat of several inputs into
    one output, as `te.ops` names it: the one dimension where the output
    differs from its inputs; None for any other function."""
    ops = func.attributes.get(TE_OPS_ATTR)
    if ops != ArrayAttr([StringAttr("graph.concat")]):
        return None
    inputs = func.function_type.inputs.data
    outputs = func.function_type.outputs.data
    if len(outputs) != 1 or len(inputs) < 2:
        return None
    shapes = [t.get_shape() for t in (*inputs, *outputs) if isinstance(t, TensorType)]
    if len(shapes) != len(inputs) + 1 or len({len(s) for s in shapes}) != 1:
        return None
    differing = {d for shape in shapes[:-1] for d, n in enumerate(shape) if n != shapes[-1][d]}
    return differing.pop() if len(differing) == 1 else None


@dataclass
class _FunctionLowering:
    """Builds the buffer version of one function (see ConvertTeToTir)."""

    func: FuncOp
    rewriter: PatternRewriter
    symbols: _Symbols
    values: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    destinations: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    intermediates: list[SSAValue] = field(default_factory=list[SSAValue])
    loop_names: set[str] = field(default_factory=set[str])
    outputs: Sequence[SSAValue] = ()
    hoist: Builder | None = None
    """Inside graph.if and graph.loop regions: where their buffers are
    allocated (before the outermost one, so that they live across it)."""

    def lower(self) -> FuncOp:
        func = self.func
        inputs = list(func.function_type.inputs.data)
        results = list(func.function_type.outputs.data)
        for t in results:
            if not isinstance(t, TensorType):
                raise IllegalLoweringInput(func, f"@{func.sym_name.data} returns {t}, not a tensor")
        arg_types = [_as_buffer(t) for t in inputs]
        block = Block(arg_types=[*arg_types, *(buffer_type(t) for t in results)])
        self.outputs = block.args[len(inputs) :]
        for i, output in enumerate(self.outputs):
            output.name_hint = f"out{i}"
        new_func = FuncOp(
            func.sym_name.data,
            FunctionType.from_lists(block.arg_types, []),
            Region() if func.is_declaration else Region(block),
            func.sym_visibility,
            arg_attrs=self._arg_attrs(len(inputs), len(results)),
        )
        axis = concat_axis(func)
        if axis is not None:
            new_func.attributes[CONCAT_AXIS_ATTR] = IntegerAttr(axis, i64)
        if func.is_declaration:
            return new_func
        old_block = func.body.block
        for i, (old, new) in enumerate(zip(old_block.args, block.args, strict=False)):
            new.name_hint = old.name_hint or f"in{i}"
            self.values[old] = new
        self._choose_destinations(old_block)
        self._lower_ops(old_block.ops, Builder(InsertPoint.at_end(block)), None)
        self._free_intermediates(block)
        return new_func

    def _arg_attrs(self, n_inputs: int, n_results: int) -> ArrayAttr[DictionaryAttr]:
        func = self.func
        empty = DictionaryAttr({})
        inputs = list(func.arg_attrs.data) if func.arg_attrs else [empty] * n_inputs
        result_attrs = list(func.res_attrs.data) if func.res_attrs else [empty] * n_results
        outputs: list[DictionaryAttr] = []
        for i, attrs in enumerate(result_attrs):
            entries = dict(attrs.data)
            entries[OUTPUT_ATTR] = IntegerAttr(i, i64)
            outputs.append(DictionaryAttr(entries))
        return ArrayAttr([*inputs, *outputs])

    def _choose_destinations(self, block: Block) -> None:
        """A result computed here is written straight into its output
        argument (the first one, when it is returned twice)."""
        terminator = block.last_op
        if not isinstance(terminator, ReturnOp):
            return
        for value, output in zip(terminator.arguments, self.outputs, strict=True):
            producers = ComputeOp | CallOp | control.IfOp | control.LoopOp
            if isinstance(value.owner, producers) and value not in self.destinations:
                self.destinations[value] = output

    def _buffer_for(self, value: SSAValue, builder: Builder) -> SSAValue:
        """The output argument `value` is returned in, else a new buffer."""
        if value in self.destinations:
            return self.destinations[value]
        return self._alloc(cast(TensorType[Attribute], value.type), builder)

    def _alloc(self, t: TensorType[Attribute], builder: Builder) -> SSAValue:
        """A new intermediate buffer of `t`'s shape, freed after its last use."""
        alloc = (self.hoist or builder).insert(
            memref.AllocOp.get(t.get_element_type(), BUFFER_ALIGNMENT, t.get_shape())
        )
        self.intermediates.append(alloc.memref)
        return alloc.memref

    def _lower_ops(
        self, ops: Iterable[Operation], builder: Builder, on_yield: OnYield | None
    ) -> None:
        for op in list(ops):
            self._lower_op(op, builder, on_yield)

    def _lower_op(self, op: Operation, builder: Builder, on_yield: OnYield | None) -> None:
        top_level = self._in_model_body(op)
        match op:
            case YieldOp() if on_yield is not None:
                on_yield(self._value(op.value, op), builder)
            case xtensor.ExtractOp():
                indices = [self._value(i, op) for i in op.indices]
                load = builder.insert(memref.LoadOp.get(self._value(op.tensor, op), indices))
                load.res.name_hint = op.result.name_hint
                self.values[op.result] = load.res
            case ReduceOp():
                self._lower_reduce(op, builder)
            case ComputeOp() if top_level:
                self._lower_compute(op, builder)
            case CallOp() if top_level:
                self._lower_call(op, builder)
            case ConstantOp() if top_level:
                self._lower_constant(op, builder)
            case ReturnOp() if op.parent_op() is self.func:
                self._lower_return(op, builder)
            case control.IfOp() if top_level:
                self._lower_if(op, builder)
            case control.LoopOp() if top_level:
                self._lower_loop(op, builder)
            case _:
                self._clone(op, builder)

    def _in_model_body(self, op: Operation) -> bool:
        """In the function's block, or in graph.if / graph.loop regions there."""
        parent = op.parent_op()
        while isinstance(parent, control.IfOp | control.LoopOp):
            parent = parent.parent_op()
        return parent is self.func

    def _value(self, value: SSAValue, user: Operation) -> SSAValue:
        if value not in self.values:
            raise IllegalLoweringInput(
                user, f"in @{self.func.sym_name.data} uses a value defined outside its function"
            )
        return self.values[value]

    def _nest(
        self, builder: Builder, extents: Sequence[int], prefix: str, indices: Sequence[SSAValue]
    ) -> Builder:
        """for prefix0, prefix1, ... over `extents`; the builder of the body.
        Names stay unique in the function (schedules name loops): a name
        already taken gets the number of the nest, `i0_1`, `r0_2`, ..."""
        for d, (extent, index) in enumerate(zip(extents, indices, strict=True)):
            name = f"{prefix}{d}"
            n = 0
            while name in self.loop_names:
                n += 1
                name = f"{prefix}{d}_{n}"
            self.loop_names.add(name)
            loop = builder.insert(ForOp(0, extent, name))
            loop.induction_variable.name_hint = name
            self.values[index] = loop.induction_variable
            builder = Builder(InsertPoint.at_end(loop.body.block))
        return builder

    def _lower_compute(self, op: ComputeOp, builder: Builder) -> None:
        shape = op.result.type.get_shape()
        target = self._buffer_for(op.result, builder)
        self.values[op.result] = target
        body = self._nest(builder, shape, "i", op.body.block.args)
        indices = [self.values[a] for a in op.body.block.args]

        def store(value: SSAValue, at: Builder) -> None:
            at.insert(memref.StoreOp.get(value, target, indices))

        self._lower_ops(op.body.block.ops, body, store)

    def _lower_reduce(self, op: ReduceOp, builder: Builder) -> None:
        kind, t = op.kind.data, op.result.type
        accumulator = builder.insert(memref.AllocaOp.get(t, shape=[])).memref
        builder.insert(
            memref.StoreOp.get(_constant(builder, reduce_identity(kind, t), t), accumulator, [])
        )
        body = self._nest(builder, op.extent_values(), "r", op.body.block.args)
        combine = _combine_op(kind, t)

        def accumulate(term: SSAValue, at: Builder) -> None:
            current = at.insert(memref.LoadOp.get(accumulator, [])).res
            lhs, rhs = (_reinterpret(at, v, _signless(t)) for v in (current, term))
            properties = _combine_properties(combine)
            new = at.insert(
                combine.create(
                    operands=[lhs, rhs], result_types=[_signless(t)], properties=properties
                )
            )
            at.insert(memref.StoreOp.get(_reinterpret(at, new.results[0], t), accumulator, []))

        self._lower_ops(op.body.block.ops, body, accumulate)
        self.values[op.result] = builder.insert(memref.LoadOp.get(accumulator, [])).res

    def _lower_call(self, op: CallOp, builder: Builder) -> None:
        arguments = [self._value(a, op) for a in op.arguments]
        targets: list[SSAValue] = []
        for result in op.res:
            if not isinstance(result.type, TensorType):
                raise IllegalLoweringInput(
                    op, f"in @{self.func.sym_name.data} returns {result.type}, not a tensor"
                )
            targets.append(self._buffer_for(result, builder))
            self.values[result] = targets[-1]
        builder.insert(CallOp(op.callee, [*arguments, *targets], []))

    def _lower_constant(self, op: ConstantOp, builder: Builder) -> None:
        value = op.value
        base = value.resource_handle.data if isinstance(value, DenseResourceAttr) else "cst"
        name = self.symbols.fresh(base)
        t = buffer_type(op.output.type)
        glob = memref.GlobalOp.get(
            StringAttr(name),
            t,
            _inline_dense(value),
            constant=UnitAttr(),
            alignment=BUFFER_ALIGNMENT,
        )
        self.rewriter.insert(glob, InsertPoint.before(self.func))
        self.values[op.output] = builder.insert(memref.GetGlobalOp(name, t)).memref

    def _lower_return(self, op: ReturnOp, builder: Builder) -> None:
        for value, output in zip(op.arguments, self.outputs, strict=True):
            source = self._value(value, op)
            if source is not output:
                builder.insert(memref.CopyOp(source, output))
        builder.insert(ReturnOp())

    def _lower_if(self, op: control.IfOp, builder: Builder) -> None:
        """An scf.if on the loaded condition; each branch writes the op's
        result buffers (allocated before it), its kernels straight into them
        where they compute a yielded value."""
        targets = [self._buffer_for(r, builder) for r in op.results]
        self.values.update(zip(op.results, targets, strict=True))
        flag = self._load_element(self._value(op.condition, op), builder)
        branches = [Region(Block()), Region(Block())]
        scf_if = builder.insert(scf.IfOp(flag, [], branches[0], branches[1]))
        for old, new in zip((op.then_region, op.else_region), branches, strict=True):
            terminator = cast(control.YieldOp, old.block.last_op)
            for value, target in zip(terminator.values, targets, strict=True):
                owner = value.owner
                if isinstance(owner, CallOp) and owner.parent_block() is old.block:
                    self.destinations.setdefault(value, target)

            def write(values: list[SSAValue], at: Builder) -> None:
                for source, target in zip(values, targets, strict=True):
                    if source is not target:
                        at.insert(memref.CopyOp(source, target))
                at.insert(scf.YieldOp())

            self._lower_region(old.block, Builder(InsertPoint.at_end(new.block)), scf_if, write)

    def _lower_loop(self, op: control.LoopOp, builder: Builder) -> None:
        """An scf.while over buffers: the carried values in the op's result
        buffers (set from its operands first), the iteration number and the
        condition in buffers of their own; each iteration copies what the
        body yields into them, through a temporary where a carried buffer is
        yielded in another place. The scan results' buffers are zeroed
        first, and each iteration copies its slices into their row of it."""
        targets = [self._buffer_for(r, builder) for r in op.results]
        self.values.update(zip(op.results, targets, strict=True))
        targets, scans = targets[: len(op.carried)], targets[len(op.carried) :]
        for scan in scans:
            self._zero(scan, builder)
        for initial, target in zip(op.carried, targets, strict=True):
            source = self._value(initial, op)
            if source is not target:
                builder.insert(memref.CopyOp(source, target))
        iteration = self._alloc(TensorType(i64, []), builder)
        flag = self._alloc(TensorType(i1, []), builder)
        iteration.name_hint, flag.name_hint = "iteration", "condition"
        builder.insert(memref.StoreOp.get(_constant(builder, 0, i64), iteration, []))
        first = self._load_element(self._value(op.condition, op), builder)
        builder.insert(memref.StoreOp.get(first, flag, []))
        limit = self._load_element(self._value(op.max_trip_count, op), builder)
        before, after = Block(), Block()
        loop = builder.insert(scf.WhileOp([], [], Region(before), Region(after)))
        at = Builder(InsertPoint.at_end(before))
        count = at.insert(memref.LoadOp.get(iteration, [])).res
        going = at.insert(memref.LoadOp.get(flag, [])).res
        below = at.insert(arith.CmpiOp(count, limit, "slt")).result
        at.insert(scf.ConditionOp(at.insert(arith.AndIOp(going, below)).result))
        body = op.body.block
        self.values.update(zip(body.args, [iteration, flag, *targets], strict=True))

        def advance(values: list[SSAValue], at: Builder) -> None:
            next_flag, *carried = values
            carried, slices = carried[: len(targets)], carried[len(targets) :]
            for row, scan in zip(slices, scans, strict=True):
                self._store_row(row, scan, iteration, at)
            if next_flag is not flag:
                at.insert(memref.StoreOp.get(self._load_element(next_flag, at), flag, []))
            sources = [self._staged(v, targets, at) for v in carried]
            for source, target in zip(sources, targets, strict=True):
                if source is not target:
                    at.insert(memref.CopyOp(source, target))
            count = at.insert(memref.LoadOp.get(iteration, [])).res
            one = _constant(at, 1, i64)
            at.insert(memref.StoreOp.get(at.insert(arith.AddiOp(count, one)).result, iteration, []))
            at.insert(scf.YieldOp())

        self._lower_region(body, Builder(InsertPoint.at_end(after)), loop, advance)

    def _loops(self, builder: Builder, shape: Sequence[int]) -> tuple[Builder, list[SSAValue]]:
        """A nest of serial loops "s0", "s1", ... over `shape`: the builder of
        its body and its induction variables."""
        keys = Block(arg_types=[IndexType()] * len(shape)).args
        inner = self._nest(builder, shape, "s", keys)
        return inner, [self.values.pop(k) for k in keys]

    def _zero(self, buffer: SSAValue, builder: Builder) -> None:
        """Zeros in every element of `buffer`."""
        t = cast(MemRefType[Attribute], buffer.type)
        inner, indices = self._loops(builder, t.get_shape())
        zero = _constant(inner, 0, t.get_element_type())
        inner.insert(memref.StoreOp.get(zero, buffer, indices))

    def _store_row(self, row: SSAValue, scan: SSAValue, iteration: SSAValue, at: Builder) -> None:
        """`row` copied into row `iteration` of `scan`, when it has that row."""
        rows = cast(MemRefType[Attribute], scan.type).get_shape()[0]
        count = at.insert(memref.LoadOp.get(iteration, [])).res
        inside = at.insert(arith.CmpiOp(count, _constant(at, rows, i64), "slt")).result
        guarded = at.insert(scf.IfOp(inside, [], Region(Block())))
        then = Builder(InsertPoint.at_start(guarded.true_region.block))
        at_row = then.insert(arith.IndexCastOp(count, IndexType())).result
        inner, indices = self._loops(then, cast(MemRefType[Attribute], row.type).get_shape())
        value = inner.insert(memref.LoadOp.get(row, indices)).res
        inner.insert(memref.StoreOp.get(value, scan, [at_row, *indices]))
        then.insert(scf.YieldOp())

    def _staged(self, source: SSAValue, targets: list[SSAValue], at: Builder) -> SSAValue:
        """`source`, copied to a temporary first when it is one of the
        `targets` (a carried buffer the body yields in another place)."""
        if source not in targets:
            return source
        t = cast(MemRefType[Attribute], source.type)
        temporary = self._alloc(TensorType(t.get_element_type(), t.get_shape()), at)
        at.insert(memref.CopyOp(source, temporary))
        return temporary

    def _lower_region(
        self,
        block: Block,
        builder: Builder,
        region_op: Operation,
        on_yield: Callable[[list[SSAValue], Builder], None],
    ) -> None:
        """The ops of a graph.if / graph.loop block, their buffers allocated
        before the outermost such op; `on_yield` gets the yielded buffers."""
        outermost = self.hoist is None
        if outermost:
            self.hoist = Builder(InsertPoint.before(region_op))
        try:
            for op in list(block.ops):
                if isinstance(op, control.YieldOp):
                    on_yield([self._value(v, op) for v in op.values], builder)
                else:
                    self._lower_op(op, builder, None)
        finally:
            if outermost:
                self.hoist = None

    def _load_element(self, buffer: SSAValue, builder: Builder) -> SSAValue:
        """The one element of a one-element buffer."""
        rank = len(cast(MemRefType[Attribute], buffer.type).get_shape())
        indices: list[SSAValue] = []
        if rank:
            zero = builder.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).result
            indices = [zero] * rank
        return builder.insert(memref.LoadOp.get(buffer, indices)).res

    def _clone(self, op: Operation, builder: Builder) -> None:
        """A scalar op (arith, math, scf...) copied over, its regions lowered."""
        for value in (*op.operands, *op.results):
            if isinstance(value.type, TensorType):
                raise IllegalLoweringInput(
                    op,
                    f"in @{self.func.sym_name.data} works on tensors but is not a te-level op "
                    "(te.compute, func.call, graph.constant; run convert-graph-to-te first)",
                )
        for operand in op.operands:
            self._value(operand, op)
        clone = builder.insert(op.clone_without_regions(self.values))
        for old_region, new_region in zip(op.regions, clone.regions, strict=True):
            for old_block in old_region.blocks:
                new_block = Block(arg_types=old_block.arg_types)
                new_region.add_block(new_block)
                for old_arg, new_arg in zip(old_block.args, new_block.args, strict=True):
                    self.values[old_arg] = new_arg
                self._lower_ops(old_block.ops, Builder(InsertPoint.at_end(new_block)), None)

    def _free_intermediates(self, block: Block) -> None:
        """memref.dealloc of each intermediate buffer after its last use."""
        position = {op: i for i, op in enumerate(block.ops)}
        for buffer in self.intermediates:
            users = [block.find_ancestor_op_in_block(use.operation) for use in buffer.uses]
            last = max((u for u in users if u is not None), key=position.__getitem__)
            if isinstance(last, ReturnOp):
                last = last.prev_op
            assert last is not None
            block.insert_op_after(memref.DeallocOp.get(buffer), last)


class LowerFunctionToBuffers(RewritePattern):
    """func over tensors -> func over memrefs with output arguments: each
    te.compute a loop nest, each te.reduce an accumulator nest, each
    graph.constant a memref.global, each call given its output buffers."""

    def __init__(self, symbols: _Symbols) -> None:
        self.symbols = symbols

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        signature = op.function_type
        if not any(isinstance(t, TensorType) for t in (*signature.inputs, *signature.outputs)):
            return
        lowered = _FunctionLowering(op, rewriter, self.symbols).lower()
        rewriter.replace(op, lowered)


@dataclass(frozen=True)
class ConvertTeToTir(ModulePass):
    """Lowers te kernels and the model function to loop nests over buffers
    (TVM's default lowering, before any schedule).

    Expects: functions over tensors whose bodies hold te.compute ops (kernels)
    or func.call / graph.constant ops (the model), as convert-graph-to-te
    leaves them. Produces: every function over memrefs, returning nothing;
    its results are trailing output arguments marked `graph.output = i`
    (and `graph.name` when the result had one). A te.compute is a nest of
    serial `tir.for` "i0", "i1", ... storing into its output argument, or into
    a `memref.alloc` (64-byte aligned, freed after its last use) when it is an
    intermediate; a te.reduce is a `memref.alloca` accumulator set to the
    kind's identity, updated in a nest "r0", "r1", ... and loaded after; a
    graph.constant is a private constant `memref.global` (dense data, aligned
    to 64) read with `memref.get_global`; a call gets its output buffers; a
    returned value that is not computed into its output is copied there
    (`memref.copy`). A kernel that is one graph.concat (`te.ops`) of several
    inputs gets `tir.concat_axis = a`, its axis (tir-concat-in-place reads it).

    The model function may hold graph.if and graph.loop (regions of calls,
    constants and nested control ops): a graph.if is an `scf.if` on its
    loaded condition whose branches write its result buffers (allocated
    before it); a graph.loop is an `scf.while` over buffers: the carried
    values in its result buffers, the iteration number and the condition in
    buffers of their own, copied into at the end of each iteration. The
    buffers of the regions are allocated before the outermost control op and
    freed after it, so they live across it.
    """

    name = "convert-te-to-tir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        taken: set[str] = set()
        for symbol in op.body.block.ops:
            trait = symbol.get_trait(SymbolOpInterface)
            name = trait.get_sym_attr_name(symbol) if trait is not None else None
            if name is not None:
                taken.add(name.data)
        walker = PatternRewriteWalker(
            LowerFunctionToBuffers(_Symbols(taken)), apply_recursively=False
        )
        walker.rewrite_module(op)
