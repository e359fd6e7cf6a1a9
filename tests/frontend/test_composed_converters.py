"""Col2Im, MaxUnpool, TensorScatter, Det, AffineGrid and DeformConv, built
from other ops at import (frontend/converters/composed.py), against
onnxruntime or numpy, on the interpreter and natively."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import xtc
from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.testing.onnx_models import one_node_model

RNG = np.random.default_rng(5)


def run_both(
    model: onnx.ModelProto, inputs: dict[str, np.ndarray], atol: float = 1e-6
) -> list[np.ndarray]:
    """The interpreter's outputs, after checking native code gives them
    (`atol`: for sums of many terms, whose order differs)."""
    got = [np.asarray(v) for v in specializing_model(model, "interp").run(inputs)]
    native = xtc.compile(model, cache=False).run(inputs)
    for g, n in zip(got, native, strict=True):
        np.testing.assert_allclose(np.asarray(n), g, rtol=1e-5, atol=atol)
    return got


def ort(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return list(session.run(None, inputs))


@pytest.mark.parametrize(
    ("image", "block", "attrs"),
    [
        ((5, 5), (2, 2), {}),
        ((5, 5), (1, 5), {"strides": [2, 2], "pads": [0, 1, 0, 1]}),
        ((6, 6), (2, 2), {"dilations": [1, 2]}),
    ],
)
def test_col2im_adds_the_blocks_back(
    image: tuple[int, int], block: tuple[int, int], attrs: dict
) -> None:
    strides, pads = attrs.get("strides", [1, 1]), attrs.get("pads", [0, 0, 0, 0])
    dilations = attrs.get("dilations", [1, 1])
    counts = [
        (image[d] + pads[d] + pads[d + 2] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
        for d in range(2)
    ]
    x = RNG.standard_normal((1, 2 * block[0] * block[1], counts[0] * counts[1])).astype(np.float32)
    constants = {"image": np.array(image, np.int64), "block": np.array(block, np.int64)}
    model = one_node_model("Col2Im", {"x": x}, constants, **attrs)
    np.testing.assert_allclose(
        run_both(model, {"x": x})[0], ort(model, {"x": x})[0], rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("output_shape", [None, (1, 2, 5, 5)])
def test_max_unpool_puts_the_maxima_back(output_shape: tuple[int, ...] | None) -> None:
    """MaxPool's values and indices, unpooled; with output_shape, in the
    corner of a larger zero tensor as onnx.reference places it
    (onnxruntime places the values elsewhere)."""
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    pool = helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2])
    unpool_inputs = ["p", "i", "shape"] if output_shape else ["p", "i"]
    unpool = helper.make_node(
        "MaxUnpool", unpool_inputs, ["y"], kernel_shape=[2, 2], strides=[2, 2]
    )
    initializers = (
        [numpy_helper.from_array(np.array(output_shape, np.int64), "shape")] if output_shape else []
    )
    graph = helper.make_graph(
        [pool, unpool],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_empty_tensor_value_info("y")],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(run_both(model, {"x": x})[0], want)


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter_writes_each_batch_entry_at_its_index(mode: str) -> None:
    cache = RNG.standard_normal((2, 3, 6, 4)).astype(np.float32)
    update = RNG.standard_normal((2, 3, 3, 4)).astype(np.float32)
    starts = np.array([1, 4 if mode == "circular" else 3], np.int64)
    inputs = {"cache": cache, "update": update, "starts": starts}
    model = one_node_model("TensorScatter", inputs, opset=24, mode=mode)
    want = cache.copy()
    for b in range(2):
        for s in range(3):
            want[b, :, (starts[b] + s) % 6, :] = update[b, :, s, :]
    np.testing.assert_array_equal(run_both(model, inputs)[0], want)


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_det_is_numpys(size: int) -> None:
    x = RNG.standard_normal((3, size, size)).astype(np.float32)
    (got,) = run_both(one_node_model("Det", {"x": x}), {"x": x})
    np.testing.assert_allclose(got, np.linalg.det(x), rtol=1e-4, atol=1e-5)


def test_det_of_a_large_matrix_is_refused() -> None:
    x = np.eye(5, dtype=np.float32)
    with pytest.raises(OnnxImportError, match="matrices of 5x5 are not supported"):
        import_model(one_node_model("Det", {"x": x}))


@pytest.mark.parametrize(
    ("size", "align_corners"),
    [((3, 2, 4, 1), 0), ((3, 2, 3, 4), 1), ((2, 1, 3, 1, 5), 0)],
)
def test_affine_grid_is_onnxruntimes(size: tuple[int, ...], align_corners: int) -> None:
    """Batches of 2 and 3, f64 theta and sizes of 1 (the cases have none).
    With align_corners a size of 1 is at -1 (onnx.reference), where
    onnxruntime puts it at +1: not compared."""
    r = len(size) - 2
    theta = RNG.standard_normal((size[0], r, r + 1))
    model = one_node_model(
        "AffineGrid",
        {"theta": theta},
        {"size": np.array(size, np.int64)},
        opset=20,
        align_corners=align_corners,
    )
    (got,) = run_both(model, {"theta": theta})
    assert got.shape == (size[0], *size[2:], r)
    np.testing.assert_allclose(got, ort(model, {"theta": theta})[0], rtol=1e-6, atol=1e-7)


def test_affine_grid_of_a_theta_not_matching_the_size_is_refused() -> None:
    theta = np.zeros((2, 2, 3), np.float32)
    model = one_node_model(
        "AffineGrid", {"theta": theta}, {"size": np.array([3, 1, 4, 4], np.int64)}, opset=20
    )
    with pytest.raises(OnnxImportError, match=r"theta tensor<2x2x3xf32> must be \[3, 2, 3\]"):
        import_model(model)


@pytest.mark.parametrize(
    ("group", "offset_group", "attrs", "with_mask"),
    [
        (2, 2, {"strides": [2, 1], "pads": [1, 0, 1, 2]}, True),
        (1, 3, {"dilations": [2, 1], "pads": [1, 1, 1, 1]}, False),
    ],
)
def test_deform_conv_is_onnxruntimes(
    group: int, offset_group: int, attrs: dict, with_mask: bool
) -> None:
    """Two batch entries, six channels in groups, strides, dilations,
    uneven pads, offsets reaching past the image (the cases: one entry,
    one or two channels, 2x2 kernels at stride 1)."""
    kernel = (3, 2)
    x = RNG.standard_normal((2, 6, 7, 8)).astype(np.float32)
    w = RNG.standard_normal((4, 6 // group, *kernel)).astype(np.float32)
    strides, dilations = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    out = [
        (x.shape[2 + d] + pads[d] + pads[d + 2] - dilations[d] * (kernel[d] - 1) - 1) // strides[d]
        + 1
        for d in range(2)
    ]
    taps = kernel[0] * kernel[1]
    offset = RNG.uniform(-3, 3, (2, offset_group * taps * 2, *out)).astype(np.float32)
    inputs = {"x": x, "w": w, "offset": offset, "b": RNG.standard_normal(4).astype(np.float32)}
    if with_mask:
        inputs["mask"] = RNG.random((2, offset_group * taps, *out)).astype(np.float32)
    model = one_node_model(
        "DeformConv", inputs, opset=19, group=group, offset_group=offset_group, **attrs
    )
    (got,) = run_both(model, inputs, atol=1e-5)
    assert got.shape == (2, 4, *out)
    np.testing.assert_allclose(got, ort(model, inputs)[0], rtol=1e-4, atol=1e-4)


def test_deform_conv_of_an_offset_of_the_wrong_shape_is_refused() -> None:
    inputs = {
        "x": np.zeros((1, 1, 4, 4), np.float32),
        "w": np.zeros((1, 1, 2, 2), np.float32),
        "offset": np.zeros((1, 8, 2, 2), np.float32),
    }
    with pytest.raises(OnnxImportError, match=r"must be \[1, 8, 3, 3\]"):
        import_model(one_node_model("DeformConv", inputs, opset=19))
