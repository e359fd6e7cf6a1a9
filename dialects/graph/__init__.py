"""The graph dialect: tensors and operators, Relay-like. A whole model is one
module whose `main` function is the operator graph. One module per op
category; each exports its list of ops."""

from xdsl.ir import Dialect

from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.elementwise import ELEMENTWISE_OPS
from xtc.dialects.graph.nn import NN_OPS
from xtc.dialects.graph.reduce import REDUCE_OPS
from xtc.dialects.graph.tensor import TENSOR_OPS

Graph = Dialect(
    "graph",
    [ConstantOp, *ELEMENTWISE_OPS, *NN_OPS, *TENSOR_OPS, *REDUCE_OPS],
    [],
)
