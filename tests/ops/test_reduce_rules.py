"""The reduce compute rules (ops/reduce.py): every op lowered by
convert-graph-to-te runs in the te interpreter as the graph interpreter runs
it: every element type (i1 sums are `or`, unsigned max/min compare unsigned,
f16 accumulates in f32), empty axes, NaN, and the tie rules of argmax/argmin
and topk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.graph import reduce as r
from xtc.dialects.graph.base import (
    GraphOp,
    ShapeError,
    bool_attr,
    defined_ops,
    int_attr,
    ints_attr,
)
from xtc.testing.graph_op import single_op_module, tensor_type_of
from xtc.lowering.convert_graph_to_te import ConvertGraphToTe
from xtc.ops import load_compute_rules
from xtc.driver.textual_ir import make_context

RULES = load_compute_rules()
RNG = np.random.default_rng(0)
SETTINGS = settings(max_examples=25, deadline=None)
Props = Mapping[str, Attribute]

REDUCE = [r.ReduceSumOp, r.ReduceMeanOp, r.ReduceMaxOp, r.ReduceMinOp, r.ReduceProdOp]
DTYPES = [np.float32, np.float16, np.int8, np.uint8, np.int64, np.uint64, np.bool_]
shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3)


def lower(graph: ModuleOp) -> ModuleOp:
    lowered = graph.clone()
    ConvertGraphToTe().apply(make_context(), lowered)
    lowered.verify()
    return lowered


def check(
    op_class: type[GraphOp],
    arrays: Sequence[np.ndarray],
    props: Props | None = None,
    rtol: float = 1e-5,
) -> None:
    """The graph interpreter on the op and the te interpreter on its lowering
    agree (integers exactly); a hypothesis example the op refuses is dropped."""
    try:
        graph = single_op_module(op_class, [tensor_type_of(a) for a in arrays], props)
    except ShapeError:
        assume(False)
        raise
    with np.errstate(all="ignore"):
        expected = interp.run(graph, list(arrays))
    actual = interp.run(lower(graph), list(arrays))
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        if e.dtype.kind == "f":
            np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(a, e)


def sample(dtype: type, shape: Sequence[int], spread: int = 100) -> np.ndarray:
    if dtype == np.bool_:
        return RNG.random(shape) < 0.6
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    low = 0 if np.dtype(dtype).kind == "u" else -spread
    return RNG.integers(low, spread + 1, shape).astype(dtype)


def test_every_reduce_op_has_a_rule() -> None:
    assert [op.name for op in defined_ops(r) if op not in RULES] == []


@SETTINGS
@given(shape=shapes, dtype=st.sampled_from(DTYPES), keepdims=st.booleans(), data=st.data())
def test_reductions(shape: list[int], dtype: type, keepdims: bool, data: st.DataObject) -> None:
    """Every reduction over a random set of axes (none: all of them)."""
    rank = len(shape)
    axes = data.draw(
        st.lists(st.integers(-rank, rank - 1), max_size=rank, unique_by=lambda a: a % rank)
    )
    x = sample(dtype, shape)
    props = {"axes": ints_attr(axes), "keepdims": bool_attr(keepdims)}
    for op_class in REDUCE:
        check(op_class, [x], props, rtol=1e-2 if dtype == np.float16 else 1e-5)


@pytest.mark.parametrize("op_class", REDUCE, ids=lambda c: c.name)
def test_reduction_edge_cases(op_class: type[GraphOp]) -> None:
    """An empty axis gives the identity (the mean NaN); NaN propagates;
    a rank-0 tensor reduces to itself; products wrap."""
    check(op_class, [np.zeros((2, 0, 3), np.float32)], {"axes": ints_attr([1])})
    nan = np.array([[np.nan, 1.0, 3.0, -np.inf], [2.0, np.inf, 3.0, -1.0]], np.float32)
    check(op_class, [nan], {"axes": ints_attr([1])})
    check(op_class, [np.array(2.5, np.float32)])
    check(op_class, [np.array(-7, np.int32)])
    check(op_class, [sample(np.int8, (2, 6), 120)], {"axes": ints_attr([1])})


ARG = [r.ArgMaxOp, r.ArgMinOp]


@SETTINGS
@given(
    shape=shapes,
    dtype=st.sampled_from([np.float32, np.int8, np.uint8, np.bool_]),
    keepdims=st.booleans(),
    last=st.booleans(),
    data=st.data(),
)
def test_arg_reductions(
    shape: list[int], dtype: type, keepdims: bool, last: bool, data: st.DataObject
) -> None:
    """Few distinct values, so ties are common: first or last index."""
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = sample(dtype, shape, 2)
    if dtype == np.uint8:
        x = x + np.uint8(250)  # above 127: a signed comparison would be wrong
    props = {
        "axis": int_attr(axis),
        "keepdims": bool_attr(keepdims),
        "select_last_index": bool_attr(last),
    }
    for op_class in ARG:
        check(op_class, [x], props)


@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("op_class", ARG, ids=lambda c: c.name)
def test_arg_reductions_pick_nan(op_class: type[GraphOp], last: bool) -> None:
    x = np.array(
        [[1.0, np.nan, 3.0, np.nan, 3.0], [3, 3, -np.inf, 1, 1], [np.inf, np.inf, 0, 0, np.nan]],
        np.float32,
    )
    check(op_class, [x], {"axis": int_attr(1), "select_last_index": bool_attr(last)})


@SETTINGS
@given(
    shape=shapes,
    dtype=st.sampled_from([np.float32, np.float16, np.int32, np.uint8]),
    exclusive=st.booleans(),
    reverse=st.booleans(),
    data=st.data(),
)
def test_cumsum_and_cumprod(
    shape: list[int], dtype: type, exclusive: bool, reverse: bool, data: st.DataObject
) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    props = {
        "axis": int_attr(axis),
        "exclusive": bool_attr(exclusive),
        "reverse": bool_attr(reverse),
    }
    op_class = data.draw(st.sampled_from([r.CumSumOp, r.CumProdOp]))
    spread = 100 if op_class is r.CumSumOp else 3  # products of small values stay in range
    x = sample(dtype, shape, spread)
    check(op_class, [x], props, rtol=1e-2 if dtype == np.float16 else 1e-5)


@SETTINGS
@given(
    shape=shapes,
    dtype=st.sampled_from([np.float32, np.int32, np.uint8]),
    largest=st.booleans(),
    data=st.data(),
)
def test_topk(shape: list[int], dtype: type, largest: bool, data: st.DataObject) -> None:
    """Few distinct values: equal values keep the lower index first."""
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    x = sample(dtype, shape, 2)
    props = {"k": int_attr(k), "axis": int_attr(axis), "largest": bool_attr(largest)}
    check(r.TopKOp, [x], props)


@pytest.mark.parametrize("largest", [True, False])
def test_topk_places_nan_as_numpy_sorts_it(largest: bool) -> None:
    x = np.array([[1.0, np.nan, 3.0, np.nan, 3.0, -np.inf], [3, 3, -np.inf, 1, 1, 0]], np.float32)
    check(r.TopKOp, [x], {"k": int_attr(6), "largest": bool_attr(largest)})
