"""Object detection: NonMaxSuppression, whose result's length depends on
the boxes and scores, so it is computed at import when they are constants
(given at run time, the model is specialized on them, as NonZero is);
RoiAlign, built from gathers of the input at the sample points of each
region, weighted bilinearly, then averaged or maxed over each bin."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph import reduce as rd
from xtc.dialects.graph import tensor as t
from xtc.dialects.graph.base import bool_attr, int_attr, ints_attr, shape_of
from xtc.frontend.converters import Node, converts
from xtc.frontend.converters.tensor import cast, reshape

Outputs = Sequence[SSAValue | None]


def _data(node: Node, i: int, what: str) -> np.ndarray:
    value = node.const(i)
    if value is None:
        node.fail_not_constant(
            i, f"{what} (input {i})", "the number of boxes kept depends on the boxes and scores"
        )
    return value


def _optional_scalar(node: Node, i: int, what: str) -> float | None:
    if not node.has_input(i):
        return None
    value = _data(node, i, what)
    if value.size == 0:  # an empty tensor stands for an absent input
        return None
    if value.size != 1:
        node.fail(f"{what} (input {i}) must hold one value, got {value.size}")
    return float(value.reshape(-1)[0])


def corners(boxes: np.ndarray, center_point_box: bool) -> np.ndarray:
    """Boxes [..., 4] as (y_min, x_min, y_max, x_max): from two opposite
    corners in either order, or from (x_center, y_center, width, height)."""
    if center_point_box:
        x, y, w, h = np.moveaxis(boxes.astype(np.float64), -1, 0)
        return np.stack([y - h / 2, x - w / 2, y + h / 2, x + w / 2], axis=-1)
    y1, x1, y2, x2 = np.moveaxis(boxes.astype(np.float64), -1, 0)
    return np.stack(
        [np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)], axis=-1
    )


def overlaps(box: np.ndarray, others: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Whether each of `others` [k, 4] overlaps `box` [4] (corners) by an
    intersection over union above the threshold; boxes of no area never do."""
    low = np.maximum(box[:2], others[:, :2])
    high = np.minimum(box[2:], others[:, 2:])
    sides = high - low
    intersection = np.where((sides > 0).all(axis=1), sides.prod(axis=1), 0.0)
    area = (box[2:] - box[:2]).prod()
    areas = (others[:, 2:] - others[:, :2]).prod(axis=1)
    union = area + areas - intersection
    valid = (intersection > 0) & (area > 0) & (areas > 0) & (union > 0)
    iou = np.divide(intersection, union, out=np.zeros_like(intersection), where=valid)
    return valid & (iou > iou_threshold)


def non_max_suppression(
    boxes: np.ndarray,
    scores: np.ndarray,
    per_class: int,
    iou_threshold: float,
    score_threshold: float | None,
    center_point_box: bool,
) -> np.ndarray:
    """[k, 3] rows (batch, class, box) of the boxes kept: per batch and
    class, by score from the highest (ties: the lower index first), each
    box that overlaps none kept before it, up to `per_class` of them."""
    kept: list[tuple[int, int, int]] = []
    for b in range(scores.shape[0]):
        box_corners = corners(boxes[b], center_point_box)
        for c in range(scores.shape[1]):
            class_scores = scores[b, c]
            order = np.argsort(-class_scores.astype(np.float64), kind="stable")
            if score_threshold is not None:
                order = order[class_scores[order] > score_threshold]
            chosen: list[int] = []
            for i in order:
                if len(chosen) >= per_class:
                    break
                if not overlaps(box_corners[i], box_corners[chosen], iou_threshold).any():
                    chosen.append(int(i))
            kept.extend((b, c, i) for i in chosen)
    return np.array(kept, np.int64).reshape(-1, 3)


@converts("NonMaxSuppression")
def convert_non_max_suppression(node: Node) -> Outputs:
    boxes, scores = _data(node, 0, "boxes"), _data(node, 1, "scores")
    if boxes.ndim != 3 or boxes.shape[2] != 4:
        node.fail(f"boxes {node.type_str(0)} must be [batches, boxes, 4]")
    if scores.ndim != 3 or scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
        node.fail(
            f"scores {node.type_str(1)} must be [{boxes.shape[0]}, classes, {boxes.shape[1]}] "
            f"for boxes {node.type_str(0)}"
        )
    center_point_box = node.attr("center_point_box", 0)
    if center_point_box not in (0, 1):
        node.fail(f"center_point_box {center_point_box} is not 0 or 1")
    per_class = _optional_scalar(node, 2, "max_output_boxes_per_class")
    iou_threshold = _optional_scalar(node, 3, "iou_threshold")
    selected = non_max_suppression(
        boxes,
        scores,
        max(int(per_class or 0), 0),
        iou_threshold or 0.0,
        _optional_scalar(node, 4, "score_threshold"),
        bool(center_point_box),
    )
    return [node.constant(selected)]


# ---------------------------------------------------------------------------
# RoiAlign.

ROI_ALIGN_MODES = ("avg", "max")
ROI_COORDINATE_MODES = ("half_pixel", "output_half_pixel")


def _binary(node: Node, op: type[ew.BinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
    return node.emit1(op, [a, b])


def _roi_column(node: Node, rois: SSAValue, k: int, scale: float, offset: float) -> SSAValue:
    """Column k of rois [R, 4] as [R, 1], scaled, less the half-pixel offset."""
    dtype = node.dtype(1)
    index = node.constant(np.array([k], np.int64))
    column = node.emit1(t.GatherOp, [rois, index], {"axis": int_attr(1)})
    scaled = _binary(node, ew.MulOp, column, node.constant(np.array(scale, dtype)))
    return _binary(node, ew.SubOp, scaled, node.constant(np.array(offset, dtype)))


def _sample_counts(node: Node, bins: tuple[int, int], half_pixel: bool, scale: float) -> np.ndarray:
    """Per region, the samples per bin along y and x [R, 2]: sampling_ratio,
    or with 0, ceil(region size / bins), which needs the regions at import."""
    ratio = int(node.attr("sampling_ratio", 0))
    if ratio < 0:
        node.fail(f"sampling_ratio {ratio} is negative")
    if ratio:
        return np.full((1, 2), ratio, np.int64)
    rois = node.const(1)
    if rois is None:
        node.fail_not_constant(
            1, "rois (input 1)", "with sampling_ratio 0 the number of samples depends on them"
        )
    corners = rois.astype(np.float64) * scale
    sizes = corners[:, [3, 2]] - corners[:, [1, 0]]  # height, width
    if not half_pixel:
        sizes = np.maximum(sizes, 1.0)
    return np.ceil(sizes / np.array(bins)).astype(np.int64)


def _sample_offsets(counts: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The sample points of each region along one axis, in bins from the
    region's start [R or 1, bins * S] (S the most samples per bin), and
    which of them are real: a region with fewer samples repeats its last."""
    most = max(int(counts.max()), 1)
    sample = np.arange(most)
    real = sample[None, :] < counts[:, None]
    per_bin = np.maximum(counts, 1)[:, None]
    fraction = (np.minimum(sample[None, :], per_bin - 1) + 0.5) / per_bin
    offsets = np.arange(bins)[None, :, None] + fraction[:, None, :]
    return offsets.reshape(len(counts), -1), np.broadcast_to(
        real[:, None, :], offsets.shape
    ).reshape(len(counts), -1)


def _bilinear_taps(
    node: Node, position: SSAValue, size: int, real: np.ndarray
) -> list[tuple[SSAValue, SSAValue]]:
    """The two taps (index, weight) of each sample position along an axis of
    `size`: a position in [-1, size] is clamped into [0, size - 1]; one past
    it, or a sample `real` marks false, weighs 0."""
    dtype = node.dtype(0)
    lowest, highest = node.constant(np.array(0, dtype)), node.constant(np.array(size - 1, dtype))
    inside = node.emit1(
        ew.AndOp,
        [
            _binary(node, ew.GreaterEqualOp, position, node.constant(np.array(-1, dtype))),
            _binary(node, ew.LessEqualOp, position, node.constant(np.array(size, dtype))),
        ],
    )
    weight_of = _binary(
        node, ew.MulOp, cast(node, inside, dtype), node.constant(real.astype(dtype))
    )
    clamped = _binary(node, ew.MinOp, _binary(node, ew.MaxOp, position, lowest), highest)
    low = node.emit1(ew.FloorOp, [clamped])
    high = _binary(
        node, ew.MinOp, _binary(node, ew.AddOp, low, node.constant(np.array(1, dtype))), highest
    )
    above = _binary(node, ew.SubOp, clamped, low)
    below = _binary(node, ew.SubOp, node.constant(np.array(1, dtype)), above)
    return [
        (cast(node, low, np.int64), _binary(node, ew.MulOp, below, weight_of)),
        (cast(node, high, np.int64), _binary(node, ew.MulOp, above, weight_of)),
    ]


@converts("RoiAlign")
def convert_roi_align(node: Node) -> Outputs:
    """Y [R, C, OH, OW]: per region, X of its batch entry sampled at S x S
    points of each of OH x OW bins, each sample the bilinear sum of its four
    taps (mode avg: the mean of the samples; max: the largest weighted tap,
    as ONNX's reference)."""
    x, rois, batch = node.input(0), node.input(1), node.input(2)
    _, c, height, width = _shape_4d(node)
    if shape_of(rois.type)[1:] != (4,) or shape_of(batch.type) != shape_of(rois.type)[:1]:
        node.fail(
            f"rois {node.type_str(1)} and batch_indices {node.type_str(2)} must be [R, 4] and [R]"
        )
    mode = node.attr("mode", "avg")
    if mode not in ROI_ALIGN_MODES:
        node.fail(f"mode '{mode}' is not one of {', '.join(ROI_ALIGN_MODES)}")
    transform = node.attr(
        "coordinate_transformation_mode", "half_pixel" if node.opset >= 16 else "output_half_pixel"
    )
    if transform not in ROI_COORDINATE_MODES:
        known = ", ".join(ROI_COORDINATE_MODES)
        node.fail(f"coordinate_transformation_mode '{transform}' is not one of {known}")
    half_pixel = transform == "half_pixel"
    bins = (int(node.attr("output_height", 1)), int(node.attr("output_width", 1)))
    scale = float(node.attr("spatial_scale", 1.0))
    counts = _sample_counts(node, bins, half_pixel, scale)
    regions = shape_of(rois.type)[0]
    dtype = node.dtype(0)
    taps: list[list[tuple[SSAValue, SSAValue]]] = []
    for axis, size in ((0, height), (1, width)):
        start = _roi_column(node, rois, 1 - axis, scale, 0.5 if half_pixel else 0.0)
        end = _roi_column(node, rois, 3 - axis, scale, 0.5 if half_pixel else 0.0)
        extent = _binary(node, ew.SubOp, end, start)
        if not half_pixel:
            extent = _binary(node, ew.MaxOp, extent, node.constant(np.array(1, dtype)))
        bin_size = _binary(node, ew.DivOp, extent, node.constant(np.array(bins[axis], dtype)))
        offsets, real = _sample_offsets(counts[:, axis], bins[axis])
        if mode == "max":  # a repeated sample changes no maximum; weighed 0, it would
            real = np.ones_like(real)
        step = _binary(node, ew.MulOp, bin_size, node.constant(offsets.astype(dtype)))
        taps.append(_bilinear_taps(node, _binary(node, ew.AddOp, start, step), size, real))
    rows, columns = _points_along(counts[:, 0], bins[0]), _points_along(counts[:, 1], bins[1])
    images = node.emit1(t.GatherOp, [x, cast(node, batch, np.int64)], {"axis": int_attr(0)})
    images = reshape(node, images, [regions, c, height * width])
    values = [
        _weighted_tap(node, images, y_tap, x_tap, (regions, c, width, rows, columns))
        for y_tap in taps[0]
        for x_tap in taps[1]
    ]
    combine = ew.AddOp if mode == "avg" else ew.MaxOp
    total = values[0]
    for value in values[1:]:
        total = _binary(node, combine, total, value)
    per_bin = [regions, c, bins[0], rows // bins[0], bins[1], columns // bins[1]]
    reduce = rd.ReduceSumOp if mode == "avg" else rd.ReduceMaxOp
    pooled = node.emit1(
        reduce,
        [reshape(node, total, per_bin)],
        {"axes": ints_attr([3, 5]), "keepdims": bool_attr(False)},
    )
    samples = counts[:, 0] * counts[:, 1]
    if mode == "avg":
        factor = 1.0 / np.maximum(samples, 1)
    else:
        factor = (samples > 0).astype(np.float64)  # a region of no samples is 0
    if mode == "avg" or not factor.all():
        pooled = _binary(
            node, ew.MulOp, pooled, node.constant(factor.astype(dtype).reshape(-1, 1, 1, 1))
        )
    return [pooled]


def _weighted_tap(
    node: Node,
    images: SSAValue,
    y_tap: tuple[SSAValue, SSAValue],
    x_tap: tuple[SSAValue, SSAValue],
    sizes: tuple[int, int, int, int, int],
) -> SSAValue:
    """images [R, C, H * W] at one of the four taps of every sample point
    [R, C, rows * columns], times the tap's weight; `sizes` (R, C, W, rows,
    columns)."""
    regions, c, image_width, rows, columns = sizes
    (y_index, y_weight), (x_index, x_weight) = y_tap, x_tap
    width = node.constant(np.array(image_width, np.int64))
    flat = _binary(
        node,
        ew.AddOp,
        reshape(node, _binary(node, ew.MulOp, y_index, width), [regions, rows, 1]),
        reshape(node, x_index, [regions, 1, columns]),
    )
    points = [regions, 1, rows * columns]
    every_channel = node.constant(np.array([regions, c, rows * columns], np.int64))
    where = node.apply("Expand", [reshape(node, flat, points), every_channel])[0]
    tap = node.emit1(t.GatherElementsOp, [images, where], {"axis": int_attr(2)})
    weight = _binary(
        node,
        ew.MulOp,
        reshape(node, y_weight, [regions, rows, 1]),
        reshape(node, x_weight, [regions, 1, columns]),
    )
    return _binary(node, ew.MulOp, tap, reshape(node, weight, points))


def _points_along(counts: np.ndarray, bins: int) -> int:
    """The number of sample points along an axis: bins times the most samples per bin."""
    return bins * max(int(counts.max()), 1)


def _shape_4d(node: Node) -> tuple[int, int, int, int]:
    shape = node.shape(0)
    if len(shape) != 4:
        node.fail(f"input {node.type_str(0)} must be 4-D [N, C, H, W]")
    return shape[0], shape[1], shape[2], shape[3]
