"""Ops xtc builds from others at import: Col2Im as a ConvTranspose with a
one-hot weight; MaxUnpool and TensorScatter as a ScatterElements; Det of
matrices up to MAX_DET_SIZE as the Leibniz sum over permutations;
AffineGrid as a MatMul of a constant grid of positions by theta;
DeformConv as a GridSample of the input at the offset kernel taps, then a
MatMul with the weight."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations
from math import prod

import numpy as np
from xdsl.ir import SSAValue

from xtc.dialects.graph import nn
from xtc.dialects.graph.base import bool_attr, shape_of, str_attr
from xtc.frontend.converters import Node, converts

Outputs = Sequence[SSAValue | None]

MAX_DET_SIZE = 4
"""The largest matrix Det expands (24 products of 4)."""


def _ints(node: Node, i: int, what: str) -> list[int]:
    return [int(v) for v in node.require_const(i, what).reshape(-1)]


def _shape(value: SSAValue) -> tuple[int, ...]:
    return shape_of(value.type)


def _const(node: Node, values: Sequence[int]) -> SSAValue:
    return node.constant(np.array(values, np.int64))


def _reshape(node: Node, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    return node.apply("Reshape", [value, _const(node, shape)])[0]


@converts("Col2Im")
def convert_col2im(node: Node) -> Outputs:
    """Each column of input [N, C * prod(block), L] is a block of the image
    [N, C, *image]; overlapping blocks add up: a ConvTranspose whose weight
    sends channel c * prod(block) + k to channel c at kernel position k."""
    x = node.input(0)
    image, block = _ints(node, 1, "image_shape"), _ints(node, 2, "block_shape")
    r = len(image)
    if len(block) != r:
        node.fail(f"block_shape {block} and image_shape {image} differ in rank")
    strides = list(node.attr("strides", [1] * r))
    dilations = list(node.attr("dilations", [1] * r))
    pads = list(node.attr("pads", [0] * (2 * r)))
    n, rows, length = _shape(x)
    size = prod(block)
    if rows % size:
        node.fail(f"input rows {rows} are not a multiple of the block size {size}")
    channels = rows // size
    counts = [
        (image[d] + pads[d] + pads[d + r] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
        for d in range(r)
    ]
    if prod(counts) != length:
        node.fail(f"{length} columns do not tile an image of {image} in blocks of {block}")
    weight = np.zeros((rows, channels, *block), node.dtype(0))
    for c in range(channels):
        for k, position in enumerate(np.ndindex(*block)):
            weight[c * size + k, c, *position] = 1
    blocks = node.apply("Reshape", [x, _const(node, [n, rows, *counts])])[0]
    return node.apply(
        "ConvTranspose",
        [blocks, node.constant(weight)],
        strides=strides,
        dilations=dilations,
        pads=pads,
    )


@converts("MaxUnpool")
def convert_max_unpool(node: Node) -> Outputs:
    """Zeros of the shape that MaxPool's window gives back, with X's values
    at I's positions (indices into it flattened, as MaxPool gives them);
    then, with `output_shape`, in the corner of a zero tensor of that
    shape."""
    x, indices = node.input(0), node.input(1)
    xs = _shape(x)
    r = len(xs) - 2
    kernel = list(node.attr("kernel_shape") or [])
    if len(kernel) != r:
        node.fail(f"kernel_shape {kernel} must give {r} sizes")
    strides = list(node.attr("strides", [1] * r))
    pads = list(node.attr("pads", [0] * (2 * r)))
    spatial = [(xs[2 + d] - 1) * strides[d] - pads[d] - pads[d + r] + kernel[d] for d in range(r)]
    inferred = [*xs[:2], *spatial]
    flat = node.apply("Reshape", [x, _const(node, [-1])])[0]
    where = node.apply("Reshape", [indices, _const(node, [-1])])[0]
    zeros = node.constant(np.zeros(prod(inferred), node.dtype(0)))
    scattered = node.apply("ScatterElements", [zeros, where, flat], axis=0)[0]
    y = node.apply("Reshape", [scattered, _const(node, inferred)])[0]
    if not node.has_input(2):
        return [y]
    wanted = _ints(node, 2, "output_shape")
    if len(wanted) != len(inferred) or any(w < i for w, i in zip(wanted, inferred, strict=True)):
        node.fail(f"output_shape {wanted} is smaller than the unpooled shape {inferred}")
    extra = [w - i for w, i in zip(wanted, inferred, strict=True)]
    return node.apply("Pad", [y, _const(node, [0] * len(extra) + extra)])


@converts("TensorScatter")
def convert_tensor_scatter(node: Node) -> Outputs:
    """past_cache with update written along `axis` from each batch entry's
    write index (0 without write_indices); `circular` wraps around."""
    cache, update = node.input(0), node.input(1)
    cs, us = _shape(cache), _shape(update)
    axis = int(node.attr("axis", -2))
    axis = axis + len(cs) if axis < 0 else axis
    if not 0 < axis < len(cs):
        node.fail(f"axis {axis} must be a sequence axis of {node.type_str(0)} (not the batch)")
    mode = node.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        node.fail(f"mode '{mode}' is not linear or circular")
    along = [1] * len(us)
    along[axis] = us[axis]
    steps = node.constant(np.arange(us[axis], dtype=np.int64).reshape(along))
    if node.has_input(2):
        starts = node.apply("Cast", [node.input(2)], to=7)[0]  # int64
        per_batch = [us[0]] + [1] * (len(us) - 1)
        starts = node.apply("Reshape", [starts, _const(node, per_batch)])[0]
        steps = node.apply("Add", [steps, starts])[0]
    if mode == "circular":
        steps = node.apply("Mod", [steps, _const(node, cs[axis])])[0]
    where = node.apply("Expand", [steps, _const(node, us)])[0]
    return node.apply("ScatterElements", [cache, where, update], axis=axis)


def _sign(permutation: tuple[int, ...]) -> int:
    inversions = sum(1 for i, a in enumerate(permutation) for b in permutation[i + 1 :] if a > b)
    return -1 if inversions % 2 else 1


@converts("Det")
def convert_det(node: Node) -> Outputs:
    x = node.input(0)
    shape = _shape(x)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        node.fail(f"input {node.type_str(0)} is not a (batch of) square matrices")
    m = shape[-1]
    if m > MAX_DET_SIZE:
        largest = f"{MAX_DET_SIZE}x{MAX_DET_SIZE}"
        node.fail(f"matrices of {m}x{m} are not supported (xtc expands up to {largest})")
    rows = [
        node.apply("Gather", [x, node.constant(np.array(i, np.int64))], axis=-2)[0]
        for i in range(m)
    ]
    entries = [
        [
            node.apply("Gather", [row, node.constant(np.array(j, np.int64))], axis=-1)[0]
            for j in range(m)
        ]
        for row in rows
    ]
    total: SSAValue | None = None
    for permutation in permutations(range(m)):
        term = entries[0][permutation[0]]
        for i in range(1, m):
            term = node.apply("Mul", [term, entries[i][permutation[i]]])[0]
        if total is None:
            total = term if _sign(permutation) > 0 else node.apply("Neg", [term])[0]
        else:
            total = node.apply("Add" if _sign(permutation) > 0 else "Sub", [total, term])[0]
    assert total is not None
    return [total]


def _grid_positions(spatial: Sequence[int], align_corners: bool) -> np.ndarray:
    """The normalized position of every point of a grid of `spatial` sizes
    ([D,] H, W) as rows (x, y[, z], 1), the last axis varying fastest."""

    def axis(size: int) -> np.ndarray:
        if align_corners:
            return np.linspace(-1.0, 1.0, size)  # [-1] for a size of 1, as onnxruntime
        return (2.0 * np.arange(size) + 1.0) / size - 1.0

    mesh = np.meshgrid(*(axis(s) for s in spatial), indexing="ij")
    columns = [m.reshape(-1) for m in reversed(mesh)]
    return np.stack([*columns, np.ones(prod(spatial))], axis=1)


@converts("AffineGrid")
def convert_affine_grid(node: Node) -> Outputs:
    """theta [N, r, r + 1] maps each output position (x, y[, z], 1) of a
    grid of `size` [N, C, [D,] H, W] to where it samples: the positions as
    a constant [points, r + 1] times theta transposed."""
    theta = node.input(0)
    size = _ints(node, 1, "size")
    ts = _shape(theta)
    r = len(size) - 2
    if r not in (2, 3):
        node.fail(f"size {size} must give N, C and 2 or 3 spatial sizes")
    if ts != (size[0], r, r + 1):
        node.fail(f"theta {node.type_str(0)} must be [{size[0]}, {r}, {r + 1}] for size {size}")
    spatial = size[2:]
    positions = _grid_positions(spatial, bool(node.attr("align_corners", 0)))
    base = node.constant(positions.astype(node.dtype(0)))
    mapping = node.apply("Transpose", [theta], perm=[0, 2, 1])[0]
    grid = node.apply("MatMul", [base, mapping])[0]
    return node.apply("Reshape", [grid, _const(node, [size[0], *spatial, r])])


def _deform_grid_start(
    node: Node, image: Sequence[int], out: Sequence[int], kernel: Sequence[int]
) -> np.ndarray:
    """Where each kernel tap of each output position reads the input before
    its offset, normalized as GridSample reads it with align_corners=0
    (pixel p at (2p + 1) / size - 1): [2 (y, x), kh * kw, oh * ow]."""
    strides, dilations = node.attr("strides", [1, 1]), node.attr("dilations", [1, 1])
    before = node.attr("pads", [0, 0, 0, 0])[:2]
    taps = np.stack(np.meshgrid(*(np.arange(k) for k in kernel), indexing="ij")).reshape(2, -1, 1)
    at = np.stack(np.meshgrid(*(np.arange(o) for o in out), indexing="ij")).reshape(2, 1, -1)
    steps, spread, pad, size = (
        np.array(v).reshape(2, 1, 1) for v in (strides, dilations, before, image)
    )
    pixels = at * steps - pad + taps * spread
    return (2.0 * pixels + 1.0) / size - 1.0


def _deform_grid(node: Node, start: np.ndarray, image: Sequence[int], count: int) -> SSAValue:
    """The GridSample grid [N * offset_group, taps, positions, 2 (x, y)]:
    `start` moved by the offsets, normalized like it."""
    _, taps, positions = start.shape
    dtype = node.dtype(0)
    moves = _reshape(node, node.input(2), [count, taps, 2, positions])
    normalized = []
    for axis in (1, 0):  # x first
        move = node.apply("Gather", [moves, node.constant(np.array(axis, np.int64))], axis=2)[0]
        scaled = node.apply("Mul", [move, node.constant(np.array(2.0 / image[axis], dtype))])[0]
        moved = node.apply("Add", [scaled, node.constant(start[axis].astype(dtype))])[0]
        normalized.append(_reshape(node, moved, [count, taps, positions, 1]))
    return node.apply("Concat", normalized, axis=3)[0]


@converts("DeformConv")
def convert_deform_conv(node: Node) -> Outputs:
    """Each kernel tap of each output position reads X bilinearly at its
    place moved by `offset` (zero outside X), times `mask`: a GridSample per
    offset group (in pixel units normalized as align_corners=0 reads them
    back), then the columns [N, group, C / group * taps, positions] times
    the weight [group, M / group, C / group * taps]."""
    x, w, offset = node.input(0), node.input(1), node.input(2)
    xs, ws, offsets = _shape(x), _shape(w), _shape(offset)
    if len(xs) != 4 or len(ws) != 4 or len(offsets) != 4:
        node.fail(f"X {node.type_str(0)}, W and offset must be 4-D (xtc has 2-D DeformConv)")
    n, c, height, width = xs
    m = ws[0]
    kernel = list(node.attr("kernel_shape", ws[2:]))
    if tuple(kernel) != ws[2:]:
        node.fail(f"kernel_shape {kernel} differs from W {node.type_str(1)}")
    strides, dilations = node.attr("strides", [1, 1]), node.attr("dilations", [1, 1])
    pads = node.attr("pads", [0, 0, 0, 0])
    group, offset_group = int(node.attr("group", 1)), int(node.attr("offset_group", 1))
    if c != ws[1] * group or m % group or c % offset_group:
        node.fail(
            f"X {node.type_str(0)} and W {node.type_str(1)} do not fit group {group} "
            f"and offset_group {offset_group}"
        )
    out = [
        (xs[2 + d] + pads[d] + pads[d + 2] - dilations[d] * (kernel[d] - 1) - 1) // strides[d] + 1
        for d in range(2)
    ]
    taps = kernel[0] * kernel[1]
    if offsets != (n, offset_group * taps * 2, *out):
        wanted = [n, offset_group * taps * 2, *out]
        node.fail(f"offset {node.type_str(2)} must be {wanted}")
    positions = out[0] * out[1]
    count = n * offset_group
    start = _deform_grid_start(node, (height, width), out, kernel)
    grid = _deform_grid(node, start, (height, width), count)
    images = _reshape(node, x, [count, c // offset_group, height, width])
    props = {
        "mode": str_attr("linear"),
        "padding_mode": str_attr("zeros"),
        "align_corners": bool_attr(False),
    }
    sampled = node.emit1(nn.GridSampleOp, [images, grid], props)
    if node.has_input(4):
        weights = _reshape(node, node.input(4), [count, 1, taps, positions])
        sampled = node.apply("Mul", [sampled, weights])[0]
    columns = _reshape(node, sampled, [n, group, c // group * taps, positions])
    weight = _reshape(node, w, [group, m // group, c // group * taps])
    y = node.apply("MatMul", [weight, columns])[0]
    y = _reshape(node, y, [n, m, *out])
    if node.has_input(3):
        bias = _reshape(node, node.input(3), [m, 1, 1])
        y = node.apply("Add", [y, bias])[0]
    return [y]
