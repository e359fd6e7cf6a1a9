"""The nn compute rules (ops/nn.py): each kernel verifies, and the te
interpreter running it agrees with the graph interpreter running the op on
random inputs (the te interpreter also refuses any read outside a tensor)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, f64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.graph import nn
from xtc.dialects.graph.base import (
    GraphOp,
    ShapeError,
    bool_attr,
    defined_ops,
    float_attr,
    int_attr,
    ints_attr,
    str_attr,
)
from xtc.dialects.te import ComputeOp, ReduceOp
from xtc.ops import load_compute_rules
from xtc.ops.te_builder import KernelBuilder
from xtc.passes.graph_winograd import TRANSFORMS
from xtc.testing.graph_op import single_op_module, tensor_type_of

RULES = load_compute_rules()
Props = Mapping[str, Attribute]
SETTINGS = settings(max_examples=12, deadline=None)


def build_kernel(
    op_class: type[GraphOp], arrays: Sequence[np.ndarray], props: Props
) -> tuple[ModuleOp, FuncOp]:
    """The one-op graph module over `arrays`' types, and the kernel the op's
    compute rule builds (verified)."""
    types = [tensor_type_of(a) for a in arrays]
    graph = single_op_module(op_class, types, props)
    op = next(o for o in graph.walk() if isinstance(o, op_class))
    k = KernelBuilder("kernel", types)
    kernel = k.finish(RULES[op_class](k, op, k.inputs))
    ModuleOp([kernel.clone()]).verify()
    assert kernel.function_type.outputs.data == tuple(op.result_types)
    return graph, kernel


def check(
    op_class: type[GraphOp],
    arrays: Sequence[np.ndarray],
    props: Props | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> FuncOp:
    """Runs the op (graph interpreter) and its kernel (te interpreter)."""
    graph, kernel = build_kernel(op_class, arrays, props or {})
    (expected,) = interp.run(graph, list(arrays))
    (actual,) = interp.run(ModuleOp([kernel.clone()]), list(arrays))
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)
    return kernel


def build_or_reject(op_class: type[GraphOp], arrays: Sequence[np.ndarray], props: Props) -> None:
    """Discards a hypothesis example whose properties the op refuses."""
    try:
        single_op_module(op_class, [tensor_type_of(a) for a in arrays], props)
    except ShapeError:
        assume(False)


def randn(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: Any) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(0, 200, shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def f64_array(values: Sequence[float]) -> DenseArrayBase[Any]:
    return DenseArrayBase.from_list(f64, [float(v) for v in values])


def test_every_nn_op_has_a_rule() -> None:
    assert [c.name for c in defined_ops(nn) if c not in RULES] == []


# ---------------------------------------------------------------------------
# Convolutions.


@SETTINGS
@given(
    st.integers(1, 2),
    st.lists(st.integers(1, 3), min_size=2, max_size=2),
    st.lists(st.integers(1, 2), min_size=2, max_size=2),
    st.lists(st.integers(0, 2), min_size=4, max_size=4),
    st.sampled_from([1, 2]),
    st.integers(0, 2**31),
)
def test_conv2d(
    batch: int,
    strides: list[int],
    dilation: list[int],
    padding: list[int],
    groups: int,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    x, w = randn(rng, batch, 2 * groups, 5, 4), randn(rng, 2 * groups, 2, 2, 3)
    props = {
        "strides": ints_attr(strides),
        "dilation": ints_attr(dilation),
        "padding": ints_attr(padding),
        "groups": int_attr(groups),
    }
    build_or_reject(nn.Conv2dOp, [x, w], props)
    check(nn.Conv2dOp, [x, w], props)


def test_conv2d_pads_in_a_stage_of_its_own() -> None:
    rng = np.random.default_rng(0)
    x, w = randn(rng, 1, 1, 3, 3), randn(rng, 1, 1, 2, 2)
    padded = check(nn.Conv2dOp, [x, w], {"padding": ints_attr([1, 0, 0, 1])})
    unpadded = check(nn.Conv2dOp, [x, w])
    assert sum(isinstance(o, ComputeOp) for o in padded.walk()) == 2
    assert sum(isinstance(o, ComputeOp) for o in unpadded.walk()) == 1


@SETTINGS
@given(
    st.tuples(st.integers(1, 7), st.integers(1, 7)),
    st.lists(st.integers(0, 2), min_size=4, max_size=4),
    st.sampled_from([2, 4]),
    st.integers(0, 2**31),
)
def test_winograd_conv2d(hw: tuple[int, int], padding: list[int], m: int, seed: int) -> None:
    """The five stages agree with the op on whole and partial tiles (the
    te interpreter refuses a read past the zero-padded input)."""
    rng = np.random.default_rng(seed)
    transforms = TRANSFORMS[m]
    alpha = m + 2
    arrays = [
        randn(rng, 1, 2, *hw, 2),
        randn(rng, alpha, alpha, 1, 4, 2) / 20,  # outputs of a few units: f32 error ~1e-6
        transforms.input.astype(np.float32),
        transforms.output.astype(np.float32),
    ]
    props = {"padding": ints_attr(padding), "data_layout": str_attr("NCHW2c")}
    build_or_reject(nn.WinogradConv2dOp, arrays, props)
    kernel = check(nn.WinogradConv2dOp, arrays, props, atol=1e-4)
    assert sum(isinstance(o, ReduceOp) for o in kernel.walk()) == 5


@SETTINGS
@given(
    st.lists(st.integers(1, 3), min_size=2, max_size=2),
    st.lists(st.integers(1, 2), min_size=2, max_size=2),
    st.lists(st.integers(0, 2), min_size=4, max_size=4),
    st.lists(st.integers(0, 1), min_size=2, max_size=2),
    st.sampled_from([1, 2]),
    st.integers(0, 2**31),
)
def test_conv2d_transpose(
    strides: list[int],
    dilation: list[int],
    padding: list[int],
    output_padding: list[int],
    groups: int,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    x, w = randn(rng, 1, 2 * groups, 3, 2), randn(rng, 2 * groups, 2, 2, 3)
    props = {
        "strides": ints_attr(strides),
        "dilation": ints_attr(dilation),
        "padding": ints_attr(padding),
        "output_padding": ints_attr(output_padding),
        "groups": int_attr(groups),
    }
    build_or_reject(nn.Conv2dTransposeOp, [x, w], props)
    check(nn.Conv2dTransposeOp, [x, w], props)


# ---------------------------------------------------------------------------
# Matrix products.


@SETTINGS
@given(st.lists(st.integers(1, 3), max_size=2), st.integers(1, 4), st.integers(0, 2**31))
def test_dense(batch: list[int], n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    check(nn.DenseOp, [randn(rng, *batch, 3), randn(rng, n, 3)])


MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (2, 3, 4)),
    ((2, 1, 4, 3), (3,)),
    ((4, 3), (3, 2)),
    ((2, 1, 4, 3), (5, 3, 2)),
    ((1, 4, 3), (2, 1, 3, 2)),
]


@pytest.mark.parametrize(("lhs", "rhs"), MATMUL_SHAPES)
def test_matmul(lhs: tuple[int, ...], rhs: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(lhs) * 10 + len(rhs))
    check(nn.MatmulOp, [randn(rng, *lhs), randn(rng, *rhs)])


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize(("batch_a", "batch_b"), [(2, 2), (1, 3), (2, 1)])
def test_batch_matmul(transpose_a: bool, transpose_b: bool, batch_a: int, batch_b: int) -> None:
    rng = np.random.default_rng(batch_a * 3 + batch_b)
    a = randn(rng, batch_a, *((4, 3) if transpose_a else (3, 4)))
    b = randn(rng, batch_b, *((2, 4) if transpose_b else (4, 2)))
    props = {"transpose_a": bool_attr(transpose_a), "transpose_b": bool_attr(transpose_b)}
    check(nn.BatchMatmulOp, [a, b], props)


# ---------------------------------------------------------------------------
# Bias and normalisation.


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.data())
def test_bias_add(shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(len(shape))
    x, bias = randn(rng, *shape), randn(rng, shape[axis])
    check(nn.BiasAddOp, [x, bias], {"axis": int_attr(axis)})


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.data())
def test_batch_norm(shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    epsilon = data.draw(st.sampled_from([1e-5, 1e-3, 0.5]))
    rng = np.random.default_rng(len(shape))
    channels = shape[axis]
    x = randn(rng, *shape)
    gamma, beta, mean = (randn(rng, channels) for _ in range(3))
    variance = np.abs(randn(rng, channels))
    props = {"axis": int_attr(axis), "epsilon": float_attr(epsilon)}
    check(nn.BatchNormOp, [x, gamma, beta, mean, variance], props)


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_layer_norm(shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    normalised = shape[axis % len(shape) :]

    def parameter_shape() -> list[int]:
        rank = data.draw(st.integers(0, len(normalised)))
        tail = normalised[len(normalised) - rank :]
        return [data.draw(st.sampled_from([1, d])) for d in tail]

    rng = np.random.default_rng(len(shape))
    x = randn(rng, *shape)
    gamma, beta = randn(rng, *parameter_shape()), randn(rng, *parameter_shape())
    check(nn.LayerNormOp, [x, gamma, beta], {"axis": int_attr(axis)}, rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------------------
# Pooling.


# Many drawn shapes are invalid (a window wider than the padded input) and
# rejected; hypothesis must not count that as a failed health check.
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    st.sampled_from([nn.MaxPool2dOp, nn.AvgPool2dOp]),
    st.lists(st.integers(2, 6), min_size=2, max_size=2),
    st.lists(st.integers(1, 3), min_size=2, max_size=2),
    st.lists(st.integers(1, 3), min_size=2, max_size=2),
    st.lists(st.integers(1, 2), min_size=2, max_size=2),
    st.lists(st.integers(0, 2), min_size=4, max_size=4),
    st.booleans(),
    st.booleans(),
)
def test_pool2d(
    op_class: type[GraphOp],
    hw: list[int],
    kernel: list[int],
    strides: list[int],
    dilation: list[int],
    padding: list[int],
    ceil_mode: bool,
    count_include_pad: bool,
) -> None:
    rng = np.random.default_rng(sum(hw) + sum(kernel))
    x = randn(rng, 1, 2, *hw)
    props = {
        "kernel": ints_attr(kernel),
        "strides": ints_attr(strides),
        "dilation": ints_attr(dilation),
        "padding": ints_attr(padding),
        "ceil_mode": bool_attr(ceil_mode),
    }
    if op_class is nn.AvgPool2dOp:
        props["count_include_pad"] = bool_attr(count_include_pad)
    build_or_reject(op_class, [x], props)
    check(op_class, [x], props)


@pytest.mark.parametrize("op_class", [nn.GlobalAvgPool2dOp, nn.GlobalMaxPool2dOp])
def test_global_pool2d(op_class: type[GraphOp]) -> None:
    rng = np.random.default_rng(0)
    check(op_class, [randn(rng, 2, 3, 3, 4)])


# ---------------------------------------------------------------------------
# Softmax.


@SETTINGS
@given(
    st.sampled_from([nn.SoftmaxOp, nn.LogSoftmaxOp]),
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.data(),
)
def test_softmax(op_class: type[GraphOp], shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(len(shape))
    check(op_class, [randn(rng, *shape) * 10], {"axis": int_attr(axis)})


def test_softmax_subtracts_the_max() -> None:
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0]], np.float32)
    check(nn.SoftmaxOp, [x])
    check(nn.LogSoftmaxOp, [x])


def test_softmax_is_several_computes_with_max_and_sum() -> None:
    rng = np.random.default_rng(0)
    kernel = check(nn.SoftmaxOp, [randn(rng, 2, 3)], {"axis": int_attr(0)})
    assert sum(isinstance(o, ComputeOp) for o in kernel.walk()) == 3
    kinds = sorted(o.kind.data for o in kernel.walk() if isinstance(o, ReduceOp))
    assert kinds == ["max", "sum"]
    # exp(min(x - max, 0)): tir-expand-math's never-positive exp
    exps = [o for o in kernel.walk() if isinstance(o, xmath.ExpOp)]
    assert len(exps) == 2
    assert all(isinstance(o.operand.owner, arith.MinimumfOp) for o in exps)


# ---------------------------------------------------------------------------
# Pad and resize.


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.sampled_from(["constant", "reflect", "edge"]),
    st.floats(-3, 3, width=32),
    st.data(),
)
def test_pad(shape: list[int], mode: str, value: float, data: st.DataObject) -> None:
    rank = len(shape)
    pads = data.draw(st.lists(st.integers(-2, 3), min_size=2 * rank, max_size=2 * rank))
    kept = [shape[a] - max(-pads[a], 0) - max(-pads[a + rank], 0) for a in range(rank)]
    # An axis cropped past nothing has no numpy meaning (reported to the lead).
    assume(min(kept) >= (0 if mode == "constant" else 1))
    props = {"pads": ints_attr(pads), "mode": str_attr(mode), "value": float_attr(value)}
    x = randn(np.random.default_rng(rank), *shape)
    build_or_reject(nn.PadOp, [x], props)
    check(nn.PadOp, [x], props)


COORDINATE_MODES = list(nn.COORDINATE_MODES)


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.sampled_from(list(nn.RESIZE_MODES)),
    st.sampled_from(COORDINATE_MODES),
    st.sampled_from(list(nn.NEAREST_MODES)),
    st.data(),
)
def test_resize(
    shape: list[int], mode: str, transformation: str, nearest_mode: str, data: st.DataObject
) -> None:
    rank = len(shape)
    size = [data.draw(st.sampled_from([d, 1, 2, 3, 5, 7])) for d in shape]
    props: dict[str, Attribute] = {
        "size": ints_attr(size),
        "mode": str_attr(mode),
        "coordinate_transformation_mode": str_attr(transformation),
        "nearest_mode": str_attr(nearest_mode),
        "cubic_coeff_a": float_attr(data.draw(st.sampled_from([-0.75, -0.5]))),
        "exclude_outside": bool_attr(data.draw(st.booleans())),
        "antialias": bool_attr(mode != "nearest" and data.draw(st.booleans())),
    }
    if data.draw(st.booleans()):
        stretch = data.draw(st.sampled_from([0.8, 1.0, 1.25]))
        props["scales"] = f64_array([o / i * stretch for o, i in zip(size, shape, strict=True)])
    if transformation == "tf_crop_and_resize":
        starts = data.draw(st.lists(st.floats(-0.3, 0.5), min_size=rank, max_size=rank))
        ends = data.draw(st.lists(st.floats(0.5, 1.3), min_size=rank, max_size=rank))
        props["roi"] = f64_array(starts + ends)
        props["extrapolation_value"] = float_attr(-7.5)
    x = randn(np.random.default_rng(rank), *shape)
    check(nn.ResizeOp, [x], props, rtol=1e-6, atol=1e-6)


def test_resize_nearest_rounds_ties_as_asked() -> None:
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    for nearest_mode in nn.NEAREST_MODES:
        props = {
            "size": ints_attr([1, 8]),
            "coordinate_transformation_mode": str_attr("asymmetric"),
            "nearest_mode": str_attr(nearest_mode),
        }
        check(nn.ResizeOp, [x], props, rtol=0, atol=0)


def test_linear_resize_of_the_last_axis_and_others_is_two_stages() -> None:
    """Float linear resize of H and W: W first, into a stage te-inline keeps
    (NCH x W_out, f32), then H reading it at two rows; the interpreter's
    numbers. Nearest, one resized axis and integers stay one compute."""

    def computes(x: np.ndarray, size: list[int], mode: str) -> list[ComputeOp]:
        props = {"size": ints_attr(size), "mode": str_attr(mode)}
        kernel = check(nn.ResizeOp, [x], props, rtol=1e-6, atol=1e-6)
        return [o for o in kernel.walk() if isinstance(o, ComputeOp)]

    x = randn(np.random.default_rng(3), 1, 2, 5, 7)
    rows, out = computes(x, [1, 2, 10, 14], "linear")
    assert rows.materialize is not None and out.materialize is None
    assert rows.result.type.get_shape() == (1, 2, 5, 14)
    assert len(computes(x, [1, 2, 10, 14], "nearest")) == 1
    assert len(computes(x, [1, 2, 5, 14], "linear")) == 1
    assert len(computes(x, [1, 2, 10, 7], "linear")) == 1
    assert len(computes(x.astype(np.int32), [1, 2, 10, 14], "linear")) == 1


def test_antialias_widens_the_filter_when_downsampling() -> None:
    # A quarter of the size: 8 linear or 16 cubic taps per axis (a te.reduce
    # over them, not an unrolled sum); each output averages a wide window,
    # so a checkerboard flattens where plain linear would alias it.
    x = (np.indices((16, 16)).sum(axis=0) % 2 * 2 - 1).astype(np.float32)
    for mode, taps in (("linear", 8), ("cubic", 16)):
        props = {"size": ints_attr([4, 4]), "mode": str_attr(mode), "antialias": bool_attr(True)}
        kernel = check(nn.ResizeOp, [x], props, rtol=1e-6, atol=1e-6)
        reduce = next(o for o in kernel.walk() if isinstance(o, ReduceOp))
        assert list(reduce.extents.get_values()) == [taps, taps]
        graph, _ = build_kernel(nn.ResizeOp, [x], props)
        (smooth,) = interp.run(graph, [x])
        assert np.abs(smooth).max() < 0.2


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 3),
    st.sampled_from(list(nn.GRID_SAMPLE_MODES)),
    st.sampled_from(list(nn.GRID_PADDING_MODES)),
    st.booleans(),
    st.data(),
)
def test_grid_sample(
    spatial: int, mode: str, padding: str, align_corners: bool, data: st.DataObject
) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    sizes = [data.draw(st.integers(1, 4)) for _ in range(spatial)]
    points = [data.draw(st.integers(1, 3)) for _ in range(spatial)]
    x = randn(rng, 2, 2, *sizes)
    ties = rng.integers(-10, 11, (2, *points, spatial)) / 4
    spread = rng.uniform(-2.5, 2.5, ties.shape)
    grid = np.where(rng.random(ties.shape) < 0.4, ties, spread).astype(np.float32)
    props = {
        "mode": str_attr(mode),
        "padding_mode": str_attr(padding),
        "align_corners": bool_attr(align_corners),
    }
    check(nn.GridSampleOp, [x, grid], props, rtol=1e-6, atol=1e-6)


def test_grid_sample_of_nan_and_infinite_points_stays_inside() -> None:
    # The te interpreter refuses any read outside a tensor.
    x = randn(np.random.default_rng(5), 1, 2, 3, 4)
    grid = np.array([[[[np.nan, 0.0], [np.inf, -np.inf], [1e30, -1e30]]]], np.float32)
    for mode in nn.GRID_SAMPLE_MODES:
        for padding in nn.GRID_PADDING_MODES:
            props = {"mode": str_attr(mode), "padding_mode": str_attr(padding)}
            _, kernel = build_kernel(nn.GridSampleOp, [x, grid], props)
            (got,) = interp.run(ModuleOp([kernel.clone()]), [x, grid])
            assert got.shape == (1, 2, 1, 3)


# ---------------------------------------------------------------------------
# Element types: integers wrap as the interpreter's casts do, booleans sum
# as integers, f16 accumulates in f32, integer resize rounds half to even.

DTYPES = [np.int8, np.uint8, np.int64, np.float16, np.float64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_element_types(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    tolerance = {"rtol": 1e-2, "atol": 1e-2}

    def arrays(*shapes: tuple[int, ...]) -> list[np.ndarray]:
        return [random_array(rng, s, dtype) for s in shapes]

    check(
        nn.Conv2dOp,
        arrays((1, 2, 4, 4), (2, 2, 2, 2)),
        {"padding": ints_attr([1, 0, 0, 1])},
        **tolerance,
    )
    check(
        nn.Conv2dTransposeOp,
        arrays((1, 2, 3, 3), (2, 2, 2, 2)),
        {"strides": ints_attr([2, 2])},
        **tolerance,
    )
    check(nn.MatmulOp, arrays((2, 3, 4), (4,)), **tolerance)
    check(nn.DenseOp, arrays((2, 4), (3, 4)), **tolerance)
    check(nn.BiasAddOp, arrays((2, 3), (3,)), **tolerance)
    check(nn.ResizeOp, arrays((2, 3)), {"size": ints_attr([3, 5]), "mode": str_attr("linear")})
    check(nn.ResizeOp, arrays((2, 3)), {"size": ints_attr([3, 5]), "mode": str_attr("cubic")})
    if dtype != np.bool_:
        window = {
            "kernel": ints_attr([3, 3]),
            "padding": ints_attr([1, 1, 1, 1]),
            "strides": ints_attr([2, 2]),
        }
        check(nn.MaxPool2dOp, arrays((1, 2, 5, 5)), window)
        check(nn.GlobalMaxPool2dOp, arrays((1, 2, 3, 2)))
        check(
            nn.PadOp, arrays((3, 4)), {"pads": ints_attr([1, 2, 0, 1]), "value": float_attr(-2.5)}
        )


@pytest.mark.parametrize("dtype", [np.float16, np.float64], ids=lambda d: np.dtype(d).name)
def test_float_element_types(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    tolerance = {"rtol": 1e-2, "atol": 1e-2}
    x = random_array(rng, (2, 3, 2), dtype)
    vectors = [random_array(rng, (3,), dtype) for _ in range(3)]
    variance = np.abs(random_array(rng, (3,), dtype))
    check(nn.BatchNormOp, [x, *vectors, variance], **tolerance)
    check(nn.LayerNormOp, [x, vectors[0][:2], vectors[1][:2]], **tolerance)
    check(nn.SoftmaxOp, [x], **tolerance)
    check(nn.LogSoftmaxOp, [x], **tolerance)
    images = random_array(rng, (1, 2, 5, 5), dtype)
    window = {"kernel": ints_attr([3, 3]), "padding": ints_attr([1, 1, 1, 1])}
    check(nn.AvgPool2dOp, [images], window, **tolerance)
    check(nn.GlobalAvgPool2dOp, [images], **tolerance)


# ---------------------------------------------------------------------------
# Through the lowerings: convert-graph-to-te then convert-te-to-tir, each
# level run by the interpreter.


def pipeline_cases() -> list[tuple[type[GraphOp], list[np.ndarray], dict[str, Attribute]]]:
    rng = np.random.default_rng(7)

    def f(*shape: int) -> np.ndarray:
        return randn(rng, *shape)

    def u8(*shape: int) -> np.ndarray:
        return random_array(rng, shape, np.uint8)

    window = {
        "kernel": ints_attr([3, 2]),
        "strides": ints_attr([2, 2]),
        "padding": ints_attr([1, 1, 1, 0]),
        "ceil_mode": bool_attr(True),
    }
    return [
        (
            nn.Conv2dOp,
            [f(1, 4, 6, 5), f(4, 2, 3, 2)],
            {
                "strides": ints_attr([2, 1]),
                "padding": ints_attr([1, 0, 2, 1]),
                "dilation": ints_attr([1, 2]),
                "groups": int_attr(2),
            },
        ),
        (
            nn.Conv2dTransposeOp,
            [f(1, 4, 3, 3), f(4, 3, 3, 2)],
            {
                "strides": ints_attr([2, 3]),
                "padding": ints_attr([1, 0, 2, 1]),
                "output_padding": ints_attr([1, 2]),
                "groups": int_attr(2),
            },
        ),
        (nn.DenseOp, [f(2, 3, 5), f(4, 5)], {}),
        (nn.MatmulOp, [f(2, 1, 4, 3), f(5, 3, 2)], {}),
        (
            nn.BatchMatmulOp,
            [f(1, 4, 3), f(2, 5, 4)],
            {"transpose_a": bool_attr(True), "transpose_b": bool_attr(True)},
        ),
        (nn.BiasAddOp, [f(2, 3, 4), f(3)], {}),
        (nn.BatchNormOp, [f(2, 3, 4), f(3), f(3), f(3), np.abs(f(3))], {}),
        (nn.LayerNormOp, [f(2, 3, 4), f(3, 4), f(4)], {"axis": int_attr(1)}),
        (nn.MaxPool2dOp, [u8(1, 2, 7, 6)], window),
        (nn.AvgPool2dOp, [f(1, 2, 7, 6)], window),
        (nn.GlobalAvgPool2dOp, [f(2, 3, 4, 5)], {}),
        (nn.GlobalMaxPool2dOp, [f(2, 3, 4, 5)], {}),
        (nn.SoftmaxOp, [f(2, 3, 4) * 10], {"axis": int_attr(1)}),
        (nn.LogSoftmaxOp, [f(2, 3, 4) * 10], {}),
        (nn.PadOp, [f(3, 4)], {"pads": ints_attr([2, -1, 1, 2]), "mode": str_attr("reflect")}),
        (
            nn.ResizeOp,
            [u8(2, 3)],
            {
                "size": ints_attr([4, 5]),
                "mode": str_attr("linear"),
                "coordinate_transformation_mode": str_attr("tf_crop_and_resize"),
                "roi": f64_array([-0.2, 0.1, 0.9, 1.2]),
                "extrapolation_value": float_attr(3.0),
            },
        ),
        (
            nn.ResizeOp,
            [f(1, 2, 9, 7)],
            {
                "size": ints_attr([1, 2, 4, 3]),
                "mode": str_attr("cubic"),
                "antialias": bool_attr(True),
                "exclude_outside": bool_attr(True),
            },
        ),
        (
            nn.GridSampleOp,
            [f(2, 3, 5, 4), np.tanh(f(2, 3, 6, 2)) * 1.2],
            {"mode": str_attr("cubic"), "padding_mode": str_attr("reflection")},
        ),
    ]


@pytest.mark.parametrize(
    ("op_class", "arrays", "props"), pipeline_cases(), ids=lambda v: getattr(v, "name", "")
)
def test_through_the_lowerings(
    op_class: type[GraphOp], arrays: list[np.ndarray], props: dict[str, Attribute]
) -> None:
    from xtc.driver.pipelines import apply_pipeline

    graph = single_op_module(op_class, [tensor_type_of(a) for a in arrays], props)
    (expected,) = interp.run(graph, arrays)
    te = apply_pipeline(graph.clone(), "convert-graph-to-te")
    tir = apply_pipeline(te.clone(), "convert-te-to-tir")
    for module in (te, tir):
        (actual,) = interp.run(module, arrays)
        assert actual.dtype == expected.dtype
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)
