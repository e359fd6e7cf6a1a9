"""Object detection: NonMaxSuppression, whose result's length depends on
the boxes and scores, so it is computed at import when they are constants
(given at run time, the model is specialized on them, as NonZero is)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from xtc.frontend.converters import Node, converts

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
