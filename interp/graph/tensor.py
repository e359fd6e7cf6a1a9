"""numpy semantics of the tensor graph ops."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Attribute, Operation

from xtc.dialects.graph import tensor as t
from xtc.dialects.graph.base import (
    GraphOp,
    get_int,
    get_ints,
    get_str,
    index_fault,
    op_props,
    shape_of,
)
from xtc.dialects.tir import format_message
from xtc.interp import RunTimeFault

Args = tuple[Any, ...]


def _axis(op: GraphOp) -> int:
    rank = len(shape_of(op.operands[0].type))
    return t.axis_in_range(op.name, get_int(op_props(op), "axis"), rank)


def _in_range_indices(
    op: Operation, indices: np.ndarray, dim: int, axis: int, data_type: Attribute
) -> np.ndarray:
    """Indices with negatives wrapped once; the first (row-major) left
    outside 0..dim-1 is a RunTimeFault naming the node and the value, as
    native code reports it."""
    wrapped = np.where(indices < 0, indices + dim, indices).astype(np.int64)
    bad = (wrapped < 0) | (wrapped >= dim)
    if bad.any():
        value = int(indices[bad].flat[0])
        raise RunTimeFault(format_message(index_fault(op, dim, axis, data_type), value))
    return wrapped


def _element_index(indices: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    """The full index tuple addressing data[.., indices[p], ..] for every
    position p of indices (its own coordinates on the other axes)."""
    grid: list[np.ndarray] = list(np.indices(indices.shape, sparse=True))
    grid[axis] = indices
    return tuple(grid)


@register_impls
class TensorFunctions(InterpreterFunctions):
    @impl(t.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: t.ReshapeOp, args: Args) -> Args:
        return (np.reshape(args[0], get_ints(op.properties, "shape")),)

    @impl(t.TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: t.TransposeOp, args: Args) -> Args:
        (x,) = args
        return (np.transpose(x, t.TransposeOp.permutation(x.ndim, op.properties)),)

    @impl(t.SqueezeOp)
    def run_squeeze(self, interpreter: Interpreter, op: t.SqueezeOp, args: Args) -> Args:
        axes = t.SqueezeOp.squeezed_axes(op.input.type, op.properties)
        return (np.squeeze(args[0], axis=axes),)

    @impl(t.UnsqueezeOp)
    def run_unsqueeze(self, interpreter: Interpreter, op: t.UnsqueezeOp, args: Args) -> Args:
        return (np.reshape(args[0], shape_of(op.output.type)),)

    @impl(t.FlattenOp)
    def run_flatten(self, interpreter: Interpreter, op: t.FlattenOp, args: Args) -> Args:
        return (np.reshape(args[0], shape_of(op.output.type)),)

    @impl(t.BroadcastToOp)
    def run_broadcast_to(self, interpreter: Interpreter, op: t.BroadcastToOp, args: Args) -> Args:
        return (np.broadcast_to(args[0], shape_of(op.output.type)).copy(),)

    @impl(t.TileOp)
    def run_tile(self, interpreter: Interpreter, op: t.TileOp, args: Args) -> Args:
        (x,) = args
        repeats = get_ints(op.properties, "repeats")
        return (np.tile(x, repeats) if repeats else x.copy(),)

    @impl(t.ConcatOp)
    def run_concat(self, interpreter: Interpreter, op: t.ConcatOp, args: Args) -> Args:
        return (np.concatenate(args, axis=_axis(op)),)

    @impl(t.SplitOp)
    def run_split(self, interpreter: Interpreter, op: t.SplitOp, args: Args) -> Args:
        (x,) = args
        sizes = get_ints(op.properties, "sizes")
        cuts = list(itertools.accumulate(sizes))[:-1]
        return tuple(p.copy() for p in np.split(x, cuts, axis=_axis(op)))

    @impl(t.SliceOp)
    def run_slice(self, interpreter: Interpreter, op: t.SliceOp, args: Args) -> Args:
        ranges = t.SliceOp.ranges(op.input.type, op.properties)
        # A range stopping at -1 runs down to index 0: numpy spells that None.
        index = tuple(slice(r.start, r.stop if r.stop >= 0 else None, r.step) for r in ranges)
        return (args[0][index].copy(),)

    @impl(t.GatherOp)
    def run_gather(self, interpreter: Interpreter, op: t.GatherOp, args: Args) -> Args:
        data, indices = args
        axis = _axis(op)
        wrapped = _in_range_indices(op, indices, data.shape[axis], axis, op.data.type)
        return (np.take(data, wrapped, axis=axis),)

    @impl(t.GatherElementsOp)
    def run_gather_elements(
        self, interpreter: Interpreter, op: t.GatherElementsOp, args: Args
    ) -> Args:
        data, indices = args
        axis = _axis(op)
        wrapped = _in_range_indices(op, indices, data.shape[axis], axis, op.data.type)
        return (data[_element_index(wrapped, axis)],)

    @impl(t.ScatterElementsOp)
    def run_scatter_elements(
        self, interpreter: Interpreter, op: t.ScatterElementsOp, args: Args
    ) -> Args:
        data, indices, updates = args
        axis = _axis(op)
        wrapped = _in_range_indices(op, indices, data.shape[axis], axis, op.data.type)
        index = _element_index(wrapped, axis)
        reduction = get_str(op_props(op), "reduction")
        result = data.copy()
        if reduction == "none":
            # Repeated indices: the last update in row-major order wins.
            result[index] = updates
        else:
            ufunc = {
                "add": np.add,
                "mul": np.multiply,
                "max": np.maximum,
                "min": np.minimum,
            }[reduction]
            ufunc.at(result, index, updates)
        return (result,)

    @impl(t.DepthToSpaceOp)
    def run_depth_to_space(
        self, interpreter: Interpreter, op: t.DepthToSpaceOp, args: Args
    ) -> Args:
        (x,) = args
        n, c, h, w = x.shape
        b = get_int(op.properties, "blocksize")
        if get_str(op_props(op), "mode") == "DCR":
            blocks = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            blocks = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        return (blocks.reshape(shape_of(op.output.type)),)

    @impl(t.SpaceToDepthOp)
    def run_space_to_depth(
        self, interpreter: Interpreter, op: t.SpaceToDepthOp, args: Args
    ) -> Args:
        (x,) = args
        n, c, h, w = x.shape
        b = get_int(op.properties, "blocksize")
        blocks = x.reshape(n, c, h // b, b, w // b, b)
        if get_str(op_props(op), "mode") == "DCR":
            blocks = blocks.transpose(0, 3, 5, 1, 2, 4)
        else:
            blocks = blocks.transpose(0, 1, 3, 5, 2, 4)
        return (blocks.reshape(shape_of(op.output.type)),)

    @impl(t.GatherNDOp)
    def run_gather_nd(self, interpreter: Interpreter, op: t.GatherNDOp, args: Args) -> Args:
        data, indices = args
        batch_dims = get_int(op_props(op), "batch_dims")
        batch = int(np.prod(data.shape[:batch_dims], dtype=np.int64))
        flat_data = data.reshape((batch, *data.shape[batch_dims:]))
        index = _nd_index(op, indices, flat_data.shape[1:], batch, batch_dims, op.data.type)
        batch_index = np.arange(batch).reshape(batch, 1)
        gathered = flat_data[(batch_index, *index)]
        return (gathered.reshape(shape_of(op.output.type)),)

    @impl(t.ScatterNDOp)
    def run_scatter_nd(self, interpreter: Interpreter, op: t.ScatterNDOp, args: Args) -> Args:
        data, indices, updates = args
        depth = indices.shape[-1]
        index = _nd_index(op, indices, data.shape, 1, 0, op.data.type)
        index = tuple(i.reshape(-1) for i in index)
        flat_updates = updates.reshape((-1, *data.shape[depth:]))
        reduction = get_str(op_props(op), "reduction")
        result = data.copy()
        if reduction == "none":
            # Repeated index tuples: the last update in row-major order wins.
            result[index] = flat_updates
        else:
            _SCATTER_UFUNCS[reduction].at(result, index, flat_updates)
        return (result,)


_SCATTER_UFUNCS: dict[str, Any] = {
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}


def _nd_index(
    op: Operation,
    indices: np.ndarray,
    dims: tuple[int, ...],
    batch: int,
    batch_dims: int,
    data_type: Attribute,
) -> list[np.ndarray]:
    """The index tuples of indices (last dimension) as one array per
    addressed dim of `dims` (data's axis batch_dims + j), each shaped
    (batch, tuples per batch); checked component by component."""
    depth = indices.shape[-1]
    tuples = (
        indices.reshape((batch, -1, depth))
        if indices.size
        else np.zeros((batch, 0, depth), np.int64)
    )
    return [
        _in_range_indices(op, tuples[..., j], dims[j], batch_dims + j, data_type)
        for j in range(depth)
    ]
