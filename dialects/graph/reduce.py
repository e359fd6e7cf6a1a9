"""Graph ops: reduce. (Being filled in.)"""

from xtc.dialects.graph.base import GraphOp

REDUCE_OPS: list[type[GraphOp]] = []
