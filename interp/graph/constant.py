from typing import Any

from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from xtc.dialects.graph.constant import ConstantOp


@register_impls
class ConstantFunctions(InterpreterFunctions):
    @impl(ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: ConstantOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (op.to_array(),)
