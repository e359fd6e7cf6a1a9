"""graph.if and graph.loop on numpy values: the region the condition picks,
the body while the trip count and the condition allow (its scan slices
stacked by iteration, zeros where none ran)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)

from xtc.dialects.graph.base import elem, shape_of
from xtc.dialects.graph.constant import numpy_dtype
from xtc.dialects.graph.control import IfOp, LoopOp, YieldOp


def truth(flag: Any) -> bool:
    """The value of a one-element boolean tensor."""
    return bool(np.asarray(flag).reshape(-1)[0])


@register_impls
class ControlFunctions(InterpreterFunctions):
    @impl(IfOp)
    def run_if(self, interpreter: Interpreter, op: IfOp, args: PythonValues) -> PythonValues:
        region = op.then_region if truth(args[0]) else op.else_region
        return interpreter.run_ssacfg_region(region, (), "graph.if")

    @impl(LoopOp)
    def run_loop(self, interpreter: Interpreter, op: LoopOp, args: PythonValues) -> PythonValues:
        max_trip_count, condition, *carried = args
        limit = int(np.asarray(max_trip_count).reshape(-1)[0])
        going = np.asarray(condition, dtype=np.bool_).reshape(())
        scans = [
            np.zeros(shape_of(t), numpy_dtype(elem(t))) for t in op.result_types[len(carried) :]
        ]
        iteration = 0
        while iteration < limit and truth(going):
            index = np.asarray(iteration, dtype=np.int64)
            going, *values = interpreter.run_ssacfg_region(
                op.body, (index, going.reshape(()), *carried), "graph.loop"
            )
            carried, slices = values[: len(carried)], values[len(carried) :]
            for scan, row in zip(scans, slices, strict=True):
                if iteration < scan.shape[0]:
                    scan[iteration] = row
            going = np.asarray(going, dtype=np.bool_)
            iteration += 1
        return (*carried, *scans)

    @impl_terminator(YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
