"""Graph ops: nn. (Being filled in.)"""

from xtc.dialects.graph.base import GraphOp

NN_OPS: list[type[GraphOp]] = []
