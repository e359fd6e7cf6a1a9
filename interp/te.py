"""numpy semantics of the te dialect: a tensor is a numpy array; `te.compute`
runs its body once per index tuple of its result, `te.reduce` folds its body
over its extents, `tensor.extract` reads one element. Scalars follow
interp/scalar.py (typed numpy floats, wrapped Python ints)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import AnyFloat, TensorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from xtc.dialects.graph.constant import numpy_dtype
from xtc.dialects.te import ComputeOp, ReduceOp, YieldOp
from xtc.interp.scalar import (
    as_signed,
    as_unsigned,
    is_unsigned_type,
    maximumf,
    minimumf,
    scalar_of_element,
    to_float,
    width_of,
    wrap,
)

Args = tuple[Any, ...]
Results = tuple[Any, ...]


def reduce_identity(kind: str, t: Attribute) -> Any:
    """The start value of a `kind` reduction of type `t`: 0, 1, the lowest or
    the highest value (-inf / +inf for floats). i1 is read as unsigned."""
    if isinstance(t, AnyFloat):
        start = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf}[kind]
        return to_float(t, start)
    width = width_of(t)
    unsigned = is_unsigned_type(t) or width == 1
    low = 0 if unsigned else -(1 << (width - 1))
    high = (1 << width) - 1 if unsigned else (1 << (width - 1)) - 1
    return wrap({"sum": 0, "prod": 1, "max": low, "min": high}[kind], t)


def reduce_combine(kind: str, t: Attribute) -> Callable[[Any, Any], Any]:
    """acc, term -> acc: as the tir lowering computes it (addf, maximumf,
    addi, maxsi / maxui for unsigned and i1, ...)."""
    if isinstance(t, AnyFloat):
        float_ops: dict[str, Callable[[Any, Any], Any]] = {
            "sum": lambda a, b: a + b,
            "prod": lambda a, b: a * b,
            "max": maximumf,
            "min": minimumf,
        }
        combine = float_ops[kind]
        return lambda a, b: to_float(t, combine(a, b))
    width = width_of(t)
    read = as_unsigned if (is_unsigned_type(t) or width == 1) else as_signed
    int_ops: dict[str, Callable[[int, int], int]] = {
        "sum": lambda a, b: a + b,
        "prod": lambda a, b: a * b,
        "max": max,
        "min": min,
    }
    int_combine = int_ops[kind]
    return lambda a, b: wrap(int_combine(read(a, width), read(b, width)), t)


def load_element(op: Operation, array: np.ndarray, index: tuple[int, ...]) -> Any:
    """array[index] as a scalar; an index out of the array is an error (numpy
    would read a negative one from the end)."""
    if any(i < 0 for i in index) or len(index) != array.ndim:
        raise InterpretationError(f"{op.name}: index {list(index)} out of {list(array.shape)}")
    try:
        return scalar_of_element(array[index])
    except IndexError:
        raise InterpretationError(
            f"{op.name}: index {list(index)} out of {list(array.shape)}"
        ) from None


def store_element(op: Operation, array: np.ndarray, index: tuple[int, ...], value: Any) -> None:
    """array[index] = value, an unsigned integer kept to its bits."""
    if any(i < 0 for i in index) or len(index) != array.ndim:
        raise InterpretationError(f"{op.name}: index {list(index)} out of {list(array.shape)}")
    if array.dtype.kind == "u" and isinstance(value, int):
        value = as_unsigned(value, array.dtype.itemsize * 8)
    try:
        array[index] = value
    except IndexError:
        raise InterpretationError(
            f"{op.name}: index {list(index)} out of {list(array.shape)}"
        ) from None


@register_impls
class TeFunctions(InterpreterFunctions):
    @impl(ComputeOp)
    def run_compute(self, interpreter: Interpreter, op: ComputeOp, args: Args) -> Results:
        result_type = cast(TensorType[Attribute], op.result.type)
        shape = tuple(result_type.get_shape())
        out = np.zeros(shape, dtype=numpy_dtype(result_type.get_element_type()))
        with np.errstate(all="ignore"):
            for index in np.ndindex(*shape):
                (value,) = interpreter.run_ssacfg_region(op.body, index, "te.compute")
                store_element(op, out, index, value)
        return (out,)

    @impl(ReduceOp)
    def run_reduce(self, interpreter: Interpreter, op: ReduceOp, args: Args) -> Results:
        kind, t = op.kind.data, op.result.type
        combine = reduce_combine(kind, t)
        accumulator = reduce_identity(kind, t)
        for index in np.ndindex(*op.extent_values()):
            (term,) = interpreter.run_ssacfg_region(op.body, index, "te.reduce")
            accumulator = combine(accumulator, term)
        return (accumulator,)

    @impl_terminator(YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: YieldOp, args: Args
    ) -> tuple[TerminatorValue, Results]:
        return ReturnedValues(args), ()

    @impl(tensor.ExtractOp)
    def run_extract(self, interpreter: Interpreter, op: tensor.ExtractOp, args: Args) -> Results:
        array, *indices = args
        return (load_element(op, cast(np.ndarray, array), tuple(indices)),)
