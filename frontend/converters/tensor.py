"""ONNX converters: tensor ops (shape and data movement, indexing, and the
ops whose result is known at import because shapes are static).

Inputs that carry shapes, axes, sizes or counts must be constants. Ops whose
result depends only on shapes (Shape, Size, EyeLike, ConstantOfShape, Range)
become constants; ops whose result shape depends on data values (NonZero,
Compress, Unique) are folded when their input is constant and refused
otherwise. OneHot, Trilu, ReverseSequence, CenterCropPad and Einsum are
written with other graph ops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.ir import SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph import nn
from xtc.dialects.graph import reduce as rd
from xtc.dialects.graph import tensor as t
from xtc.dialects.graph.base import (
    bool_attr,
    elem,
    int_attr,
    ints_attr,
    shape_of,
    str_attr,
)
from xtc.dialects.graph.constant import element_type_of, numpy_dtype
from xtc.frontend.converters import Node, StringValue, Value, converts
from xtc.frontend.converters.strings import string_tensor

Outputs = Sequence[SSAValue | None]

INT64_MAX = 2**63 - 1


def int_list(values: Any) -> list[int]:
    """An integer array or list (any int dtype, any rank) as python ints."""
    return [int(v) for v in np.asarray(values).reshape(-1)]


def const_ints(node: Node, i: int, what: str) -> list[int]:
    """A constant integer input as python ints; an input with no elements is
    known to be empty even when it is computed at run time."""
    if node.has_input(i) and math.prod(node.shape(i)) == 0:
        return []
    return int_list(node.require_const(i, what))


def const_scalar(node: Node, i: int, what: str) -> Any:
    value = node.require_const(i, what)
    if value.size != 1:
        node.fail(f"{what} (input {i}) must hold one value, got shape {list(value.shape)}")
    return value.reshape(()).item()


def axes_attr_or_input(node: Node, input_since: int, i: int = 1) -> list[int] | None:
    """The `axes` of the ops that moved it from an attribute to an optional
    input at opset `input_since`; None when absent."""
    if node.opset < input_since:
        axes = node.attr("axes")
        return None if axes is None else [int(a) for a in axes]
    if not node.has_input(i):
        return None
    return const_ints(node, i, "axes")


def normalized_axis(node: Node, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        node.fail(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def reshape(node: Node, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    if tuple(shape) == node_shape(x):
        return x
    return node.emit1(t.ReshapeOp, [x], {"shape": ints_attr(shape)})


def transpose(node: Node, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    if list(perm) == list(range(len(perm))):
        return x
    return node.emit1(t.TransposeOp, [x], {"perm": ints_attr(perm)})


def cast(node: Node, x: SSAValue, dtype: np.dtype[Any] | type) -> SSAValue:
    """x converted to `dtype` (x itself when it has that type)."""
    if node_dtype(x) == np.dtype(dtype):
        return x
    return node.emit1(ew.CastOp, [x], {"to": element_type_of(dtype)})


def node_shape(x: SSAValue) -> tuple[int, ...]:
    return shape_of(x.type)


def node_dtype(x: SSAValue) -> np.dtype[Any]:
    return numpy_dtype(elem(x.type))


# ---------------------------------------------------------------------------
# Reshaping.


@converts("Reshape")
def convert_reshape(node: Node) -> Outputs:
    shape = node.shape(0)
    target = const_ints(node, 1, "shape")
    allow_zero = bool(node.attr("allowzero", 0))
    resolved: list[int] = []
    for i, d in enumerate(target):
        if d == 0 and not allow_zero:
            if i >= len(shape):
                node.fail(f"shape {target} copies dim {i}, which {node.type_str(0)} lacks")
            d = shape[i]
        resolved.append(d)
    if resolved.count(-1) > 1:
        node.fail(f"shape {target} has more than one -1")
    if -1 in resolved:
        known = math.prod(d for d in resolved if d != -1)
        total = math.prod(shape)
        if known == 0 or total % known:
            node.fail(f"cannot infer the -1 of shape {target} for {node.type_str(0)}")
        resolved[resolved.index(-1)] = total // known
    return [reshape(node, node.input(0), resolved)]


@converts("Transpose")
def convert_transpose(node: Node) -> Outputs:
    perm = node.attr("perm")
    props = {} if perm is None else {"perm": ints_attr(perm)}
    return node.emit(t.TransposeOp, [node.input(0)], props)


@converts("Squeeze")
def convert_squeeze(node: Node) -> Outputs:
    axes = axes_attr_or_input(node, 13)
    props = {} if axes is None else {"axes": ints_attr(axes)}
    return node.emit(t.SqueezeOp, [node.input(0)], props)


@converts("Unsqueeze")
def convert_unsqueeze(node: Node) -> Outputs:
    axes = axes_attr_or_input(node, 13)
    if axes is None:
        node.fail("needs axes")
    return node.emit(t.UnsqueezeOp, [node.input(0)], {"axes": ints_attr(axes)})


@converts("Flatten")
def convert_flatten(node: Node) -> Outputs:
    return node.emit(t.FlattenOp, [node.input(0)], {"axis": int_attr(node.attr("axis", 1))})


@converts("Expand")
def convert_expand(node: Node) -> Outputs:
    shape = const_ints(node, 1, "shape")
    return node.emit(t.BroadcastToOp, [node.input(0)], {"shape": ints_attr(shape)})


@converts("Tile")
def convert_tile(node: Node) -> Outputs:
    repeats = const_ints(node, 1, "repeats")
    return node.emit(t.TileOp, [node.input(0)], {"repeats": ints_attr(repeats)})


# ---------------------------------------------------------------------------
# Joining and cutting.


@converts("Concat")
def convert_concat(node: Node) -> Outputs:
    axis = node.attr("axis")
    if axis is None:
        node.fail("needs an axis")
    inputs = node.inputs()
    return node.emit(t.ConcatOp, inputs, {"axis": int_attr(axis)})


@converts("Split")
def convert_split(node: Node) -> Outputs:
    shape = node.shape(0)
    axis = normalized_axis(node, node.attr("axis", 0), len(shape))
    if node.opset < 13:
        sizes = node.attr("split")
    else:
        sizes = const_ints(node, 1, "split") if node.has_input(1) else None
    if sizes is None:
        count = node.attr("num_outputs") if node.opset >= 18 else None
        count = count or len(node.proto.output)
        dim = shape[axis]
        # Not evenly divisible: equal pieces of ceil(dim / count), the last smaller.
        piece = dim // count if dim % count == 0 else dim // count + 1
        sizes = [piece] * (count - 1) + [dim - piece * (count - 1)]
        if sizes[-1] < 0:
            node.fail(f"cannot split axis {axis} of {node.type_str(0)} into {count} pieces")
    props = {"axis": int_attr(axis), "sizes": ints_attr([int(s) for s in sizes])}
    return node.emit(t.SplitOp, [node.input(0)], props)


def _clamp_int64(values: list[int]) -> list[int]:
    return [min(max(v, -INT64_MAX - 1), INT64_MAX) for v in values]


@converts("Slice")
def convert_slice(node: Node) -> Outputs:
    if node.opset < 10:
        starts = [int(v) for v in node.attr("starts", [])]
        ends = [int(v) for v in node.attr("ends", [])]
        axes = node.attr("axes")
        steps = None
    else:
        starts = const_ints(node, 1, "starts")
        ends = const_ints(node, 2, "ends")
        axes = const_ints(node, 3, "axes") if node.has_input(3) else None
        steps = const_ints(node, 4, "steps") if node.has_input(4) else None
    props = {"starts": ints_attr(_clamp_int64(starts)), "ends": ints_attr(_clamp_int64(ends))}
    if axes is not None:
        props["axes"] = ints_attr([int(a) for a in axes])
    if steps is not None:
        props["steps"] = ints_attr(steps)
    return node.emit(t.SliceOp, [node.input(0)], props)


# ---------------------------------------------------------------------------
# Indexing.


@converts("Gather")
def convert_gather(node: Node) -> Outputs:
    props = {"axis": int_attr(node.attr("axis", 0))}
    return node.emit(t.GatherOp, [node.input(0), node.input(1)], props)


@converts("GatherElements")
def convert_gather_elements(node: Node) -> Outputs:
    props = {"axis": int_attr(node.attr("axis", 0))}
    return node.emit(t.GatherElementsOp, [node.input(0), node.input(1)], props)


@converts("GatherND")
def convert_gather_nd(node: Node) -> Outputs:
    props = {"batch_dims": int_attr(node.attr("batch_dims", 0))}
    return node.emit(t.GatherNDOp, [node.input(0), node.input(1)], props)


@converts("ScatterElements", "Scatter")
def convert_scatter_elements(node: Node) -> Outputs:
    props = {
        "axis": int_attr(node.attr("axis", 0)),
        "reduction": str_attr(node.attr("reduction", "none")),
    }
    operands = [node.input(0), node.input(1), node.input(2)]
    return node.emit(t.ScatterElementsOp, operands, props)


@converts("ScatterND")
def convert_scatter_nd(node: Node) -> Outputs:
    props = {"reduction": str_attr(node.attr("reduction", "none"))}
    operands = [node.input(0), node.input(1), node.input(2)]
    return node.emit(t.ScatterNDOp, operands, props)


@converts("DepthToSpace")
def convert_depth_to_space(node: Node) -> Outputs:
    props = {
        "blocksize": int_attr(node.attr("blocksize", 0)),
        "mode": str_attr(node.attr("mode", "DCR")),
    }
    return node.emit(t.DepthToSpaceOp, [node.input(0)], props)


@converts("SpaceToDepth")
def convert_space_to_depth(node: Node) -> Outputs:
    props = {
        "blocksize": int_attr(node.attr("blocksize", 0)),
        "mode": str_attr(node.attr("mode", "DCR")),
    }
    return node.emit(t.SpaceToDepthOp, [node.input(0)], props)


# ---------------------------------------------------------------------------
# Known at import: shapes and constants.


@converts("Shape")
def convert_shape(node: Node) -> Outputs:
    shape = node.shape(0)
    rank = len(shape)

    def clamp(i: int) -> int:
        return min(max(i + rank if i < 0 else i, 0), rank)

    start = clamp(node.attr("start", 0))
    end = clamp(node.attr("end", rank))
    return [node.constant(np.array(shape[start:end], np.int64))]


@converts("Size")
def convert_size(node: Node) -> Outputs:
    return [node.constant(np.array(math.prod(node.shape(0)), np.int64))]


def _new_constant(node: Node, value: np.ndarray) -> SSAValue:
    if value.dtype.kind not in "biuf" or value.dtype.itemsize not in (1, 2, 4, 8):
        node.fail(f"constants of numpy type {value.dtype} are not supported")
    return node.constant(value)


@converts("ConstantOfShape")
def convert_constant_of_shape(node: Node) -> Outputs:
    shape = const_ints(node, 0, "shape")
    if any(d < 0 for d in shape):
        node.fail(f"shape {shape} has a negative dimension")
    value = node.attr("value")
    fill = np.zeros((), np.float32) if value is None else np.asarray(value).reshape(-1)[:1]
    if fill.size != 1:
        node.fail("value must hold one element")
    return [_new_constant(node, np.full(shape, fill.reshape(()), dtype=fill.dtype))]


def _sparse_to_dense(sparse: onnx.SparseTensorProto) -> np.ndarray:
    values = numpy_helper.to_array(sparse.values)
    indices = numpy_helper.to_array(sparse.indices).astype(np.int64)
    dense = np.zeros(int(np.prod(list(sparse.dims))), values.dtype)
    flat = (
        indices if indices.ndim == 1 else np.ravel_multi_index(tuple(indices.T), tuple(sparse.dims))
    )
    dense[flat] = values
    return dense.reshape(tuple(sparse.dims))


@converts("Constant")
def convert_constant(node: Node) -> Sequence[Value | None]:
    value: np.ndarray
    if node.has_attr("value"):
        value = node.attr("value")
    elif node.has_attr("value_float"):
        value = np.array(node.attr("value_float"), np.float32)
    elif node.has_attr("value_floats"):
        value = np.array(node.attr("value_floats"), np.float32)
    elif node.has_attr("value_int"):
        value = np.array(node.attr("value_int"), np.int64)
    elif node.has_attr("value_ints"):
        value = np.array(node.attr("value_ints"), np.int64)
    elif node.has_attr("sparse_value"):
        value = _sparse_to_dense(node.attr("sparse_value"))
    elif node.has_attr("value_string"):
        return [StringValue(string_tensor(node.attr("value_string")))]
    elif node.has_attr("value_strings"):
        return [StringValue(string_tensor(node.attr("value_strings")))]
    else:
        node.fail("has no value attribute")
    if value.dtype == object:  # a string tensor
        return [StringValue(string_tensor(value))]
    return [_new_constant(node, value)]


@converts("Range")
def convert_range(node: Node) -> Outputs:
    start = node.require_const(0, "start")
    limit = node.require_const(1, "limit")
    delta = node.require_const(2, "delta")
    dtype = start.dtype
    if delta.reshape(()).item() == 0:
        node.fail("delta is 0")
    count = max(math.ceil((limit.item() - start.item()) / delta.item()), 0)
    values = start.reshape(()) + np.arange(count, dtype=np.int64).astype(dtype) * delta.reshape(())
    return [node.constant(np.asarray(values, dtype))]


@converts("EyeLike")
def convert_eye_like(node: Node) -> Outputs:
    shape = node.shape(0)
    if len(shape) != 2:
        node.fail(f"input must be 2-D, got {node.type_str(0)}")
    onnx_dtype = node.attr("dtype")
    dtype = (
        node.dtype(0) if onnx_dtype is None else onnx.helper.tensor_dtype_to_np_dtype(onnx_dtype)
    )
    return [_new_constant(node, np.eye(shape[0], shape[1], node.attr("k", 0), dtype=dtype))]


# ---------------------------------------------------------------------------
# Data-dependent shapes: folded when the data is constant.


def _const_data(node: Node, i: int, why: str) -> np.ndarray:
    value = node.const(i)
    if value is None:
        node.fail_not_constant(i, f"input {i}", why)
    return value


@converts("NonZero")
def convert_non_zero(node: Node) -> Outputs:
    x = _const_data(node, 0, "the result's shape depends on its values")
    return [node.constant(np.array(np.nonzero(x), np.int64).reshape(x.ndim, -1))]


@converts("Compress")
def convert_compress(node: Node) -> Outputs:
    condition = _const_data(node, 1, "the result's shape depends on the condition")
    x = node.input(0)
    axis = node.attr("axis")
    if axis is None:
        x = reshape(node, x, [math.prod(node.shape(0))])
        axis = 0
    axis = normalized_axis(node, axis, len(node_shape(x)))
    dim = node_shape(x)[axis]
    kept = np.nonzero(condition.reshape(-1).astype(bool))[0]
    if kept.size and kept[-1] >= dim:
        node.fail(f"condition selects index {int(kept[-1])} past axis {axis} of size {dim}")
    indices = node.constant(kept.astype(np.int64))
    return node.emit(t.GatherOp, [x, indices], {"axis": int_attr(axis)})


@converts("Unique")
def convert_unique(node: Node) -> Outputs:
    x = _const_data(node, 0, "the result's shape depends on its values")
    axis = node.attr("axis")
    if axis is not None:
        axis = normalized_axis(node, axis, x.ndim)
    values, first, inverse, counts = np.unique(
        x, return_index=True, return_inverse=True, return_counts=True, axis=axis
    )
    if not node.attr("sorted", 1):
        # First-occurrence order: renumber the sorted uniques by first index.
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values = np.take(values, order, axis=0 if axis is None else axis)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return [
        node.constant(values),
        node.constant(first.astype(np.int64)),
        node.constant(inverse.reshape(-1).astype(np.int64)),
        node.constant(counts.astype(np.int64)),
    ]


# ---------------------------------------------------------------------------
# Compositions.


@converts("OneHot")
def convert_one_hot(node: Node) -> Outputs:
    indices, values = node.input(0), node.input(2)
    depth = int(const_scalar(node, 1, "depth"))
    rank = len(node.shape(0)) + 1
    axis = normalized_axis(node, node.attr("axis", -1), rank)
    if node_dtype(indices).kind == "f":
        indices = cast(node, indices, np.int64)
    dtype = node_dtype(indices)
    # Negative indices count back from depth.
    zero = node.constant(np.zeros((), dtype))
    wrapped = node.emit1(ew.AddOp, [indices, node.constant(np.array(depth, dtype))])
    negative = node.emit1(ew.LessOp, [indices, zero])
    indices = node.emit1(ew.WhereOp, [negative, wrapped, indices])
    indices = node.emit1(t.UnsqueezeOp, [indices], {"axes": ints_attr([axis])})
    positions_shape = [depth if i == axis else 1 for i in range(rank)]
    positions = node.constant(np.arange(depth, dtype=dtype).reshape(positions_shape))
    hot = node.emit1(ew.EqualOp, [indices, positions])
    off, on = node.emit(t.SplitOp, [values], {"sizes": ints_attr([1, 1])})
    return node.emit(ew.WhereOp, [hot, on, off])


@converts("Trilu")
def convert_trilu(node: Node) -> Outputs:
    shape = node.shape(0)
    if len(shape) < 2:
        node.fail(f"input must have rank >= 2, got {node.type_str(0)}")
    # Keep x[..., i, j] where j - i >= k (upper) or <= k (lower); k may be
    # computed at run time, the mask then is too.
    rows, cols = shape[-2:]
    offset = node.constant(np.arange(cols)[None, :] - np.arange(rows)[:, None])
    if node.has_input(1):
        k = node.input(1)
        if node.shape(1) not in ((), (1,)):
            node.fail(f"k must hold one value, got {node.type_str(1)}")
        k = reshape(node, cast(node, k, np.int64), [])
    else:
        k = node.constant(np.zeros((), np.int64))
    compare = ew.GreaterEqualOp if node.attr("upper", 1) else ew.LessEqualOp
    keep = node.emit1(compare, [offset, k])
    zero = node.constant(np.zeros((), node.dtype(0)))
    return node.emit(ew.WhereOp, [keep, node.input(0), zero])


@converts("CumSum", "CumProd")
def convert_cumulative(node: Node) -> Outputs:
    props = {
        "axis": int_attr(int(const_scalar(node, 1, "axis"))),
        "exclusive": bool_attr(bool(node.attr("exclusive", 0))),
        "reverse": bool_attr(bool(node.attr("reverse", 0))),
    }
    op = rd.CumSumOp if node.op_type == "CumSum" else rd.CumProdOp
    return node.emit(op, [node.input(0)], props)


@converts("TopK")
def convert_top_k(node: Node) -> Outputs:
    k = node.attr("k") if node.opset < 10 else int(const_scalar(node, 1, "k"))
    if k is None:
        node.fail("needs k")
    props = {
        "k": int_attr(k),
        "axis": int_attr(node.attr("axis", -1)),
        "largest": bool_attr(bool(node.attr("largest", 1))),
    }
    # With sorted = 0 any order is allowed: the sorted one is used.
    return node.emit(rd.TopKOp, [node.input(0)], props)


@converts("ReverseSequence")
def convert_reverse_sequence(node: Node) -> Outputs:
    shape = node.shape(0)
    rank = len(shape)
    if rank < 2:
        node.fail(f"input must have rank >= 2, got {node.type_str(0)}")
    batch_axis = normalized_axis(node, node.attr("batch_axis", 1), rank)
    time_axis = normalized_axis(node, node.attr("time_axis", 0), rank)
    if batch_axis == time_axis:
        node.fail("batch_axis and time_axis must differ")
    # index[t, b] = lens[b] - 1 - t while t < lens[b], else t; then a gather
    # along the time axis.
    lens = cast(node, node.input(1), np.int64)
    along = [1] * rank
    along[batch_axis] = shape[batch_axis]
    lens = reshape(node, lens, along)
    times_shape = [1] * rank
    times_shape[time_axis] = shape[time_axis]
    times = node.constant(np.arange(shape[time_axis], dtype=np.int64).reshape(times_shape))
    last = node.emit1(ew.SubOp, [lens, node.constant(np.ones((), np.int64))])
    reversed_index = node.emit1(ew.SubOp, [last, times])
    inside = node.emit1(ew.LessOp, [times, lens])
    index = node.emit1(ew.WhereOp, [inside, reversed_index, times])
    index = node.emit1(t.BroadcastToOp, [index], {"shape": ints_attr(shape)})
    return node.emit(t.GatherElementsOp, [node.input(0), index], {"axis": int_attr(time_axis)})


@converts("CenterCropPad")
def convert_center_crop_pad(node: Node) -> Outputs:
    shape = node.shape(0)
    rank = len(shape)
    target = const_ints(node, 1, "shape")
    axes_attr = node.attr("axes")
    axes = (
        list(range(rank))
        if axes_attr is None
        else [normalized_axis(node, a, rank) for a in axes_attr]
    )
    if len(axes) != len(target):
        node.fail(f"shape {target} needs one value per axis of {axes}")
    crop_starts, crop_ends, pads = [0] * rank, list(shape), [0] * (2 * rank)
    for axis, size in zip(axes, target, strict=True):
        dim = shape[axis]
        if size < dim:
            crop_starts[axis] = (dim - size) // 2
            crop_ends[axis] = crop_starts[axis] + size
        elif size > dim:
            pads[axis] = (size - dim) // 2
            pads[axis + rank] = size - dim - pads[axis]
    x = node.input(0)
    if crop_starts != [0] * rank or crop_ends != list(shape):
        props = {"starts": ints_attr(crop_starts), "ends": ints_attr(crop_ends)}
        x = node.emit1(t.SliceOp, [x], props)
    if any(pads):
        x = node.emit1(nn.PadOp, [x], {"pads": ints_attr(pads)})
    return [x]


# ---------------------------------------------------------------------------
# Einsum: each operand's repeated labels taken as diagonals and its private
# labels summed, then operands contracted pairwise with batch_matmul.


def _einsum_terms(node: Node, equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """The label string of each operand and of the output, with `...`
    replaced by private labels for the broadcast dims (right-aligned)."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        node.fail(f"equation '{equation}' names {len(terms)} operands, got {len(ranks)}")
    ellipsis_rank = max(
        (
            r - len(term.replace("...", ""))
            for term, r in zip(terms, ranks, strict=True)
            if "..." in term
        ),
        default=0,
    )
    broadcast = "".join(chr(0x100 + i) for i in range(ellipsis_rank))
    expanded: list[str] = []
    for term, r in zip(terms, ranks, strict=True):
        if "..." in term:
            own = r - len(term.replace("...", ""))
            term = term.replace("...", broadcast[ellipsis_rank - own :] if own else "")
        if len(term) != r or not all(c.isalpha() for c in term):
            node.fail(f"equation '{equation}': term '{term}' does not fit an operand of rank {r}")
        expanded.append(term)
    if arrow:
        output = rhs.replace("...", broadcast)
    else:
        letters = "".join(expanded)
        output = broadcast + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c not in broadcast)
        )
    missing = set(output) - set("".join(expanded))
    if missing:
        node.fail(f"equation '{equation}': output labels {sorted(missing)} name no input dim")
    return expanded, output


def _reduce_sum(node: Node, x: SSAValue, axes: list[int]) -> SSAValue:
    if not axes:
        return x
    props = {"axes": ints_attr(axes), "keepdims": bool_attr(False)}
    return node.emit1(rd.ReduceSumOp, [x], props)


def _take_diagonals(node: Node, x: SSAValue, labels: str) -> tuple[SSAValue, str]:
    """x with each label repeated within it reduced to one axis, the diagonal."""
    while len(set(labels)) < len(labels):
        first = next(i for i, c in enumerate(labels) if labels.count(c) > 1)
        second = labels.index(labels[first], first + 1)
        shape = node_shape(x)
        n = shape[first]
        if shape[second] != n:
            node.fail(f"label '{labels[first]}' has sizes {n} and {shape[second]}")
        mask_shape = [1] * len(shape)
        mask_shape[first] = mask_shape[second] = n
        eye = np.eye(n, dtype=node_dtype(x))
        mask = node.constant(eye.reshape(mask_shape))
        x = _reduce_sum(node, node.emit1(ew.MulOp, [x, mask]), [second])
        labels = labels[:second] + labels[second + 1 :]
    return x, labels


def _sum_private(node: Node, x: SSAValue, labels: str, needed: set[str]) -> tuple[SSAValue, str]:
    summed = [i for i, c in enumerate(labels) if c not in needed]
    kept = "".join(c for c in labels if c in needed)
    return _reduce_sum(node, x, summed), kept


def _expand_labels(node: Node, x: SSAValue, labels: str, sizes: dict[str, int]) -> SSAValue:
    """x broadcast to the full size of its size-1 (broadcast) labels."""
    target = [sizes[c] for c in labels]
    if list(node_shape(x)) == target:
        return x
    return node.emit1(t.BroadcastToOp, [x], {"shape": ints_attr(target)})


def _contract(
    node: Node, a: SSAValue, la: str, b: SSAValue, lb: str, needed: set[str]
) -> tuple[SSAValue, str]:
    sizes: dict[str, int] = {}
    for x, labels in ((a, la), (b, lb)):
        for c, d in zip(labels, node_shape(x), strict=True):
            if sizes.get(c, 1) not in (1, d) and d != 1:
                node.fail(f"label '{c}' has sizes {sizes[c]} and {d}")
            sizes[c] = max(sizes.get(c, d), d)
    a, b = _expand_labels(node, a, la, sizes), _expand_labels(node, b, lb, sizes)
    batch = [c for c in la if c in lb and c in needed]
    summed = [c for c in la if c in lb and c not in needed]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]

    def size(labels: list[str]) -> int:
        return math.prod(sizes[c] for c in labels)

    a = transpose(node, a, [la.index(c) for c in batch + left + summed])
    a = reshape(node, a, [size(batch), size(left), size(summed)])
    b = transpose(node, b, [lb.index(c) for c in batch + summed + right])
    b = reshape(node, b, [size(batch), size(summed), size(right)])
    product = node.emit1(nn.BatchMatmulOp, [a, b])
    labels = batch + left + right
    product = reshape(node, product, [sizes[c] for c in labels])
    return product, "".join(labels)


@converts("Einsum")
def convert_einsum(node: Node) -> Outputs:
    equation = node.attr("equation")
    if not equation:
        node.fail("needs an equation")
    operands = node.inputs()
    terms, output = _einsum_terms(node, equation, [len(node_shape(x)) for x in operands])
    prepared: list[tuple[SSAValue, str]] = []
    for i, (x, labels) in enumerate(zip(operands, terms, strict=True)):
        x, labels = _take_diagonals(node, x, labels)
        others = set(output).union(*(terms[j] for j in range(len(terms)) if j != i))
        prepared.append(_sum_private(node, x, labels, others))
    x, labels = prepared[0]
    for i in range(1, len(prepared)):
        y, y_labels = prepared[i]
        needed = set(output).union(*(p[1] for p in prepared[i + 1 :]))
        x, labels = _sum_private(node, x, labels, needed | set(y_labels))
        y, y_labels = _sum_private(node, y, y_labels, needed | set(labels))
        x, labels = _contract(node, x, labels, y, y_labels, needed)
    x, labels = _sum_private(node, x, labels, set(output))
    return [transpose(node, x, [labels.index(c) for c in output])]
