"""nn graph ops: shape inference, verifier messages and interpreter numbers,
checked against one-node ONNX models run by onnx.reference (and by
onnxruntime where the reference itself is wrong: pooling windows in
ceil_mode, grouped ConvTranspose with C != O)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import DenseArrayBase, f32, f64, i32
from xdsl.ir import Attribute

from xtc.dialects.graph import nn
from xtc.dialects.graph.base import (
    ShapeError,
    bool_attr,
    float_attr,
    int_attr,
    ints_attr,
    str_attr,
    tensor,
)
from xtc.passes.graph_winograd import TRANSFORMS, transformed_weight
from xtc.testing.graph_op import run_single_op, single_op_module

Array = np.ndarray[Any, np.dtype[Any]]
OPSET = 19


def onnx_node_model(
    op_type: str, inputs: Mapping[str, Array], opset: int = OPSET, **attributes: Any
) -> onnx.ModelProto:
    """A model of one ONNX node whose inputs are the named arrays; a name
    starting with "_" stands for a skipped optional input."""
    names = ["" if name.startswith("_") else name for name in inputs]
    node = helper.make_node(op_type, names, ["y"], **attributes)
    first = next(iter(inputs.values()))
    graph = helper.make_graph(
        [node],
        op_type.lower(),
        [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in inputs.items()
            if not name.startswith("_")
        ],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(first.dtype), None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def onnx_reference(op_type: str, inputs: Mapping[str, Array], **attributes: Any) -> Array:
    model = onnx_node_model(op_type, inputs, **attributes)
    feeds = {name: a for name, a in inputs.items() if not name.startswith("_")}
    return np.asarray(ReferenceEvaluator(model).run(None, feeds)[0])


def onnxruntime(op_type: str, inputs: Mapping[str, Array], **attributes: Any) -> Array:
    model = onnx_node_model(op_type, inputs, **attributes)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {name: a for name, a in inputs.items() if not name.startswith("_")}
    return np.asarray(session.run(None, feeds)[0])


def rand(rng: np.random.Generator, *shape: int) -> Array:
    return rng.standard_normal(shape).astype(np.float32)


def close(got: Array, want: Array, tol: float = 1e-4) -> None:
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# Convolutions.


@st.composite
def conv_cases(draw: st.DrawFn) -> dict[str, Any]:
    groups = draw(st.integers(1, 2))
    return {
        "n": draw(st.integers(1, 2)),
        "groups": groups,
        "cg": draw(st.integers(1, 3)),
        "og": draw(st.integers(1, 3)),
        "hw": draw(st.tuples(st.integers(1, 6), st.integers(1, 6))),
        "kernel": draw(st.tuples(st.integers(1, 3), st.integers(1, 3))),
        "strides": draw(st.tuples(st.integers(1, 3), st.integers(1, 3))),
        "dilation": draw(st.tuples(st.integers(1, 2), st.integers(1, 2))),
        "padding": draw(st.tuples(*[st.integers(0, 2)] * 4)),
    }


def window_fits(case: Mapping[str, Any]) -> bool:
    return all(
        (case["kernel"][i] - 1) * case["dilation"][i] + 1
        <= case["hw"][i] + case["padding"][i] + case["padding"][i + 2]
        for i in range(2)
    )


def window_props(case: Mapping[str, Any]) -> dict[str, Attribute]:
    return {
        "strides": ints_attr(case["strides"]),
        "dilation": ints_attr(case["dilation"]),
        "padding": ints_attr(case["padding"]),
    }


@settings(max_examples=25, deadline=None)
@given(conv_cases())
def test_conv2d_matches_onnx_conv(case: dict[str, Any]) -> None:
    assume(window_fits(case))
    rng = np.random.default_rng(0)
    g, cg, og = case["groups"], case["cg"], case["og"]
    x = rand(rng, case["n"], g * cg, *case["hw"])
    w = rand(rng, g * og, cg, *case["kernel"])
    props = {**window_props(case), "groups": int_attr(g)}
    (got,) = run_single_op(nn.Conv2dOp, [x, w], props)
    want = onnx_reference(
        "Conv",
        {"x": x, "w": w},
        strides=case["strides"],
        dilations=case["dilation"],
        pads=case["padding"],
        group=g,
    )
    close(got, want)


@settings(max_examples=25, deadline=None)
@given(conv_cases(), st.tuples(st.integers(0, 2), st.integers(0, 2)))
def test_conv2d_transpose_matches_onnx_conv_transpose(
    case: dict[str, Any], output_padding: tuple[int, int]
) -> None:
    strides, dilation = case["strides"], case["dilation"]
    # onnxruntime wants output_padding below the stride
    assume(all(output_padding[i] < strides[i] for i in range(2)))
    h, w_ = case["hw"]
    extent = [(case["kernel"][i] - 1) * dilation[i] + 1 for i in range(2)]
    pads = case["padding"]
    out = [
        strides[i] * (size - 1) + output_padding[i] + extent[i] - pads[i] - pads[i + 2]
        for i, size in enumerate((h, w_))
    ]
    assume(min(out) >= 1)
    rng = np.random.default_rng(1)
    g, cg, og = case["groups"], case["cg"], case["og"]
    x = rand(rng, case["n"], g * cg, h, w_)
    w = rand(rng, g * cg, og, *case["kernel"])
    props = {
        **window_props(case),
        "groups": int_attr(g),
        "output_padding": ints_attr(output_padding),
    }
    (got,) = run_single_op(nn.Conv2dTransposeOp, [x, w], props)
    attributes: dict[str, Any] = dict(
        strides=strides,
        dilations=dilation,
        pads=pads,
        group=g,
        output_padding=output_padding,
    )
    want = onnxruntime("ConvTranspose", {"x": x, "w": w}, **attributes)
    close(got, want)
    if g == 1:
        close(got, onnx_reference("ConvTranspose", {"x": x, "w": w}, **attributes))


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(1, 2),
    blocks=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    block=st.sampled_from([1, 4]),
    hw=st.tuples(st.integers(1, 9), st.integers(1, 9)),
    padding=st.tuples(*[st.integers(0, 2)] * 4),
    m=st.sampled_from([2, 4]),
    seed=st.integers(0, 1000),
)
def test_winograd_conv2d_matches_onnx_conv(
    n: int,
    blocks: tuple[int, int],
    block: int,
    hw: tuple[int, int],
    padding: tuple[int, int, int, int],
    m: int,
    seed: int,
) -> None:
    """Whole and partial tiles (an output that m does not divide, or smaller
    than one tile) give the 3×3 conv's output."""
    assume(all(hw[i] + padding[i] + padding[i + 2] >= 3 for i in range(2)))
    rng = np.random.default_rng(seed)
    (c, k), layout = (b * block for b in blocks), f"NCHW{block}c"
    x, w = rand(rng, n, c, *hw), rand(rng, k, c, 3, 3)
    transforms = TRANSFORMS[m]
    blocked_w = w.reshape(k // block, block, c, 3, 3).transpose(0, 2, 3, 4, 1)
    inputs = [
        np.ascontiguousarray(nn.blocked_array(x, layout)),
        transformed_weight(blocked_w, transforms),
        transforms.input.astype(np.float32),
        transforms.output.astype(np.float32),
    ]
    props = {"padding": ints_attr(padding), "data_layout": str_attr(layout)}
    (got,) = run_single_op(nn.WinogradConv2dOp, inputs, props)
    want = onnx_reference("Conv", {"x": x, "w": w}, pads=padding)
    close(nn.nchw_array(got, layout), want)


def test_conv2d_integer_accumulates_exactly() -> None:
    x = np.arange(2 * 4 * 4, dtype=np.int32).reshape(1, 2, 4, 4)
    w = np.ones((3, 2, 2, 2), np.int32)
    (got,) = run_single_op(nn.Conv2dOp, [x, w])
    want = np.stack([x[0, :, i : i + 3, j : j + 3].sum(0) for i in range(2) for j in range(2)]).sum(
        0
    )
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got[0, 0], want)


# ---------------------------------------------------------------------------
# Matrix products.


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 4))
def test_dense_matches_onnx_gemm(m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(2)
    x, w = rand(rng, m, k), rand(rng, n, k)
    (got,) = run_single_op(nn.DenseOp, [x, w])
    close(got, onnx_reference("Gemm", {"x": x, "w": w}, transB=1))


def test_dense_keeps_leading_dims() -> None:
    rng = np.random.default_rng(3)
    x, w = rand(rng, 2, 3, 5), rand(rng, 4, 5)
    (got,) = run_single_op(nn.DenseOp, [x, w])
    close(got, np.einsum("abk,nk->abn", x, w))


@settings(max_examples=25, deadline=None)
@given(
    hnp.mutually_broadcastable_shapes(signature="(m?,n),(n,p?)->(m?,p?)", max_dims=3, max_side=4)
)
def test_matmul_matches_onnx_matmul(shapes: hnp.BroadcastableShapes) -> None:
    rng = np.random.default_rng(4)
    a, b = (rand(rng, *s) for s in shapes.input_shapes)
    (got,) = run_single_op(nn.MatmulOp, [a, b])
    want = onnx_reference("MatMul", {"a": a, "b": b})
    assert got.shape == np.matmul(a, b).shape
    close(got, want)


@settings(max_examples=15, deadline=None)
@given(
    st.sampled_from([(1, 3), (3, 1), (2, 2)]),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.booleans(),
    st.booleans(),
)
def test_batch_matmul_transposes_and_broadcasts(
    batches: tuple[int, int], m: int, k: int, n: int, ta: bool, tb: bool
) -> None:
    rng = np.random.default_rng(5)
    a = rand(rng, batches[0], *((k, m) if ta else (m, k)))
    b = rand(rng, batches[1], *((n, k) if tb else (k, n)))
    props = {"transpose_a": bool_attr(ta), "transpose_b": bool_attr(tb)}
    (got,) = run_single_op(nn.BatchMatmulOp, [a, b], props)
    want = np.matmul(a.transpose(0, 2, 1) if ta else a, b.transpose(0, 2, 1) if tb else b)
    close(got, want)


# ---------------------------------------------------------------------------
# Bias and normalisation.


@settings(max_examples=15, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), st.data())
def test_bias_add_along_axis(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(6)
    x, bias = rand(rng, *shape), rand(rng, shape[axis])
    (got,) = run_single_op(nn.BiasAddOp, [x, bias], {"axis": int_attr(axis)})
    expand = [1] * len(shape)
    expand[axis] = shape[axis]
    close(got, x + bias.reshape(expand), 1e-6)


@settings(max_examples=15, deadline=None)
@given(hnp.array_shapes(min_dims=2, max_dims=4, max_side=4), st.floats(1e-5, 1e-1))
def test_batch_norm_matches_onnx(shape: tuple[int, ...], epsilon: float) -> None:
    rng = np.random.default_rng(7)
    c = shape[1]
    x, gamma, beta, mean = rand(rng, *shape), rand(rng, c), rand(rng, c), rand(rng, c)
    variance = rng.uniform(0.1, 2.0, c).astype(np.float32)
    (got,) = run_single_op(
        nn.BatchNormOp, [x, gamma, beta, mean, variance], {"epsilon": float_attr(epsilon)}
    )
    want = onnx_reference(
        "BatchNormalization",
        {"x": x, "gamma": gamma, "beta": beta, "mean": mean, "variance": variance},
        epsilon=float(np.float32(epsilon)),
    )
    close(got, want)


@settings(max_examples=20, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), st.data())
def test_layer_norm_matches_onnx(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    normalised = shape[axis:]
    # gamma and beta: a trailing part of the normalised dims, some of them 1
    trailing = data.draw(st.integers(0, len(normalised)))
    param_shape = tuple(
        data.draw(st.sampled_from([1, d])) for d in normalised[len(normalised) - trailing :]
    )
    rng = np.random.default_rng(8)
    x, gamma, beta = rand(rng, *shape), rand(rng, *param_shape), rand(rng, *param_shape)
    props = {"axis": int_attr(axis), "epsilon": float_attr(1e-3)}
    (got,) = run_single_op(nn.LayerNormOp, [x, gamma, beta], props)
    want = onnx_reference(
        "LayerNormalization",
        {"x": x, "gamma": gamma, "beta": beta},
        axis=axis,
        epsilon=float(np.float32(1e-3)),
    )
    close(got, want)


# ---------------------------------------------------------------------------
# Pooling.


@st.composite
def pool_cases(draw: st.DrawFn) -> dict[str, Any]:
    kernel = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, kernel[i % 2] - 1)) for i in range(4))
    return {
        "hw": draw(st.tuples(st.integers(1, 7), st.integers(1, 7))),
        "kernel": kernel,
        "strides": draw(st.tuples(st.integers(1, 3), st.integers(1, 3))),
        "dilation": draw(st.tuples(st.integers(1, 2), st.integers(1, 2))),
        "padding": padding,
        "ceil_mode": draw(st.booleans()),
    }


def pool_attributes(case: Mapping[str, Any]) -> dict[str, Any]:
    return dict(
        kernel_shape=case["kernel"],
        strides=case["strides"],
        dilations=case["dilation"],
        pads=case["padding"],
        ceil_mode=int(case["ceil_mode"]),
    )


def pool_props(case: Mapping[str, Any]) -> dict[str, Attribute]:
    return {
        **window_props(case),
        "kernel": ints_attr(case["kernel"]),
        "ceil_mode": bool_attr(case["ceil_mode"]),
    }


def every_window_reads_input(case: Mapping[str, Any], out_hw: Sequence[int]) -> bool:
    """No pooling window (of the ONNX output shape) lies wholly in the padding."""
    for axis, (size, out) in enumerate(zip(case["hw"], out_hw, strict=True)):
        for o in range(out):
            start = o * case["strides"][axis] - case["padding"][axis]
            taps = [start + k * case["dilation"][axis] for k in range(case["kernel"][axis])]
            if not any(0 <= tap < size for tap in taps):
                return False
    return True


@settings(max_examples=25, deadline=None)
@given(pool_cases())
def test_max_pool2d_matches_onnx_max_pool(case: dict[str, Any]) -> None:
    assume(window_fits(case))
    x = rand(np.random.default_rng(9), 2, 2, *case["hw"])
    want = onnxruntime("MaxPool", {"x": x}, **pool_attributes(case))
    assume(every_window_reads_input(case, want.shape[2:]))
    (got,) = run_single_op(nn.MaxPool2dOp, [x], pool_props(case))
    close(got, want, 0)


@settings(max_examples=25, deadline=None)
@given(pool_cases(), st.booleans())
def test_avg_pool2d_matches_onnx_average_pool(
    case: dict[str, Any], count_include_pad: bool
) -> None:
    assume(window_fits(case))
    x = rand(np.random.default_rng(10), 2, 2, *case["hw"])
    want = onnxruntime(
        "AveragePool",
        {"x": x},
        count_include_pad=int(count_include_pad),
        **pool_attributes(case),
    )
    assume(every_window_reads_input(case, want.shape[2:]))
    props = {**pool_props(case), "count_include_pad": bool_attr(count_include_pad)}
    (got,) = run_single_op(nn.AvgPool2dOp, [x], props)
    close(got, want)


def test_pool_ceil_mode_windows_start_at_the_stride() -> None:
    # H=6, kernel 4, stride 4, ceil_mode: windows [0:4] and [4:6]. (onnx.reference
    # shifts both windows by one here: it spreads the overhang over both sides.)
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 1, 6)
    props = {
        "kernel": ints_attr([1, 4]),
        "strides": ints_attr([1, 4]),
        "ceil_mode": bool_attr(True),
    }
    for include_pad in (False, True):
        avg_props = {**props, "count_include_pad": bool_attr(include_pad)}
        (avg,) = run_single_op(nn.AvgPool2dOp, [x], avg_props)
        np.testing.assert_array_equal(avg.ravel(), [1.5, 4.5])
    (biggest,) = run_single_op(nn.MaxPool2dOp, [x], props)
    np.testing.assert_array_equal(biggest.ravel(), [3, 5])


def test_pool_ceil_mode_drops_a_window_starting_in_the_padding() -> None:
    # padded size 6, kernel 2, stride 3: ceil(4 / 3) + 1 = 3 windows, but the
    # third starts at 6 - 1 = 5 >= H, inside the end padding, so it is dropped.
    props = {
        "kernel": ints_attr([2, 2]),
        "strides": ints_attr([3, 3]),
        "padding": ints_attr([1, 1, 1, 1]),
        "ceil_mode": bool_attr(True),
    }
    module = single_op_module(nn.MaxPool2dOp, [tensor((1, 1, 4, 4), f32)], props)
    pool = next(op for op in module.walk() if isinstance(op, nn.MaxPool2dOp))
    assert pool.output.type == tensor((1, 1, 2, 2), f32)


@settings(max_examples=10, deadline=None)
@given(hnp.array_shapes(min_dims=4, max_dims=4, max_side=4))
def test_global_pools_match_onnx(shape: tuple[int, ...]) -> None:
    x = rand(np.random.default_rng(11), *shape)
    (avg,) = run_single_op(nn.GlobalAvgPool2dOp, [x])
    close(avg, onnx_reference("GlobalAveragePool", {"x": x}))
    (biggest,) = run_single_op(nn.GlobalMaxPool2dOp, [x])
    close(biggest, onnx_reference("GlobalMaxPool", {"x": x}), 0)


# ---------------------------------------------------------------------------
# Softmax.


@settings(max_examples=20, deadline=None)
@given(
    hnp.array_shapes(min_dims=1, max_dims=4, max_side=5),
    st.data(),
    st.sampled_from([(nn.SoftmaxOp, "Softmax"), (nn.LogSoftmaxOp, "LogSoftmax")]),
)
def test_softmax_matches_onnx(
    shape: tuple[int, ...], data: st.DataObject, op: tuple[type[nn.GraphOp], str]
) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(np.random.default_rng(12), *shape) * 5
    (got,) = run_single_op(op[0], [x], {"axis": int_attr(axis)})
    close(got, onnx_reference(op[1], {"x": x}, axis=axis), 1e-5)


# ---------------------------------------------------------------------------
# Pad and resize.


@settings(max_examples=25, deadline=None)
@given(
    hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
    st.sampled_from(nn.PAD_MODES),
    st.data(),
)
def test_pad_matches_onnx(shape: tuple[int, ...], mode: str, data: st.DataObject) -> None:
    limit = [d - 1 if mode == "reflect" else 3 for d in shape]
    pads = [data.draw(st.integers(0, limit[i % len(shape)])) for i in range(2 * len(shape))]
    x = rand(np.random.default_rng(13), *shape)
    props = {"pads": ints_attr(pads), "mode": str_attr(mode), "value": float_attr(1.5)}
    (got,) = run_single_op(nn.PadOp, [x], props)
    inputs = {"x": x, "pads": np.array(pads, np.int64)}
    if mode == "constant":
        inputs["value"] = np.array(1.5, np.float32)
    close(got, onnx_reference("Pad", inputs, mode=mode), 0)


@pytest.mark.parametrize("mode", nn.PAD_MODES)
def test_pad_negative_pads_crop_first(mode: str) -> None:
    x = rand(np.random.default_rng(14), 3, 5)
    pads = [-1, 2, 1, -2]
    (got,) = run_single_op(nn.PadOp, [x], {"pads": ints_attr(pads), "mode": str_attr(mode)})
    want = onnxruntime("Pad", {"x": x, "pads": np.array(pads, np.int64)}, mode=mode)
    close(got, want, 0)


@settings(max_examples=40, deadline=None)
@given(
    hnp.array_shapes(min_dims=1, max_dims=4, max_side=4),
    st.data(),
    st.sampled_from(nn.RESIZE_MODES),
    st.sampled_from(nn.COORDINATE_MODES),
    st.sampled_from(nn.NEAREST_MODES),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([-0.75, -0.5]),
)
def test_resize_matches_onnx(
    shape: tuple[int, ...],
    data: st.DataObject,
    mode: str,
    transformation: str,
    nearest_mode: str,
    by_scales: bool,
    antialias: bool,
    exclude_outside: bool,
    cubic_coeff_a: float,
) -> None:
    antialias = antialias and mode != "nearest"
    # exclude_outside applies to cubic and antialias only (onnxruntime
    # refuses it elsewhere; onnx.reference zeroes a nearest tap outside).
    exclude_outside = exclude_outside and (mode == "cubic" or antialias)
    # onnx.reference maps tf_crop_and_resize coordinates in float32; xtc in
    # float64: on an exact boundary (x = 1.0 vs 0.99999994) nearest floor and
    # ceil round differently. Not settled which is right: left out.
    assume(not (transformation == "tf_crop_and_resize" and mode == "nearest"))
    x = rand(np.random.default_rng(15), *shape)
    props = {
        "mode": str_attr(mode),
        "coordinate_transformation_mode": str_attr(transformation),
        "nearest_mode": str_attr(nearest_mode),
        "cubic_coeff_a": float_attr(cubic_coeff_a),
        "exclude_outside": bool_attr(exclude_outside),
        "antialias": bool_attr(antialias),
    }
    inputs = {"x": x, "roi": np.zeros(0, np.float32)}
    if transformation == "tf_crop_and_resize":
        starts = [data.draw(st.sampled_from([0.0, 0.1, 0.25])) for _ in shape]
        # Ends past 1.0 extrapolate; on a coordinate just past the last
        # element, nearest mode disagrees with onnx.reference (left for a
        # later issue: which one follows the spec is not settled).
        ends = [data.draw(st.sampled_from([0.6, 0.8, 1.0])) for _ in shape]
        # The property holds the float32 values ONNX passes, exactly.
        props["roi"] = DenseArrayBase.from_list(f64, [float(np.float32(v)) for v in starts + ends])
        props["extrapolation_value"] = float_attr(-2.0)
        inputs["roi"] = np.array(starts + ends, np.float32)
    if by_scales:
        choices = [0.5, 0.6, 1.0, 1.5, 2.0, 3.0]
        scales = [data.draw(st.sampled_from(choices)) for _ in shape]
        size = [int(d * s) for d, s in zip(shape, scales, strict=True)]
        assume(min(size) >= 1)
        props["scales"] = DenseArrayBase.from_list(f64, [float(np.float32(v)) for v in scales])
        inputs["scales"] = np.array(scales, np.float32)
    else:
        size = [data.draw(st.integers(1, 7)) for _ in shape]
        inputs["scales"] = np.zeros(0, np.float32)
        inputs["sizes"] = np.array(size, np.int64)
    props["size"] = ints_attr(size)
    (got,) = run_single_op(nn.ResizeOp, [x], props)
    # An output of length 1 in pytorch_half_pixel samples coordinate 0 (the
    # ONNX rule, onnxruntime), onnx.reference -0.5: tests/driver/
    # test_compiler.py's test_resize_matches_onnxruntime covers that case.
    assume(not (transformation == "pytorch_half_pixel" and 1 in size))
    want = onnx_reference(
        "Resize",
        inputs,
        mode=mode,
        coordinate_transformation_mode=transformation,
        nearest_mode=nearest_mode,
        extrapolation_value=-2.0,
        cubic_coeff_a=cubic_coeff_a,
        exclude_outside=int(exclude_outside),
        antialias=int(antialias),
    )
    close(got, want, 1e-5)


@pytest.mark.parametrize(("dtype", "low", "high"), [(np.uint8, 0, 255), (np.int8, -128, 127)])
def test_cubic_resize_of_integers_saturates(dtype: Any, low: int, high: int) -> None:
    # Cubic overshoots a step on both sides: onnx.reference rounds and clips
    # into the type rather than wrapping.
    x = np.array([[low] * 3 + [high] * 3], dtype)
    props = {"size": ints_attr([1, 12]), "mode": str_attr("cubic")}
    (got,) = run_single_op(nn.ResizeOp, [x], props)
    inputs = {"x": x, "roi": np.zeros(0, np.float32), "_scales": np.zeros(0, np.float32)}
    want = onnx_reference("Resize", {**inputs, "sizes": np.array([1, 12], np.int64)}, mode="cubic")
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    (wide,) = run_single_op(nn.ResizeOp, [x.astype(np.float32)], props)
    assert wide.min() < low and wide.max() > high
    assert got.min() == low and got.max() == high


# ---------------------------------------------------------------------------
# Grid sampling.


def grid_points(rng: np.random.Generator, *shape: int) -> Array:
    """Normalized points inside, outside (to 2.5) and on the rounding ties
    of a small input (quarters: with align_corners=0 on an axis of size 2,
    -0.5 maps to 0.0 and 0.0 to 0.5)."""
    ties = rng.integers(-10, 11, shape) / 4
    spread = rng.uniform(-2.5, 2.5, shape)
    return np.where(rng.random(shape) < 0.4, ties, spread).astype(np.float32)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 3),
    st.sampled_from(nn.GRID_SAMPLE_MODES),
    st.sampled_from(nn.GRID_PADDING_MODES),
    st.booleans(),
    st.data(),
)
def test_grid_sample_matches_onnx(
    spatial: int, mode: str, padding: str, align_corners: bool, data: st.DataObject
) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    sizes = [data.draw(st.integers(1, 4)) for _ in range(spatial)]
    points = [data.draw(st.integers(1, 3)) for _ in range(spatial)]
    x = rand(rng, 2, 2, *sizes)
    grid = grid_points(rng, 2, *points, spatial)
    props = {
        "mode": str_attr(mode),
        "padding_mode": str_attr(padding),
        "align_corners": bool_attr(align_corners),
    }
    (got,) = run_single_op(nn.GridSampleOp, [x, grid], props)
    # onnx.reference divides by zero reflecting on a size-1 axis with
    # align_corners (its range is empty): xtc reads that one element.
    assume(not (padding == "reflection" and align_corners and 1 in sizes))
    attributes = {"mode": mode, "padding_mode": padding, "align_corners": int(align_corners)}
    want = onnx_reference("GridSample", {"x": x, "grid": grid}, opset=22, **attributes)
    close(got, want, 1e-5)
    # onnxruntime's cubic border differs (tests/frontend/test_nn_converters.py).
    if spatial == 2 and (mode, padding) != ("cubic", "border"):
        ours = onnxruntime("GridSample", {"x": x, "grid": grid}, opset=22, **attributes)
        close(got, ours, 1e-5)


def test_grid_sample_nearest_rounds_half_to_even() -> None:
    # On an axis of 4 with align_corners=0, -0.5, 0 and 0.5 map exactly to
    # 0.5, 1.5 and 2.5: rounded half to even, they read elements 0, 2 and 2.
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)
    xs = np.array([-0.5, 0.0, 0.5], np.float32)
    grid = np.stack([xs, np.zeros(3, np.float32)], axis=-1).reshape(1, 1, 3, 2)
    (got,) = run_single_op(nn.GridSampleOp, [x, grid], {"mode": str_attr("nearest")})
    np.testing.assert_array_equal(got.reshape(-1), [0, 2, 2])
    want = onnxruntime("GridSample", {"x": x, "grid": grid}, opset=22, mode="nearest")
    np.testing.assert_array_equal(got, want)


def test_grid_sample_of_nan_points_reads_inside_the_input() -> None:
    x = rand(np.random.default_rng(3), 1, 1, 3, 3)
    grid = np.full((1, 2, 2, 2), np.nan, np.float32)
    grid[0, 0, 0] = [np.inf, -np.inf]
    for mode in nn.GRID_SAMPLE_MODES:
        for padding in nn.GRID_PADDING_MODES:
            props = {"mode": str_attr(mode), "padding_mode": str_attr(padding)}
            (got,) = run_single_op(nn.GridSampleOp, [x, grid], props)
            assert got.shape == (1, 1, 2, 2)


# ---------------------------------------------------------------------------
# Verifier messages.


def t(*shape: int, element: Attribute = f32) -> Attribute:
    return tensor(shape, element)


REFUSED: list[tuple[type[nn.GraphOp], list[Attribute], dict[str, Attribute], str]] = [
    (nn.Conv2dOp, [t(1, 3, 8), t(4, 3, 3, 3)], {}, r"input must be 4-D \(N×C×H×W\)"),
    (
        nn.Conv2dOp,
        [t(1, 3, 8, 8), t(4, 5, 3, 3)],
        {},
        r"input tensor<1x3x8x8xf32> has 3 channels but weight tensor<4x5x3x3xf32> "
        r"expects 5 \(groups=1\)",
    ),
    (
        nn.Conv2dOp,
        [t(1, 4, 8, 8), t(3, 2, 3, 3)],
        {"groups": int_attr(2)},
        r"weight tensor<3x2x3x3xf32> has 3 output channels, not a multiple of groups=2",
    ),
    (
        nn.Conv2dOp,
        [t(1, 3, 8, 8), t(4, 3, 3, 3)],
        {"groups": int_attr(0)},
        "groups must be positive, got 0",
    ),
    (
        nn.Conv2dOp,
        [t(1, 3, 8, 8), t(4, 3, 3, 3)],
        {"strides": ints_attr([1, 1, 1])},
        "strides must have 2 values, got 3",
    ),
    (
        nn.Conv2dOp,
        [t(1, 3, 8, 8), t(4, 3, 3, 3)],
        {"dilation": ints_attr([0, 1])},
        r"dilation must be positive, got \[0, 1\]",
    ),
    (
        nn.Conv2dOp,
        [t(1, 3, 8, 8), t(4, 3, 3, 3)],
        {"padding": ints_attr([0, -1, 0, 0])},
        r"padding must be non-negative",
    ),
    (
        nn.Conv2dOp,
        [t(1, 3, 4, 4), t(4, 3, 3, 3)],
        {"dilation": ints_attr([2, 2])},
        r"kernel 3x3 with dilation 2x2 spans 5x5, larger than the padded input 4x4 "
        r"of tensor<1x3x4x4xf32>",
    ),
    (
        nn.Conv2dOp,
        [t(1, 3, 4, 4), t(4, 3, 3, 3, element=i32)],
        {},
        "operand element types differ",
    ),
    (
        nn.Conv2dOp,
        [t(1, 2, 4, 4, 4), t(2, 8, 1, 1, 4)],
        {"kernel_layout": str_attr("OIHW4o"), "data_layout": str_attr("NHWC")},
        r"property 'data_layout' is \"NHWC\", expected \"NCHW\" or \"NCHW<b>c\"",
    ),
    (
        nn.Conv2dOp,
        [t(1, 2, 4, 4, 8), t(2, 8, 1, 1, 4)],
        {"kernel_layout": str_attr("OIHW4o"), "data_layout": str_attr("NCHW4c")},
        r"input tensor<1x2x4x4x8xf32> in layout NCHW4c must have 4 as its last dimension",
    ),
    (
        nn.Conv2dOp,
        [t(1, 2, 4, 4, 4), t(2, 4, 1, 1, 4)],
        {"kernel_layout": str_attr("OIHW4o"), "data_layout": str_attr("NCHW4c"),
         "groups": int_attr(2)},
        r"data_layout NCHW4c with out_layout NCHW: a blocked input needs an output blocked "
        r"alike, or an NCHW output with groups=1",
    ),
    (
        nn.Conv2dOp,
        [t(1, 2, 4, 4, 4), t(1, 8, 1, 1, 8)],
        {"kernel_layout": str_attr("OIHW8o"), "data_layout": str_attr("NCHW4c"),
         "out_layout": str_attr("NCHW8c")},
        r"data_layout NCHW4c with out_layout NCHW8c: a blocked input needs an output blocked "
        r"alike, or an NCHW output with groups=1",
    ),
    (
        nn.Conv2dOp,
        [t(1, 8, 4, 4), t(2, 4, 1, 1, 4)],
        {"kernel_layout": str_attr("OIHW4o"), "out_layout": str_attr("NCHW4c"),
         "groups": int_attr(2)},
        r"out_layout NCHW4c needs groups=1 \(or a depthwise conv on an input in NCHW4c\) "
        r"and a weight in layout OIHW4o, got groups=2",
    ),
    (  # a depthwise conv needs its input blocked too
        nn.Conv2dOp,
        [t(1, 8, 4, 4), t(2, 1, 1, 1, 4)],
        {"kernel_layout": str_attr("OIHW4o"), "out_layout": str_attr("NCHW4c"),
         "groups": int_attr(8)},
        r"out_layout NCHW4c needs groups=1 \(or a depthwise conv on an input in NCHW4c\)",
    ),
    (
        nn.Conv2dOp,
        [t(1, 8, 4, 4), t(8, 8, 1, 1)],
        {"out_layout": str_attr("NCHW4c")},
        r"out_layout NCHW4c needs groups=1 \(or a depthwise conv on an input in NCHW4c\) "
        r"and a weight in layout OIHW4o, got groups=1 and weight tensor<8x8x1x1xf32> in "
        r"layout OIHW",
    ),
    (
        nn.MaxPool2dOp,
        [t(1, 2, 4, 4)],
        {"kernel": ints_attr([2, 2]), "data_layout": str_attr("NCHW4c")},
        r"input must be 5-D \(N×C/4×H×W×4\)",
    ),
    (
        nn.LayoutTransformOp,
        [t(1, 8, 4, 4)],
        {"src_layout": str_attr("NCHW"), "dst_layout": str_attr("NHWC")},
        r"cannot transform \"NCHW\" to \"NHWC\"",
    ),
    (
        nn.LayoutTransformOp,
        [t(1, 6, 4, 4)],
        {"src_layout": str_attr("NCHW"), "dst_layout": str_attr("NCHW4c")},
        r"input tensor<1x6x4x4xf32> has 6 channels, not a multiple of the block of NCHW4c",
    ),
    (
        nn.WinogradConv2dOp,
        [t(1, 2, 8, 8, 4), t(6, 6, 3, 8, 4), t(6, 6), t(4, 6)],
        {"data_layout": str_attr("NCHW")},
        r"data_layout must be \"NCHW<b>c\"",
    ),
    (
        nn.WinogradConv2dOp,
        [t(1, 2, 8, 8, 4), t(6, 6, 3, 8, 4), t(6, 6), t(4, 5)],
        {"data_layout": str_attr("NCHW4c")},
        r"output_transform tensor<4x5xf32> m×α",
    ),
    (
        nn.WinogradConv2dOp,
        [t(1, 2, 8, 8, 4), t(6, 6, 3, 4, 4), t(6, 6), t(4, 6)],
        {"data_layout": str_attr("NCHW4c")},
        r"weight tensor<6x6x3x4x4xf32> must be 6×6×K/4×8×4",
    ),
    (
        nn.WinogradConv2dOp,
        [t(1, 2, 1, 1, 4), t(6, 6, 3, 8, 4), t(6, 6), t(4, 6)],
        {"data_layout": str_attr("NCHW4c")},
        r"output shape 1x12x-1x-1 is not positive",
    ),
    (
        nn.Conv2dTransposeOp,
        [t(1, 3, 4, 4), t(4, 2, 3, 3)],
        {},
        r"input tensor<1x3x4x4xf32> has 3 channels but weight tensor<4x2x3x3xf32> expects 4",
    ),
    (
        nn.Conv2dTransposeOp,
        [t(1, 3, 4, 4), t(3, 2, 3, 3)],
        {"groups": int_attr(2)},
        "has 3 channels, not a multiple of groups=2",
    ),
    (
        nn.Conv2dTransposeOp,
        [t(1, 3, 1, 1), t(3, 2, 1, 1)],
        {"padding": ints_attr([1, 0, 0, 0])},
        "output shape 1x2x0x1 is not positive",
    ),
    (
        nn.Conv2dTransposeOp,
        [t(1, 3, 4, 4), t(3, 2, 3, 3)],
        {"output_padding": ints_attr([1])},
        "output_padding must have 2 values, got 1",
    ),
    (nn.DenseOp, [t(2, 5), t(4, 3)], {}, r"input tensor<2x5xf32> must end in K=3"),
    (nn.DenseOp, [t(2, 5), t(5)], {}, r"weight must be 2-D \(N×K\)"),
    (nn.MatmulOp, [t(2, 3), t(4, 5)], {}, "contraction sizes differ"),
    (nn.MatmulOp, [t(), t(4, 5)], {}, "operands must have rank >= 1"),
    (nn.MatmulOp, [t(2, 2, 3), t(3, 3, 5)], {}, "batch dimensions of"),
    (nn.BatchMatmulOp, [t(2, 2, 3), t(3, 3, 5)], {}, "batch sizes 2 of"),
    (
        nn.BatchMatmulOp,
        [t(2, 2, 3), t(2, 2, 5)],
        {"transpose_b": bool_attr(True)},
        "contraction sizes differ: tensor<2x2x3xf32> has K=3, tensor<2x2x5xf32> has K=5",
    ),
    (nn.BatchMatmulOp, [t(2, 3), t(2, 3, 5)], {}, r"lhs must be 3-D"),
    (nn.BiasAddOp, [t(2, 3, 4), t(4)], {}, r"bias tensor<4xf32> must be 1-D of size 3"),
    (nn.BiasAddOp, [t(2, 3, 4), t(4)], {"axis": int_attr(3)}, "axis 3 is out of range for rank 3"),
    (
        nn.BatchNormOp,
        [t(2, 3, 4), t(3), t(3), t(4), t(3)],
        {},
        r"mean tensor<4xf32> must be 1-D of size 3, the axis 1",
    ),
    (
        nn.BatchNormOp,
        [t(2, 3, element=i32)] + [t(3, element=i32)] * 4,
        {},
        "must have a float element type",
    ),
    (
        nn.LayerNormOp,
        [t(2, 3, 4), t(3), t(4)],
        {},
        r"gamma tensor<3xf32> does not broadcast to the normalised dims 4",
    ),
    (
        nn.LayerNormOp,
        [t(2, 3, 4), t(3, 4), t(2, 3, 4)],
        {"axis": int_attr(-2)},
        r"beta tensor<2x3x4xf32> does not broadcast to the normalised dims 3x4",
    ),
    (nn.MaxPool2dOp, [t(1, 1, 4, 4)], {"kernel": ints_attr([5, 1])}, "kernel 5x1 with dilation"),
    (nn.MaxPool2dOp, [t(1, 1, 4, 4)], {"kernel": ints_attr([2])}, "kernel must have 2 values"),
    (
        nn.MaxPool2dOp,
        [t(1, 1, 4, 4)],
        {"kernel": ints_attr([2, 2]), "padding": ints_attr([2, 0, 0, 0])},
        "must be smaller than kernel 2x2",
    ),
    (
        nn.AvgPool2dOp,
        [t(1, 1, 4, 4)],
        {"kernel": ints_attr([2, 2]), "strides": ints_attr([0, 1])},
        "strides must be positive",
    ),
    (
        nn.MaxPool2dOp,
        [t(1, 1, 1, 1)],
        {
            "kernel": ints_attr([2, 1]),
            "dilation": ints_attr([2, 1]),
            "padding": ints_attr([1, 0, 1, 0]),
        },
        r"the window of output row 0 covers only padding \(kernel 2x1, dilation 2x1, "
        r"padding \[1, 0, 1, 0\], input tensor<1x1x1x1xf32>\)",
    ),
    (nn.AvgPool2dOp, [t(1, 1, 4, 4, element=i32)], {"kernel": ints_attr([2, 2])}, "float element"),
    (nn.GlobalMaxPool2dOp, [t(1, 1, 4)], {}, "input must be 4-D"),
    (nn.SoftmaxOp, [t(2, 3)], {"axis": int_attr(2)}, "axis 2 is out of range for rank 2"),
    (nn.LogSoftmaxOp, [t(2, 3, element=i32)], {}, "must have a float element type"),
    (nn.PadOp, [t(2, 3)], {"pads": ints_attr([1, 1])}, "pads must have 4 values, got 2"),
    (
        nn.PadOp,
        [t(2, 3)],
        {"pads": ints_attr([0, 0, 0, 0]), "mode": str_attr("wrap")},
        r"property 'mode' is \"wrap\", expected one of \"constant\", \"reflect\", \"edge\"",
    ),
    (
        nn.PadOp,
        [t(2, 3)],
        {"pads": ints_attr([0, 3, 0, 0]), "mode": str_attr("reflect")},
        "reflect pads 3, 0 on axis 1 must be smaller than its size 3",
    ),
    (nn.PadOp, [t(2, 3)], {"pads": ints_attr([-2, 0, 0, 0])}, "output shape 0x3 is not positive"),
    (nn.ResizeOp, [t(2, 3)], {"size": ints_attr([4])}, "size must have 2 values, got 1"),
    (nn.ResizeOp, [t(2, 3)], {"size": ints_attr([4, 0])}, "output shape 4x0 is not positive"),
    (
        nn.ResizeOp,
        [t(2, 3)],
        {"size": ints_attr([4, 4]), "mode": str_attr("area")},
        r"expected one of \"nearest\", \"linear\", \"cubic\"",
    ),
    (
        nn.ResizeOp,
        [t(2, 3)],
        {"size": ints_attr([1, 1]), "antialias": bool_attr(True)},
        "antialias applies to linear and cubic, not nearest",
    ),
    (
        nn.GridSampleOp,
        [t(1, 2, 3, 4), t(1, 5, 6, 3)],
        {},
        r"grid tensor<1x5x6x3xf32> must be N×O1×…×O2×2 for input tensor<1x2x3x4xf32>",
    ),
    (
        nn.GridSampleOp,
        [t(1, 2, 3, 4), t(2, 5, 6, 2)],
        {},
        r"grid tensor<2x5x6x2xf32> and input tensor<1x2x3x4xf32> differ in batch size",
    ),
    (
        nn.GridSampleOp,
        [t(1, 2), t(1, 0)],
        {},
        r"input tensor<1x2xf32> must be N×C×D1×… \(rank 3 or more\)",
    ),
    (
        nn.GridSampleOp,
        [t(1, 2, 3, element=i32), t(1, 4, 1)],
        {},
        r"input tensor<1x2x3xi32> must have a float element type",
    ),
    (
        nn.GridSampleOp,
        [t(1, 2, 3), t(1, 4, 1, element=i32)],
        {},
        r"grid tensor<1x4x1xi32> must have a float element type",
    ),
    (
        nn.GridSampleOp,
        [t(1, 2, 3), t(1, 4, 1)],
        {"mode": str_attr("bilinear")},
        r"property 'mode' is \"bilinear\", expected one of \"linear\"",
    ),
    (
        nn.GridSampleOp,
        [t(1, 2, 3), t(1, 4, 1)],
        {"padding_mode": str_attr("wrap")},
        r"property 'padding_mode' is \"wrap\"",
    ),
    (
        nn.GridSampleOp,
        [t(1, 2, 0), t(1, 4, 1)],
        {},
        r"input tensor<1x2x0xf32> has an empty spatial dimension",
    ),
    (
        nn.ResizeOp,
        [t(2, 3)],
        {"size": ints_attr([4, 4]), "nearest_mode": str_attr("round")},
        r"property 'nearest_mode' is \"round\"",
    ),
    (
        nn.ResizeOp,
        [t(2, 3)],
        {"size": ints_attr([4, 6]), "scales": DenseArrayBase.from_list(f64, [2.0])},
        r"scales must be 2 positive values, got \[2.0\]",
    ),
    (
        nn.ResizeOp,
        [t(2, 3)],
        {"size": ints_attr([4, 6]), "scales": ints_attr([2, 2])},
        r"property 'scales' must be array<f64: ...>",
    ),
    (
        nn.ResizeOp,
        [t(2, 3)],
        {"size": ints_attr([4, 6]), "roi": DenseArrayBase.from_list(f64, [0.0, 1.0])},
        "roi must have 4 values, got 2",
    ),
    (
        nn.ResizeOp,
        [t(2, 3)],
        {"size": ints_attr([4, 6]), "roi": float_attr(1.0)},
        r"property 'roi' must be array<f64: ...>",
    ),
]


@pytest.mark.parametrize(
    ("op", "types", "props", "message"),
    REFUSED,
    ids=[f"{case[0].name}-{i}" for i, case in enumerate(REFUSED)],
)
def test_inconsistent_operands_are_refused(
    op: type[nn.GraphOp],
    types: Sequence[Attribute],
    props: dict[str, Attribute],
    message: str,
) -> None:
    with pytest.raises(ShapeError, match=message) as refused:
        single_op_module(op, types, props)
    assert str(refused.value).startswith(f"{op.name}: ")
