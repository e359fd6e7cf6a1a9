"""The operator library (TVM's TOPI, ours): a compute rule per graph op, in
files grouped by category, written with the te builder DSL (`te_builder.py`).

A compute rule is `(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) ->
list[Tensor]`: it emits te ops computing the op's results from its operands
(the kernel's inputs) and returns them, one per op result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from xtc.dialects.graph.base import GraphOp
from xtc.ops.te_builder import KernelBuilder, Tensor

ComputeRule = Callable[[KernelBuilder, GraphOp, list[Tensor]], list[Tensor]]
COMPUTE_RULES: dict[type[GraphOp], ComputeRule] = {}

_R = TypeVar("_R", bound=ComputeRule)


def compute_rule(*op_classes: type[GraphOp]) -> Callable[[_R], _R]:
    """Registers the decorated function as the compute rule of these ops."""

    def register(rule: _R) -> _R:
        for op_class in op_classes:
            assert op_class not in COMPUTE_RULES, f"two compute rules for {op_class.name}"
            COMPUTE_RULES[op_class] = rule
        return rule

    return register


def load_builtin_compute_rules() -> dict[type[GraphOp], ComputeRule]:
    """xtc's compute rules (importing the category modules registers them)."""
    from xtc.ops import elementwise, nn, random, reduce, tensor  # noqa: F401

    return COMPUTE_RULES


def load_compute_rules() -> dict[type[GraphOp], ComputeRule]:
    """Every compute rule: xtc's and those of the op plugins (xtc/plugins.py)."""
    from xtc.plugin_hooks import load_op_plugins

    load_builtin_compute_rules()
    load_op_plugins()
    return COMPUTE_RULES
