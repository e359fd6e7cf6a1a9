"""The graph dialect: tensors and operators, Relay-like. A whole model is one
module whose `main` function is the operator graph. One module per op
category; the dialect holds every op class they define (`defined_ops`), so
an op is registered by being written."""

from xdsl.ir import Dialect

from xtc.dialects.graph import constant, elementwise, nn, random, reduce, tensor
from xtc.dialects.graph.base import GraphOp, defined_ops
from xtc.dialects.graph.control import CONTROL_OPS

CATEGORIES = (constant, elementwise, nn, tensor, reduce, random)
"""The modules of the graph ops, one per category."""

GRAPH_OPS: tuple[type[GraphOp], ...] = tuple(
    op for module in CATEGORIES for op in defined_ops(module)
)
"""Every graph op class, by category and in definition order."""

Graph = Dialect("graph", [*GRAPH_OPS, *CONTROL_OPS], [])
