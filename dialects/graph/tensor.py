"""Graph ops: tensor. (Being filled in.)"""

from xtc.dialects.graph.base import GraphOp

TENSOR_OPS: list[type[GraphOp]] = []
