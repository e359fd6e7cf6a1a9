"""numpy semantics of the nn graph ops.

Windowed ops (convolutions, pooling) loop over the kernel positions and do
one strided slice and one tensor contraction per position. Floats accumulate
in float64 and integers in int64; results are cast to the result tensor type.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from xtc.dialects.graph import nn
from xtc.dialects.graph.base import (
    GraphOp,
    elem,
    get_bool,
    get_float,
    get_int,
    get_ints,
    get_str,
    op_props,
    shape_of,
)
from xtc.dialects.graph.constant import numpy_dtype
from xtc.dtypes import is_float_dtype

Array = np.ndarray[Any, np.dtype[Any]]


def _result_dtype(op: GraphOp) -> np.dtype[Any]:
    return numpy_dtype(elem(op.result_types[0]))


def _accumulator(x: Array) -> Array:
    """x widened for accumulation: float64 for floats (bf16 and float8
    too), int64 for integers."""
    if is_float_dtype(x.dtype):
        return x.astype(np.float64)
    if np.issubdtype(x.dtype, np.bool_):
        return x.astype(np.int64)
    return x.astype(np.int64) if x.dtype != np.uint64 else x


def _cast(op: GraphOp, value: Array) -> Array:
    """value with the result tensor's dtype and shape checked."""
    dtype = _result_dtype(op)
    if np.issubdtype(dtype, np.integer) and is_float_dtype(value.dtype):
        value = np.rint(value)
    out = np.asarray(value).astype(dtype)
    assert out.shape == shape_of(op.result_types[0]), (out.shape, op)
    return out


def _saturate(op: GraphOp, value: Array) -> Array:
    """value rounded and clipped into an integer result type's range (cubic
    overshoots its inputs), as onnx.reference's saturate_cast."""
    dtype = _result_dtype(op)
    if not np.issubdtype(dtype, np.integer):
        return value
    info = np.iinfo(dtype)
    return np.clip(np.rint(value), info.min, info.max)


def _window(op: GraphOp, kernel: tuple[int, ...]) -> nn.Window2d:
    props = op_props(op)
    return nn.Window2d(
        kernel=kernel,
        strides=get_ints(props, "strides"),
        dilation=get_ints(props, "dilation"),
        padding=get_ints(props, "padding"),
    )


# ---------------------------------------------------------------------------
# Convolutions.


def conv2d(x: Array, w: Array, window: nn.Window2d, groups: int, out_hw: tuple[int, int]) -> Array:
    """Grouped NCHW cross-correlation, summed kernel position by position."""
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    t, left, b, r = window.padding
    padded = np.pad(x, ((0, 0), (0, 0), (t, b), (left, r)))
    oh, ow = out_hw
    sh, sw = window.strides
    dh, dw = window.dilation
    og = o // groups
    grouped_w = w.reshape(groups, og, cg, kh, kw)
    out = np.zeros((n, groups, og, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            patch = padded[
                :,
                :,
                i * dh : i * dh + sh * (oh - 1) + 1 : sh,
                j * dw : j * dw + sw * (ow - 1) + 1 : sw,
            ].reshape(n, groups, cg, oh, ow)
            out += np.einsum("ngchw,goc->ngohw", patch, grouped_w[:, :, :, i, j])
    return out.reshape(n, o, oh, ow)


def winograd_conv2d(
    x: Array, u: Array, bt: Array, at: Array, padding: tuple[int, ...], out_hw: tuple[int, int]
) -> Array:
    """graph.winograd_conv2d on an NCHW input, tile by tile: Aᵀ [Σ_c U ⊙ (Bᵀ
    d B)] A, u α×α×K×C (unblocked), then the tiles past out_hw cut off."""
    n, _, h, w = x.shape
    m, alpha = at.shape
    oh, ow = out_hw
    tiles_h, tiles_w = -(-oh // m), -(-ow // m)
    top, left, _, _ = padding
    padded = np.pad(
        x,
        (
            (0, 0),
            (0, 0),
            (top, tiles_h * m + alpha - m - h - top),
            (left, tiles_w * m + alpha - m - w - left),
        ),
    )
    windows = np.lib.stride_tricks.sliding_window_view(padded, (alpha, alpha), axis=(2, 3))
    tiles = windows[:, :, ::m, ::m]  # n, c, ty, tx, i, j
    transformed = np.einsum("ai,nctxij,bj->nctxab", bt, tiles, bt)
    products = np.einsum("abkc,nctxab->nktxab", u, transformed)
    out = np.einsum("ua,nktxab,vb->nktuxv", at, products, at)
    out = out.reshape(n, u.shape[2], tiles_h * m, tiles_w * m)
    return np.ascontiguousarray(out[:, :, :oh, :ow])


def conv2d_transpose(
    x: Array,
    w: Array,
    window: nn.Window2d,
    groups: int,
    out_hw: tuple[int, int],
) -> Array:
    """ONNX ConvTranspose: each input pixel scatters weight·value into the
    output at stride spacing; the full result is then cropped by padding."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    sh, sw = window.strides
    dh, dw = window.dilation
    top, left = window.padding[0], window.padding[1]
    oh, ow = out_hw
    full_h = max(sh * (h - 1) + window.extent(0), top + oh)
    full_w = max(sw * (wd - 1) + window.extent(1), left + ow)
    full = np.zeros((n, groups, og, full_h, full_w), x.dtype)
    grouped_x = x.reshape(n, groups, cg, h, wd)
    grouped_w = w.reshape(groups, cg, og, kh, kw)
    for i in range(kh):
        for j in range(kw):
            contribution = np.einsum("ngchw,gco->ngohw", grouped_x, grouped_w[:, :, :, i, j])
            full[
                :,
                :,
                :,
                i * dh : i * dh + sh * (h - 1) + 1 : sh,
                j * dw : j * dw + sw * (wd - 1) + 1 : sw,
            ] += contribution
    out = full[:, :, :, top : top + oh, left : left + ow]
    return out.reshape(n, groups * og, oh, ow)


# ---------------------------------------------------------------------------
# Pooling.


def _window_rows(
    window: nn.Window2d, axis: int, size: int, out: int, k: int
) -> tuple[Array, Array, Array]:
    """For kernel offset k along `axis`: the input index read by each output
    position, whether it lies in the input, and whether it lies in the input
    or its explicit padding (the ceil_mode overhang lies in neither)."""
    pad_lo, pad_hi = window.padding[axis], window.padding[axis + 2]
    index = np.arange(out) * window.strides[axis] - pad_lo + k * window.dilation[axis]
    inside = (index >= 0) & (index < size)
    in_padding = (index >= -pad_lo) & (index < size + pad_hi)
    return np.clip(index, 0, size - 1), inside, in_padding


def pool2d(
    x: Array,
    window: nn.Window2d,
    out_hw: tuple[int, int],
    reduce_max: bool,
    count_include_pad: bool = False,
) -> Array:
    """ONNX MaxPool / AveragePool over explicit padding and ceil_mode overhang."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    if reduce_max:
        lowest = -np.inf if is_float_dtype(x.dtype) else np.iinfo(x.dtype).min
        total = np.full((n, c, oh, ow), lowest, x.dtype)
    else:
        total = np.zeros((n, c, oh, ow), x.dtype)
    count = np.zeros((oh, ow), np.int64)
    for i in range(window.kernel[0]):
        rows, row_in, row_pad = _window_rows(window, 0, h, oh, i)
        for j in range(window.kernel[1]):
            cols, col_in, col_pad = _window_rows(window, 1, w, ow, j)
            values = x[:, :, rows[:, None], cols[None, :]]
            inside = row_in[:, None] & col_in[None, :]
            if reduce_max:
                total = np.where(inside, np.maximum(total, values), total)
                continue
            total += np.where(inside, values, 0)
            counted = (row_pad[:, None] & col_pad[None, :]) if count_include_pad else inside
            count += counted
    if reduce_max:
        return total
    return total / np.maximum(count, 1)


# ---------------------------------------------------------------------------
# Pad and resize.


def pad(x: Array, pads: tuple[int, ...], mode: str, value: float) -> Array:
    """ONNX Pad; negative pads crop that side first."""
    rank = x.ndim
    crop = tuple(slice(max(-pads[i], 0), x.shape[i] - max(-pads[i + rank], 0)) for i in range(rank))
    widths = [(max(pads[i], 0), max(pads[i + rank], 0)) for i in range(rank)]
    cropped = x[crop]
    if mode == "constant":
        return np.pad(cropped, widths, mode="constant", constant_values=value)
    return np.pad(cropped, widths, mode=cast(Any, mode))


@dataclass(frozen=True)
class ResizeAxis:
    """How one axis of ONNX Resize maps output indices to input coordinates."""

    in_size: int
    out_size: int
    scale: float
    transformation: str
    roi: tuple[float, float] = (0.0, 1.0)

    def coordinates(self) -> Array:
        """The input coordinate of each output index."""
        y = np.arange(self.out_size, dtype=np.float64)
        width = self.scale * self.in_size
        mode = self.transformation
        if mode == "asymmetric":
            return y / self.scale
        if mode == "align_corners":
            if width == 1:
                return np.zeros(self.out_size)
            return y * (self.in_size - 1) / (width - 1)
        if mode == "tf_crop_and_resize":
            start, end = self.roi
            if width == 1:
                x = np.full(self.out_size, (end - start) * (self.in_size - 1) / 2)
            else:
                x = y * (end - start) * (self.in_size - 1) / (width - 1)
            return x + start * (self.in_size - 1)
        if mode == "pytorch_half_pixel" and self.out_size == 1:
            # ONNX's rule (and onnxruntime's), not onnx.reference's -0.5
            return np.zeros(self.out_size)
        if mode == "half_pixel_symmetric":
            # In ONNX's order of operations: coordinates on a rounding
            # boundary must round the same way.
            offset = self.in_size / 2 * (1 - self.out_size / width)
            return offset + (y + 0.5) / self.scale - 0.5
        return (y + 0.5) / self.scale - 0.5

    def outside(self, coords: Array) -> Array | None:
        """Where tf_crop_and_resize extrapolates, else None."""
        if self.transformation != "tf_crop_and_resize":
            return None
        return (coords < 0) | (coords > self.in_size - 1)


def nearest_indices(coords: Array, nearest_mode: str, in_size: int) -> Array:
    floor = np.floor(coords)
    frac = coords - floor
    rounders: dict[str, Callable[[], Array]] = {
        "round_prefer_floor": lambda: floor + (frac > 0.5),
        "round_prefer_ceil": lambda: floor + (frac >= 0.5),
        "floor": lambda: floor,
        "ceil": lambda: np.ceil(coords),
    }
    index = rounders[nearest_mode]()
    return np.clip(index, 0, in_size - 1).astype(np.intp)


@dataclass(frozen=True)
class ResizeFilter:
    """The interpolation of ONNX Resize along one axis."""

    mode: str
    nearest_mode: str = "round_prefer_floor"
    cubic_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False

    @property
    def weighs_taps(self) -> bool:
        """Cubic and antialias read a window of weighted taps (linear and
        nearest without antialias keep their two-point forms)."""
        return self.mode == "cubic" or self.antialias


def cubic_near(t: Array, a: float) -> Array:
    """Keys' cubic kernel at distance t in [0, 1]."""
    return ((a + 2) * t - (a + 3)) * t * t + 1


def cubic_far(t: Array, a: float) -> Array:
    """Keys' cubic kernel at distance t in [1, 2]."""
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a


def cubic_kernel(d: Array, a: float) -> Array:
    """Keys' cubic kernel at any distance (zero from 2 on)."""
    t = np.abs(d)
    return np.where(t <= 1, cubic_near(t, a), np.where(t < 2, cubic_far(t, a), 0.0))


def filter_taps(support: float, scale: float, antialias: bool) -> range:
    """The tap offsets of a kernel of `support` (2 cubic, 1 linear) around
    ceil(x) - 1, widened by 1 / scale when antialiasing a downsampling."""
    stretch = min(scale, 1.0) if antialias else 1.0
    first = math.floor(-support / stretch) + 1
    return range(first, 2 - first)


def weighted_resize_axis(
    x: Array, axis: int, geometry: ResizeAxis, spec: ResizeFilter, coords: Array
) -> Array:
    """One axis of cubic or antialiased Resize: the taps around each
    coordinate (ONNX's window: base ceil(x) - 1, ratio in (0, 1]), edge
    clamped, weighted by the kernel at their distances (scaled when
    antialiasing, then normalized); exclude_outside zeroes the taps outside
    the input and renormalizes."""
    in_size = geometry.in_size
    cubic = spec.mode == "cubic"
    stretch = min(geometry.scale, 1.0) if spec.antialias else 1.0
    base = np.ceil(coords) - 1
    ratio = coords - base
    offsets = filter_taps(2.0 if cubic else 1.0, geometry.scale, spec.antialias)
    distance = (np.array(offsets, dtype=np.float64)[None, :] - ratio[:, None]) * stretch
    if cubic:
        weights = cubic_kernel(distance, spec.cubic_a)
    else:
        weights = np.clip(1 - np.abs(distance), 0, 1)
    if spec.antialias:
        weights = weights / weights.sum(axis=1, keepdims=True)
    taps = base.astype(np.int64)[:, None] + np.array(offsets, dtype=np.int64)[None, :]
    if spec.exclude_outside:
        weights = np.where((taps < 0) | (taps >= in_size), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    gathered = np.take(x, np.clip(taps, 0, in_size - 1).astype(np.intp), axis=axis)
    shape = [1] * gathered.ndim
    shape[axis : axis + 2] = weights.shape
    return (gathered * weights.reshape(shape)).sum(axis=axis + 1)


def resize_axis(
    x: Array, axis: int, geometry: ResizeAxis, spec: ResizeFilter, extrapolation: float
) -> Array:
    """One axis of ONNX Resize (the op is separable over axes)."""
    in_size = geometry.in_size
    coords = geometry.coordinates()
    shape = [1] * x.ndim
    shape[axis] = geometry.out_size
    if spec.weighs_taps:
        out = weighted_resize_axis(x, axis, geometry, spec, coords)
    elif spec.mode == "nearest":
        out = np.take(x, nearest_indices(coords, spec.nearest_mode, in_size), axis=axis)
    else:
        below = np.floor(coords)
        ratio = (coords - below).reshape(shape)
        lo = np.clip(below, 0, in_size - 1).astype(np.intp)
        hi = np.clip(below + 1, 0, in_size - 1).astype(np.intp)
        out = np.take(x, lo, axis=axis) * (1 - ratio) + np.take(x, hi, axis=axis) * ratio
    outside = geometry.outside(coords)
    if outside is not None:
        out = np.where(outside.reshape(shape), extrapolation, out)
    return out


def resize(
    x: Array,
    size: tuple[int, ...],
    spec: ResizeFilter,
    transformation: str,
    scales: tuple[float, ...],
    roi: tuple[float, ...],
    extrapolation: float = 0.0,
) -> Array:
    out = x.astype(np.float64)
    rank = x.ndim
    for axis, out_size in enumerate(size):
        span = (roi[axis], roi[axis + rank])
        unchanged = math.isclose(scales[axis], 1.0) and out_size == x.shape[axis]
        if unchanged and (transformation != "tf_crop_and_resize" or span == (0.0, 1.0)):
            continue
        geometry = ResizeAxis(x.shape[axis], out_size, scales[axis], transformation, span)
        out = resize_axis(out, axis, geometry, spec, extrapolation)
    return out


def resize_filter(op: GraphOp) -> ResizeFilter:
    """The interpolation graph.resize `op` asks for."""
    props = op_props(op)
    return ResizeFilter(
        mode=get_str(props, "mode"),
        nearest_mode=get_str(props, "nearest_mode"),
        cubic_a=get_float(props, "cubic_coeff_a"),
        exclude_outside=get_bool(props, "exclude_outside"),
        antialias=get_bool(props, "antialias"),
    )


# ---------------------------------------------------------------------------
# Grid sampling.


def grid_bounds(size: int, align_corners: bool) -> tuple[float, float]:
    """The coordinates -1 and 1 map to on an axis of `size` elements."""
    return (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)


def reflect(x: Array, lo: float, hi: float) -> Array:
    """x folded into [lo, hi] by reflecting at its ends, as often as needed."""
    span = hi - lo
    if span == 0:
        return np.full_like(x, lo)
    beyond = np.where(x < lo, lo - x, x - hi)
    folds = np.trunc(beyond / span)
    rest = beyond - folds * span
    even = folds % 2 == 0
    below = np.where(even, lo + rest, hi - rest)
    above = np.where(even, hi - rest, lo + rest)
    return np.where(x < lo, below, np.where(x > hi, above, x))


def grid_coordinates(grid: Array, axis: int, size: int, align_corners: bool) -> Array:
    """The input coordinate along spatial `axis` of each grid point, mapped
    from [-1, 1] in the grid's float type (as onnxruntime), then as f64."""
    normalized = grid[..., grid.shape[-1] - 1 - axis]
    if normalized.dtype.itemsize < 4:  # f16, bf16: mapped in f32
        normalized = normalized.astype(np.float32)
    one = normalized.dtype.type(1)
    if align_corners:
        mapped = (normalized + one) / normalized.dtype.type(2) * normalized.dtype.type(size - 1)
    else:
        mapped = ((normalized + one) * normalized.dtype.type(size) - one) / normalized.dtype.type(2)
    return mapped.astype(np.float64)


def grid_taps(
    x: Array, size: int, mode: str, padding: str, align_corners: bool
) -> list[tuple[Array, Array]]:
    """The (index, weight) taps along one axis at coordinates `x`: the
    coordinate is first brought inside (border clamps, reflection folds),
    then each tap outside the input reads per `padding` (zeros: weight 0)."""
    lo, hi = grid_bounds(size, align_corners)
    if mode == "nearest":
        x = np.rint(x)
    if padding == "border":
        x = np.where((x < lo) | (x > hi), np.clip(x, 0, size - 1), x)
    elif padding == "reflection":
        x = reflect(x, lo, hi)
    if mode == "nearest":
        points = [(x, np.ones_like(x))]
    else:
        below = np.floor(x)
        t = x - below
        if mode == "linear":
            points = [(below, 1 - t), (below + 1, t)]
        else:
            a = -0.75
            points = [
                (below - 1, cubic_far(t + 1, a)),
                (below, cubic_near(t, a)),
                (below + 1, cubic_near(1 - t, a)),
                (below + 2, cubic_far(2 - t, a)),
            ]
    taps: list[tuple[Array, Array]] = []
    for index, weight in points:
        if padding == "zeros":
            weight = np.where((index < 0) | (index >= size), 0.0, weight)
        elif padding == "reflection":
            index = np.trunc(reflect(index, lo, hi))
        taps.append((safe_index(index, size), weight))
    return taps


def safe_index(index: Array, size: int) -> Array:
    """Indices clamped into [0, size), NaN to 0 (a grid may hold NaN)."""
    low = np.where(index > 0, index, 0)
    return np.where(low < size - 1, low, size - 1).astype(np.intp)


def grid_sample(x: Array, grid: Array, mode: str, padding: str, align_corners: bool) -> Array:
    """ONNX GridSample: Σ over the taps of every spatial axis of the product
    of their weights times the input element they name."""
    spatial = x.ndim - 2
    with np.errstate(invalid="ignore"):  # NaN points: weights NaN, indices 0
        per_axis = [
            grid_taps(
                grid_coordinates(grid, a, x.shape[2 + a], align_corners),
                x.shape[2 + a],
                mode,
                padding,
                align_corners,
            )
            for a in range(spatial)
        ]
    batch = np.arange(x.shape[0]).reshape((-1,) + (1,) * spatial)
    data = x.astype(np.float64)
    out = np.zeros((*grid.shape[:-1], x.shape[1]))
    for combination in itertools.product(*per_axis):
        weight = np.prod([w for _, w in combination], axis=0)
        # Advanced indices around the channel slice: the result is N×O…×C.
        values = data[(batch, slice(None), *(i for i, _ in combination))]
        out += values * weight[..., None]
    return np.moveaxis(out, -1, 1)


# ---------------------------------------------------------------------------
# Normalisation and softmax.


def _along(vector: Array, axis: int, rank: int) -> Array:
    shape = [1] * rank
    shape[axis] = vector.shape[0]
    return vector.reshape(shape)


def layer_norm(x: Array, gamma: Array, beta: Array, axis: int, epsilon: float) -> Array:
    dims = tuple(range(axis, x.ndim))
    mean = x.mean(axis=dims, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=dims, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def log_softmax(x: Array, axis: int) -> Array:
    # A slice of all -inf (a fully masked attention row) gives NaN, quietly.
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = x - x.max(axis=axis, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def weight_as_oihw(w: np.ndarray, layout: str) -> np.ndarray:
    """A conv2d weight of `layout` (see graph.conv2d) as O×C/groups×KH×KW."""
    if layout == "IHWO":
        return w.transpose(3, 0, 1, 2)
    if nn.output_block(layout) is not None:
        blocks, cg, kh, kw, block = w.shape
        return w.transpose(0, 4, 1, 2, 3).reshape(blocks * block, cg, kh, kw)
    return w


@register_impls
class NnFunctions(InterpreterFunctions):
    @impl(nn.Conv2dOp)
    def run_conv2d(
        self, interpreter: Interpreter, op: nn.Conv2dOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x, w = (_accumulator(a) for a in args)
        x = nn.nchw_array(x, nn.data_layout(op.properties))
        w = weight_as_oihw(w, nn.kernel_layout(op.properties))
        layout = nn.out_layout(op.properties)
        out_hw = cast(tuple[int, int], nn.nchw_shape(op.output.type, layout)[2:])
        window = _window(op, w.shape[2:])
        groups = get_int(op_props(op), "groups")
        out = conv2d(x, w, window, groups, out_hw)
        return (_cast(op, np.ascontiguousarray(nn.blocked_array(out, layout))),)

    @impl(nn.WinogradConv2dOp)
    def run_winograd_conv2d(
        self, interpreter: Interpreter, op: nn.WinogradConv2dOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x, u, bt, at = (_accumulator(a) for a in args)
        layout = get_str(op_props(op), "data_layout")
        alpha, _, blocks, channels, block = u.shape
        unblocked = u.transpose(0, 1, 2, 4, 3).reshape(alpha, alpha, blocks * block, channels)
        out_hw = cast(tuple[int, int], nn.nchw_shape(op.output.type, layout)[2:])
        padding = get_ints(op_props(op), "padding")
        out = winograd_conv2d(nn.nchw_array(x, layout), unblocked, bt, at, padding, out_hw)
        return (_cast(op, np.ascontiguousarray(nn.blocked_array(out, layout))),)

    @impl(nn.Conv2dU8S8Op)
    def run_conv2d_u8s8(
        self, interpreter: Interpreter, op: nn.Conv2dU8S8Op, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x, w = (_accumulator(a) for a in args)
        blocks, c4, kh, kw, lanes, depth = w.shape
        oihw = w.transpose(0, 4, 1, 5, 2, 3).reshape(blocks * lanes, c4 * depth, kh, kw)
        props = op_props(op)
        window = nn.Window2d(
            (kh, kw), get_ints(props, "strides"), get_ints(props, "dilation"), (0, 0, 0, 0)
        )
        out_hw = cast(tuple[int, int], shape_of(op.output.type)[1:3])
        nchw = conv2d(x.transpose(0, 3, 1, 2), oihw, window, 1, out_hw)
        return (_cast(op, nchw.transpose(0, 2, 3, 1)),)

    @impl(nn.Conv2dTransposeOp)
    def run_conv2d_transpose(
        self, interpreter: Interpreter, op: nn.Conv2dTransposeOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x, w = (_accumulator(a) for a in args)
        out_hw = cast(tuple[int, int], shape_of(op.output.type)[2:])
        window = _window(op, w.shape[2:])
        groups = get_int(op_props(op), "groups")
        return (_cast(op, conv2d_transpose(x, w, window, groups, out_hw)),)

    @impl(nn.DenseOp)
    def run_dense(
        self, interpreter: Interpreter, op: nn.DenseOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x, w = (_accumulator(a) for a in args)
        return (_cast(op, x @ w.T),)

    @impl(nn.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: nn.MatmulOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        a, b = (_accumulator(v) for v in args)
        return (_cast(op, np.matmul(a, b)),)

    @impl(nn.BatchMatmulOp)
    def run_batch_matmul(
        self, interpreter: Interpreter, op: nn.BatchMatmulOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        a, b = (_accumulator(v) for v in args)
        if get_bool(op_props(op), "transpose_a"):
            a = a.transpose(0, 2, 1)
        if get_bool(op_props(op), "transpose_b"):
            b = b.transpose(0, 2, 1)
        return (_cast(op, np.matmul(a, b)),)

    @impl(nn.BiasAddOp)
    def run_bias_add(
        self, interpreter: Interpreter, op: nn.BiasAddOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x, bias = args
        axis = get_int(op_props(op), "axis") % x.ndim
        return (_cast(op, x + _along(bias, axis, x.ndim)),)

    @impl(nn.BatchNormOp)
    def run_batch_norm(
        self, interpreter: Interpreter, op: nn.BatchNormOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x, gamma, beta, mean, variance = (_accumulator(a) for a in args)
        axis = get_int(op_props(op), "axis") % x.ndim
        epsilon = get_float(op_props(op), "epsilon")
        scale = gamma / np.sqrt(variance + epsilon)
        shift = beta - mean * scale
        y = x * _along(scale, axis, x.ndim) + _along(shift, axis, x.ndim)
        return (_cast(op, y),)

    @impl(nn.LayerNormOp)
    def run_layer_norm(
        self, interpreter: Interpreter, op: nn.LayerNormOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x, gamma, beta = (_accumulator(a) for a in args)
        axis = get_int(op_props(op), "axis") % x.ndim
        epsilon = get_float(op_props(op), "epsilon")
        return (_cast(op, layer_norm(x, gamma, beta, axis, epsilon)),)

    def _pool(self, op: nn.Pool2dOp, x: Array, reduce_max: bool) -> Array:
        window = _window(op, get_ints(op.properties, "kernel"))
        layout = nn.data_layout(op.properties, type(op))
        out_hw = cast(tuple[int, int], nn.nchw_shape(op.output.type, layout)[2:])
        include_pad = isinstance(op, nn.AvgPool2dOp) and get_bool(op_props(op), "count_include_pad")
        out = pool2d(nn.nchw_array(x, layout), window, out_hw, reduce_max, include_pad)
        return _cast(op, np.ascontiguousarray(nn.blocked_array(out, layout)))

    @impl(nn.MaxPool2dOp)
    def run_max_pool2d(
        self, interpreter: Interpreter, op: nn.MaxPool2dOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (self._pool(op, args[0], reduce_max=True),)

    @impl(nn.AvgPool2dOp)
    def run_avg_pool2d(
        self, interpreter: Interpreter, op: nn.AvgPool2dOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (self._pool(op, _accumulator(args[0]), reduce_max=False),)

    @impl(nn.LayoutTransformOp)
    def run_layout_transform(
        self, interpreter: Interpreter, op: nn.LayoutTransformOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        src, dst = nn.LayoutTransformOp.layouts(op.properties)
        return (np.ascontiguousarray(nn.blocked_array(nn.nchw_array(args[0], src), dst)),)

    @impl(nn.GlobalAvgPool2dOp)
    def run_global_avg_pool2d(
        self, interpreter: Interpreter, op: nn.GlobalAvgPool2dOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x = _accumulator(args[0])
        return (_cast(op, x.mean(axis=(2, 3), keepdims=True)),)  # NCHW and NCHW<b>c alike

    @impl(nn.GlobalMaxPool2dOp)
    def run_global_max_pool2d(
        self, interpreter: Interpreter, op: nn.GlobalMaxPool2dOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        return (_cast(op, args[0].max(axis=(2, 3), keepdims=True)),)  # NCHW, NCHW<b>c alike

    @impl(nn.SoftmaxOp)
    def run_softmax(
        self, interpreter: Interpreter, op: nn.SoftmaxOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x = _accumulator(args[0])
        axis = get_int(op_props(op), "axis")
        return (_cast(op, np.exp(log_softmax(x, axis))),)

    @impl(nn.LogSoftmaxOp)
    def run_log_softmax(
        self, interpreter: Interpreter, op: nn.LogSoftmaxOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        x = _accumulator(args[0])
        return (_cast(op, log_softmax(x, get_int(op_props(op), "axis"))),)

    @impl(nn.PadOp)
    def run_pad(
        self, interpreter: Interpreter, op: nn.PadOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        props = op_props(op)
        mode = get_str(props, "mode")
        value = get_float(props, "value")
        return (_cast(op, pad(args[0], get_ints(props, "pads"), mode, value)),)

    @impl(nn.ResizeOp)
    def run_resize(
        self, interpreter: Interpreter, op: nn.ResizeOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        props = op_props(op)
        x = args[0]
        size = get_ints(props, "size")
        y = resize(
            x,
            size,
            resize_filter(op),
            get_str(props, "coordinate_transformation_mode"),
            nn.resize_scales(props, x.shape, size),
            nn.resize_roi(props, x.ndim),
            get_float(props, "extrapolation_value"),
        )
        return (_cast(op, _saturate(op, y)),)

    @impl(nn.GridSampleOp)
    def run_grid_sample(
        self, interpreter: Interpreter, op: nn.GridSampleOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        props = op_props(op)
        x, grid = args
        y = grid_sample(
            x,
            grid,
            get_str(props, "mode"),
            get_str(props, "padding_mode"),
            get_bool(props, "align_corners"),
        )
        return (_cast(op, y),)
