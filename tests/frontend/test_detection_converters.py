"""NonMaxSuppression and RoiAlign (frontend/converters/detection.py)
against onnxruntime (or onnx.reference, for RoiAlign's max mode), on the
interpreter and natively, with their inputs given at run time (the boxes
and scores, or with sampling_ratio 0 the regions, specialized on)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx.reference import ReferenceEvaluator

import xtc
from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.testing.onnx_models import one_node_model

RNG = np.random.default_rng(11)


def run_both(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The interpreter's outputs, after checking native code gives them."""
    got = [np.asarray(v) for v in specializing_model(model, "interp").run(inputs)]
    native = xtc.compile(model, cache=False).run(inputs)
    for g, n in zip(got, native, strict=True):
        np.testing.assert_allclose(np.asarray(n), g, rtol=1e-5, atol=1e-6)
    return got


def ort(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return list(session.run(None, inputs))


def random_boxes(batches: int, count: int, center_point_box: int) -> np.ndarray:
    """Boxes of sides 1 to 3 in a 6x6 field, so that many overlap; corner
    boxes with their corners in either order."""
    origin = RNG.uniform(0, 6, (batches, count, 2))
    sides = RNG.uniform(1, 3, (batches, count, 2))
    if center_point_box:
        return np.concatenate([origin[..., ::-1], sides[..., ::-1]], axis=-1).astype(np.float32)
    far = origin + sides
    flip = RNG.random((batches, count, 1)) < 0.5
    first, second = np.where(flip, far, origin), np.where(flip, origin, far)
    return np.concatenate([first, second], axis=-1).astype(np.float32)


@pytest.mark.parametrize(
    ("center_point_box", "per_class", "iou", "score"),
    [(0, 4, 0.3, 0.2), (1, 100, 0.5, None), (0, 2, 0.0, 0.5)],
)
def test_non_max_suppression_is_onnxruntimes(
    center_point_box: int, per_class: int, iou: float, score: float | None
) -> None:
    """Two batches and three classes (the cases have one batch with two
    classes, or two batches with one), ties in the scores."""
    boxes = random_boxes(2, 12, center_point_box)
    scores = np.round(RNG.random((2, 3, 12)), 1).astype(np.float32)
    constants = {
        "per_class": np.array([per_class], np.int64),
        "iou": np.array([iou], np.float32),
    }
    if score is not None:
        constants["score"] = np.array([score], np.float32)
    inputs = {"boxes": boxes, "scores": scores}
    model = one_node_model(
        "NonMaxSuppression", inputs, constants, opset=11, center_point_box=center_point_box
    )
    (got,) = run_both(model, inputs)
    (want,) = ort(model, inputs)
    assert got.shape[0] > 3
    np.testing.assert_array_equal(got, want)


def test_non_max_suppression_without_a_count_keeps_no_box() -> None:
    inputs = {"boxes": random_boxes(1, 4, 0), "scores": RNG.random((1, 1, 4)).astype(np.float32)}
    (got,) = run_both(one_node_model("NonMaxSuppression", inputs, opset=11), inputs)
    assert got.shape == (0, 3)
    assert got.dtype == np.int64


def test_non_max_suppression_of_scores_not_matching_the_boxes_is_refused() -> None:
    boxes = np.zeros((1, 4, 4), np.float32)
    scores = np.zeros((1, 2, 5), np.float32)
    model = one_node_model("NonMaxSuppression", {}, {"boxes": boxes, "scores": scores}, opset=11)
    with pytest.raises(
        OnnxImportError, match=r"scores tensor<1x2x5xf32> must be \[1, classes, 4\]"
    ):
        import_model(model)


def random_rois(count: int, batches: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Regions [x1, y1, x2, y2] of sides 0.5 to 8 pixels, some reaching
    past the image's sides; their batch entries."""
    origin = RNG.uniform(-2, size, (count, 2))
    sides = RNG.uniform(0.5, 8, (count, 2))
    rois = np.concatenate([origin, origin + sides], axis=1).astype(np.float32)
    return rois, RNG.integers(0, batches, count).astype(np.int64)


@pytest.mark.parametrize(
    ("mode", "transform", "sampling_ratio", "scale"),
    [
        ("avg", "half_pixel", 0, 0.5),
        ("avg", "output_half_pixel", 3, 1.0),
        ("max", "half_pixel", 0, 1.0),
        ("max", "half_pixel", 1, 0.25),
    ],
)
def test_roi_align_is_onnxruntimes(
    mode: str, transform: str, sampling_ratio: int, scale: float
) -> None:
    """Two batch entries of three channels, bins of 3 x 4, adaptive
    sampling (the cases have one entry, one channel, 2 samples per bin)."""
    x = RNG.standard_normal((2, 3, 9, 11)).astype(np.float32)
    rois, batch = random_rois(5, 2, 10)
    rois /= scale
    inputs = {"x": x, "rois": rois, "batch": batch}
    model = one_node_model(
        "RoiAlign",
        inputs,
        opset=16,  # onnxruntime has no RoiAlign-22 (the same op, for more types)
        mode=mode,
        coordinate_transformation_mode=transform,
        sampling_ratio=sampling_ratio,
        spatial_scale=scale,
        output_height=3,
        output_width=4,
    )
    (got,) = run_both(model, inputs)
    assert got.shape == (5, 3, 3, 4)
    if mode == "max":  # onnxruntime's max takes the largest interpolated value
        (want,) = ReferenceEvaluator(model).run(None, inputs)
    else:
        (want,) = ort(model, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_roi_align_with_adaptive_sampling_specializes_on_the_regions() -> None:
    x = RNG.standard_normal((1, 1, 6, 6)).astype(np.float32)
    rois, batch = random_rois(2, 1, 5)
    inputs = {"x": x, "rois": rois, "batch": batch}
    model = one_node_model("RoiAlign", inputs, opset=22, output_height=2, output_width=2)
    runner = specializing_model(model, "interp")
    runner.run(inputs)
    assert runner.specialized_inputs == ["rois"]


def test_roi_align_of_an_unknown_mode_is_refused() -> None:
    x = np.zeros((1, 1, 4, 4), np.float32)
    rois, batch = random_rois(2, 1, 3)
    model = one_node_model(
        "RoiAlign", {"x": x}, {"rois": rois, "batch": batch}, opset=22, mode="median"
    )
    with pytest.raises(OnnxImportError, match="mode 'median' is not one of avg, max"):
        import_model(model)
