"""convert-graph-to-te: every graph op becomes a call of a te kernel built by
its compute rule (ops/)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from xtc.dialects.graph.base import GraphOp, type_str
from xtc.dialects.graph.constant import ConstantOp
from xtc.ops import ComputeRule, load_compute_rules
from xtc.ops.te_builder import KernelBuilder


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


@dataclass
class KernelLibrary:
    """The kernels of one module: built on first use, one per distinct
    (op class, operand types, properties), named `@<op>_<n>`."""

    module: ModuleOp
    rules: dict[type[GraphOp], ComputeRule]
    names: dict[Hashable, str] = field(default_factory=dict[Hashable, str])
    taken: set[str] = field(default_factory=set[str])

    def __post_init__(self) -> None:
        for op in self.module.body.block.ops:
            name = op.attributes.get("sym_name") or op.properties.get("sym_name")
            if isinstance(name, StringAttr):
                self.taken.add(name.data)

    def kernel_for(self, op: GraphOp, rewriter: PatternRewriter) -> str:
        key = kernel_key(op)
        name = self.names.get(key)
        if name is None:
            name = self._fresh_name(op.name.removeprefix("graph."))
            kernel = self._build(name, op)
            rewriter.insert(kernel, InsertPoint.at_end(self.module.body.block))
            self.names[key] = name
        return name

    def _fresh_name(self, base: str) -> str:
        n = 0
        while f"{base}_{n}" in self.taken:
            n += 1
        name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def _build(self, name: str, op: GraphOp) -> FuncOp:
        k = KernelBuilder(name, list(op.operand_types))
        try:
            outputs = self.rules[type(op)](k, op, k.inputs)
        except NotImplementedError as e:
            operands = ", ".join(type_str(t) for t in op.operand_types)
            raise PassFailedException(
                f"convert-graph-to-te: cannot lower {op.name} ({operands}): {e}"
            ) from e
        kernel = k.finish(outputs)
        produced = [o.value.type for o in outputs]
        if produced != list(op.result_types):
            raise AssertionError(
                f"the compute rule of {op.name} produced "
                + ", ".join(type_str(t) for t in produced)
                + " for results "
                + ", ".join(type_str(t) for t in op.result_types)
            )
        return kernel


@dataclass
class GraphOpToKernelCall(RewritePattern):
    """graph.<op>(operands) -> func.call @<op>_<n>(operands)."""

    kernels: KernelLibrary

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp) or not is_converted(op):
            return
        callee = self.kernels.kernel_for(op, rewriter)
        rewriter.replace(op, CallOp(callee, list(op.operands), list(op.result_types)))


@dataclass(frozen=True)
class ConvertGraphToTe(ModulePass):
    """Lowers graph ops to te kernels.

    Expects: a module of functions over tensors holding graph ops (any op with
    a compute rule in ops/; an op without one is refused with a diagnostic
    that names it). Produces: every graph op except `graph.constant` replaced
    by a `func.call` of a private kernel `func.func private @<op>_<n>(tensors)
    -> tensors` whose body is `te.compute` ops and a `func.return`; ops of
    the same class with the same operand types and properties share one
    kernel. The functions keep their signatures and attributes, and the
    constants stay where they are.
    """

    name = "convert-graph-to-te"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rules = load_compute_rules()
        refuse_ops_without_rules(op, rules)
        kernels = KernelLibrary(op, rules)
        PatternRewriteWalker(GraphOpToKernelCall(kernels), apply_recursively=False).rewrite_module(
            op
        )
