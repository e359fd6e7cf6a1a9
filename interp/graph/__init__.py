"""numpy implementations of the graph ops, one module per op category."""

from xdsl.interpreter import InterpreterFunctions

from xtc.interp.graph.constant import ConstantFunctions
from xtc.interp.graph.control import ControlFunctions
from xtc.interp.graph.elementwise import ElementwiseFunctions
from xtc.interp.graph.nn import NnFunctions
from xtc.interp.graph.random import RandomFunctions
from xtc.interp.graph.reduce import ReduceFunctions
from xtc.interp.graph.tensor import TensorFunctions

GRAPH_FUNCTIONS: list[type[InterpreterFunctions]] = [
    ConstantFunctions,
    ElementwiseFunctions,
    NnFunctions,
    TensorFunctions,
    ReduceFunctions,
    RandomFunctions,
    ControlFunctions,
]
