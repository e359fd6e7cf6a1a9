"""numpy semantics of the tensor graph ops."""

from xdsl.interpreter import InterpreterFunctions, register_impls


@register_impls
class TensorFunctions(InterpreterFunctions):
    pass
