"""The tensor compute rules (ops/tensor.py): every op lowered by
convert-graph-to-te runs in the te interpreter exactly as the graph
interpreter runs it, or fails with the same run-time fault (an index out of
range names the op and the index); the te interpreter also refuses any read
outside a tensor, so the clamped branches of concat and of indexed reads are
checked too."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.graph import tensor as t
from xtc.dialects.graph.base import (
    GraphOp,
    ShapeError,
    defined_ops,
    int_attr,
    ints_attr,
    str_attr,
)
from xtc.dialects.tir import AssertOp
from xtc.testing.graph_op import single_op_module, tensor_type_of
from xtc.lowering.convert_graph_to_te import ConvertGraphToTe
from xtc.ops import load_compute_rules
from xtc.driver.textual_ir import make_context

RULES = load_compute_rules()
RNG = np.random.default_rng(0)
SETTINGS = settings(max_examples=25, deadline=None)
Props = Mapping[str, Attribute]

dim = st.integers(1, 3)
shapes = st.lists(dim, min_size=1, max_size=3)


def lower(graph: ModuleOp) -> ModuleOp:
    lowered = graph.clone()
    ConvertGraphToTe().apply(make_context(), lowered)
    lowered.verify()
    return lowered


def op_module(op_class: type[GraphOp], arrays: Sequence[np.ndarray], props: Props) -> ModuleOp:
    """The one-op graph module; a hypothesis example the op refuses is dropped."""
    try:
        return single_op_module(op_class, [tensor_type_of(a) for a in arrays], props)
    except ShapeError:
        assume(False)
        raise


def check(
    op_class: type[GraphOp], arrays: Sequence[np.ndarray], props: Props | None = None
) -> None:
    """The graph interpreter on the op and the te interpreter on its lowering
    give the same results (bit for bit, but for the order in which a scatter
    folds float updates), or the same run-time fault."""
    graph = op_module(op_class, arrays, props or {})
    try:
        expected = interp.run(graph, list(arrays))
    except interp.RunTimeFault as fault:
        with pytest.raises(interp.RunTimeFault) as raised:
            interp.run(lower(graph), list(arrays))
        assert str(raised.value) == str(fault)
        return
    actual = interp.run(lower(graph), list(arrays))
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6)


def randn(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_every_tensor_op_has_a_rule() -> None:
    assert [op.name for op in defined_ops(t) if op not in RULES] == []


@SETTINGS
@given(shape=shapes, data=st.data())
def test_reshape(shape: list[int], data: st.DataObject) -> None:
    """Any target shape with the same size: a random split of the size's factors."""
    size = math.prod(shape)
    factors = [p for p in range(2, size + 1) for _ in range(_multiplicity(size, p))]
    target: list[int] = []
    for f in data.draw(st.permutations(factors)):
        if target and data.draw(st.booleans()):
            target[-1] *= f
        else:
            target.append(f)
        if data.draw(st.booleans()):
            target.append(1)
    check(t.ReshapeOp, [randn(*shape)], {"shape": ints_attr(target)})


def _multiplicity(n: int, p: int) -> int:
    if any(p % q == 0 for q in range(2, p)):
        return 0
    count = 0
    while n % p == 0:
        n, count = n // p, count + 1
    return count


def test_reshape_edge_cases() -> None:
    check(t.ReshapeOp, [randn(1, 1)], {"shape": ints_attr([])})
    check(t.ReshapeOp, [randn(0, 4)], {"shape": ints_attr([2, 0])})
    check(t.ReshapeOp, [randn(6, 4)], {"shape": ints_attr([4, 3, 2])})


@SETTINGS
@given(shape=shapes, data=st.data())
def test_transpose(shape: list[int], data: st.DataObject) -> None:
    perm = data.draw(st.permutations(range(len(shape))))
    check(t.TransposeOp, [randn(*shape)], {"perm": ints_attr(perm)})
    check(t.TransposeOp, [randn(*shape)])


@SETTINGS
@given(shape=st.lists(st.integers(1, 2), min_size=1, max_size=4), data=st.data())
def test_squeeze_unsqueeze_flatten(shape: list[int], data: st.DataObject) -> None:
    x = randn(*shape)
    ones = [a for a, d in enumerate(shape) if d == 1]
    check(
        t.SqueezeOp,
        [x],
        {"axes": ints_attr(data.draw(st.sets(st.sampled_from(ones))))} if ones else {},
    )
    rank = len(shape) + 1
    check(t.UnsqueezeOp, [x], {"axes": ints_attr([data.draw(st.integers(-rank, rank - 1))])})
    axis = data.draw(st.integers(-len(shape), len(shape)))
    check(t.FlattenOp, [x], {"axis": int_attr(axis)})


@SETTINGS
@given(shape=shapes, target=shapes)
def test_broadcast_to(shape: list[int], target: list[int]) -> None:
    check(t.BroadcastToOp, [randn(*shape)], {"shape": ints_attr(target)})


@SETTINGS
@given(shape=shapes, data=st.data())
def test_tile(shape: list[int], data: st.DataObject) -> None:
    repeats = data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape)))
    check(t.TileOp, [randn(*shape)], {"repeats": ints_attr(repeats)})


@SETTINGS
@given(shape=shapes, data=st.data())
def test_concat(shape: list[int], data: st.DataObject) -> None:
    """Pieces of sizes 0..3 along the axis, unsigned elements (wrapping bits)."""
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    pieces = []
    for size in sizes:
        piece_shape = list(shape)
        piece_shape[axis] = size
        pieces.append(RNG.integers(0, 256, piece_shape).astype(np.uint8))
    check(t.ConcatOp, pieces, {"axis": int_attr(axis)})


@SETTINGS
@given(shape=shapes, data=st.data())
def test_split(shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(shape) - 1))
    cuts = sorted(data.draw(st.lists(st.integers(0, shape[axis]), max_size=3)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, shape[axis]], strict=True)]
    check(t.SplitOp, [randn(*shape)], {"axis": int_attr(axis), "sizes": ints_attr(sizes)})


bound = st.integers(-6, 6) | st.sampled_from([-(2**40), 2**40])


@SETTINGS
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
)
def test_slice(shape: list[int], data: st.DataObject) -> None:
    """Negative bounds, bounds past the ends, negative steps."""
    axes = data.draw(
        st.lists(
            st.integers(-len(shape), len(shape) - 1),
            min_size=1,
            max_size=len(shape),
            unique_by=lambda a: a % len(shape),
        )
    )
    n = len(axes)
    starts = data.draw(st.lists(bound, min_size=n, max_size=n))
    ends = data.draw(st.lists(bound, min_size=n, max_size=n))
    steps = data.draw(st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), min_size=n, max_size=n))
    props = {"starts": ints_attr(starts), "ends": ints_attr(ends), "axes": ints_attr(axes)}
    check(t.SliceOp, [randn(*shape)], {**props, "steps": ints_attr(steps)})


def indices(
    dim_size: int, shape: Sequence[int], dtype: type = np.int64, spread: int = 1
) -> np.ndarray:
    """Indices on an axis of dim_size: valid ones, negative ones included;
    with a spread of 2, any in [-2 dim_size, 2 dim_size), so that some are
    likely out of range."""
    values = RNG.integers(-spread * dim_size, spread * dim_size, shape)
    if np.dtype(dtype).kind == "u":
        values %= spread * dim_size
    return values.astype(dtype)


spreads = st.sampled_from([1, 1, 2])
"""Valid indices twice as often as indices that may be out of range."""


@SETTINGS
@given(
    shape=shapes,
    index_shape=st.lists(dim, max_size=2),
    dtype=st.sampled_from([np.int64, np.int32, np.uint8]),
    spread=spreads,
    data=st.data(),
)
def test_gather(
    shape: list[int], index_shape: list[int], dtype: type, spread: int, data: st.DataObject
) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    check(
        t.GatherOp,
        [randn(*shape), indices(shape[axis], index_shape, dtype, spread)],
        {"axis": int_attr(axis)},
    )


def index_shape_within(shape: Sequence[int], axis: int, data: st.DataObject) -> list[int]:
    """An indices shape for the element-wise gather/scatter: no larger than
    data off the axis, any size on it."""
    return [
        data.draw(st.integers(1, 3)) if a == axis else data.draw(st.integers(1, d))
        for a, d in enumerate(shape)
    ]


@SETTINGS
@given(shape=shapes, spread=spreads, data=st.data())
def test_gather_elements(shape: list[int], spread: int, data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(shape) - 1))
    index_shape = index_shape_within(shape, axis, data)
    check(
        t.GatherElementsOp,
        [randn(*shape), indices(shape[axis], index_shape, spread=spread)],
        {"axis": int_attr(axis)},
    )


REDUCTIONS = ["none", "add", "mul", "max", "min"]


@SETTINGS
@given(
    shape=shapes,
    reduction=st.sampled_from(REDUCTIONS),
    dtype=st.sampled_from([np.float32, np.int32, np.uint8, np.bool_]),
    spread=spreads,
    data=st.data(),
)
def test_scatter_elements(
    shape: list[int], reduction: str, dtype: type, spread: int, data: st.DataObject
) -> None:
    """Repeated indices: the last update wins, or all of them fold."""
    axis = data.draw(st.integers(0, len(shape) - 1))
    index_shape = index_shape_within(shape, axis, data)
    values = [RNG.integers(0, 5, s).astype(dtype) for s in (shape, index_shape)]
    check(
        t.ScatterElementsOp,
        [values[0], indices(shape[axis], index_shape, spread=spread), values[1]],
        {"axis": int_attr(axis), "reduction": str_attr(reduction)},
    )


@SETTINGS
@given(shape=shapes, spread=spreads, data=st.data())
def test_gather_nd(shape: list[int], spread: int, data: st.DataObject) -> None:
    batch_dims = data.draw(st.integers(0, len(shape) - 1))
    depth = data.draw(st.integers(1, len(shape) - batch_dims))
    tuples = data.draw(st.lists(dim, max_size=2))
    index_shape = [*shape[:batch_dims], *tuples]
    columns = [
        indices(shape[batch_dims + j], [*index_shape, 1], spread=spread) for j in range(depth)
    ]
    check(
        t.GatherNDOp,
        [randn(*shape), np.concatenate(columns, axis=-1)],
        {"batch_dims": int_attr(batch_dims)},
    )


@SETTINGS
@given(shape=shapes, reduction=st.sampled_from(REDUCTIONS), spread=spreads, data=st.data())
def test_scatter_nd(shape: list[int], reduction: str, spread: int, data: st.DataObject) -> None:
    depth = data.draw(st.integers(1, len(shape)))
    tuples = data.draw(st.lists(st.integers(1, 4), max_size=2))
    columns = [indices(shape[j], [*tuples, 1], spread=spread) for j in range(depth)]
    updates = randn(*tuples, *shape[depth:])
    check(
        t.ScatterNDOp,
        [randn(*shape), np.concatenate(columns, axis=-1), updates],
        {"reduction": str_attr(reduction)},
    )


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("blocksize", [1, 2])
def test_depth_and_space(mode: str, blocksize: int) -> None:
    props = {"blocksize": int_attr(blocksize), "mode": str_attr(mode)}
    check(t.DepthToSpaceOp, [randn(2, 4 * blocksize * blocksize, 2, 3)], props)
    check(t.SpaceToDepthOp, [randn(2, 3, 2 * blocksize, 3 * blocksize)], props)


BAD = np.array([[1, -9], [7, 0]], np.int64)
"""Indices into a 3x4 tensor: -9 is out of range on either axis, 7 too."""
BAD_INDEX_RUNS = [
    (t.GatherOp, [randn(3, 4), BAD], {"axis": int_attr(0)}, "Gather", "-9", "[-3, 3) on axis 0"),
    (
        t.GatherElementsOp,
        [randn(3, 4), BAD],
        {"axis": int_attr(1)},
        "GatherElements",
        "-9",
        "[-4, 4) on axis 1",
    ),
    (t.GatherNDOp, [randn(3, 4), BAD], {}, "GatherND", "7", "[-3, 3) on axis 0"),
    (
        t.ScatterElementsOp,
        [randn(3, 4), BAD, randn(2, 2)],
        {"axis": int_attr(0)},
        "ScatterElements",
        "-9",
        "[-3, 3) on axis 0",
    ),
    (t.ScatterNDOp, [randn(3, 4), BAD, randn(2)], {}, "ScatterND", "7", "[-3, 3) on axis 0"),
]


@pytest.mark.parametrize(
    ("op_class", "arrays", "props", "kind", "value", "where"),
    BAD_INDEX_RUNS,
    ids=[run[3] for run in BAD_INDEX_RUNS],
)
def test_an_index_out_of_range_fails_with_the_interpreters_message(
    op_class: type[GraphOp],
    arrays: list[np.ndarray],
    props: Props,
    kind: str,
    value: str,
    where: str,
) -> None:
    """The first index out of range in row-major order (component by
    component for the ND ops) is the one named, at both levels."""
    graph = op_module(op_class, arrays, props)
    message = f"{kind}: index {value} is out of range {where} of tensor<3x4xf32>"
    with pytest.raises(interp.RunTimeFault) as expected:
        interp.run(graph, arrays)
    assert str(expected.value) == message
    with pytest.raises(interp.RunTimeFault) as actual:
        interp.run(lower(graph), arrays)
    assert str(actual.value) == message


@pytest.mark.parametrize(
    ("op_class", "arrays", "props"),
    [run[:3] for run in BAD_INDEX_RUNS],
    ids=[run[3] for run in BAD_INDEX_RUNS],
)
def test_reads_past_a_failed_check_stay_inside_the_tensors(
    op_class: type[GraphOp], arrays: list[np.ndarray], props: Props
) -> None:
    """A failed check does not stop native code: the kernel goes on with
    the index clamped, so that it never reads outside a tensor (the te
    interpreter, here without the checks, refuses any such read)."""
    lowered = lower(op_module(op_class, arrays, props))
    checks = [op for op in lowered.walk() if isinstance(op, AssertOp)]
    assert checks
    for check_op in checks:
        check_op.detach()
        check_op.erase()
    (result,) = interp.run(lowered, arrays)
    assert np.isfinite(result).all()


def test_gather_from_an_empty_axis_fails_on_any_index() -> None:
    """No index is in range on an axis of size 0; none to check is fine."""
    data = randn(0, 2)
    graph = op_module(t.GatherOp, [data, np.zeros((3,), np.int64)], {})
    with pytest.raises(interp.RunTimeFault, match=r"index 0 is out of range \[-0, 0\)"):
        interp.run(lower(graph), [data, np.zeros((3,), np.int64)])
    check(t.GatherOp, [data, np.zeros((0,), np.int64)])
