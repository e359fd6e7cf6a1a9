"""numpy semantics of the elementwise graph ops."""

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from xtc.dialects.graph import elementwise as ew


@register_impls
class ElementwiseFunctions(InterpreterFunctions):
    @impl(ew.ReluOp)
    def run_relu(
        self, interpreter: Interpreter, op: ew.ReluOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        (x,) = args
        return (np.maximum(x, np.zeros((), x.dtype)),)

    @impl(ew.AddOp)
    def run_add(
        self, interpreter: Interpreter, op: ew.AddOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (np.add(*args),)
