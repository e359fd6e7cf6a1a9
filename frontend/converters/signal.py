"""Signal processing: DFT, STFT, the windows (HannWindow, HammingWindow,
BlackmanWindow) and MelWeightMatrix, built from other ops.

A DFT of length N along an axis is two matrix products with constant
matrices of cosines and sines (N x K, K the bins kept): the axis moved
last, the real and imaginary parts multiplied, the results stacked as the
last axis again. The 1/N of the inverse, and the weights of a one-sided
inverse (IRFFT), are folded into the matrices. A window is a constant: its
size must be known at import (a size given at run time is specialized on);
so is a MelWeightMatrix, from its five scalar inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue

from xtc.dialects.graph.base import shape_of
from xtc.frontend.converters import Node, converts


def _shape(value: SSAValue) -> tuple[int, ...]:
    return shape_of(value.type)


def _scalar(node: Node, i: int, what: str) -> int:
    value = node.require_const(i, what)
    if value.size != 1:
        node.fail(f"{what} (input {i}) must be a scalar, got {value.size} values")
    return int(value.reshape(-1)[0])


def _window_dtype(node: Node) -> np.dtype:
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(node.attr("output_datatype", 1)))


def _window_positions(node: Node) -> tuple[np.ndarray, int]:
    """n = 0 .. size-1 and the period N (size, or size - 1 when not periodic)."""
    size = _scalar(node, 0, "the size")
    if size < 0:
        node.fail(f"the size is {size}")
    period = size if node.attr("periodic", 1) else size - 1
    return np.arange(size, dtype=np.float64), period


@converts("HannWindow", "HammingWindow", "BlackmanWindow")
def convert_window(node: Node) -> Sequence[SSAValue | None]:
    n, period = _window_positions(node)
    angle = 2 * np.pi * n / period if period else np.zeros_like(n)
    if node.op_type == "HannWindow":
        window = 0.5 - 0.5 * np.cos(angle)
    elif node.op_type == "HammingWindow":
        window = 25 / 46 - (21 / 46) * np.cos(angle)
    else:
        window = 0.42 - 0.5 * np.cos(angle) + 0.08 * np.cos(2 * angle)
    return [node.constant(window.astype(_window_dtype(node)))]


def _part(node: Node, x: SSAValue, which: int) -> SSAValue:
    """The real (0) or imaginary (1) part: the last axis taken away."""
    return node.apply("Gather", [x, node.constant(np.array(which, np.int64))], axis=-1)[0]


def _matmul(node: Node, x: SSAValue, matrix: np.ndarray) -> SSAValue:
    return node.apply("MatMul", [x, node.constant(matrix)])[0]


def _fit(node: Node, x: SSAValue, length: int) -> SSAValue:
    """`x` cut or zero-padded along its last axis to `length`."""
    size = _shape(x)[-1]
    if length < size:
        starts, ends, axes = ([0], [length], [-1])
        return node.apply(
            "Slice",
            [x, *(node.constant(np.array(v, np.int64)) for v in (starts, ends, axes))],
        )[0]
    if length > size:
        pads = np.zeros(2 * len(_shape(x)), np.int64)
        pads[-1] = length - size
        return node.apply("Pad", [x, node.constant(pads)])[0]
    return x


def dft(
    node: Node, x: SSAValue, axis: int, length: int | None, inverse: bool, onesided: bool
) -> SSAValue:
    """The DFT of `x` ([..., 1 or 2]: real, or real and imaginary parts)
    along `axis` (of the signal axes), as ONNX's DFT defines it."""
    shape = _shape(x)
    if shape[-1] not in (1, 2):
        node.fail(f"the last axis holds {shape[-1]} components, not 1 (real) or 2 (complex)")
    if onesided and inverse and shape[-1] != 2:
        node.fail("a one-sided inverse (IRFFT) takes a complex input")
    if onesided and not inverse and shape[-1] != 1:
        node.fail("a one-sided DFT (RFFT) takes a real input")
    signal_rank = len(shape) - 1
    axis = axis + len(shape) if axis < 0 else axis
    if not 0 <= axis < signal_rank:
        node.fail(f"axis {axis} is not a signal axis of {node.type_str(0)}")
    order = [a for a in range(signal_rank) if a != axis] + [axis]
    back = [order.index(a) for a in range(signal_rank)]
    # in f64: a real signal's inverse must give imaginary parts of 0, not 1e-6
    wide = node.apply("Cast", [x], to=onnx.TensorProto.DOUBLE)[0]
    parts = [_part(node, wide, i) for i in range(shape[-1])]
    parts = [node.apply("Transpose", [p], perm=order)[0] for p in parts]
    size = shape[axis]
    dtype = np.dtype(np.float64)
    if onesided and inverse:
        n_out = length if length is not None else 2 * (size - 1)
        bins = n_out // 2 + 1
        re, im = (_fit(node, p, bins) for p in parts)
        k = np.arange(bins)[:, None]
        angle = 2 * np.pi * k * np.arange(n_out)[None, :] / n_out
        weight = np.where((k == 0) | (2 * k == n_out), 1.0, 2.0) / n_out
        cos, sin = (weight * np.cos(angle)).astype(dtype), (weight * np.sin(angle)).astype(dtype)
        real = node.apply("Sub", [_matmul(node, re, cos), _matmul(node, im, sin)])[0]
        stacked = node.apply("Unsqueeze", [real, node.constant(np.array([-1], np.int64))])[0]
        return _back(node, stacked, back)
    n = length if length is not None else size
    parts = [_fit(node, p, n) for p in parts]
    bins = n // 2 + 1 if onesided else n
    angle = 2 * np.pi * np.arange(n)[:, None] * np.arange(bins)[None, :] / n
    scale = 1 / n if inverse else 1.0
    cos, sin = (scale * np.cos(angle)).astype(dtype), (scale * np.sin(angle)).astype(dtype)
    sign = 1 if inverse else -1  # e^{sign i theta}
    re = parts[0]
    real = _matmul(node, re, cos)
    imag = _matmul(node, re, (sign * sin).astype(dtype))
    if len(parts) == 2:
        im = parts[1]
        real = node.apply("Sub", [real, _matmul(node, im, (sign * sin).astype(dtype))])[0]
        imag = node.apply("Add", [imag, _matmul(node, im, cos)])[0]
    axes = node.constant(np.array([-1], np.int64))
    expanded = [node.apply("Unsqueeze", [v, axes])[0] for v in (real, imag)]
    return _back(node, node.apply("Concat", expanded, axis=-1)[0], back)


def _back(node: Node, y: SSAValue, back: list[int]) -> SSAValue:
    """`y` ([..., K, parts], f64) with its DFT axis returned to its place,
    in the input's element type."""
    moved = node.apply("Transpose", [y], perm=[*back, len(back)])[0]
    return node.apply("Cast", [moved], to=onnx.helper.np_dtype_to_tensor_dtype(node.dtype(0)))[0]


@converts("DFT")
def convert_dft(node: Node) -> Sequence[SSAValue | None]:
    length = _scalar(node, 1, "dft_length") if node.has_input(1) else None
    if node.opset >= 20:
        axis = _scalar(node, 2, "the axis") if node.has_input(2) else -2
    else:
        axis = int(node.attr("axis", 1))
    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    return [dft(node, node.input(0), axis, length, inverse, onesided)]


@converts("STFT")
def convert_stft(node: Node) -> Sequence[SSAValue | None]:
    signal = node.input(0)
    batch, length, components = _shape(signal)
    step = _scalar(node, 1, "the frame step")
    window = node.optional_input(2)
    if node.has_input(3):
        frame = _scalar(node, 3, "the frame length")
    elif window is not None:
        frame = _shape(window)[0]
    else:
        node.fail("needs a window or a frame length")
    if step <= 0 or not 0 < frame <= length:
        node.fail(f"frame step {step} and frame length {frame} do not fit a signal of {length}")
    frames = 1 + (length - frame) // step
    positions = np.arange(frames)[:, None] * step + np.arange(frame)[None, :]
    framed = node.apply("Gather", [signal, node.constant(positions.astype(np.int64))], axis=1)[0]
    if window is not None:
        shaped = node.constant(np.array([1, 1, frame, 1], np.int64))
        framed = node.apply("Mul", [framed, node.apply("Reshape", [window, shaped])[0]])[0]
    onesided = bool(node.attr("onesided", 1)) and components == 1
    return [dft(node, framed, 2, frame, False, onesided)]


def _scalar_value(node: Node, i: int, what: str) -> np.ndarray:
    """The constant scalar input `i`, its dtype kept (the mel scale is
    computed in the precision of the frequencies given)."""
    value = node.require_const(i, what)
    if value.size != 1:
        node.fail(f"{what} (input {i}) must be a scalar, got {value.size} values")
    return value.reshape(())


def _mel_points(node: Node, bins: int, dft_length: int) -> np.ndarray:
    """The spectrogram bins of the bins + 2 points evenly spaced on the mel
    scale from lower_edge_hertz to upper_edge_hertz (a step of the span
    over bins + 2, as ONNX's reference)."""
    rate = _scalar_value(node, 2, "sample_rate")
    lower, upper = (
        _scalar_value(node, 3, "lower_edge_hertz"),
        _scalar_value(node, 4, "upper_edge_hertz"),
    )
    if not 0 <= lower < upper:
        node.fail(f"the edges {lower} and {upper} Hz must satisfy 0 <= lower < upper")
    if rate <= 0:
        node.fail(f"sample_rate {rate} must be positive")
    mel_per_decade = 2595
    low_mel = mel_per_decade * np.log1p(lower / 700) / np.log(10)
    high_mel = mel_per_decade * np.log1p(upper / 700) / np.log(10)
    mels = np.arange(bins + 2) * ((high_mel - low_mel) / (bins + 2)) + low_mel
    hertz = 700 * np.expm1(mels / mel_per_decade * np.log(10))
    return (((dft_length + 1) * hertz) // rate).astype(np.int64)


@converts("MelWeightMatrix")
def convert_mel_weight_matrix(node: Node) -> Sequence[SSAValue | None]:
    """[dft_length // 2 + 1, num_mel_bins]: mel bin m a triangle over the
    spectrogram bins, rising from point m to point m + 1 and falling to
    point m + 2 (a bin of width 0 is 1 at its point)."""
    bins = int(_scalar_value(node, 0, "num_mel_bins"))
    dft_length = int(_scalar_value(node, 1, "dft_length"))
    if bins <= 0 or dft_length <= 0:
        node.fail(f"num_mel_bins {bins} and dft_length {dft_length} must be positive")
    spectrogram_bins = dft_length // 2 + 1
    points = _mel_points(node, bins, dft_length)
    if points[-1] >= spectrogram_bins:
        node.fail(
            f"upper_edge_hertz falls in spectrogram bin {points[-1]}, past the "
            f"{spectrogram_bins} bins of a DFT of length {dft_length}"
        )
    left, center, right = points[:-2], points[1:-1], points[2:]
    j = np.arange(spectrogram_bins, dtype=np.float64)[:, None]
    rising = np.where(center > left, (j - left) / np.maximum(center - left, 1), j == center)
    falling = (right - j) / np.maximum(right - center, 1)
    weights = np.where(
        (center <= j) & (j < right), falling, np.where((left <= j) & (j <= center), rising, 0.0)
    )
    return [node.constant(weights.astype(_window_dtype(node)))]
