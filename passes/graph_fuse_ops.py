"""graph-fuse-ops: groups of graph ops outlined into `graph.primitive`
functions, each of which convert-graph-to-te lowers to one kernel (TVM's
FuseOps)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, UnitAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from xtc.analysis.functions import PRIMITIVE_ATTR, is_primitive
from xtc.dialects.graph.base import GraphOp, OpPattern, missing_fusion_kind, name_stem
from xtc.dialects.graph.base import shape_of
from xtc.dialects.graph.control import IfOp, LoopOp
from xtc.dialects.graph.nn import Conv2dU8S8Op
from xtc.dialects.graph.tensor import TransposeOp

MASTERS = (OpPattern.ANCHOR, OpPattern.REDUCTION)
"""The patterns that start a group and take an elementwise epilogue."""


def op_pattern(op: Operation) -> OpPattern:
    """The fusion class of `op`: its class's `FUSION_KIND` for a graph op
    (every registered one states it), OPAQUE for any other op."""
    if not isinstance(op, GraphOp):
        return OpPattern.OPAQUE
    if (why := missing_fusion_kind(type(op))) is not None:
        raise DiagnosticException(why)
    assert op.FUSION_KIND is not None
    return op.FUSION_KIND


@dataclass
class Group:
    """Ops fused together, in block order. `master` is the anchor or
    reduction the group starts with, if any; `injective` says whether it holds
    an injective op."""

    ops: list[Operation]
    master: OpPattern | None
    injective: bool

    def takes_epilogue(self) -> bool:
        """A master followed by elementwise ops only: an elementwise consumer may join."""
        return self.master is not None and not self.injective

    def is_elementwise_chain(self) -> bool:
        """Elementwise ops only: may join a master's epilogue with its consumer."""
        return self.master is None and not self.injective


@dataclass
class GroupPlanner:
    """Assigns the ops of one block to groups, in block order (see GraphFuseOps)."""

    group_of: dict[Operation, Group] = field(default_factory=dict[Operation, Group])
    groups: list[Group] = field(default_factory=list[Group])
    position: dict[Operation, int] = field(default_factory=dict[Operation, int])

    def plan(self, block: Block) -> list[Group]:
        self.position = {op: i for i, op in enumerate(block.ops)}
        for op in block.ops:
            pattern = op_pattern(op)
            if pattern is OpPattern.OPAQUE or len(op.results) != 1:
                continue
            self._place(op, pattern)
        return self.groups

    def _place(self, op: Operation, pattern: OpPattern) -> None:
        candidates = list(self._producer_groups(op))
        joined: list[Group] = []
        if pattern is OpPattern.INJECTIVE and restores_u8_conv_layout(op, candidates):
            pattern = OpPattern.ELEMENTWISE
        if pattern is OpPattern.ELEMENTWISE:
            epilogue_of = [g for g in candidates if g.takes_epilogue()]
            if epilogue_of:
                # One master per group: the other operands come from outside.
                joined = [epilogue_of[0]]
                joined += [g for g in candidates if g.is_elementwise_chain()]
            else:
                joined = [g for g in candidates if g.master is None]
        elif pattern is OpPattern.INJECTIVE:
            joined = [g for g in candidates if g.master is None]
        self._merge(op, pattern, joined)

    def _producer_groups(self, op: Operation) -> Iterator[Group]:
        """The groups whose result `op` is the only user of, each once, in
        operand order."""
        seen: list[Group] = []
        for operand in op.operands:
            producer = operand.owner
            group = self.group_of.get(producer) if isinstance(producer, Operation) else None
            if group is None or any(group is g for g in seen):
                continue
            if all(use.operation is op for use in operand.uses):
                seen.append(group)
                yield group

    def _merge(self, op: Operation, pattern: OpPattern, joined: list[Group]) -> None:
        """One group of `op` and the `joined` groups (a new one when none)."""
        masters = [g.master for g in joined if g.master is not None]
        members = [member for g in joined for member in g.ops]
        group = Group(
            ops=[*sorted(members, key=self.position.__getitem__), op],
            master=masters[0] if masters else (pattern if pattern in MASTERS else None),
            injective=pattern is OpPattern.INJECTIVE or any(g.injective for g in joined),
        )
        self.groups = [g for g in self.groups if not any(g is j for j in joined)]
        self.groups.append(group)
        for member in group.ops:
            self.group_of[member] = group


def restores_u8_conv_layout(op: Operation, producers: list[Group]) -> bool:
    """Whether `op` is the NHWC-to-NCHW transpose of a u8 conv's output that
    graph-sink-transpose left in place (a pool reads it): it joins the
    conv's epilogue as an elementwise op would, the conv's kernel storing
    its output transposed (NCHW, as today's convs), not a copy of its own."""
    if not isinstance(op, TransposeOp) or len(producers) != 1:
        return False
    (group,) = producers
    rank = len(shape_of(op.operands[0].type))
    return (
        group.takes_epilogue()
        and any(isinstance(member, Conv2dU8S8Op) for member in group.ops)
        and TransposeOp.permutation(rank, op.properties) == (0, 3, 1, 2)
    )


def group_name(group: Group) -> str:
    """fused_<op>_<op>_... after the ops of the group (without `graph.`)."""
    return "fused_" + "_".join(name_stem(op) for op in group.ops)


def values_entering(ops: list[Operation]) -> list[SSAValue]:
    """The values the ops use that none of them defines, in first-use order."""
    inside = {result for op in ops for result in op.results}
    entering: list[SSAValue] = []
    for op in ops:
        for operand in op.operands:
            if operand not in inside and operand not in entering:
                entering.append(operand)
    return entering


def values_leaving(ops: list[Operation]) -> list[SSAValue]:
    """The results of the ops used by an op outside them."""
    members = set(ops)
    return [
        result
        for op in ops
        for result in op.results
        if any(use.operation not in members for use in result.uses)
    ]


def outlined_function(
    name: str, ops: list[Operation], entering: list[SSAValue], leaving: list[SSAValue]
) -> FuncOp:
    """A private `graph.primitive` function computing the values `leaving`
    the ops from the values `entering` them (its arguments)."""
    block = Block(arg_types=[v.type for v in entering])
    mapping: dict[SSAValue, SSAValue] = {}
    for value, arg in zip(entering, block.args, strict=True):
        arg.name_hint = value.name_hint
        mapping[value] = arg
    for op in ops:
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(ReturnOp(*(mapping[v] for v in leaving)))
    signature = FunctionType.from_lists(block.arg_types, [v.type for v in leaving])
    func = FuncOp(name, signature, Region(block), "private")
    func.attributes[PRIMITIVE_ATTR] = UnitAttr()
    return func


@dataclass
class SymbolNames:
    """The module's symbol names, to give each outlined function a fresh one."""

    taken: set[str]
    counter: int = 0

    def fresh(self, base: str) -> str:
        while f"{base}_{self.counter}" in self.taken:
            self.counter += 1
        name = f"{base}_{self.counter}"
        self.counter += 1
        self.taken.add(name)
        return name


def graph_blocks(func: FuncOp) -> list[Block]:
    """The function's block, then the blocks of the graph.if and graph.loop
    regions in it: each is fused on its own."""
    nested = [
        region.block for op in func.walk() if isinstance(op, IfOp | LoopOp) for region in op.regions
    ]
    return [func.body.block, *nested]


@dataclass
class OutlineFusedGroups(RewritePattern):
    """The ops of a function, grouped, each group of two ops or more replaced
    by a `func.call` of a new `graph.primitive` function."""

    module: ModuleOp
    names: SymbolNames

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        if op.is_declaration or is_primitive(op):
            return
        for block in graph_blocks(op):
            for group in GroupPlanner().plan(block):
                if len(group.ops) >= 2:
                    self._outline(group, rewriter)

    def _outline(self, group: Group, rewriter: PatternRewriter) -> None:
        name = self.names.fresh(group_name(group))
        entering, leaving = values_entering(group.ops), values_leaving(group.ops)
        func = outlined_function(name, group.ops, entering, leaving)
        rewriter.insert(func, InsertPoint.at_end(self.module.body.block))
        # Every use of the group's outputs follows its last op: call there.
        call = CallOp(name, entering, [v.type for v in leaving])
        rewriter.insert(call, InsertPoint.before(group.ops[-1]))
        for value, result in zip(leaving, call.res, strict=True):
            result.name_hint = value.name_hint
            value.replace_all_uses_with(result)
        for member in reversed(group.ops):
            rewriter.erase(member)


def symbol_names(module: ModuleOp) -> set[str]:
    """The symbol names of the module's top-level ops."""
    names: set[str] = set()
    for op in module.body.block.ops:
        name = op.properties.get("sym_name") or op.attributes.get("sym_name")
        if isinstance(name, StringAttr):
            names.add(name.data)
    return names


@dataclass(frozen=True)
class GraphFuseOps(ModulePass):
    """Fuses graph ops into groups that lower to one kernel each (TVM's FuseOps).

    Expects: a module of functions over tensors holding graph ops, in SSA order.
    Produces: in every function that is not itself a `graph.primitive`, and
    in each block of its graph.if and graph.loop regions on its own, each
    group of two ops or more replaced by a `func.call` of a new private
    function `@fused_<op1>_<op2>_..._<n>` (the ops' names without `graph.`, in
    order) with the unit attribute `graph.primitive`, holding the group's ops
    (cloned with their properties) and returning the group's output. The
    group's operands (function arguments, constants, results of other ops) are
    the function's arguments; `graph.constant` ops stay where they are.

    Each graph op class states its fusion class (`FUSION_KIND`):
    elementwise (unary, binary with broadcast, cast, where, bias_add,
    batch_norm), injective (reshape, transpose, concat, slice, pad, gather,
    resize, ...), reduction (reduce_*, arg*, and softmax / log_softmax /
    layer_norm, built around reductions), anchor (conv2d, conv2d_transpose,
    dense, matmul, batch_matmul, pooling) or opaque (cumsum, topk, scatters,
    constants; also any op of another dialect, and any op with several
    results). The ops are visited in order; an op joins the
    groups of its producers (merging them) as follows:
      - an anchor or a reduction starts a group, the group's master: two
        masters never share a group;
      - an elementwise op joins the group of a master that holds only
        elementwise ops after it (the epilogue: bias add, batch-norm mul/add,
        relu, clip, a residual add whose other operand comes from outside),
        the first such producer in operand order, together with the producing
        groups that hold only elementwise ops; with no such master, it joins
        every producing group without a master;
      - an injective op joins every producing group without a master, so
        chains of injective and elementwise ops fuse;
      - opaque ops stay alone.
    An op joins its producer's group only through a value it is the only user
    of: a value used by two ops, or returned, always leaves its group (it is
    the group's output). So every op of a group but the last one has all its
    users in the group, the group has one output (the last op's result), and
    the group is convex: no path leaves it and comes back.
    """

    name = "graph-fuse-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = OutlineFusedGroups(op, SymbolNames(symbol_names(op)))
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
