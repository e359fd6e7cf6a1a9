"""Tensor graph ops: shape and data movement (reshape, transpose, concat,
split, slice, gather, squeeze/unsqueeze, flatten, broadcast, tile, and the
ONNX element-wise gather/scatter and depth/space rearrangements).

All shapes and parameters are static. Each op's class also computes the
normalized parameters (non-negative axes, clamped slice bounds, ...) that the
interpreter and the lowerings apply, so the rules live in one place.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AnyTensorTypeConstr,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)

from xtc.dialects.graph.base import (
    GraphOp,
    OpPattern,
    Props,
    Shape,
    ShapeError,
    axes_in_range,
    axis_in_range,
    elem,
    get_int,
    get_ints,
    get_str,
    int_attr,
    ints_attr,
    is_integer,
    same_element_type,
    shape_of,
    str_attr,
    tensor,
    type_str,
    with_defaults,
)

I64Array = DenseArrayBase.constr(i64)

_UNARY_FORMAT = "$input attr-dict `:` functional-type(operands, results)"


def _shape_str(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _non_negative(op_name: str, name: str, values: Sequence[int]) -> None:
    if any(v < 0 for v in values):
        raise ShapeError(f"{op_name}: {name} {_shape_str(values)} has a negative value")


def _integer_tensor(op_name: str, t: Attribute, what: str) -> None:
    if not is_integer(elem(t)):
        raise ShapeError(
            f"{op_name}: {what} must be an integer tensor, got {type_str(t)}"
        )


# ---------------------------------------------------------------------------
# Reshaping.


@irdl_op_definition
class ReshapeOp(GraphOp):
    """The elements of x in row-major order under the static `shape` (ONNX
    Reshape with the target shape resolved: no -1 or 0 placeholders)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.reshape"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    shape = prop_def(I64Array)

    assembly_format = _UNARY_FORMAT

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        shape = get_ints(props, "shape")
        _non_negative(cls.name, "shape", shape)
        result = tensor(shape, elem(x))
        if math.prod(shape) != math.prod(shape_of(x)):
            raise ShapeError(
                f"{cls.name}: cannot reshape {type_str(x)} ({math.prod(shape_of(x))} "
                f"elements) to {type_str(result)} ({math.prod(shape)} elements)"
            )
        return [result]


@irdl_op_definition
class TransposeOp(GraphOp):
    """Axes permuted: result axis i is input axis perm[i] (ONNX Transpose,
    numpy.transpose); `perm` defaults to the reversed axes."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.transpose"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    perm = opt_prop_def(I64Array)

    assembly_format = _UNARY_FORMAT

    @classmethod
    def permutation(cls, rank: int, props: Props) -> tuple[int, ...]:
        perm = get_ints(props, "perm", tuple(reversed(range(rank))))
        if sorted(perm) != list(range(rank)):
            raise ShapeError(
                f"{cls.name}: perm {_shape_str(perm)} is not a permutation of "
                f"0..{rank - 1} (rank {rank})"
            )
        return perm

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        shape = shape_of(x)
        perm = cls.permutation(len(shape), props)
        return [tensor([shape[p] for p in perm], elem(x))]


@irdl_op_definition
class SqueezeOp(GraphOp):
    """x without the size-1 axes `axes` (ONNX Squeeze); empty or absent
    `axes` removes every size-1 axis."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.squeeze"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axes = opt_prop_def(I64Array)
    DEFAULTS: ClassVar[Props] = {"axes": ints_attr(())}

    assembly_format = _UNARY_FORMAT

    @classmethod
    def squeezed_axes(cls, x: Attribute, props: Props) -> tuple[int, ...]:
        shape = shape_of(x)
        axes = axes_in_range(cls.name, get_ints(with_defaults(cls, props), "axes"), len(shape))
        if not axes:
            return tuple(i for i, d in enumerate(shape) if d == 1)
        for a in axes:
            if shape[a] != 1:
                raise ShapeError(
                    f"{cls.name}: cannot squeeze axis {a} of {type_str(x)}: "
                    f"its size is {shape[a]}, not 1"
                )
        return axes

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        axes = cls.squeezed_axes(x, props)
        shape = [d for i, d in enumerate(shape_of(x)) if i not in axes]
        return [tensor(shape, elem(x))]


@irdl_op_definition
class UnsqueezeOp(GraphOp):
    """x with size-1 axes inserted so that they sit at positions `axes` of the
    result (ONNX Unsqueeze; negative axes count from the result's end)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.unsqueeze"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axes = prop_def(I64Array)

    assembly_format = _UNARY_FORMAT

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        axes_prop = get_ints(props, "axes")
        rank = len(shape_of(x)) + len(axes_prop)
        axes = axes_in_range(cls.name, axes_prop, rank)
        rest = iter(shape_of(x))
        shape = [1 if i in axes else next(rest) for i in range(rank)]
        return [tensor(shape, elem(x))]


@irdl_op_definition
class FlattenOp(GraphOp):
    """A 2-D tensor: axes before `axis` flattened into the first dimension,
    the others into the second (ONNX Flatten; `axis` in -rank..rank, default 1)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.flatten"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axis = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(1)}

    assembly_format = _UNARY_FORMAT

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        shape = shape_of(x)
        axis = get_int(props, "axis")
        if not -len(shape) <= axis <= len(shape):
            raise ShapeError(
                f"{cls.name}: axis {axis} is out of range for rank {len(shape)} "
                f"(flatten takes -{len(shape)}..{len(shape)})"
            )
        axis += len(shape) if axis < 0 else 0
        return [tensor([math.prod(shape[:axis]), math.prod(shape[axis:])], elem(x))]


@irdl_op_definition
class BroadcastToOp(GraphOp):
    """x broadcast with the static `shape`: the result shape is the numpy
    broadcast of both (ONNX Expand with a constant shape)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.broadcast_to"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    shape = prop_def(I64Array)

    assembly_format = _UNARY_FORMAT

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        target = get_ints(props, "shape")
        _non_negative(cls.name, "shape", target)
        shape = shape_of(x)
        rank = max(len(shape), len(target))
        padded_x = (1,) * (rank - len(shape)) + shape
        padded_t = (1,) * (rank - len(target)) + target
        result: list[int] = []
        for a, b in zip(padded_x, padded_t, strict=True):
            if a != b and 1 not in (a, b):
                raise ShapeError(
                    f"{cls.name}: {type_str(x)} cannot be broadcast with shape "
                    f"{_shape_str(target)}"
                )
            result.append(b if a == 1 else a)
        return [tensor(result, elem(x))]


@irdl_op_definition
class TileOp(GraphOp):
    """x repeated `repeats[i]` times along each axis i (ONNX Tile, numpy.tile
    with one repeat per axis)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.tile"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    repeats = prop_def(I64Array)

    assembly_format = _UNARY_FORMAT

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        shape = shape_of(x)
        repeats = get_ints(props, "repeats")
        if len(repeats) != len(shape):
            raise ShapeError(
                f"{cls.name}: repeats {_shape_str(repeats)} need one value per axis "
                f"of {type_str(x)} (rank {len(shape)})"
            )
        _non_negative(cls.name, "repeats", repeats)
        return [tensor([d * r for d, r in zip(shape, repeats, strict=True)], elem(x))]


# ---------------------------------------------------------------------------
# Joining and cutting.


@irdl_op_definition
class ConcatOp(GraphOp):
    """The inputs joined along `axis` (ONNX Concat, numpy.concatenate); every
    other dimension and the element types must match."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.concat"

    inputs = var_operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axis = prop_def(IntegerAttr[I64])

    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        if not operand_types:
            raise ShapeError(f"{cls.name}: needs at least one input")
        element_type = same_element_type(cls.name, *operand_types)
        first = operand_types[0]
        rank = len(shape_of(first))
        axis = axis_in_range(cls.name, get_int(props, "axis"), rank)
        total = 0
        for t in operand_types:
            shape = shape_of(t)
            if len(shape) != rank:
                raise ShapeError(
                    f"{cls.name}: inputs {type_str(first)} and {type_str(t)} differ in rank"
                )
            if any(
                a != b
                for i, (a, b) in enumerate(zip(shape, shape_of(first), strict=True))
                if i != axis
            ):
                raise ShapeError(
                    f"{cls.name}: inputs {type_str(first)} and {type_str(t)} differ "
                    f"outside axis {axis}"
                )
            total += shape[axis]
        shape = list(shape_of(first))
        shape[axis] = total
        return [tensor(shape, element_type)]


@irdl_op_definition
class SplitOp(GraphOp):
    """x cut along `axis` into consecutive pieces of `sizes` (ONNX Split with
    static split sizes); one result per size."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.split"

    input = operand_def(AnyTensorTypeConstr)
    outputs = var_result_def(AnyTensorTypeConstr)
    axis = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(0)}
    sizes = prop_def(I64Array)

    assembly_format = _UNARY_FORMAT

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        shape = shape_of(x)
        axis = axis_in_range(cls.name, get_int(props, "axis"), len(shape))
        sizes = get_ints(props, "sizes")
        if not sizes:
            raise ShapeError(f"{cls.name}: sizes must not be empty")
        _non_negative(cls.name, "sizes", sizes)
        if sum(sizes) != shape[axis]:
            raise ShapeError(
                f"{cls.name}: sizes {_shape_str(sizes)} sum to {sum(sizes)} but axis "
                f"{axis} of {type_str(x)} has size {shape[axis]}"
            )
        results: list[Attribute] = []
        for size in sizes:
            piece = list(shape)
            piece[axis] = size
            results.append(tensor(piece, elem(x)))
        return results


@irdl_op_definition
class SliceOp(GraphOp):
    """x[starts:ends:steps] on `axes` (ONNX Slice with static parameters:
    negative indices count from the end, bounds are clamped, steps may be
    negative; `axes` defaults to 0..len(starts)-1, `steps` to 1)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.slice"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    starts = prop_def(I64Array)
    ends = prop_def(I64Array)
    axes = opt_prop_def(I64Array)
    steps = opt_prop_def(I64Array)

    assembly_format = _UNARY_FORMAT

    @classmethod
    def ranges(cls, x: Attribute, props: Props) -> list[range]:
        """The indices kept on each axis of x, in order."""
        shape = shape_of(x)
        starts = get_ints(props, "starts")
        ends = get_ints(props, "ends")
        axes = get_ints(props, "axes", tuple(range(len(starts))))
        steps = get_ints(props, "steps", (1,) * len(starts))
        for name, values in (("ends", ends), ("axes", axes), ("steps", steps)):
            if len(values) != len(starts):
                raise ShapeError(
                    f"{cls.name}: starts has {len(starts)} values but {name} has "
                    f"{len(values)}"
                )
        axes = axes_in_range(cls.name, axes, len(shape))
        kept = [range(d) for d in shape]
        for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
            if step == 0:
                raise ShapeError(f"{cls.name}: step on axis {axis} is 0")
            kept[axis] = _clamped_range(start, end, step, shape[axis])
        return kept

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        return [tensor([len(r) for r in cls.ranges(x, props)], elem(x))]


def _clamped_range(start: int, end: int, step: int, dim: int) -> range:
    """ONNX Slice bounds on one axis: negatives wrap once, then clamp to
    [0, dim] going forward or [-1, dim-1] going backward."""
    start += dim if start < 0 else 0
    end += dim if end < 0 else 0
    low, high = (0, dim) if step > 0 else (-1, dim - 1)
    start = min(max(start, 0), high)
    end = min(max(end, low), high)
    return range(start, end, step)


# ---------------------------------------------------------------------------
# Indexing.


@irdl_op_definition
class GatherOp(GraphOp):
    """data indexed along `axis` by an integer tensor (ONNX Gather,
    numpy.take): shape data[:axis] + indices + data[axis+1:]; negative
    indices count from the end."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.gather"

    data = operand_def(AnyTensorTypeConstr)
    indices = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axis = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(0)}

    assembly_format = (
        "$data `,` $indices attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        data, indices = operand_types
        _integer_tensor(cls.name, indices, "indices")
        shape = shape_of(data)
        axis = axis_in_range(cls.name, get_int(props, "axis"), len(shape))
        result = shape[:axis] + shape_of(indices) + shape[axis + 1 :]
        return [tensor(result, elem(data))]


def _check_element_indices(
    op_name: str, data: Attribute, indices: Attribute, axis: int
) -> None:
    _integer_tensor(op_name, indices, "indices")
    data_shape, index_shape = shape_of(data), shape_of(indices)
    fits = len(index_shape) == len(data_shape) and all(
        i == axis or n <= d for i, (n, d) in enumerate(zip(index_shape, data_shape, strict=True))
    )
    if not fits:
        raise ShapeError(
            f"{op_name}: indices {type_str(indices)} do not fit data {type_str(data)} "
            f"outside axis {axis} (same rank, no larger dimension)"
        )


@irdl_op_definition
class GatherElementsOp(GraphOp):
    """out[i][j][k] = data[indices[i][j][k]][j][k] for axis 0, and so on
    (ONNX GatherElements, numpy.take_along_axis); shaped like indices."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.gather_elements"

    data = operand_def(AnyTensorTypeConstr)
    indices = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axis = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(0)}

    assembly_format = (
        "$data `,` $indices attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        data, indices = operand_types
        axis = axis_in_range(cls.name, get_int(props, "axis"), len(shape_of(data)))
        _check_element_indices(cls.name, data, indices, axis)
        return [tensor(shape_of(indices), elem(data))]


SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


@irdl_op_definition
class ScatterElementsOp(GraphOp):
    """A copy of data where out[indices[i][j][k]][j][k] = updates[i][j][k] for
    axis 0, and so on (ONNX ScatterElements); `reduction` (none, add, mul,
    max, min) combines an update with the value it lands on."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.OPAQUE

    name = "graph.scatter_elements"

    data = operand_def(AnyTensorTypeConstr)
    indices = operand_def(AnyTensorTypeConstr)
    updates = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axis = opt_prop_def(IntegerAttr[I64])
    reduction = opt_prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(0), "reduction": str_attr("none")}

    assembly_format = (
        "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        data, indices, updates = operand_types
        get_str(props, "reduction", choices=SCATTER_REDUCTIONS)
        axis = axis_in_range(cls.name, get_int(props, "axis"), len(shape_of(data)))
        _check_element_indices(cls.name, data, indices, axis)
        same_element_type(cls.name, data, updates)
        if shape_of(updates) != shape_of(indices):
            raise ShapeError(
                f"{cls.name}: updates {type_str(updates)} and indices "
                f"{type_str(indices)} differ in shape"
            )
        return [data]


def _nd_index_depth(
    op_name: str, data: Attribute, indices: Attribute, batch_dims: int
) -> int:
    """The length k of each index tuple (the last dimension of indices),
    checked against data's rank and the shared leading batch dimensions."""
    _integer_tensor(op_name, indices, "indices")
    data_shape, index_shape = shape_of(data), shape_of(indices)
    if not 0 <= batch_dims < min(len(data_shape), len(index_shape)):
        raise ShapeError(
            f"{op_name}: batch_dims {batch_dims} must be less than the ranks of data "
            f"{type_str(data)} and indices {type_str(indices)}"
        )
    depth = index_shape[-1]
    if not 1 <= depth <= len(data_shape) - batch_dims:
        raise ShapeError(
            f"{op_name}: the last dimension of indices {type_str(indices)} ({depth}) "
            f"must be in 1..{len(data_shape) - batch_dims}, the rank of data "
            f"{type_str(data)} after {batch_dims} batch dims"
        )
    if data_shape[:batch_dims] != index_shape[:batch_dims]:
        raise ShapeError(
            f"{op_name}: the first {batch_dims} dims of data {type_str(data)} and "
            f"indices {type_str(indices)} differ"
        )
    return depth


@irdl_op_definition
class GatherNDOp(GraphOp):
    """Slices of data addressed by the index tuples in the last dimension of
    indices (ONNX GatherND): shape indices[:-1] + data[batch_dims + k:], where
    k = indices.shape[-1]; the first `batch_dims` dims are shared batch dims;
    negative indices count from the end."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.gather_nd"

    data = operand_def(AnyTensorTypeConstr)
    indices = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    batch_dims = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {"batch_dims": int_attr(0)}

    assembly_format = (
        "$data `,` $indices attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        data, indices = operand_types
        batch_dims = get_int(props, "batch_dims")
        depth = _nd_index_depth(cls.name, data, indices, batch_dims)
        result = shape_of(indices)[:-1] + shape_of(data)[batch_dims + depth :]
        return [tensor(result, elem(data))]


@irdl_op_definition
class ScatterNDOp(GraphOp):
    """A copy of data where the slice at each index tuple of indices (its last
    dimension) is replaced by, or combined with (`reduction` add, mul, max,
    min), the matching slice of updates (ONNX ScatterND); updates has shape
    indices[:-1] + data[k:]."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.OPAQUE

    name = "graph.scatter_nd"

    data = operand_def(AnyTensorTypeConstr)
    indices = operand_def(AnyTensorTypeConstr)
    updates = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    reduction = opt_prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {"reduction": str_attr("none")}

    assembly_format = (
        "$data `,` $indices `,` $updates attr-dict `:` "
        "functional-type(operands, results)"
    )

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        data, indices, updates = operand_types
        get_str(props, "reduction", choices=SCATTER_REDUCTIONS)
        depth = _nd_index_depth(cls.name, data, indices, 0)
        same_element_type(cls.name, data, updates)
        expected = shape_of(indices)[:-1] + shape_of(data)[depth:]
        if shape_of(updates) != expected:
            raise ShapeError(
                f"{cls.name}: updates {type_str(updates)} must have shape "
                f"{_shape_str(expected)} (indices {type_str(indices)}, data "
                f"{type_str(data)})"
            )
        return [data]


DEPTH_TO_SPACE_MODES = ("DCR", "CRD")


def _blocksize(op_name: str, props: Props) -> int:
    b = get_int(props, "blocksize")
    if b < 1:
        raise ShapeError(f"{op_name}: blocksize {b} must be positive")
    return b


def _nchw(op_name: str, x: Attribute) -> Shape:
    shape = shape_of(x)
    if len(shape) != 4:
        raise ShapeError(f"{op_name}: input must be 4-D (NCHW), got {type_str(x)}")
    return shape


@irdl_op_definition
class DepthToSpaceOp(GraphOp):
    """NCHW channels moved into blocksize x blocksize spatial blocks (ONNX
    DepthToSpace; `mode` DCR (default) or CRD orders the channels)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.depth_to_space"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    blocksize = prop_def(IntegerAttr[I64])
    mode = opt_prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {"mode": str_attr("DCR")}

    assembly_format = _UNARY_FORMAT

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        n, c, h, w = _nchw(cls.name, x)
        get_str(props, "mode", choices=DEPTH_TO_SPACE_MODES)
        b = _blocksize(cls.name, props)
        if c % (b * b):
            raise ShapeError(
                f"{cls.name}: channels of {type_str(x)} ({c}) are not a multiple of "
                f"blocksize^2 (blocksize {b})"
            )
        return [tensor([n, c // (b * b), h * b, w * b], elem(x))]


@irdl_op_definition
class SpaceToDepthOp(GraphOp):
    """NCHW blocksize x blocksize spatial blocks moved into channels (ONNX
    SpaceToDepth; `mode` DCR (default) or CRD orders the channels, as the
    DepthToSpace it inverts)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.space_to_depth"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    blocksize = prop_def(IntegerAttr[I64])
    mode = opt_prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {"mode": str_attr("DCR")}

    assembly_format = _UNARY_FORMAT

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[Attribute], props: Props
    ) -> list[Attribute]:
        x = operand_types[0]
        n, c, h, w = _nchw(cls.name, x)
        get_str(props, "mode", choices=DEPTH_TO_SPACE_MODES)
        b = _blocksize(cls.name, props)
        if h % b or w % b:
            raise ShapeError(
                f"{cls.name}: spatial size {h}x{w} of {type_str(x)} is not a multiple "
                f"of blocksize {b}"
            )
        return [tensor([n, c * b * b, h // b, w // b], elem(x))]
