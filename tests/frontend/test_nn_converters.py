"""ONNX nn ops through the importer and the interpreter, against onnxruntime
(onnx.reference for the ops or opsets onnxruntime lacks)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx.reference import ReferenceEvaluator

import xtc
from xtc import interp
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.testing.onnx_models import one_node_model

Array = np.ndarray[Any, np.dtype[Any]]


def rand(seed: int, *shape: int, dtype: Any = np.float32) -> Array:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def model_of(
    op_type: str,
    inputs: Mapping[str, Array],
    constants: Mapping[str, Array] | None = None,
    opset: int = 18,
    outputs: int = 1,
    names: Sequence[str] | None = None,
    **attributes: Any,
) -> onnx.ModelProto:
    """One node over graph inputs and initializers; `names` orders its inputs
    ("" skips an optional one)."""
    return one_node_model(
        op_type, inputs, constants, opset=opset, outputs=outputs, input_names=names, **attributes
    )


def expected(model: onnx.ModelProto, inputs: Mapping[str, Array], oracle: str) -> list[Array]:
    if oracle == "reference":
        with np.errstate(all="ignore"):
            return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, dict(inputs))]
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return [np.asarray(v) for v in session.run(None, dict(inputs))]


def check(
    op_type: str,
    inputs: Mapping[str, Array],
    constants: Mapping[str, Array] | None = None,
    oracle: str = "ort",
    tol: float = 1e-4,
    **kwargs: Any,
) -> None:
    model = model_of(op_type, inputs, constants, **kwargs)
    got = interp.run(import_model(model), dict(inputs))
    want = expected(model, inputs, oracle)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def refused(op_type: str, inputs: Mapping[str, Array], match: str, **kwargs: Any) -> None:
    with pytest.raises(OnnxImportError, match=match):
        import_model(model_of(op_type, inputs, **kwargs))


# ---------------------------------------------------------------------------
# Convolutions.


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "attributes"),
    [
        ((1, 2, 9), (4, 2, 3), {"strides": [2], "pads": [1, 2]}),
        ((2, 4, 7, 6), (6, 2, 3, 2), {"group": 2, "dilations": [2, 1], "pads": [1, 0, 2, 1]}),
        ((1, 3, 7, 8), (4, 3, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
        ((1, 3, 7, 8), (4, 3, 2, 2), {"auto_pad": "SAME_LOWER"}),
        ((1, 3, 7, 8), (4, 3, 3, 3), {"auto_pad": "VALID", "kernel_shape": [3, 3]}),
        ((1, 4, 5, 6, 7), (6, 2, 3, 2, 3), {"group": 2, "strides": [2, 1, 2], "pads": [1] * 6}),
        ((2, 2, 6, 5, 4), (3, 2, 2, 3, 1), {"dilations": [2, 1, 1], "pads": [1, 0, 0, 2, 1, 0]}),
    ],
)
def test_conv_matches_onnxruntime(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], attributes: dict[str, Any]
) -> None:
    constants = {"w": rand(1, *w_shape), "b": rand(2, w_shape[0])}
    check("Conv", {"x": rand(0, *x_shape)}, constants, **attributes)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "attributes"),
    [
        ((1, 2, 5), (2, 3, 3), {"strides": [2], "output_padding": [1]}),
        ((1, 4, 3, 4), (4, 2, 3, 3), {"group": 2, "strides": [2, 3], "pads": [1, 0, 0, 1]}),
        ((1, 2, 3, 3), (2, 2, 3, 3), {"strides": [3, 2], "output_shape": [10, 8]}),
        ((1, 2, 3, 3), (2, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
        ((1, 2, 3, 3), (2, 1, 2, 2), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
        (
            (1, 2, 3, 3),
            (2, 1, 3, 3),
            {"dilations": [2, 2], "output_padding": [1, 0], "strides": [2, 2]},
        ),
        ((1, 2, 3, 4, 5), (2, 3, 3, 2, 3), {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1]}),
        (
            (1, 4, 2, 3, 3),
            (4, 1, 2, 2, 2),
            {"group": 2, "dilations": [2, 1, 1], "output_padding": [1, 0, 0], "strides": [2, 1, 1]},
        ),
    ],
)
def test_conv_transpose_matches_onnxruntime(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], attributes: dict[str, Any]
) -> None:
    constants = {"w": rand(1, *w_shape), "b": rand(2, w_shape[1] * attributes.get("group", 1))}
    check("ConvTranspose", {"x": rand(0, *x_shape)}, constants, **attributes)


# ---------------------------------------------------------------------------
# Matrix products.


@pytest.mark.parametrize(
    ("opset", "c_shape", "attributes"),
    [
        (7, (3, 5), {}),
        (11, (5,), {"transB": 1}),
        (13, (1,), {"transA": 1, "alpha": 0.5, "beta": 2.0}),
        (13, None, {"transA": 1, "transB": 1, "alpha": 3.0}),
        (13, (3, 1), {"beta": 0.0}),
    ],
)
def test_gemm_matches_onnxruntime(
    opset: int, c_shape: tuple[int, ...] | None, attributes: dict[str, Any]
) -> None:
    a = rand(0, 4, 3) if attributes.get("transA") else rand(0, 3, 4)
    b = rand(1, 5, 4) if attributes.get("transB") else rand(1, 4, 5)
    constants = {"b": b} if c_shape is None else {"b": b, "c": rand(2, *c_shape)}
    check("Gemm", {"a": a}, constants, opset=opset, **attributes)


@pytest.mark.parametrize(("a", "b"), [((3,), (3, 4)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4,))])
def test_matmul_matches_onnxruntime(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    check("MatMul", {"a": rand(0, *a), "b": rand(1, *b)})


# ---------------------------------------------------------------------------
# Normalisation.


def test_batch_norm_matches_onnxruntime() -> None:
    x = rand(0, 2, 3, 4, 5)
    params = {"s": rand(1, 3), "b": rand(2, 3), "m": rand(3, 3), "v": np.abs(rand(4, 3)) + 0.1}
    check("BatchNormalization", {"x": x}, params, epsilon=1e-3, opset=15)
    check("BatchNormalization", {"x": x}, params, opset=7)


@pytest.mark.parametrize("x_shape", [(4, 3), (2, 3, 4, 5)])
def test_batch_norm_training_mode_matches_onnx_reference(x_shape: tuple[int, ...]) -> None:
    """The batch's statistics normalize; the running ones are blended."""
    params = {"s": rand(1, 3), "b": rand(2, 3), "m": rand(3, 3), "v": np.abs(rand(4, 3)) + 0.1}
    inputs = {"x": rand(0, *x_shape) * 3 + 1, **params}
    attributes = {"training_mode": 1, "momentum": 0.7, "epsilon": 1e-3}
    check("BatchNormalization", inputs, oracle="reference", opset=15, outputs=3, **attributes)


def test_layer_norm_with_mean_and_inverse_std_outputs() -> None:
    x = rand(0, 2, 3, 4)
    check(
        "LayerNormalization",
        {"x": x},
        {"g": rand(1, 3, 4), "b": rand(2, 4)},
        axis=1,
        outputs=3,
        opset=17,
    )
    check("LayerNormalization", {"x": x}, {"g": rand(1, 4)}, epsilon=0.1, opset=17)


def test_instance_group_rms_and_mean_variance_normalization() -> None:
    x = rand(0, 2, 4, 3, 5)
    scale, bias = rand(1, 4), rand(2, 4)
    check("InstanceNormalization", {"x": x}, {"s": scale, "b": bias}, epsilon=1e-3)
    check(
        "GroupNormalization",
        {"x": x},
        {"s": scale, "b": bias},
        num_groups=2,
        opset=21,
        oracle="reference",
    )
    check(
        "GroupNormalization",
        {"x": x},
        {"s": rand(1, 2), "b": rand(2, 2)},
        num_groups=2,
        opset=18,
        oracle="reference",
    )
    check("RMSNormalization", {"x": x}, {"s": rand(1, 3, 5)}, axis=2, opset=23, oracle="reference")
    check("MeanVarianceNormalization", {"x": x})
    check("MeanVarianceNormalization", {"x": x}, axes=[1, 3], opset=13)


@pytest.mark.parametrize(("p", "axis"), [(1, 0), (2, -1), (2, 1)])
def test_lp_normalization_matches_onnxruntime(p: int, axis: int) -> None:
    check("LpNormalization", {"x": rand(0, 3, 4)}, p=p, axis=axis)


def test_lp_normalization_of_a_zero_vector_is_zero() -> None:
    x = rand(0, 3, 4)
    x[:, 2] = 0
    check("LpNormalization", {"x": x}, axis=0, oracle="reference")


def test_lrn_matches_onnxruntime() -> None:
    check("LRN", {"x": rand(0, 2, 5, 3, 3)}, size=3, alpha=0.01, beta=0.6, bias=2.0)


def test_lrn_of_even_size_matches_the_onnx_formula() -> None:
    # onnxruntime refuses even sizes; the window is [c - 1, c + 2] for size 4.
    x = rand(1, 1, 6, 4, 2)
    model = model_of("LRN", {"x": x}, size=4, alpha=0.1)
    (got,) = interp.run(import_model(model), {"x": x})
    square = x.astype(np.float64) ** 2
    total = np.stack([square[:, max(c - 1, 0) : c + 3].sum(axis=1) for c in range(6)], axis=1)
    want = x / (1.0 + 0.1 / 4 * total) ** 0.75
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# Pooling.


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize(
    ("x_shape", "attributes"),
    [
        ((1, 2, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
        ((2, 3, 7, 8), {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1}),
        ((1, 2, 7, 8), {"kernel_shape": [2, 3], "auto_pad": "SAME_UPPER"}),
        (
            (1, 2, 6, 7, 5),
            {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "pads": [1, 1, 0, 0, 1, 1]},
        ),
        (
            (1, 1, 8, 7, 6),
            {
                "kernel_shape": [3, 2, 2],
                "dilations": [2, 1, 2],
                "ceil_mode": 1,
                "strides": [2, 2, 2],
            },
        ),
    ],
)
def test_pooling_matches_onnxruntime(
    op_type: str, x_shape: tuple[int, ...], attributes: dict[str, Any]
) -> None:
    if op_type == "AveragePool":
        attributes = {**attributes, "count_include_pad": 1}
    check(op_type, {"x": rand(0, *x_shape)}, opset=19, **attributes)


def test_max_pool_of_integers() -> None:
    x = np.random.default_rng(0).integers(0, 255, (1, 2, 5, 5)).astype(np.uint8)
    check("MaxPool", {"x": x}, kernel_shape=[2, 2], pads=[1, 1, 0, 0])


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize(
    ("x_shape", "attributes"),
    [
        ((2, 3, 6, 7), {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1]}),
        ((1, 2, 7, 6), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
        ((1, 2, 9), {"kernel_shape": [3], "strides": [2]}),
    ],
)
def test_max_pool_indices_match_onnxruntime(
    storage_order: int, x_shape: tuple[int, ...], attributes: dict[str, Any]
) -> None:
    x = np.round(rand(0, *x_shape), 1)  # ties: the first maximum wins
    check("MaxPool", {"x": x}, outputs=2, storage_order=storage_order, **attributes)


def test_max_pool_indices_of_3d_pooling_are_refused() -> None:
    refused(
        "MaxPool",
        {"x": rand(0, 1, 1, 4, 4, 4)},
        "the Indices output is supported for 1-D and 2-D pooling only",
        kernel_shape=[2, 2, 2],
        outputs=2,
    )


@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 3, 4, 5), (1, 2, 3, 4, 2)])
def test_global_pooling_matches_onnxruntime(shape: tuple[int, ...]) -> None:
    check("GlobalAveragePool", {"x": rand(0, *shape)})
    check("GlobalMaxPool", {"x": rand(0, *shape)})


# ---------------------------------------------------------------------------
# Softmax family.


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize(("opset", "axis"), [(11, 1), (11, -1), (11, 0), (13, 1), (13, -2)])
def test_softmax_family_matches_onnxruntime(op_type: str, opset: int, axis: int) -> None:
    x = rand(0, 2, 3, 4)
    x[0, 1, :2] = 5.0  # ties: Hardmax takes the first
    check(op_type, {"x": x}, opset=opset, axis=axis)


# ---------------------------------------------------------------------------
# Pad.


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_matches_onnxruntime(mode: str) -> None:
    x = rand(0, 2, 3, 4)
    pads = np.array([0, 1, 2, 1, -1, 1], np.int64)
    constants: dict[str, Array] = {"pads": pads}
    if mode == "constant":
        constants["value"] = np.array(2.5, np.float32)
    check("Pad", {"x": x}, constants, mode=mode, opset=19)


def test_pad_attribute_and_axes_forms() -> None:
    x = rand(0, 2, 3, 4)
    check("Pad", {"x": x}, pads=[0, 1, 0, 0, 2, 1], value=1.5, opset=7)
    axes = {"pads": np.array([1, 2, 0, 3], np.int64), "value": np.array(-1, np.float32)}
    check(
        "Pad",
        {"x": x},
        {**axes, "axes": np.array([-1, 1], np.int64)},
        opset=18,
    )


def test_pad_with_a_runtime_constant_value() -> None:
    inputs = {"x": rand(0, 2, 3), "value": np.array(-4.5, np.float32)}
    constants = {"pads": np.array([1, -1, 0, 2], np.int64)}
    check("Pad", inputs, constants, names=["x", "pads", "value"], opset=13)


def test_pad_refuses_runtime_pads() -> None:
    x = rand(0, 2, 3)
    refused(
        "Pad",
        {"x": x, "pads": np.zeros(4, np.int64)},
        r"pads \(input 1\) must be a constant",
        opset=13,
    )


# ---------------------------------------------------------------------------
# Resize and Upsample.


@pytest.mark.parametrize(
    ("constants", "attributes"),
    [
        (
            {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 0.6, 1.5], np.float32)},
            {"mode": "linear"},
        ),
        (
            {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 2, 3], np.float32)},
            {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
        ),
        (
            {
                "roi": np.zeros(0, np.float32),
                "scales": np.zeros(0, np.float32),
                "sizes": np.array([1, 2, 7, 3], np.int64),
            },
            {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
        ),
        (
            {
                "roi": np.zeros(0, np.float32),
                "scales": np.zeros(0, np.float32),
                "sizes": np.array([3, 7], np.int64),
            },
            {"axes": [3, 2], "keep_aspect_ratio_policy": "not_larger"},
        ),
        (
            {"roi": np.zeros(0, np.float32), "scales": np.array([0.8, 2.5], np.float32)},
            {
                "axes": [2, 3],
                "mode": "linear",
                "coordinate_transformation_mode": "half_pixel_symmetric",
            },
        ),
        (
            {
                "roi": np.array([0.1, 0.2, 0.9, 1.1], np.float32),
                "scales": np.zeros(0, np.float32),
                "sizes": np.array([5, 6], np.int64),
            },
            {
                "axes": [2, 3],
                "mode": "linear",
                "coordinate_transformation_mode": "tf_crop_and_resize",
                "extrapolation_value": 7.0,
            },
        ),
    ],
)
def test_resize_matches_onnx_reference(
    constants: dict[str, Array], attributes: dict[str, Any]
) -> None:
    check(
        "Resize", {"x": rand(0, 1, 2, 4, 5)}, constants, oracle="reference", opset=19, **attributes
    )


def test_legacy_resize_and_upsample_match_onnxruntime() -> None:
    x = rand(0, 1, 2, 3, 4)
    scales = np.array([1, 1, 2, 1.5], np.float32)
    check("Resize", {"x": x}, {"scales": scales}, opset=10)
    check("Resize", {"x": x}, {"scales": scales}, opset=10, mode="linear")
    check("Upsample", {"x": x}, {"scales": np.array([1, 1, 2, 3], np.float32)}, opset=9)
    check("Upsample", {"x": x}, scales=[1.0, 1.0, 3.0, 2.0], opset=7)
    check("Resize", {"x": x}, {"scales": np.array([1, 1, 0.5, 0.5], np.float32)}, opset=10)


RESIZE_FILTERS: list[dict[str, Any]] = [
    {"mode": "cubic"},
    {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
    {"mode": "cubic", "coordinate_transformation_mode": "align_corners"},
    {"mode": "cubic", "coordinate_transformation_mode": "asymmetric"},
    {"mode": "cubic", "coordinate_transformation_mode": "pytorch_half_pixel"},
    {"mode": "cubic", "coordinate_transformation_mode": "half_pixel_symmetric"},
    {"mode": "linear", "antialias": 1},
    {"mode": "cubic", "antialias": 1},
    {"mode": "cubic", "antialias": 1, "exclude_outside": 1, "cubic_coeff_a": -0.5},
]


@pytest.mark.parametrize("attributes", RESIZE_FILTERS)
@pytest.mark.parametrize("scales", [[1, 1, 0.6, 1.7], [1, 1, 0.3, 0.45]])
def test_resize_cubic_and_antialias_match_onnxruntime(
    attributes: dict[str, Any], scales: list[float]
) -> None:
    x = rand(0, 1, 2, 9, 7)
    constants = {"roi": np.zeros(0, np.float32), "scales": np.array(scales, np.float32)}
    # align_corners with a scale that is not output / input size: onnxruntime
    # divides by the output size, onnx.reference (and xtc, as for linear) by
    # scale × input size.
    aligned = attributes.get("coordinate_transformation_mode") == "align_corners"
    oracle = "reference" if aligned else "ort"
    check("Resize", {"x": x}, constants, oracle=oracle, opset=19, **attributes)


def test_resize_cubic_and_antialias_natively() -> None:
    x = rand(1, 1, 3, 12, 10)
    for attributes in RESIZE_FILTERS[::3]:
        sizes = np.array([1, 3, 5, 17], np.int64)
        model = model_of(
            "Resize",
            {"x": x},
            {"sizes": sizes},
            opset=19,
            names=["x", "", "", "sizes"],
            **attributes,
        )
        (got,) = xtc.compile(model, cache=False).run({"x": x})
        np.testing.assert_allclose(got, expected(model, {"x": x}, "ort")[0], rtol=1e-4, atol=1e-5)


def test_resize_refuses_antialiased_nearest_and_unknown_modes() -> None:
    x = rand(0, 1, 1, 4, 4)
    scales = {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 0.5, 0.5], np.float32)}
    with pytest.raises(OnnxImportError, match="Resize node .* mode 'area' is not supported"):
        import_model(model_of("Resize", {"x": x}, scales, opset=19, mode="area"))
    with pytest.raises(OnnxImportError, match="antialias=1 applies to the linear and cubic"):
        import_model(model_of("Resize", {"x": x}, scales, opset=19, antialias=1))


# ---------------------------------------------------------------------------
# GridSample.


def grid_of(seed: int, *shape: int) -> Array:
    """Points mostly inside [-1, 1], some up to 1.6 outside."""
    return np.random.default_rng(seed).uniform(-1.6, 1.6, shape).astype(np.float32)


GRID_SAMPLE_16 = [
    (mode, padding_mode)
    for mode in ("bilinear", "nearest", "bicubic")
    for padding_mode in ("zeros", "border", "reflection")
    # onnxruntime differs from onnx.reference here (below).
    if (mode, padding_mode) != ("bicubic", "border")
]


@pytest.mark.parametrize(("mode", "padding_mode"), GRID_SAMPLE_16)
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_16_matches_onnxruntime(
    mode: str, padding_mode: str, align_corners: int
) -> None:
    inputs = {"x": rand(2, 2, 3, 5, 4), "grid": grid_of(3, 2, 6, 7, 2)}
    attributes = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    check("GridSample", inputs, opset=16, **attributes)


@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_cubic_border_follows_onnx_reference(align_corners: int) -> None:
    # onnx.reference clamps a point into the input per axis, only along the
    # axes it leaves; onnxruntime's cubic differs (by up to 0.5 here). The
    # conformance data comes from onnx.reference.
    inputs = {"x": rand(2, 2, 3, 5, 4), "grid": grid_of(3, 2, 6, 7, 2)}
    attributes = {"mode": "cubic", "padding_mode": "border", "align_corners": align_corners}
    check("GridSample", inputs, oracle="reference", opset=20, **attributes)


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
def test_grid_sample_20_volumetric_matches_onnx_reference(mode: str) -> None:
    inputs = {"x": rand(4, 1, 2, 3, 4, 2), "grid": grid_of(5, 1, 2, 3, 2, 3)}
    for padding_mode in ("zeros", "border", "reflection"):
        check(
            "GridSample", inputs, oracle="reference", opset=20, mode=mode, padding_mode=padding_mode
        )


def test_grid_sample_natively() -> None:
    x, grid = rand(6, 2, 3, 6, 5), grid_of(7, 2, 4, 9, 2)
    for mode, padding_mode in [("linear", "zeros"), ("nearest", "border"), ("cubic", "reflection")]:
        model = model_of(
            "GridSample", {"x": x, "grid": grid}, opset=20, mode=mode, padding_mode=padding_mode
        )
        (got,) = xtc.compile(model, cache=False).run({"x": x, "grid": grid})
        want = expected(model, {"x": x, "grid": grid}, "ort")[0]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_grid_sample_refusals_name_the_problem() -> None:
    inputs = {"x": rand(0, 1, 1, 2, 3, 4), "grid": grid_of(0, 1, 2, 3, 4, 3)}
    refused(
        "GridSample", inputs, r"input tensor<1x1x2x3x4xf32> must be 4-D before opset 20", opset=16
    )
    refused(
        "GridSample",
        inputs,
        "mode 'bilinear' is not one of linear, nearest, cubic",
        opset=20,
        mode="bilinear",
    )
    refused(
        "GridSample",
        inputs,
        "padding_mode 'wrap' is not one of zeros, border, reflection",
        opset=20,
        padding_mode="wrap",
    )
    flat = {"x": rand(0, 1, 1, 2, 3), "grid": grid_of(0, 1, 2, 3, 3)}
    refused("GridSample", flat, r"grid tensor<1x2x3x3xf32> must be N×O1×…×O2×2", opset=20)


# ---------------------------------------------------------------------------
# Attention.


ATTENTION_CASES: list[tuple[str, dict[str, Any]]] = [
    ("4d", {}),
    ("4d_mask_causal", {"is_causal": 1}),
    ("3d_gqa_scaled", {"q_num_heads": 4, "kv_num_heads": 2, "scale": 0.3}),
    ("4d_softcap_bool_mask", {"softcap": 2.0, "qk_matmul_output_mode": 3}),
    ("4d_past_causal", {"is_causal": 1, "qk_matmul_output_mode": 2}),
    ("4d_window", {"left_window_size": 1, "right_window_size": 0}),
    ("4d_nonpad_causal", {"is_causal": 1}),
]


@pytest.mark.parametrize(("case", "attributes"), ATTENTION_CASES)
def test_attention_matches_onnx_reference(case: str, attributes: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    b, sq, skv, d = 2, 3, 4, 4
    heads, kv_heads = (4, 2) if "gqa" in case else (2, 2)
    if case.startswith("3d"):
        q = rng.standard_normal((b, sq, heads * d)).astype(np.float32)
        k = rng.standard_normal((b, skv, kv_heads * d)).astype(np.float32)
        v = rng.standard_normal((b, skv, kv_heads * 5)).astype(np.float32)
    else:
        q = rng.standard_normal((b, heads, sq, d)).astype(np.float32)
        k = rng.standard_normal((b, kv_heads, skv, d)).astype(np.float32)
        v = rng.standard_normal((b, kv_heads, skv, 5)).astype(np.float32)
    inputs: dict[str, Array] = {"q": q, "k": k, "v": v}
    names = ["q", "k", "v"]
    if "mask" in case:
        mask = rng.random((sq, skv)) > 0.3 if "bool" in case else rng.standard_normal((sq, 3))
        inputs["mask"] = mask.astype(np.bool_ if "bool" in case else np.float32)
        names.append("mask")
    opset = 25 if "window" in case else 24
    if "past" in case:
        inputs["past_k"] = rng.standard_normal((b, kv_heads, 2, d)).astype(np.float32)
        inputs["past_v"] = rng.standard_normal((b, kv_heads, 2, 5)).astype(np.float32)
        names += ["" if "mask" not in case else "mask", "past_k", "past_v"][
            1 if "mask" in case else 0 :
        ]
        names = ["q", "k", "v", "", "past_k", "past_v"]
    if "nonpad" in case:
        inputs["nonpad"] = np.array([4, 2], np.int64)
        names = ["q", "k", "v", "", "", "", "nonpad"]
    check(
        "Attention", inputs, oracle="reference", opset=opset, names=names, outputs=4, **attributes
    )


def test_attention_refuses_3d_inputs_without_head_counts() -> None:
    x = rand(0, 1, 2, 8)
    refused(
        "Attention", {"q": x, "k": x, "v": x}, "need the q_num_heads and kv_num_heads", opset=23
    )


def flex_attention_model(
    inputs: Mapping[str, Array], mods: Mapping[str, onnx.GraphProto], **attributes: Any
) -> onnx.ModelProto:
    """One ai.onnx.preview FlexAttention node over q, k, v."""
    node = onnx.helper.make_node(
        "FlexAttention", list(inputs), ["y"], domain="ai.onnx.preview", **mods, **attributes
    )
    graph = onnx.helper.make_graph(
        [node],
        "flex",
        [
            onnx.helper.make_tensor_value_info(
                n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)
            )
            for n, a in inputs.items()
        ],
        [onnx.ValueInfoProto(name="y")],
    )
    opsets = [onnx.helper.make_opsetid("", 26), onnx.helper.make_opsetid("ai.onnx.preview", 1)]
    return onnx.helper.make_model(graph, opset_imports=opsets)


def relative_bias_mod(name: str, shape: tuple[int, ...]) -> onnx.GraphProto:
    """x -> tanh(x) * 2 + bias, a constant of the scores' shape (f32)."""
    bias = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    return onnx.helper.make_graph(
        [
            onnx.helper.make_node("Tanh", ["x"], ["t"]),
            onnx.helper.make_node("Mul", ["t", "two"], ["m"]),
            onnx.helper.make_node("Add", ["m", "bias"], ["out"]),
        ],
        name,
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(shape))],
        [onnx.helper.make_tensor_value_info("out", onnx.TensorProto.FLOAT, list(shape))],
        [
            onnx.numpy_helper.from_array(np.array(2.0, np.float32), "two"),
            onnx.numpy_helper.from_array(bias, "bias"),
        ],
    )


@pytest.mark.parametrize(
    ("heads", "dtype", "mods", "attributes"),
    [
        ((2, 2), np.float32, (), {}),
        ((4, 2), np.float32, ("score_mod",), {"scale": 0.3}),
        ((2, 1), np.float16, ("score_mod", "prob_mod"), {}),
        ((2, 2), np.float64, (), {"softmax_precision": onnx.TensorProto.DOUBLE}),
    ],
)
def test_flex_attention_matches_onnx_reference(
    heads: tuple[int, int], dtype: Any, mods: tuple[str, ...], attributes: dict[str, Any]
) -> None:
    (hq, hkv), b, sq, skv, d = heads, 2, 3, 5, 4
    inputs = {
        "q": rand(0, b, hq, sq, d, dtype=dtype),
        "k": rand(1, b, hkv, skv, d, dtype=dtype),
        "v": rand(2, b, hkv, skv, 6, dtype=dtype),
    }
    graphs = {m: relative_bias_mod(m, (b, hq, sq, skv)) for m in mods}
    model = flex_attention_model(inputs, graphs, **attributes)
    (got,) = interp.run(import_model(model), dict(inputs))
    (want,) = expected(model, inputs, "reference")
    assert got.dtype == want.dtype == dtype and got.shape == (b, hq, sq, 6)
    tol = 2e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_flex_attention_refuses_a_mod_that_changes_the_shape() -> None:
    inputs = {"q": rand(0, 1, 2, 3, 4), "k": rand(1, 1, 2, 5, 4), "v": rand(2, 1, 2, 5, 4)}
    mod = relative_bias_mod("score_mod", (2, 2, 3, 5))  # broadcasts the scores to batch 2
    model = flex_attention_model(inputs, {"score_mod": mod})
    with pytest.raises(OnnxImportError, match="score_mod turns .* not the same type"):
        import_model(model)


# ---------------------------------------------------------------------------
# Losses.


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [None, 1, -1])
def test_losses_match_onnx_reference(
    reduction: str, weighted: bool, ignore_index: int | None
) -> None:
    rng = np.random.default_rng(4)
    scores = rng.standard_normal((3, 4, 2)).astype(np.float32)
    labels = rng.integers(0, 4, (3, 2)).astype(np.int64)
    if ignore_index is not None:
        labels[0, 0] = ignore_index
    inputs = {"scores": scores, "labels": labels}
    constants = {"w": rng.random(4).astype(np.float32)} if weighted else {}
    attributes: dict[str, Any] = {"reduction": reduction}
    if ignore_index is not None:
        attributes["ignore_index"] = ignore_index
    check(
        "SoftmaxCrossEntropyLoss",
        inputs,
        constants,
        outputs=2,
        opset=13,
        **attributes,
    )
    log_prob = np.log(np.abs(scores) + 0.1)
    check(
        "NegativeLogLikelihoodLoss",
        {**inputs, "scores": log_prob},
        constants,
        opset=13,
        **attributes,
    )


# ---------------------------------------------------------------------------
# Rotary embedding, causal convolution with state, linear attention.


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rotary_dim", [0, 4])
@pytest.mark.parametrize("rank", [3, 4])
def test_rotary_embedding_matches_onnx_reference(
    interleaved: int, rotary_dim: int, rank: int
) -> None:
    rng = np.random.default_rng(5)
    x = rand(0, 2, 3, 4 * 6) if rank == 3 else rand(0, 2, 4, 3, 6)
    half = (rotary_dim or 6) // 2
    constants = {"cos": rand(1, 10, half), "sin": rand(2, 10, half)}
    inputs = {"x": x, "positions": rng.integers(0, 10, (2, 3)).astype(np.int64)}
    attributes: dict[str, Any] = {"interleaved": interleaved, "rotary_embedding_dim": rotary_dim}
    if rank == 3:
        attributes["num_heads"] = 4
    names = ["x", "cos", "sin", "positions"]
    check(
        "RotaryEmbedding",
        inputs,
        constants,
        oracle="reference",
        opset=23,
        names=names,
        **attributes,
    )


@pytest.mark.parametrize("activation", ["none", "silu"])
@pytest.mark.parametrize("with_state", [False, True])
def test_causal_conv_with_state_matches_onnx_reference(activation: str, with_state: bool) -> None:
    inputs = {"x": rand(0, 2, 3, 5)}
    names = ["x", "w", "b"]
    if with_state:
        inputs["state"] = rand(3, 2, 3, 2)
        names.append("state")
    constants = {"w": rand(1, 3, 1, 3), "b": rand(2, 3)}
    check(
        "CausalConvWithState",
        inputs,
        constants,
        oracle="reference",
        opset=27,
        names=names,
        outputs=2,
        activation=activation,
    )


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
def test_linear_attention_matches_onnx_reference(rule: str) -> None:
    rng = np.random.default_rng(6)
    b, t, q_heads, kv_heads, dk, dv = 2, 3, 4, 2, 3, 2
    inputs = {
        "q": rand(0, b, t, q_heads * dk),
        "k": rand(1, b, t, kv_heads * dk),
        "v": rand(2, b, t, kv_heads * dv),
        "past": rand(3, b, kv_heads, dk, dv),
    }
    names = ["q", "k", "v", "past", "", ""]
    if rule in ("gated", "gated_delta"):
        inputs["decay"] = -rng.random((b, t, kv_heads * dk)).astype(np.float32)
        names[4] = "decay"
    if rule in ("delta", "gated_delta"):
        inputs["beta"] = rng.random((b, t, 1)).astype(np.float32)
        names[5] = "beta"
    attributes = {"q_num_heads": q_heads, "kv_num_heads": kv_heads, "update_rule": rule}
    check(
        "LinearAttention",
        inputs,
        oracle="reference",
        opset=27,
        names=names,
        outputs=2,
        **attributes,
    )


def test_linear_attention_refuses_a_missing_decay() -> None:
    x = rand(0, 1, 2, 4)
    refused(
        "LinearAttention",
        {"q": x, "k": x, "v": x},
        "update_rule 'gated_delta' requires the decay input",
        opset=27,
        q_num_heads=2,
        kv_num_heads=2,
    )
