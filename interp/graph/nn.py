"""numpy semantics of the nn graph ops."""

from xdsl.interpreter import InterpreterFunctions, register_impls


@register_impls
class NnFunctions(InterpreterFunctions):
    pass
