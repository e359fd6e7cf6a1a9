"""numpy semantics of the reduce graph ops."""

from xdsl.interpreter import InterpreterFunctions, register_impls


@register_impls
class ReduceFunctions(InterpreterFunctions):
    pass
