"""Tensor graph ops against numpy and onnx.reference, and their shape errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper
from onnx.reference import ReferenceEvaluator

from xtc.dialects.graph import tensor as t
from xtc.dialects.graph.base import ShapeError, int_attr, ints_attr, str_attr
from xtc.interp import RunTimeFault
from xtc.testing.graph_op import run_single_op, single_op_module, tensor_type_of

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)


def onnx_node(op_type: str, inputs: list[np.ndarray], n_out: int = 1, **attrs: Any) -> list[Any]:
    """Runs one ONNX node with the reference evaluator."""
    names = [f"in{i}" for i in range(len(inputs))]
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op_type, names, outs, **attrs)
    return list(ReferenceEvaluator(node).run(None, dict(zip(names, inputs, strict=False))))


def f32(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def types(*arrays: np.ndarray) -> list[Any]:
    return [tensor_type_of(a) for a in arrays]


# ---------------------------------------------------------------------------
# reshape, transpose, squeeze, unsqueeze, flatten


@settings(max_examples=20, deadline=None)
@given(shapes.flatmap(lambda s: st.tuples(st.just(s), st.permutations(s))))
def test_reshape_to_any_shape_with_the_same_count(case: tuple[Any, Any]) -> None:
    shape, target = case
    target = (math.prod(target[:2]), *target[2:])
    x = f32(shape)
    (got,) = run_single_op(t.ReshapeOp, [x], {"shape": ints_attr(target)})
    np.testing.assert_array_equal(got, x.reshape(target))


def test_reshape_refuses_a_different_count_naming_both_shapes() -> None:
    with pytest.raises(
        ShapeError,
        match=r"tensor<2x3xf32> \(6 elements\) to tensor<4x2xf32> \(8 elements\)",
    ):
        single_op_module(t.ReshapeOp, types(f32((2, 3))), {"shape": ints_attr([4, 2])})


def test_reshape_refuses_placeholders() -> None:
    with pytest.raises(ShapeError, match=r"shape \[-1, 3\] has a negative value"):
        single_op_module(t.ReshapeOp, types(f32((2, 3))), {"shape": ints_attr([-1, 3])})


@settings(max_examples=20, deadline=None)
@given(shapes.flatmap(lambda s: st.tuples(st.just(s), st.permutations(range(len(s))))))
def test_transpose_like_numpy(case: tuple[Any, Any]) -> None:
    shape, perm = case
    x = f32(shape)
    (got,) = run_single_op(t.TransposeOp, [x], {"perm": ints_attr(perm)})
    np.testing.assert_array_equal(got, np.transpose(x, perm))


def test_transpose_defaults_to_reversed_axes() -> None:
    x = f32((2, 3, 4))
    (got,) = run_single_op(t.TransposeOp, [x])
    np.testing.assert_array_equal(got, x.T)


@pytest.mark.parametrize("perm", [[0, 0, 1], [0, 1], [1, 2, 3]])
def test_transpose_refuses_a_non_permutation(perm: list[int]) -> None:
    with pytest.raises(ShapeError, match=r"is not a permutation of 0\.\.2 \(rank 3\)"):
        single_op_module(t.TransposeOp, types(f32((2, 3, 4))), {"perm": ints_attr(perm)})


@settings(max_examples=20, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=5, min_side=1, max_side=2), st.data())
def test_squeeze_like_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    units = [i for i, d in enumerate(shape) if d == 1]
    chosen = data.draw(st.lists(st.sampled_from(units), unique=True) if units else st.just([]))
    axes = [a - len(shape) if data.draw(st.booleans()) else a for a in chosen]
    x = f32(shape)
    (got,) = run_single_op(t.SqueezeOp, [x], {"axes": ints_attr(axes)})
    np.testing.assert_array_equal(got, np.squeeze(x, axis=tuple(chosen) or None))


def test_squeeze_refuses_a_dimension_that_is_not_one() -> None:
    with pytest.raises(
        ShapeError,
        match=r"cannot squeeze axis 1 of tensor<1x3xf32>: its size is 3, not 1",
    ):
        single_op_module(t.SqueezeOp, types(f32((1, 3))), {"axes": ints_attr([-1])})


def test_squeeze_refuses_repeated_axes() -> None:
    with pytest.raises(ShapeError, match=r"axes \[0, -2\] name axis 0 more than once"):
        single_op_module(t.SqueezeOp, types(f32((1, 1))), {"axes": ints_attr([0, -2])})


@settings(max_examples=20, deadline=None)
@given(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3), st.data())
def test_unsqueeze_like_onnx(shape: tuple[int, ...], data: st.DataObject) -> None:
    out_rank = len(shape) + data.draw(st.integers(1, 3))
    axes = data.draw(
        st.lists(
            st.integers(-out_rank, out_rank - 1),
            min_size=out_rank - len(shape),
            max_size=out_rank - len(shape),
            unique_by=lambda a: a % out_rank,
        )
    )
    x = f32(shape)
    (got,) = run_single_op(t.UnsqueezeOp, [x], {"axes": ints_attr(axes)})
    (want,) = onnx_node("Unsqueeze", [x, np.array(axes, np.int64)])
    np.testing.assert_array_equal(got, want)
    assert got.shape == want.shape


def test_unsqueeze_refuses_an_axis_past_the_result_rank() -> None:
    with pytest.raises(ShapeError, match=r"axis 3 is out of range for rank 3"):
        single_op_module(t.UnsqueezeOp, types(f32((2, 3))), {"axes": ints_attr([3])})


@pytest.mark.parametrize("axis", [-3, -1, 0, 1, 2, 3])
def test_flatten_like_onnx(axis: int) -> None:
    x = f32((2, 3, 4))
    (got,) = run_single_op(t.FlattenOp, [x], {"axis": int_attr(axis)})
    (want,) = onnx_node("Flatten", [x], axis=axis)
    np.testing.assert_array_equal(got, want)


def test_flatten_refuses_axis_past_rank() -> None:
    with pytest.raises(ShapeError, match=r"axis 4 is out of range for rank 3"):
        single_op_module(t.FlattenOp, types(f32((2, 3, 4))), {"axis": int_attr(4)})


# ---------------------------------------------------------------------------
# broadcast_to, tile


@settings(max_examples=20, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
def test_broadcast_to_like_onnx_expand(shapes_: hnp.BroadcastableShapes) -> None:
    x_shape, target = shapes_.input_shapes
    x = f32(x_shape)
    (got,) = run_single_op(t.BroadcastToOp, [x], {"shape": ints_attr(target)})
    (want,) = onnx_node("Expand", [x, np.array(target, np.int64)])
    np.testing.assert_array_equal(got, want)
    assert got.shape == shapes_.result_shape


def test_broadcast_to_refuses_incompatible_shape() -> None:
    with pytest.raises(
        ShapeError, match=r"tensor<2x3xf32> cannot be broadcast with shape \[4, 3\]"
    ):
        single_op_module(t.BroadcastToOp, types(f32((2, 3))), {"shape": ints_attr([4, 3])})


@settings(max_examples=15, deadline=None)
@given(
    shapes.flatmap(
        lambda s: st.tuples(
            st.just(s), st.lists(st.integers(0, 3), min_size=len(s), max_size=len(s))
        )
    )
)
def test_tile_like_numpy(case: tuple[Any, Any]) -> None:
    shape, repeats = case
    x = f32(shape)
    (got,) = run_single_op(t.TileOp, [x], {"repeats": ints_attr(repeats)})
    np.testing.assert_array_equal(got, np.tile(x, repeats))


def test_tile_refuses_one_repeat_per_axis_missing() -> None:
    with pytest.raises(
        ShapeError,
        match=r"repeats \[2\] need one value per axis of tensor<2x3xf32> \(rank 2\)",
    ):
        single_op_module(t.TileOp, types(f32((2, 3))), {"repeats": ints_attr([2])})


# ---------------------------------------------------------------------------
# concat, split


@settings(max_examples=20, deadline=None)
@given(shapes, st.data())
def test_concat_like_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    inputs = []
    for i, size in enumerate(sizes):
        s = list(shape)
        s[axis] = size
        inputs.append(f32(tuple(s), i))
    (got,) = run_single_op(t.ConcatOp, inputs, {"axis": int_attr(axis)})
    np.testing.assert_array_equal(got, np.concatenate(inputs, axis=axis))


def test_concat_refuses_inputs_that_differ_off_axis_naming_both() -> None:
    with pytest.raises(
        ShapeError,
        match=r"inputs tensor<2x3xf32> and tensor<2x4xf32> differ outside axis 0",
    ):
        single_op_module(t.ConcatOp, types(f32((2, 3)), f32((2, 4))), {"axis": int_attr(0)})


def test_concat_refuses_mixed_element_types() -> None:
    with pytest.raises(ShapeError, match=r"operand element types differ"):
        single_op_module(
            t.ConcatOp,
            types(f32((2, 3)), np.zeros((2, 3), np.int32)),
            {"axis": int_attr(0)},
        )


def test_concat_refuses_axis_out_of_range() -> None:
    with pytest.raises(ShapeError, match=r"axis 2 is out of range for rank 2"):
        single_op_module(t.ConcatOp, types(f32((2, 3))), {"axis": int_attr(2)})


@settings(max_examples=20, deadline=None)
@given(shapes, st.data())
def test_split_like_numpy(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, dim), max_size=3)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, dim], strict=False)]
    x = f32(shape)
    got = run_single_op(t.SplitOp, [x], {"axis": int_attr(axis), "sizes": ints_attr(sizes)})
    want = np.split(x, cuts, axis=axis)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=False):
        np.testing.assert_array_equal(g, w)


def test_split_refuses_sizes_that_do_not_sum_to_the_dimension() -> None:
    with pytest.raises(
        ShapeError,
        match=r"sizes \[1, 1\] sum to 2 but axis 1 of tensor<2x3xf32> has size 3",
    ):
        single_op_module(
            t.SplitOp,
            types(f32((2, 3))),
            {"axis": int_attr(1), "sizes": ints_attr([1, 1])},
        )


# ---------------------------------------------------------------------------
# slice


@st.composite
def slice_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], dict[str, list[int]]]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    rank = len(shape)
    axes = draw(
        st.lists(
            st.integers(-rank, rank - 1),
            min_size=1,
            max_size=rank,
            unique_by=lambda a: a % rank,
        )
    )
    bound = st.one_of(st.integers(-7, 7), st.sampled_from([INT64_MIN, INT64_MAX]))
    n = len(axes)
    return shape, {
        "starts": draw(st.lists(bound, min_size=n, max_size=n)),
        "ends": draw(st.lists(bound, min_size=n, max_size=n)),
        "axes": axes,
        "steps": draw(st.lists(st.integers(-3, 3).filter(bool), min_size=n, max_size=n)),
    }


@settings(max_examples=40, deadline=None)
@given(slice_cases())
def test_slice_like_onnx(case: tuple[tuple[int, ...], dict[str, list[int]]]) -> None:
    shape, params = case
    x = f32(shape)
    props = {k: ints_attr(v) for k, v in params.items()}
    (got,) = run_single_op(t.SliceOp, [x], props)
    # The reference evaluator slices with numpy, which sends a start below -dim
    # going backward to -1 (nothing); the ONNX spec (and onnxruntime) clamp it
    # to 0. Hand it the spec's equivalent start, -dim.
    starts = [
        max(start, -shape[axis]) if step < 0 else start
        for start, axis, step in zip(
            params["starts"], params["axes"], params["steps"], strict=False
        )
    ]
    arrays = [
        np.array(v, np.int64) for v in (starts, params["ends"], params["axes"], params["steps"])
    ]
    (want,) = onnx_node("Slice", [x, *arrays])
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_slice_backward_from_below_minus_dim_starts_at_zero() -> None:
    x = np.arange(3, dtype=np.float32)
    props = {
        "starts": ints_attr([INT64_MIN]),
        "ends": ints_attr([INT64_MIN]),
        "steps": ints_attr([-1]),
    }
    (got,) = run_single_op(t.SliceOp, [x], props)
    np.testing.assert_array_equal(got, [0.0])


def test_slice_defaults_axes_and_steps() -> None:
    x = f32((4, 5))
    props = {"starts": ints_attr([1, -4]), "ends": ints_attr([3, INT64_MAX])}
    (got,) = run_single_op(t.SliceOp, [x], props)
    np.testing.assert_array_equal(got, x[1:3, 1:])


def test_slice_refuses_step_zero_and_mismatched_lengths() -> None:
    x_type = types(f32((4, 5)))
    with pytest.raises(ShapeError, match=r"step on axis 1 is 0"):
        single_op_module(
            t.SliceOp,
            x_type,
            {
                "starts": ints_attr([0]),
                "ends": ints_attr([1]),
                "axes": ints_attr([1]),
                "steps": ints_attr([0]),
            },
        )
    with pytest.raises(ShapeError, match=r"starts has 2 values but ends has 1"):
        single_op_module(t.SliceOp, x_type, {"starts": ints_attr([0, 0]), "ends": ints_attr([1])})


# ---------------------------------------------------------------------------
# gather, gather_elements, scatter_elements


@settings(max_examples=25, deadline=None)
@given(shapes, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.data())
def test_gather_like_onnx(
    shape: tuple[int, ...], index_shape: tuple[int, ...], data: st.DataObject
) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    dtype = data.draw(st.sampled_from([np.int32, np.int64]))
    indices = data.draw(hnp.arrays(dtype, index_shape, elements=st.integers(-dim, dim - 1)))
    x = f32(shape)
    (got,) = run_single_op(t.GatherOp, [x, indices], {"axis": int_attr(axis)})
    (want,) = onnx_node("Gather", [x, indices], axis=axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_gather_needs_integer_indices() -> None:
    with pytest.raises(ShapeError, match=r"indices must be an integer tensor, got tensor<2xf32>"):
        single_op_module(t.GatherOp, types(f32((3, 4)), f32((2,))))


def test_gather_refuses_an_index_out_of_range_at_run_time() -> None:
    with pytest.raises(
        RunTimeFault,
        match=r"^Gather: index 3 is out of range \[-3, 3\) on axis 0 of tensor<3x4xf32>",
    ):
        run_single_op(t.GatherOp, [f32((3, 4)), np.array([0, 3], np.int64)])


@settings(max_examples=20, deadline=None)
@given(shapes, st.data())
def test_gather_elements_like_onnx(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    index_shape = tuple(
        data.draw(st.integers(0, 3)) if i == axis % len(shape) else data.draw(st.integers(1, d))
        for i, d in enumerate(shape)
    )
    indices = data.draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-dim, dim - 1)))
    x = f32(shape)
    (got,) = run_single_op(t.GatherElementsOp, [x, indices], {"axis": int_attr(axis)})
    # Smaller index dimensions off the axis read the leading part of data.
    a = axis % len(shape)
    window = tuple(slice(None) if i == a else slice(0, n) for i, n in enumerate(index_shape))
    want = np.take_along_axis(x[window], np.where(indices < 0, indices + dim, indices), a)
    np.testing.assert_array_equal(got, want)


def test_gather_elements_refuses_larger_indices() -> None:
    with pytest.raises(
        ShapeError,
        match=r"indices tensor<3x3xi64> do not fit data tensor<2x3xf32> outside axis 1",
    ):
        single_op_module(
            t.GatherElementsOp,
            types(f32((2, 3)), np.zeros((3, 3), np.int64)),
            {"axis": int_attr(1)},
        )


@settings(max_examples=20, deadline=None)
@given(shapes, st.sampled_from(["none", "add", "mul", "max", "min"]), st.data())
def test_scatter_elements_like_onnx(
    shape: tuple[int, ...], reduction: str, data: st.DataObject
) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    index_shape = tuple(data.draw(st.integers(1, d)) for d in shape)
    # Distinct targets per line for "none": the order of repeated writes is unspecified.
    if reduction == "none":
        a = axis % len(shape)
        index_shape = tuple(min(n, dim) if i == a else n for i, n in enumerate(index_shape))
        perm = np.random.default_rng(2).permutation(dim)[: index_shape[a]]
        shape_a = [1] * len(shape)
        shape_a[a] = index_shape[a]
        indices = np.broadcast_to(perm.reshape(shape_a), index_shape).astype(np.int64) - dim
    else:
        indices = data.draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-dim, dim - 1)))
    x = f32(shape)
    updates = f32(index_shape, 1)
    props = {"axis": int_attr(axis), "reduction": str_attr(reduction)}
    (got,) = run_single_op(t.ScatterElementsOp, [x, indices, updates], props)
    (want,) = onnx_node("ScatterElements", [x, indices, updates], axis=axis, reduction=reduction)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_scatter_elements_refuses_updates_shaped_unlike_indices() -> None:
    with pytest.raises(
        ShapeError,
        match=r"updates tensor<2x2xf32> and indices tensor<1x2xi64> differ in shape",
    ):
        single_op_module(
            t.ScatterElementsOp,
            types(f32((2, 3)), np.zeros((1, 2), np.int64), f32((2, 2))),
        )


def test_scatter_elements_refuses_an_unknown_reduction() -> None:
    with pytest.raises(ShapeError, match=r"property 'reduction' is \"sub\""):
        single_op_module(
            t.ScatterElementsOp,
            types(f32((2, 3)), np.zeros((1, 2), np.int64), f32((1, 2))),
            {"reduction": str_attr("sub")},
        )


# ---------------------------------------------------------------------------
# depth_to_space, space_to_depth


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_like_onnx(mode: str) -> None:
    x = f32((2, 8, 2, 3))
    props = {"blocksize": int_attr(2), "mode": str_attr(mode)}
    (got,) = run_single_op(t.DepthToSpaceOp, [x], props)
    (want,) = onnx_node("DepthToSpace", [x], blocksize=2, mode=mode)
    np.testing.assert_array_equal(got, want)


def test_space_to_depth_like_onnx_and_inverts_dcr() -> None:
    x = f32((1, 3, 4, 6))
    (got,) = run_single_op(t.SpaceToDepthOp, [x], {"blocksize": int_attr(2)})
    (want,) = onnx_node("SpaceToDepth", [x], blocksize=2)
    np.testing.assert_array_equal(got, want)
    (back,) = run_single_op(t.DepthToSpaceOp, [got], {"blocksize": int_attr(2)})
    np.testing.assert_array_equal(back, x)


def test_depth_and_space_refuse_indivisible_sizes() -> None:
    with pytest.raises(
        ShapeError, match=r"channels of tensor<1x6x2x2xf32> \(6\) are not a multiple"
    ):
        single_op_module(t.DepthToSpaceOp, types(f32((1, 6, 2, 2))), {"blocksize": int_attr(2)})
    with pytest.raises(
        ShapeError,
        match=r"spatial size 3x4 of tensor<1x1x3x4xf32> is not a multiple of blocksize 2",
    ):
        single_op_module(t.SpaceToDepthOp, types(f32((1, 1, 3, 4))), {"blocksize": int_attr(2)})
    with pytest.raises(ShapeError, match=r"input must be 4-D \(NCHW\), got tensor<2x3xf32>"):
        single_op_module(t.SpaceToDepthOp, types(f32((2, 3))), {"blocksize": int_attr(2)})


def test_space_to_depth_crd_like_onnx_and_inverts_crd() -> None:
    x = f32((1, 2, 4, 6))
    props = {"blocksize": int_attr(2), "mode": str_attr("CRD")}
    (got,) = run_single_op(t.SpaceToDepthOp, [x], props)
    (want,) = onnx_node("SpaceToDepth", [x], blocksize=2, mode="CRD")
    np.testing.assert_array_equal(got, want)
    (back,) = run_single_op(t.DepthToSpaceOp, [got], props)
    np.testing.assert_array_equal(back, x)


# ---------------------------------------------------------------------------
# gather_nd, scatter_nd


@st.composite
def nd_cases(draw: st.DrawFn, batched: bool = True) -> tuple[tuple[int, ...], np.ndarray, int]:
    """A data shape, index tuples that fit it, and a batch_dims."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3))
    batch_dims = draw(st.integers(0, len(shape) - 1)) if batched else 0
    depth = draw(st.integers(1, len(shape) - batch_dims))
    middle = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    index_shape = (*shape[:batch_dims], *middle, depth)
    dims = np.array(shape[batch_dims : batch_dims + depth])
    unit = draw(hnp.arrays(np.float64, index_shape, elements=st.floats(0, 0.999)))
    indices = np.floor(unit * 2 * dims).astype(np.int64) - dims  # -dim..dim-1
    return shape, indices, batch_dims


@settings(max_examples=25, deadline=None)
@given(nd_cases())
def test_gather_nd_like_onnx(case: tuple[tuple[int, ...], np.ndarray, int]) -> None:
    shape, indices, batch_dims = case
    x = f32(shape)
    (got,) = run_single_op(t.GatherNDOp, [x, indices], {"batch_dims": int_attr(batch_dims)})
    (want,) = onnx_node("GatherND", [x, indices], batch_dims=batch_dims)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_gather_nd_refuses_index_tuples_longer_than_the_rank() -> None:
    with pytest.raises(
        ShapeError,
        match=r"the last dimension of indices tensor<2x3xi64> \(3\) must be in 1\.\.2",
    ):
        single_op_module(t.GatherNDOp, types(f32((2, 3)), np.zeros((2, 3), np.int64)))


def test_gather_nd_refuses_batch_dims_that_differ() -> None:
    with pytest.raises(
        ShapeError,
        match=r"the first 1 dims of data tensor<2x3xf32> and indices tensor<3x1xi64> differ",
    ):
        single_op_module(
            t.GatherNDOp,
            types(f32((2, 3)), np.zeros((3, 1), np.int64)),
            {"batch_dims": int_attr(1)},
        )
    with pytest.raises(ShapeError, match=r"batch_dims 2 must be less than the ranks"):
        single_op_module(
            t.GatherNDOp,
            types(f32((2, 3)), np.zeros((2, 1), np.int64)),
            {"batch_dims": int_attr(2)},
        )


@settings(max_examples=25, deadline=None)
@given(nd_cases(batched=False), st.sampled_from(["none", "add", "mul", "max", "min"]))
def test_scatter_nd_like_onnx(
    case: tuple[tuple[int, ...], np.ndarray, int], reduction: str
) -> None:
    shape, indices, _ = case
    if reduction == "none":
        # Distinct targets: the order of repeated writes is unspecified.
        dims = shape[: indices.shape[-1]]
        flat = np.ravel_multi_index(tuple(np.moveaxis(indices % dims, -1, 0)), dims)
        _, first = np.unique(flat.reshape(-1), return_index=True)
        indices = indices.reshape(-1, indices.shape[-1])[np.sort(first)]
    x = f32(shape)
    updates = f32((*indices.shape[:-1], *shape[indices.shape[-1] :]), 1)
    props = {"reduction": str_attr(reduction)}
    (got,) = run_single_op(t.ScatterNDOp, [x, indices, updates], props)
    # The reference evaluator does not wrap negative indices.
    positive = indices % np.array(shape[: indices.shape[-1]])
    (want,) = onnx_node("ScatterND", [x, positive, updates], reduction=reduction)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_scatter_nd_refuses_updates_of_the_wrong_shape() -> None:
    with pytest.raises(
        ShapeError,
        match=r"updates tensor<2xf32> must have shape \[2, 3\] \(indices tensor<2x1xi64>",
    ):
        single_op_module(
            t.ScatterNDOp,
            types(f32((4, 3)), np.zeros((2, 1), np.int64), f32((2,))),
        )


def test_scatter_nd_refuses_an_index_out_of_range_at_run_time() -> None:
    with pytest.raises(RunTimeFault, match=r"index 4 is out of range \[-4, 4\) on axis 0"):
        run_single_op(t.ScatterNDOp, [f32((4,)), np.array([[4]], np.int64), f32((1,))])
