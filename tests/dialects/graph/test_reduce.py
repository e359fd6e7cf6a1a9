"""Reduce graph ops against numpy and onnx.reference, and their shape errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper
from onnx.reference import ReferenceEvaluator

from xtc.dialects.graph import reduce as r
from xtc.dialects.graph.base import GraphOp, ShapeError, bool_attr, int_attr, ints_attr
from xtc.testing.graph_op import run_single_op, single_op_module, tensor_type_of

NUMPY_REDUCTIONS: dict[type[GraphOp], Callable[..., Any]] = {
    r.ReduceSumOp: np.sum,
    r.ReduceMeanOp: np.mean,
    r.ReduceMaxOp: np.max,
    r.ReduceMinOp: np.min,
    r.ReduceProdOp: np.prod,
}


def onnx_node(op_type: str, inputs: list[np.ndarray], **attrs: Any) -> list[Any]:
    names = [f"in{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["out"], **attrs)
    return list(ReferenceEvaluator(node).run(None, dict(zip(names, inputs))))


@st.composite
def reduce_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int], bool]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    rank = len(shape)
    axes = (
        draw(
            st.lists(
                st.integers(-rank, rank - 1),
                max_size=rank,
                unique_by=lambda a: a % rank,
            )
        )
        if rank
        else []
    )
    return shape, axes, draw(st.booleans())


@pytest.mark.parametrize("op", list(NUMPY_REDUCTIONS))
@settings(max_examples=15, deadline=None)
@given(case=reduce_cases())
def test_reductions_like_numpy(
    op: type[GraphOp], case: tuple[Any, list[int], bool]
) -> None:
    shape, axes, keepdims = case
    x = np.random.default_rng(0).uniform(0.5, 1.5, shape).astype(np.float32)
    props = {"axes": ints_attr(axes), "keepdims": bool_attr(keepdims)}
    (got,) = run_single_op(op, [x], props)
    want = NUMPY_REDUCTIONS[op](x, axis=tuple(axes) or None, keepdims=keepdims)
    assert got.shape == np.shape(want)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize(
    ("op", "onnx_op"),
    [
        (r.ReduceSumOp, "ReduceSum"),
        (r.ReduceMeanOp, "ReduceMean"),
        (r.ReduceMaxOp, "ReduceMax"),
        (r.ReduceMinOp, "ReduceMin"),
        (r.ReduceProdOp, "ReduceProd"),
    ],
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_reductions_like_onnx(
    op: type[GraphOp], onnx_op: str, dtype: Any
) -> None:
    x = np.random.default_rng(3).integers(-9, 9, (3, 4)).astype(dtype)
    (got,) = run_single_op(
        op, [x], {"axes": ints_attr([1]), "keepdims": bool_attr(False)}
    )
    (want,) = onnx_node(onnx_op, [x, np.array([1], np.int64)], keepdims=0)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_reductions_default_to_every_axis_kept() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (got,) = run_single_op(r.ReduceSumOp, [x])
    np.testing.assert_array_equal(got, [[15.0]])


def test_reductions_over_an_empty_axis_give_the_identity() -> None:
    x = np.zeros((2, 0), np.float32)
    props = {"axes": ints_attr([1]), "keepdims": bool_attr(False)}
    for op, identity in [
        (r.ReduceSumOp, 0.0),
        (r.ReduceProdOp, 1.0),
        (r.ReduceMaxOp, -np.inf),
        (r.ReduceMinOp, np.inf),
        (r.ReduceMeanOp, np.nan),
    ]:
        (got,) = run_single_op(op, [x], props)
        np.testing.assert_array_equal(got, [identity, identity])


def test_reductions_refuse_repeated_axes() -> None:
    with pytest.raises(ShapeError, match=r"axes \[1, -1\] name axis 1 more than once"):
        single_op_module(
            r.ReduceMaxOp,
            [tensor_type_of(np.zeros((2, 3), np.float32))],
            {"axes": ints_attr([1, -1])},
        )


def test_reductions_refuse_an_axis_out_of_range() -> None:
    with pytest.raises(ShapeError, match=r"axis -3 is out of range for rank 2"):
        single_op_module(
            r.ReduceSumOp,
            [tensor_type_of(np.zeros((2, 3), np.float32))],
            {"axes": ints_attr([-3])},
        )


@pytest.mark.parametrize(
    ("op", "onnx_op"), [(r.ArgMaxOp, "ArgMax"), (r.ArgMinOp, "ArgMin")]
)
@settings(max_examples=15, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    data=st.data(),
)
def test_arg_reductions_like_onnx_with_ties(
    op: type[GraphOp], onnx_op: str, shape: tuple[int, ...], data: st.DataObject
) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdims = data.draw(st.booleans())
    last = data.draw(st.booleans())
    # Few distinct values, so ties are common.
    x = data.draw(
        hnp.arrays(np.float32, shape, elements=st.sampled_from([0.0, 1.0, 2.0]))
    )
    props = {
        "axis": int_attr(axis),
        "keepdims": bool_attr(keepdims),
        "select_last_index": bool_attr(last),
    }
    (got,) = run_single_op(op, [x], props)
    (want,) = onnx_node(
        onnx_op, [x], axis=axis, keepdims=int(keepdims), select_last_index=int(last)
    )
    assert got.dtype == np.int64
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_arg_reduction_refuses_an_empty_axis() -> None:
    with pytest.raises(ShapeError, match=r"axis 1 of tensor<2x0xf32> is empty"):
        single_op_module(
            r.ArgMaxOp,
            [tensor_type_of(np.zeros((2, 0), np.float32))],
            {"axis": int_attr(1)},
        )


# ---------------------------------------------------------------------------
# cumsum, topk


@settings(max_examples=20, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
    data=st.data(),
)
def test_cumsum_like_onnx(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    exclusive, reverse = data.draw(st.booleans()), data.draw(st.booleans())
    dtype = data.draw(st.sampled_from([np.float32, np.int32, np.int64]))
    x = np.random.default_rng(1).integers(-5, 6, shape).astype(dtype)
    props = {
        "axis": int_attr(axis),
        "exclusive": bool_attr(exclusive),
        "reverse": bool_attr(reverse),
    }
    (got,) = run_single_op(r.CumSumOp, [x], props)
    (want,) = onnx_node(
        "CumSum",
        [x, np.array(axis, np.int64)],
        exclusive=int(exclusive),
        reverse=int(reverse),
    )
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_cumsum_refuses_booleans_and_a_bad_axis() -> None:
    with pytest.raises(ShapeError, match=r"cannot sum the i1 elements of tensor<3xi1>"):
        single_op_module(
            r.CumSumOp, [tensor_type_of(np.zeros(3, bool))], {"axis": int_attr(0)}
        )
    with pytest.raises(ShapeError, match=r"axis 1 is out of range for rank 1"):
        single_op_module(
            r.CumSumOp,
            [tensor_type_of(np.zeros(3, np.float32))],
            {"axis": int_attr(1)},
        )


@settings(max_examples=20, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
    data=st.data(),
)
def test_topk_like_onnx_with_ties(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    largest = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from([np.float32, np.int64, np.uint8]))
    # Few distinct values, so ties are common.
    x = np.random.default_rng(2).integers(0, 3, shape).astype(dtype)
    props = {"k": int_attr(k), "axis": int_attr(axis), "largest": bool_attr(largest)}
    values, indices = run_single_op(r.TopKOp, [x], props)
    names = ["x", "k"]
    node = helper.make_node(
        "TopK", names, ["v", "i"], axis=axis, largest=int(largest), sorted=1
    )
    want_v, want_i = ReferenceEvaluator(node).run(
        None, {"x": x, "k": np.array([k], np.int64)}
    )
    assert values.dtype == dtype and indices.dtype == np.int64
    np.testing.assert_array_equal(values, want_v)
    np.testing.assert_array_equal(indices, want_i)


def test_topk_refuses_k_larger_than_the_axis() -> None:
    with pytest.raises(
        ShapeError, match=r"k 4 must be in 0\.\.3, the size of axis 1 of tensor<2x3xf32>"
    ):
        single_op_module(
            r.TopKOp, [tensor_type_of(np.zeros((2, 3), np.float32))], {"k": int_attr(4)}
        )
