"""numpy semantics of the reduce graph ops."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from xtc.dialects.graph import reduce as r
from xtc.dialects.graph.base import axis_in_range, get_bool, get_int, op_props, shape_of
from xtc.dtypes import is_float_dtype

Args = tuple[Any, ...]


def _reduce_args(op: r.ReduceOp) -> tuple[tuple[int, ...], bool]:
    axes = type(op).reduced_axes(op.input.type, op.properties)
    return axes, get_bool(op_props(op), "keepdims")


def _lowest(dtype: np.dtype[Any]) -> Any:
    """The identity of max: -inf for floats (ml_dtypes' too: bf16, float8),
    the smallest value otherwise."""
    if is_float_dtype(dtype):
        return -np.inf
    return False if dtype == np.bool_ else ml_dtypes.iinfo(dtype).min


def _highest(dtype: np.dtype[Any]) -> Any:
    if is_float_dtype(dtype):
        return np.inf
    return True if dtype == np.bool_ else ml_dtypes.iinfo(dtype).max


def _accumulator(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """Half floats add up in f32, then round once."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


@register_impls
class ReduceFunctions(InterpreterFunctions):
    @impl(r.ReduceSumOp)
    def run_reduce_sum(self, interpreter: Interpreter, op: r.ReduceSumOp, args: Args) -> Args:
        (x,) = args
        axes, keepdims = _reduce_args(op)
        total = np.sum(x, axis=axes, keepdims=keepdims, dtype=_accumulator(x.dtype))
        return (np.asarray(total).astype(x.dtype),)

    @impl(r.ReduceMeanOp)
    def run_reduce_mean(self, interpreter: Interpreter, op: r.ReduceMeanOp, args: Args) -> Args:
        (x,) = args
        axes, keepdims = _reduce_args(op)
        count = int(np.prod([x.shape[a] for a in axes]))
        if x.dtype.kind != "f":
            if count == 0:
                raise ZeroDivisionError(f"{op.name}: integer mean over an empty axis")
            total = np.sum(x, axis=axes, keepdims=keepdims, dtype=np.int64)
            # Integer division rounding toward zero, like C and ONNX runtimes.
            mean = np.sign(total) * (np.abs(total) // count)
            return (np.asarray(mean).astype(x.dtype),)
        total = np.sum(x, axis=axes, keepdims=keepdims, dtype=_accumulator(x.dtype))
        with np.errstate(invalid="ignore"):
            mean = np.asarray(total) / np.asarray(count, total.dtype)
        return (mean.astype(x.dtype),)

    @impl(r.ReduceMaxOp)
    def run_reduce_max(self, interpreter: Interpreter, op: r.ReduceMaxOp, args: Args) -> Args:
        (x,) = args
        axes, keepdims = _reduce_args(op)
        return (np.asarray(np.max(x, axis=axes, keepdims=keepdims, initial=_lowest(x.dtype))),)

    @impl(r.ReduceMinOp)
    def run_reduce_min(self, interpreter: Interpreter, op: r.ReduceMinOp, args: Args) -> Args:
        (x,) = args
        axes, keepdims = _reduce_args(op)
        return (np.asarray(np.min(x, axis=axes, keepdims=keepdims, initial=_highest(x.dtype))),)

    @impl(r.ReduceProdOp)
    def run_reduce_prod(self, interpreter: Interpreter, op: r.ReduceProdOp, args: Args) -> Args:
        (x,) = args
        axes, keepdims = _reduce_args(op)
        product = np.prod(x, axis=axes, keepdims=keepdims, dtype=_accumulator(x.dtype))
        return (np.asarray(product).astype(x.dtype),)

    @impl(r.ArgMaxOp)
    def run_argmax(self, interpreter: Interpreter, op: r.ArgMaxOp, args: Args) -> Args:
        return (_arg_reduce(op, args[0], np.argmax),)

    @impl(r.ArgMinOp)
    def run_argmin(self, interpreter: Interpreter, op: r.ArgMinOp, args: Args) -> Args:
        return (_arg_reduce(op, args[0], np.argmin),)

    @impl(r.CumSumOp)
    def run_cumsum(self, interpreter: Interpreter, op: r.CumSumOp, args: Args) -> Args:
        return (_cumulative(op, args[0], np.cumsum, 0),)

    @impl(r.CumProdOp)
    def run_cumprod(self, interpreter: Interpreter, op: r.CumProdOp, args: Args) -> Args:
        return (_cumulative(op, args[0], np.cumprod, 1),)

    @impl(r.TopKOp)
    def run_topk(self, interpreter: Interpreter, op: r.TopKOp, args: Args) -> Args:
        (x,) = args
        axis = axis_in_range(op.name, get_int(op_props(op), "axis"), x.ndim)
        k = get_int(op.properties, "k")
        n = x.shape[axis]
        if get_bool(op_props(op), "largest"):
            # Sort the reversed axis ascending (stable), then read it backward:
            # values descend and equal values keep the lower index first.
            ascending = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
            order = n - 1 - np.flip(ascending, axis)
        else:
            order = np.argsort(x, axis=axis, kind="stable")
        indices = np.take(order, np.arange(k), axis=axis).astype(np.int64)
        return (np.take_along_axis(x, indices, axis), indices)


def _arg_reduce(op: r.ArgReduceOp, x: np.ndarray, arg: Any) -> np.ndarray:
    axis = axis_in_range(op.name, get_int(op_props(op), "axis"), x.ndim)
    keepdims = get_bool(op_props(op), "keepdims")
    if get_bool(op_props(op), "select_last_index"):
        # The first index in the reversed axis is the last one in x.
        flipped = arg(np.flip(x, axis), axis=axis, keepdims=keepdims)
        index = x.shape[axis] - 1 - flipped
    else:
        index = arg(x, axis=axis, keepdims=keepdims)
    return np.asarray(index, np.int64).reshape(shape_of(op.output.type))


def _cumulative(op: r.CumulativeOp, x: np.ndarray, running: Any, identity: int) -> np.ndarray:
    """np.cumsum / np.cumprod (`running`) along the op's axis, with its
    `reverse` and `exclusive` (each result shifted by one, `identity` first)."""
    axis = axis_in_range(op.name, get_int(op.properties, "axis"), x.ndim)
    reverse = get_bool(op_props(op), "reverse")
    ordered = np.flip(x, axis) if reverse else x
    folded = running(ordered, axis=axis, dtype=_accumulator(x.dtype))
    if get_bool(op_props(op), "exclusive"):
        n = x.shape[axis]
        first_shape = list(x.shape)
        first_shape[axis] = min(1, n)
        leading = np.full(first_shape, identity, folded.dtype)
        kept = np.take(folded, np.arange(max(n - 1, 0)), axis=axis)
        folded = np.concatenate([leading, kept], axis=axis)
    if reverse:
        folded = np.flip(folded, axis)
    return np.ascontiguousarray(folded).astype(x.dtype)
