"""convert-graph-to-te: every graph op, and every call of a fused group
(a `graph.primitive` function), becomes a call of a te kernel built by the
compute rules (ops/)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from xtc.analysis.functions import is_primitive
from xtc.dialects.graph.base import GraphOp, name_stem, node_label, type_str
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.tir import AssertOp
from xtc.ops import ComputeRule, load_compute_rules
from xtc.ops.te_builder import KernelBuilder, Tensor

OPS_ATTR = "te.ops"
"""Kernel attribute: the names of the graph ops it computes, in order."""


def is_converted(op: Operation) -> bool:
    """A graph op that becomes a kernel call (constants stay in the graph)."""
    return isinstance(op, GraphOp) and not isinstance(op, ConstantOp)


def kernel_key(op: GraphOp) -> Hashable:
    """Ops with equal keys compute the same function of their operands."""
    return (
        type(op),
        tuple(op.operand_types),
        tuple(op.result_types),
        tuple(sorted(op.properties.items())),
    )


def fused_kernel_key(primitive: FuncOp) -> Hashable:
    """Primitive functions with equal keys compute the same function of their
    arguments: the same ops (class, types, properties), wired the same way."""
    block = primitive.body.block
    source: dict[SSAValue, tuple[str, int, int]] = {
        arg: ("arg", i, 0) for i, arg in enumerate(block.args)
    }
    entries: list[Hashable] = [tuple(block.arg_types)]
    for position, op in enumerate(block.ops):
        entries.append(
            (
                kernel_key(op) if isinstance(op, GraphOp) else op.name,
                tuple(source[v] for v in op.operands),
            )
        )
        for index, result in enumerate(op.results):
            source[result] = ("op", position, index)
    return tuple(entries)


def check_primitive(primitive: FuncOp, primitives: dict[str, FuncOp]) -> None:
    """A primitive function holds graph ops and a func.return, nothing else."""
    if primitive.is_declaration:
        raise PassFailedException(
            f"convert-graph-to-te: the primitive function @{primitive.sym_name.data} has no body"
        )
    for op in primitive.body.block.ops:
        if isinstance(op, GraphOp) or (
            isinstance(op, ReturnOp) and op is primitive.body.block.last_op
        ):
            continue
        what = op.name
        if isinstance(op, CallOp) and op.callee.string_value() in primitives:
            what = f"a call of the primitive function @{op.callee.string_value()}"
        raise PassFailedException(
            f"convert-graph-to-te: the primitive function @{primitive.sym_name.data} "
            f"holds {what}; it may hold only graph ops and a func.return"
        )


def refuse_ops_without_rules(module: ModuleOp, rules: dict[type[GraphOp], ComputeRule]) -> None:
    missing: dict[str, str] = {}
    for op in module.walk():
        if is_converted(op) and type(op) not in rules and op.name not in missing:
            operands = ", ".join(type_str(t) for t in op.operand_types)
            missing[op.name] = f"{op.name} ({operands})"
    if missing:
        raise PassFailedException(
            "convert-graph-to-te: no compute rule for " + "; ".join(missing.values())
        )


def has_checks(kernel: FuncOp) -> bool:
    """Whether a kernel checks values at run time (`tir.assert`): its
    messages name the graph ops it was built for."""
    return any(isinstance(op, AssertOp) for op in kernel.walk())


@dataclass
class KernelLibrary:
    """The kernels of one module: built on first use, one per distinct
    (op class, operand types, properties), named `@<op>_<n>`; one per op,
    though, for ops whose kernel checks values at run time, since its fault
    messages name the op's node (`node_label`)."""

    module: ModuleOp
    rules: dict[type[GraphOp], ComputeRule]
    names: dict[Hashable, str] = field(default_factory=dict[Hashable, str])
    taken: set[str] = field(default_factory=set[str])
    checked: set[Hashable] = field(default_factory=set[Hashable])
    """The keys whose kernels check values: kept apart by node label."""

    def __post_init__(self) -> None:
        for op in self.module.body.block.ops:
            name = op.attributes.get("sym_name") or op.properties.get("sym_name")
            if isinstance(name, StringAttr):
                self.taken.add(name.data)

    def kernel_for(self, op: GraphOp, rewriter: PatternRewriter) -> str:
        return self._kernel(
            kernel_key(op),
            (node_label(op),),
            name_stem(op),
            lambda name: self._build(name, [op], list(op.operand_types), None),
            rewriter,
        )

    def fused_kernel_for(self, primitive: FuncOp, rewriter: PatternRewriter) -> str:
        """The one kernel of all the ops of a `graph.primitive` function."""
        block = primitive.body.block
        ops = [op for op in block.ops if isinstance(op, GraphOp)]
        base = primitive.sym_name.data.rstrip("0123456789").removesuffix("_")
        return self._kernel(
            fused_kernel_key(primitive),
            tuple(node_label(op) for op in ops),
            base or "fused",
            lambda name: self._build(name, ops, list(block.arg_types), block),
            rewriter,
        )

    def _kernel(
        self,
        key: Hashable,
        labels: tuple[str, ...],
        base: str,
        build: Callable[[str], FuncOp],
        rewriter: PatternRewriter,
    ) -> str:
        """The name of the kernel of `key` (built on first use); of `key` and
        the ops' `labels` when that kernel checks values."""
        full_key = (key, labels) if key in self.checked else key
        name = self.names.get(full_key)
        if name is None:
            name = self._fresh_name(base)
            kernel = build(name)
            rewriter.insert(kernel, InsertPoint.at_end(self.module.body.block))
            if has_checks(kernel):
                self.checked.add(key)
                full_key = (key, labels)
            self.names[full_key] = name
        return name

    def _fresh_name(self, base: str) -> str:
        n = 0
        while f"{base}_{n}" in self.taken:
            n += 1
        name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def _build(
        self, name: str, ops: list[GraphOp], input_types: list[Attribute], body: Block | None
    ) -> FuncOp:
        """The kernel computing `ops` in order: the only op's results, or
        what `body` (a primitive function's) returns."""
        k = KernelBuilder(name, input_types)
        tensors: dict[SSAValue, Tensor] = {}
        if body is not None:
            tensors = dict(zip(body.args, k.inputs, strict=True))
        for op in ops:
            operands = [tensors[v] for v in op.operands] if body is not None else k.inputs
            for result, output in zip(op.results, self._apply_rule(k, op, operands), strict=True):
                tensors[result] = output
        if body is None:
            outputs = [tensors[r] for r in ops[0].results]
        else:
            outputs = [tensors[v] for v in cast(ReturnOp, body.last_op).arguments]
        kernel = k.finish(outputs)
        names = [StringAttr(op.name) for op in ops if not isinstance(op, ConstantOp)]
        kernel.attributes[OPS_ATTR] = ArrayAttr(names)
        return kernel

    def _apply_rule(self, k: KernelBuilder, op: GraphOp, operands: list[Tensor]) -> list[Tensor]:
        """The te tensors of the op's results, emitted by its compute rule (a
        constant is emitted as it is)."""
        if isinstance(op, ConstantOp):
            constant = op.clone()
            if constant.parent is None:  # the kernel builder inserts new ops itself
                k.block.add_op(constant)
            return [Tensor(constant.output)]
        try:
            outputs = self.rules[type(op)](k, op, operands)
        except NotImplementedError as e:
            types = ", ".join(type_str(t) for t in op.operand_types)
            raise PassFailedException(
                f"convert-graph-to-te: cannot lower {op.name} ({types}): {e}"
            ) from e
        produced = [o.value.type for o in outputs]
        if produced != list(op.result_types):
            raise AssertionError(
                f"the compute rule of {op.name} produced "
                + ", ".join(type_str(t) for t in produced)
                + " for results "
                + ", ".join(type_str(t) for t in op.result_types)
            )
        return outputs


@dataclass
class GraphOpToKernelCall(RewritePattern):
    """graph.<op>(operands) -> func.call @<op>_<n>(operands)."""

    kernels: KernelLibrary

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp) or not is_converted(op):
            return
        callee = self.kernels.kernel_for(op, rewriter)
        rewriter.replace(op, CallOp(callee, list(op.operands), list(op.result_types)))


@dataclass
class PrimitiveCallToKernelCall(RewritePattern):
    """func.call @fused_...(operands) of a graph.primitive function ->
    func.call @fused_..._<n>(operands) of its one kernel."""

    kernels: KernelLibrary
    primitives: dict[str, FuncOp]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CallOp, rewriter: PatternRewriter) -> None:
        primitive = self.primitives.get(op.callee.string_value())
        if primitive is None:
            return
        callee = self.kernels.fused_kernel_for(primitive, rewriter)
        rewriter.replace(op, CallOp(callee, list(op.arguments), list(op.result_types)))


def take_primitives(module: ModuleOp) -> dict[str, FuncOp]:
    """The module's graph.primitive functions, checked and detached from it
    (their calls become kernel calls; their names are free again)."""
    primitives = {
        f.sym_name.data: f
        for f in module.body.block.ops
        if isinstance(f, FuncOp) and is_primitive(f)
    }
    for primitive in primitives.values():
        check_primitive(primitive, primitives)
    for primitive in primitives.values():
        primitive.detach()
    return primitives


@dataclass(frozen=True)
class ConvertGraphToTe(ModulePass):
    """Lowers graph ops to te kernels.

    Expects: a module of functions over tensors holding graph ops (any op with
    a compute rule in ops/; an op without one is refused with a diagnostic
    that names it), and maybe calls of `graph.primitive` functions (fused
    groups, from graph-fuse-ops) holding only graph ops and a `func.return`.
    Produces: every graph op except `graph.constant` replaced by a
    `func.call` of a private kernel `func.func private @<op>_<n>(tensors) ->
    tensors` whose body is `te.compute` ops and a `func.return`; ops of the
    same class with the same operand types and properties share one kernel.
    A call of a primitive function calls ONE kernel `@<function name less its
    _<n>>_<m>` holding the te.computes of all its ops, in order, and
    returning what the function returns; primitive functions with the same
    ops (class, types, properties) wired the same way share one kernel, and
    the primitive functions are removed. A kernel that checks values at run
    time (`tir.assert`: an index read from a tensor, an integer divisor) is
    shared only by ops of the same node label too, since its messages name
    the node (the op's location, as the importer sets it). Every kernel has the attribute
    `te.ops`: the names of the graph ops it computes, in order (`["graph.
    conv2d", "graph.bias_add", "graph.relu"]`). The functions keep their
    signatures and attributes, and the constants stay where they are.
    """

    name = "convert-graph-to-te"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rules = load_compute_rules()
        refuse_ops_without_rules(op, rules)
        primitives = take_primitives(op)
        kernels = KernelLibrary(op, rules)
        patterns = [GraphOpToKernelCall(kernels), PrimitiveCallToKernelCall(kernels, primitives)]
        # dce off: a dead op still gets its kernel, as without fusion.
        applier = GreedyRewritePatternApplier(list[RewritePattern](patterns), dce_enabled=False)
        PatternRewriteWalker(applier, apply_recursively=False).rewrite_module(op)
