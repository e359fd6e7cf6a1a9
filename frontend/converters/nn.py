"""ONNX converters: nn ops (convolution, matrix products, normalisation,
pooling, softmax, pad, resize, grid sampling, the attention family and the
classification losses).

2-D convolution and pooling map to the graph ops; 1-D ones are lifted to
2-D by a trailing size-1 axis, 3-D convolutions fold the depth axis into the
batch and channel axes, and 3-D (or higher) pooling is done one axis at a
time (max, average and sum over a box are separable). Ops without a graph op
of their own (instance, group, RMS and Lp normalisation, LRN, LpPool, Hardmax,
MaxPool's Indices, Attention, RotaryEmbedding, LinearAttention with its
recurrence unrolled over the static sequence, the losses) are written with
the basic graph ops, following onnx.reference where the spec is loose.
Inputs that carry sizes (pads, scales, sizes, roi) must be constants.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
import onnx
from xdsl.dialects.builtin import DenseArrayBase, f32, f64
from xdsl.ir import Attribute, SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph import nn
from xtc.dialects.graph import reduce as rd
from xtc.dialects.graph import tensor as tn
from xtc.dialects.graph.base import (
    GraphOp,
    bool_attr,
    elem,
    float_attr,
    int_attr,
    ints_attr,
    is_float,
    shape_of,
    str_attr,
    type_str,
)
from xtc.dialects.graph.constant import element_type_of, numpy_dtype
from xtc.dtypes import is_float_dtype
from xtc.frontend.converters import Node, converts

Outputs = Sequence[SSAValue | None]
T = TypeVar("T")


# ---------------------------------------------------------------------------
# Small builders.


def shape(v: SSAValue) -> tuple[int, ...]:
    return shape_of(v.type)


def dtype_of(v: SSAValue) -> np.dtype[Any]:
    return numpy_dtype(elem(v.type))


def scalar(node: Node, value: float, like: SSAValue) -> SSAValue:
    """A rank-0 constant of `like`'s element type."""
    with np.errstate(over="ignore", invalid="ignore"):
        return node.constant(np.array(value).astype(dtype_of(like)))


def reshape(node: Node, x: SSAValue, new_shape: Sequence[int]) -> SSAValue:
    if tuple(new_shape) == shape(x):
        return x
    return node.emit1(tn.ReshapeOp, [x], {"shape": ints_attr(new_shape)})


def transpose(node: Node, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    if list(perm) == list(range(len(perm))):
        return x
    return node.emit1(tn.TransposeOp, [x], {"perm": ints_attr(perm)})


def slice_axis(node: Node, x: SSAValue, axis: int, start: int, end: int, step: int = 1) -> SSAValue:
    props = {
        "starts": ints_attr([start]),
        "ends": ints_attr([end]),
        "axes": ints_attr([axis]),
        "steps": ints_attr([step]),
    }
    return node.emit1(tn.SliceOp, [x], props)


def concat(node: Node, values: Sequence[SSAValue], axis: int) -> SSAValue:
    if len(values) == 1:
        return values[0]
    return node.emit1(tn.ConcatOp, list(values), {"axis": int_attr(axis)})


def pad(node: Node, x: SSAValue, pads: Sequence[int], value: float = 0.0) -> SSAValue:
    """Constant padding; negative pads crop."""
    if not any(pads):
        return x
    return node.emit1(nn.PadOp, [x], {"pads": ints_attr(pads), "value": float_attr(value)})


def add(node: Node, a: SSAValue, b: SSAValue) -> SSAValue:
    return node.emit1(ew.AddOp, [a, b])


def sub(node: Node, a: SSAValue, b: SSAValue) -> SSAValue:
    return node.emit1(ew.SubOp, [a, b])


def mul(node: Node, a: SSAValue, b: SSAValue) -> SSAValue:
    return node.emit1(ew.MulOp, [a, b])


def div(node: Node, a: SSAValue, b: SSAValue) -> SSAValue:
    return node.emit1(ew.DivOp, [a, b])


def unary(node: Node, op: type[GraphOp], x: SSAValue) -> SSAValue:
    return node.emit1(op, [x])


def where(node: Node, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return node.emit1(ew.WhereOp, [condition, a, b])


def reduce(
    node: Node, op: type[GraphOp], x: SSAValue, axes: Sequence[int], keepdims: bool = True
) -> SSAValue:
    props = {"axes": ints_attr(axes), "keepdims": bool_attr(keepdims)}
    return node.emit1(op, [x], props)


def matmul(node: Node, a: SSAValue, b: SSAValue) -> SSAValue:
    return node.emit1(nn.MatmulOp, [a, b])


def cast(node: Node, x: SSAValue, to: Attribute) -> SSAValue:
    if elem(x.type) == to:
        return x
    return node.emit1(ew.CastOp, [x], {"to": to})


def along(node: Node, vector: SSAValue, axis: int, rank: int) -> SSAValue:
    """A 1-D value reshaped to broadcast along `axis` of a rank-`rank` tensor."""
    target = [1] * rank
    target[axis] = shape(vector)[0]
    return reshape(node, vector, target)


def float_input(node: Node, i: int) -> SSAValue:
    x = node.input(i)
    if not is_float(elem(x.type)):
        node.fail(f"input {i} {node.type_str(i)} must have a float element type")
    return x


def normalized_axis(node: Node, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        node.fail(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def int_list(node: Node, name: str, default: Sequence[int], count: int) -> list[int]:
    values = [int(v) for v in node.attr(name, default)]
    if len(values) != count:
        node.fail(f"{name} {values} must have {count} values")
    return values


def const_ints(node: Node, i: int, what: str) -> list[int]:
    return [int(v) for v in np.asarray(node.require_const(i, what)).reshape(-1)]


def requested(node: Node, i: int) -> bool:
    """Whether the node's output `i` is named (used by the model)."""
    return i < len(node.proto.output) and bool(node.proto.output[i])


# ---------------------------------------------------------------------------
# Sliding windows: kernel, strides, dilations and padding of N spatial axes.


@dataclass(frozen=True)
class Window:
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    begin: tuple[int, ...]
    end: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.kernel)

    def extent(self, i: int) -> int:
        return (self.kernel[i] - 1) * self.dilations[i] + 1

    def axis(self, i: int) -> Window:
        return Window(
            (self.kernel[i],),
            (self.strides[i],),
            (self.dilations[i],),
            (self.begin[i],),
            (self.end[i],),
        )

    def select(self, axes: Sequence[int]) -> Window:
        return Window(
            tuple(self.kernel[i] for i in axes),
            tuple(self.strides[i] for i in axes),
            tuple(self.dilations[i] for i in axes),
            tuple(self.begin[i] for i in axes),
            tuple(self.end[i] for i in axes),
        )

    def lifted(self) -> Window:
        """A 1-D window as 2-D over a trailing size-1 axis."""
        return Window(
            (*self.kernel, 1),
            (*self.strides, 1),
            (*self.dilations, 1),
            (*self.begin, 0),
            (*self.end, 0),
        )

    def props(self) -> dict[str, Attribute]:
        """strides / dilation / padding properties of a 2-D graph op."""
        return {
            "strides": ints_attr(self.strides),
            "dilation": ints_attr(self.dilations),
            "padding": ints_attr((*self.begin, *self.end)),
        }

    def as_2d(self) -> nn.Window2d:
        return nn.Window2d(self.kernel, self.strides, self.dilations, (*self.begin, *self.end))


def window_attrs(node: Node, spatial: Sequence[int], kernel: Sequence[int]) -> Window:
    """The node's strides, dilations and pads (auto_pad resolved) over
    the spatial sizes `spatial`."""
    r = len(spatial)
    strides = int_list(node, "strides", [1] * r, r)
    dilations = int_list(node, "dilations", [1] * r, r)
    if min(strides, default=1) < 1 or min(dilations, default=1) < 1:
        node.fail(f"strides {strides} and dilations {dilations} must be positive")
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin: list[int] = []
        end: list[int] = []
        for size, k, s, d in zip(spatial, kernel, strides, dilations, strict=True):
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
            small = total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else total - small)
            end.append(total - begin[-1])
    elif auto_pad == "VALID":
        begin, end = [0] * r, [0] * r
    elif auto_pad == "NOTSET":
        pads = int_list(node, "pads", [0] * (2 * r), 2 * r)
        begin, end = pads[:r], pads[r:]
    else:
        node.fail(f"auto_pad '{auto_pad}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    return Window(tuple(kernel), tuple(strides), tuple(dilations), tuple(begin), tuple(end))


def spatial_input(node: Node, i: int, what: str) -> tuple[SSAValue, tuple[int, ...]]:
    x = node.input(i)
    xs = shape(x)
    if len(xs) < 3:
        node.fail(f"{what} {node.type_str(i)} must be N×C×D1×... with at least one spatial axis")
    return x, xs


# ---------------------------------------------------------------------------
# Convolutions.


def conv(node: Node, x: SSAValue, w: SSAValue, window: Window, groups: int) -> SSAValue:
    """ONNX Conv without bias over 1, 2 or 3 spatial axes."""
    if window.rank == 1:
        xs, ws = shape(x), shape(w)
        y = conv(
            node, reshape(node, x, (*xs, 1)), reshape(node, w, (*ws, 1)), window.lifted(), groups
        )
        return reshape(node, y, shape(y)[:-1])
    if window.rank == 2:
        props = {**window.props(), "groups": int_attr(groups)}
        return node.emit1(nn.Conv2dOp, [x, w], props)
    if window.rank == 3:
        return conv3d(node, x, w, window, groups)
    node.fail(f"{window.rank}-D convolutions are not supported (1-D, 2-D and 3-D are)")


def conv3d(node: Node, x: SSAValue, w: SSAValue, window: Window, groups: int) -> SSAValue:
    """A 3-D convolution as one 2-D convolution: the depth taps become extra
    input channels (channel-major, tap-minor, so groups stay contiguous) and
    the output depth joins the batch."""
    n, c, _, h, wd = shape(x)
    o, cg, kd, kh, kw = shape(w)
    x = pad(node, x, [0, 0, window.begin[0], 0, 0, 0, 0, window.end[0], 0, 0])
    depth = shape(x)[2]
    extent, stride, dilation = window.extent(0), window.strides[0], window.dilations[0]
    if extent > depth:
        node.fail(
            f"kernel depth {kd} (dilation {dilation}) spans more than the padded depth {depth}"
        )
    out_depth = (depth - extent) // stride + 1
    taps = [
        slice_axis(node, x, 2, k * dilation, k * dilation + stride * (out_depth - 1) + 1, stride)
        for k in range(kd)
    ]
    stacked = concat(node, [reshape(node, t, (n, c, out_depth, 1, h, wd)) for t in taps], 3)
    folded = reshape(
        node, transpose(node, stacked, (0, 2, 1, 3, 4, 5)), (n * out_depth, c * kd, h, wd)
    )
    weight = reshape(node, w, (o, cg * kd, kh, kw))
    y = conv(node, folded, weight, window.select((1, 2)), groups)
    _, _, oh, ow = shape(y)
    return transpose(node, reshape(node, y, (n, out_depth, o, oh, ow)), (0, 2, 1, 3, 4))


def bias_add(node: Node, y: SSAValue, bias: SSAValue | None) -> SSAValue:
    if bias is None:
        return y
    return node.emit1(nn.BiasAddOp, [y, bias], {"axis": int_attr(1)})


def kernel_of(node: Node, w: SSAValue, r: int) -> tuple[int, ...]:
    ws = shape(w)
    if len(ws) != r + 2:
        node.fail(f"weight {type_str_of(w)} must have rank {r + 2} like the input")
    kernel = tuple(int_list(node, "kernel_shape", ws[2:], r))
    if kernel != ws[2:]:
        node.fail(f"kernel_shape {list(kernel)} does not match weight {type_str_of(w)}")
    if min(kernel) < 1:
        node.fail(f"weight {type_str_of(w)} has an empty kernel")
    return kernel


def type_str_of(v: SSAValue) -> str:
    return type_str(v.type)


@converts("Conv")
def convert_conv(node: Node) -> Outputs:
    x, xs = spatial_input(node, 0, "input")
    w = node.input(1)
    kernel = kernel_of(node, w, len(xs) - 2)
    window = window_attrs(node, xs[2:], kernel)
    y = conv(node, x, w, window, int(node.attr("group", 1)))
    return [bias_add(node, y, node.optional_input(2))]


def conv_transpose(
    node: Node, x: SSAValue, w: SSAValue, window: Window, output_padding: Sequence[int], groups: int
) -> SSAValue:
    """ONNX ConvTranspose without bias; pads may be negative (they extend
    the output with zeros)."""
    r = window.rank
    extra_end = [max(-e, 0) for e in window.end]
    extra_begin = [max(-b, 0) for b in window.begin]
    inner = Window(
        window.kernel,
        window.strides,
        window.dilations,
        tuple(max(b, 0) for b in window.begin),
        tuple(max(e, 0) for e in window.end),
    )
    padding = [p + e for p, e in zip(output_padding, extra_end, strict=True)]
    if r == 1:
        xs, ws = shape(x), shape(w)
        y = conv_transpose(
            node,
            reshape(node, x, (*xs, 1)),
            reshape(node, w, (*ws, 1)),
            inner.lifted(),
            (*padding, 0),
            groups,
        )
        y = reshape(node, y, shape(y)[:-1])
    elif r == 2:
        props = {**inner.props(), "output_padding": ints_attr(padding), "groups": int_attr(groups)}
        y = node.emit1(nn.Conv2dTransposeOp, [x, w], props)
    elif r == 3:
        y = conv3d_transpose(node, x, w, inner, padding, groups)
    else:
        node.fail(f"{r}-D transposed convolutions are not supported (1-D, 2-D and 3-D are)")
    if any(extra_begin):
        y = pad(node, y, [0, 0, *extra_begin, 0, 0, *([0] * r)])
    return y


def conv3d_transpose(
    node: Node, x: SSAValue, w: SSAValue, window: Window, output_padding: Sequence[int], groups: int
) -> SSAValue:
    """A 3-D transposed convolution as one 2-D one whose output channels hold
    every depth tap, then each tap's slab scattered along depth (zero
    insertion at the stride, shifted by the tap) and summed."""
    n, c, d, h, wd = shape(x)
    _, og, kd, kh, kw = shape(w)
    o = og * groups
    folded = reshape(node, transpose(node, x, (0, 2, 1, 3, 4)), (n * d, c, h, wd))
    weight = reshape(node, w, (c, og * kd, kh, kw))
    y = conv_transpose(node, folded, weight, window.select((1, 2)), output_padding[1:], groups)
    _, _, oh, ow = shape(y)
    y = reshape(node, y, (n, d, o, kd, oh, ow))
    stride, dilation = window.strides[0], window.dilations[0]
    full = stride * (d - 1) + window.extent(0) + output_padding[0]
    placed: list[SSAValue] = []
    for k in range(kd):
        tap = reshape(node, slice_axis(node, y, 3, k, k + 1), (n, d, 1, o, oh, ow))
        spread = reshape(
            node,
            pad(node, tap, [0, 0, 0, 0, 0, 0, 0, 0, stride - 1, 0, 0, 0]),
            (n, d * stride, o, oh, ow),
        )
        shift = k * dilation
        placed.append(pad(node, spread, [0, shift, 0, 0, 0, 0, full - shift - d * stride, 0, 0, 0]))
    total = placed[0]
    for slab in placed[1:]:
        total = add(node, total, slab)
    cropped = pad(node, total, [0, -window.begin[0], 0, 0, 0, 0, -window.end[0], 0, 0, 0])
    return transpose(node, cropped, (0, 2, 1, 3, 4))


@converts("ConvTranspose")
def convert_conv_transpose(node: Node) -> Outputs:
    x, xs = spatial_input(node, 0, "input")
    w = node.input(1)
    r = len(xs) - 2
    kernel = kernel_of(node, w, r)
    strides = int_list(node, "strides", [1] * r, r)
    dilations = int_list(node, "dilations", [1] * r, r)
    output_padding = int_list(node, "output_padding", [0] * r, r)
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape")
    natural = [
        s * (size - 1) + op + (k - 1) * d + 1
        for size, k, s, d, op in zip(
            xs[2:], kernel, strides, dilations, output_padding, strict=True
        )
    ]
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if output_shape is None:
            target = [size * s for size, s in zip(xs[2:], strides, strict=True)]
        else:
            target = [int(v) for v in output_shape][-r:]
            if len(target) != r:
                node.fail(f"output_shape {list(output_shape)} must give {r} spatial sizes")
        totals = [nat - t for nat, t in zip(natural, target, strict=True)]
        if auto_pad == "SAME_UPPER":
            begin = [t // 2 for t in totals]
        else:
            begin = [t - t // 2 for t in totals]
        end = [t - b for t, b in zip(totals, begin, strict=True)]
    elif auto_pad in ("NOTSET", "VALID"):
        pads = (
            int_list(node, "pads", [0] * (2 * r), 2 * r) if auto_pad == "NOTSET" else [0] * (2 * r)
        )
        begin, end = pads[:r], pads[r:]
    else:
        node.fail(f"auto_pad '{auto_pad}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    window = Window(kernel, tuple(strides), tuple(dilations), tuple(begin), tuple(end))
    y = conv_transpose(node, x, w, window, output_padding, int(node.attr("group", 1)))
    return [bias_add(node, y, node.optional_input(2))]


# ---------------------------------------------------------------------------
# Matrix products.


@converts("MatMul")
def convert_matmul(node: Node) -> Outputs:
    return [matmul(node, node.input(0), node.input(1))]


@converts("Gemm")
def convert_gemm(node: Node) -> Outputs:
    a, b = node.input(0), node.input(1)
    for i, v in enumerate((a, b)):
        if len(shape(v)) != 2:
            node.fail(f"input {i} {node.type_str(i)} must be 2-D")
    if node.attr("transA", 0):
        a = transpose(node, a, (1, 0))
    if node.attr("transB", 0):
        y = node.emit1(nn.DenseOp, [a, b])
    else:
        y = matmul(node, a, b)
    alpha = float(node.attr("alpha", 1.0))
    beta = float(node.attr("beta", 1.0))
    if alpha != 1.0:
        y = mul(node, y, scalar(node, alpha, y))
    c = node.optional_input(2)
    if c is None or beta == 0.0:
        return [y]
    if beta != 1.0:
        c = mul(node, c, scalar(node, beta, c))
    if shape(c) == (shape(y)[1],):
        return [bias_add(node, y, c)]
    return [add(node, y, c)]


# ---------------------------------------------------------------------------
# Normalisation.


@converts("BatchNormalization")
def convert_batch_norm(node: Node) -> Outputs:
    if node.attr("training_mode", 0):
        return batch_norm_training(node)
    if any(requested(node, i) for i in range(1, 5)):
        node.fail("the running mean/variance outputs exist only in training and are not supported")
    if node.opset < 9 and not node.attr("spatial", 1):
        node.fail("spatial=0 is not supported")
    x = float_input(node, 0)
    if len(shape(x)) < 2:
        node.fail(f"input {node.type_str(0)} must be N×C×...")
    props = {"epsilon": float_attr(float(node.attr("epsilon", 1e-5))), "axis": int_attr(1)}
    return [node.emit1(nn.BatchNormOp, [x, *(node.input(i) for i in range(1, 5))], props)]


def batch_norm_training(node: Node) -> Outputs:
    """training_mode=1 (opset 14+): normalized by the batch's own mean and
    (population) variance over every axis but 1; the running mean and
    variance outputs blend the inputs' with them by `momentum`."""
    x = float_input(node, 0)
    rank = len(shape(x))
    if rank < 2:
        node.fail(f"input {node.type_str(0)} must be N×C×...")
    channels = shape(x)[1]
    axes = [a for a in range(rank) if a != 1]
    mean = reduce(node, rd.ReduceMeanOp, x, axes)
    centered = sub(node, x, mean)
    variance = reduce(node, rd.ReduceMeanOp, mul(node, centered, centered), axes)
    mean, variance = reshape(node, mean, (channels,)), reshape(node, variance, (channels,))
    props = {"epsilon": float_attr(float(node.attr("epsilon", 1e-5))), "axis": int_attr(1)}
    y = node.emit1(nn.BatchNormOp, [x, node.input(1), node.input(2), mean, variance], props)
    momentum = float(node.attr("momentum", 0.9))
    kept, fresh = scalar(node, momentum, x), scalar(node, 1 - momentum, x)
    running = [
        add(node, mul(node, node.input(i), kept), mul(node, batch, fresh))
        for i, batch in ((3, mean), (4, variance))
    ]
    return [y, *running]


def unit_layer_norm(node: Node, x: SSAValue, axis: int, epsilon: float) -> SSAValue:
    """(x - mean) / sqrt(var + epsilon) over the axes from `axis` on."""
    one = node.constant(np.ones(1, dtype_of(x)))
    zero = node.constant(np.zeros(1, dtype_of(x)))
    props = {"axis": int_attr(axis), "epsilon": float_attr(epsilon)}
    return node.emit1(nn.LayerNormOp, [x, one, zero], props)


@converts("LayerNormalization")
def convert_layer_norm(node: Node) -> Outputs:
    x = float_input(node, 0)
    rank = len(shape(x))
    axis = normalized_axis(node, int(node.attr("axis", -1)), rank)
    epsilon = float(node.attr("epsilon", 1e-5))
    gamma = node.input(1)
    beta = node.optional_input(2)
    if beta is None:
        beta = node.constant(np.zeros(1, dtype_of(x)))
    props = {"axis": int_attr(axis), "epsilon": float_attr(epsilon)}
    y = node.emit1(nn.LayerNormOp, [x, gamma, beta], props)
    if not (requested(node, 1) or requested(node, 2)):
        return [y]
    axes = list(range(axis, rank))
    mean = reduce(node, rd.ReduceMeanOp, x, axes)
    centered = sub(node, x, mean)
    variance = reduce(node, rd.ReduceMeanOp, mul(node, centered, centered), axes)
    std = unary(node, ew.SqrtOp, add(node, variance, scalar(node, epsilon, x)))
    return [y, mean, unary(node, ew.ReciprocalOp, std)]


@converts("InstanceNormalization")
def convert_instance_norm(node: Node) -> Outputs:
    x = float_input(node, 0)
    rank = len(shape(x))
    if rank < 3:
        node.fail(f"input {node.type_str(0)} must be N×C×D1×...")
    y = unit_layer_norm(node, x, 2, float(node.attr("epsilon", 1e-5)))
    y = mul(node, y, along(node, node.input(1), 1, rank))
    return [bias_add(node, y, node.input(2))]


@converts("GroupNormalization")
def convert_group_norm(node: Node) -> Outputs:
    x = float_input(node, 0)
    xs = shape(x)
    groups = int(node.attr("num_groups", 0))
    if len(xs) < 2 or groups < 1 or xs[1] % groups:
        node.fail(f"input {node.type_str(0)} channels must split into num_groups={groups} groups")
    grouped = reshape(node, x, (xs[0], groups, math.prod(xs[1:]) // groups))
    y = unit_layer_norm(node, grouped, 2, float(node.attr("epsilon", 1e-5)))
    scale, bias = node.input(1), node.input(2)
    if shape(scale) == (groups,) and (node.opset < 21 or groups == xs[1]):
        # GroupNormalization-18: one scale and bias per group.
        y = mul(node, y, along(node, scale, 1, 3))
        y = add(node, y, along(node, bias, 1, 3))
        return [reshape(node, y, xs)]
    y = reshape(node, y, xs)
    y = mul(node, y, along(node, scale, 1, len(xs)))
    return [bias_add(node, y, bias)]


@converts("RMSNormalization")
def convert_rms_norm(node: Node) -> Outputs:
    x = float_input(node, 0)
    rank = len(shape(x))
    axis = normalized_axis(node, int(node.attr("axis", -1)), rank)
    epsilon = float(node.attr("epsilon", 1e-5))
    mean_square = reduce(node, rd.ReduceMeanOp, mul(node, x, x), list(range(axis, rank)))
    rms = unary(node, ew.SqrtOp, add(node, mean_square, scalar(node, epsilon, x)))
    return [mul(node, div(node, x, rms), node.input(1))]


@converts("MeanVarianceNormalization")
def convert_mean_variance_norm(node: Node) -> Outputs:
    x = float_input(node, 0)
    rank = len(shape(x))
    axes = [normalized_axis(node, int(a), rank) for a in node.attr("axes", [0, 2, 3])]
    mean = reduce(node, rd.ReduceMeanOp, x, axes)
    mean_of_square = reduce(node, rd.ReduceMeanOp, mul(node, x, x), axes)
    std = unary(node, ew.SqrtOp, sub(node, mean_of_square, mul(node, mean, mean)))
    return [div(node, sub(node, x, mean), add(node, std, scalar(node, 1e-9, x)))]


@converts("LpNormalization")
def convert_lp_norm(node: Node) -> Outputs:
    x = float_input(node, 0)
    axis = normalized_axis(node, int(node.attr("axis", -1)), len(shape(x)))
    p = int(node.attr("p", 2))
    if p == 1:
        norm = reduce(node, rd.ReduceSumOp, unary(node, ew.AbsOp, x), [axis])
    elif p == 2:
        norm = unary(node, ew.SqrtOp, reduce(node, rd.ReduceSumOp, mul(node, x, x), [axis]))
    else:
        node.fail(f"p={p} is not supported (ONNX allows 1 and 2)")
    zero = scalar(node, 0, x)
    # A zero norm gives 0, not 0/0.
    is_zero = node.emit1(ew.EqualOp, [norm, zero])
    return [where(node, is_zero, zero, div(node, x, norm))]


@converts("LRN")
def convert_lrn(node: Node) -> Outputs:
    x = float_input(node, 0)
    xs = shape(x)
    if len(xs) < 3:
        node.fail(f"input {node.type_str(0)} must be N×C×D1×...")
    size = int(node.attr("size", 0))
    if size < 1:
        node.fail(f"size {size} must be positive")
    alpha = float(node.attr("alpha", 1e-4))
    beta = float(node.attr("beta", 0.75))
    bias = float(node.attr("bias", 1.0))
    square = reshape(node, mul(node, x, x), (xs[0], 1, xs[1], math.prod(xs[2:])))
    ones = node.constant(np.ones((1, 1, size, 1), dtype_of(x)))
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    window_sum = node.emit1(
        nn.Conv2dOp, [square, ones], {"padding": ints_attr((before, 0, after, 0))}
    )
    window_sum = reshape(node, window_sum, xs)
    base = add(node, mul(node, window_sum, scalar(node, alpha / size, x)), scalar(node, bias, x))
    return [div(node, x, node.emit1(ew.PowOp, [base, scalar(node, beta, x)]))]


# ---------------------------------------------------------------------------
# Pooling.


def pool2d(
    node: Node, kind: str, x: SSAValue, window: Window, ceil_mode: bool, count_include_pad: bool
) -> SSAValue:
    """One 2-D pooling of an N×C×H×W value: max, avg or sum (zero padding)."""
    if kind == "sum":
        padded = window
        if ceil_mode:
            geometry = window.as_2d()
            ends = list(window.end)
            for i, size in enumerate(shape(x)[2:]):
                out = geometry.output_size(i, size, ceil_mode=True)
                reach = (out - 1) * window.strides[i] + window.extent(i)
                ends[i] += max(0, reach - (size + window.begin[i] + window.end[i]))
            padded = replace(window, end=tuple(ends))
        n, c, h, w = shape(x)
        ones = node.constant(np.ones((1, 1, *window.kernel), dtype_of(x)))
        y = node.emit1(nn.Conv2dOp, [reshape(node, x, (n * c, 1, h, w)), ones], padded.props())
        return reshape(node, y, (n, c, *shape(y)[2:]))
    props: dict[str, Attribute] = {
        **window.props(),
        "kernel": ints_attr(window.kernel),
        "ceil_mode": bool_attr(ceil_mode),
    }
    if kind == "max":
        return node.emit1(nn.MaxPool2dOp, [x], props)
    props["count_include_pad"] = bool_attr(count_include_pad)
    return node.emit1(nn.AvgPool2dOp, [x], props)


def pool(
    node: Node,
    kind: str,
    x: SSAValue,
    window: Window,
    ceil_mode: bool,
    count_include_pad: bool = False,
) -> SSAValue:
    """Pooling over every spatial axis of N×C×D1×...: 2-D directly, other
    ranks one axis at a time (the box is a product of per-axis windows)."""
    r = window.rank
    if r == 2:
        return pool2d(node, kind, x, window, ceil_mode, count_include_pad)
    groups = [(i,) for i in range(r - 2)] + [(r - 2, r - 1)] if r >= 2 else [(0,)]
    y = x
    for axes in groups:
        ys = shape(y)
        first, last = 2 + axes[0], 2 + axes[-1]
        sub_window = window.select(axes)
        if len(axes) == 1:
            sub_window = sub_window.lifted()
        four = (math.prod(ys[:first]), 1, ys[first], math.prod(ys[first + 1 :]))
        if len(axes) == 2:
            four = (math.prod(ys[:first]), 1, ys[first], ys[last])
        pooled = pool2d(
            node, kind, reshape(node, y, four), sub_window, ceil_mode, count_include_pad
        )
        out = shape(pooled)[2:]
        y = reshape(node, pooled, (*ys[:first], *out[: len(axes)], *ys[last + 1 :]))
    return y


def pool_window(node: Node) -> tuple[SSAValue, Window, bool]:
    x, xs = spatial_input(node, 0, "input")
    r = len(xs) - 2
    kernel = node.attr("kernel_shape")
    if kernel is None or len(kernel) != r:
        node.fail(f"kernel_shape {kernel} must give {r} sizes for input {node.type_str(0)}")
    window = window_attrs(node, xs[2:], [int(k) for k in kernel])
    return x, window, bool(node.attr("ceil_mode", 0))


@converts("MaxPool")
def convert_max_pool(node: Node) -> Outputs:
    x, window, ceil_mode = pool_window(node)
    y = pool(node, "max", x, window, ceil_mode)
    if not requested(node, 1):
        return [y]
    if window.rank == 1:
        xs = shape(x)
        lifted = reshape(node, x, (*xs, 1))
        indices = max_pool_indices(node, lifted, window.lifted(), shape(y) + (1,))
        return [y, reshape(node, indices, shape(y))]
    if window.rank != 2:
        node.fail("the Indices output is supported for 1-D and 2-D pooling only")
    return [y, max_pool_indices(node, x, window, shape(y))]


def max_pool_indices(node: Node, x: SSAValue, window: Window, out_shape: Sequence[int]) -> SSAValue:
    """MaxPool's Indices: the flat input index of each window's first
    maximum (row-major, or column-major with storage_order=1)."""
    n, c, h, w = shape(x)
    oh, ow = out_shape[2:]
    dtype = dtype_of(x)
    lowest = float(-np.inf if is_float_dtype(dtype) else np.iinfo(dtype).min)
    reach = [
        (o - 1) * s + window.extent(i)
        for i, (o, s) in enumerate(zip((oh, ow), window.strides, strict=True))
    ]
    ends = [
        max(window.end[i], r - size - window.begin[i])
        for i, (r, size) in enumerate(zip(reach, (h, w), strict=True))
    ]
    padded = pad(node, x, [0, 0, *window.begin, 0, 0, *ends], lowest)
    (sh, sw), (dh, dw) = window.strides, window.dilations
    kh, kw = window.kernel
    taps: list[SSAValue] = []
    for i in range(kh):
        for j in range(kw):
            props = {
                "starts": ints_attr([i * dh, j * dw]),
                "ends": ints_attr([i * dh + sh * (oh - 1) + 1, j * dw + sw * (ow - 1) + 1]),
                "axes": ints_attr([2, 3]),
                "steps": ints_attr([sh, sw]),
            }
            tap = node.emit1(tn.SliceOp, [padded], props)
            taps.append(reshape(node, tap, (n, c, oh, ow, 1)))
    props = {"axis": int_attr(4), "keepdims": bool_attr(False)}
    tap_index = node.emit1(rd.ArgMaxOp, [concat(node, taps, 4)], props)
    offsets = np.array([(i * dh, j * dw) for i in range(kh) for j in range(kw)], np.int64)
    gather = {"axis": int_attr(0)}
    row_offset = node.emit1(tn.GatherOp, [node.constant(offsets[:, 0]), tap_index], gather)
    col_offset = node.emit1(tn.GatherOp, [node.constant(offsets[:, 1]), tap_index], gather)
    rows = add(
        node, row_offset, node.constant((np.arange(oh) * sh - window.begin[0]).reshape(oh, 1))
    )
    cols = add(node, col_offset, node.constant(np.arange(ow) * sw - window.begin[1]))
    if node.attr("storage_order", 0):
        rows, cols, w = cols, rows, h
    planes = node.constant((np.arange(n * c, dtype=np.int64) * h * shape(x)[3]).reshape(n, c, 1, 1))
    return add(node, planes, add(node, mul(node, rows, scalar(node, w, rows)), cols))


@converts("AveragePool")
def convert_average_pool(node: Node) -> Outputs:
    x, window, ceil_mode = pool_window(node)
    float_input(node, 0)
    include_pad = bool(node.attr("count_include_pad", 0))
    return [pool(node, "avg", x, window, ceil_mode, include_pad)]


@converts("LpPool")
def convert_lp_pool(node: Node) -> Outputs:
    x, window, ceil_mode = pool_window(node)
    float_input(node, 0)
    p = float(node.attr("p", 2))
    if p == 2:
        powered = mul(node, x, x)
    elif p == 1:
        powered = unary(node, ew.AbsOp, x)
    else:
        powered = node.emit1(ew.PowOp, [unary(node, ew.AbsOp, x), scalar(node, p, x)])
    total = pool(node, "sum", powered, window, ceil_mode)
    if p == 2:
        return [unary(node, ew.SqrtOp, total)]
    if p == 1:
        return [total]
    return [node.emit1(ew.PowOp, [total, scalar(node, 1.0 / p, x)])]


@converts("GlobalAveragePool", "GlobalMaxPool")
def convert_global_pool(node: Node) -> Outputs:
    x, xs = spatial_input(node, 0, "input")
    average = node.op_type == "GlobalAveragePool"
    if average:
        float_input(node, 0)
    if len(xs) == 4:
        op = nn.GlobalAvgPool2dOp if average else nn.GlobalMaxPool2dOp
        return [node.emit1(op, [x])]
    op = rd.ReduceMeanOp if average else rd.ReduceMaxOp
    return [reduce(node, op, x, list(range(2, len(xs))))]


# ---------------------------------------------------------------------------
# Softmax family.


def coerced_2d(node: Node, x: SSAValue) -> tuple[SSAValue, int, tuple[int, ...]]:
    """The input and axis the op works on: before opset 13 the input is
    flattened to 2-D at `axis` and the op runs over the second axis."""
    xs = shape(x)
    if node.opset >= 13:
        return x, normalized_axis(node, int(node.attr("axis", -1)), len(xs)), xs
    axis = normalized_axis(node, int(node.attr("axis", 1)), len(xs))
    if axis == len(xs) - 1:
        return x, axis, xs
    flat = reshape(node, x, (math.prod(xs[:axis]), math.prod(xs[axis:])))
    return flat, 1, xs


@converts("Softmax", "LogSoftmax")
def convert_softmax(node: Node) -> Outputs:
    x = float_input(node, 0)
    flat, axis, xs = coerced_2d(node, x)
    op = nn.SoftmaxOp if node.op_type == "Softmax" else nn.LogSoftmaxOp
    return [reshape(node, node.emit1(op, [flat], {"axis": int_attr(axis)}), xs)]


@converts("Hardmax")
def convert_hardmax(node: Node) -> Outputs:
    x = node.input(0)
    flat, axis, xs = coerced_2d(node, x)
    fs = shape(flat)
    props = {"axis": int_attr(axis), "keepdims": bool_attr(True)}
    index = node.emit1(rd.ArgMaxOp, [flat], props)
    positions = along(node, node.constant(np.arange(fs[axis], dtype=np.int64)), axis, len(fs))
    hot = node.emit1(ew.EqualOp, [index, positions])
    y = where(node, hot, scalar(node, 1, x), scalar(node, 0, x))
    return [reshape(node, y, xs)]


# ---------------------------------------------------------------------------
# Pad.


def wrap_pad(node: Node, x: SSAValue, pads: Sequence[int]) -> SSAValue:
    """Wrap padding: each axis extended by its own other end (after the
    negative pads crop)."""
    rank = len(shape(x))
    crops = [-min(p, 0) for p in pads]
    x = pad(node, x, [-c for c in crops])
    for axis in range(rank):
        before, after = max(pads[axis], 0), max(pads[axis + rank], 0)
        size = shape(x)[axis]
        if before > size or after > size:
            node.fail(f"wrap pads {before}, {after} exceed the size {size} of axis {axis}")
        pieces = []
        if before:
            pieces.append(slice_axis(node, x, axis, size - before, size))
        pieces.append(x)
        if after:
            pieces.append(slice_axis(node, x, axis, 0, after))
        x = concat(node, pieces, axis)
    return x


@converts("Pad")
def convert_pad(node: Node) -> Outputs:
    x = node.input(0)
    rank = len(shape(x))
    mode = node.attr("mode", "constant")
    if node.opset < 11:
        pads = [int(p) for p in node.attr("pads", [])]
        value = float(node.attr("value", 0.0))
    else:
        pads = const_ints(node, 1, "pads")
        value = 0.0
        if node.has_input(2):
            if math.prod(node.shape(2)) != 1:
                node.fail(f"constant_value {node.type_str(2)} must hold one value")
            constant_value = node.const(2)
            if constant_value is not None:
                value = float(np.asarray(constant_value).reshape(-1)[0])
        if node.opset >= 18 and node.has_input(3):
            axes = [normalized_axis(node, a, rank) for a in const_ints(node, 3, "axes")]
            if len(pads) != 2 * len(axes):
                node.fail(f"pads {pads} must have 2 values per axis of axes {axes}")
            full = [0] * (2 * rank)
            for i, a in enumerate(axes):
                full[a], full[a + rank] = pads[i], pads[i + len(axes)]
            pads = full
    if len(pads) != 2 * rank:
        node.fail(f"pads {pads} must have {2 * rank} values for input {node.type_str(0)}")
    if mode == "wrap":
        return [wrap_pad(node, x, pads)]
    if mode not in nn.PAD_MODES:
        node.fail(f"mode '{mode}' is not supported (constant, reflect, edge, wrap are)")
    props = {"pads": ints_attr(pads), "mode": str_attr(mode), "value": float_attr(value)}
    y = node.emit1(nn.PadOp, [x], props)
    if mode == "constant" and node.opset >= 11 and node.has_input(2) and node.const(2) is None:
        # A constant_value known only at run time fills the padding through
        # a mask of the original elements (it does not change the shape).
        inside = pad(node, node.constant(np.ones(shape(x), np.bool_)), pads)
        y = where(node, inside, y, reshape(node, node.input(2), ()))
    return [y]


# ---------------------------------------------------------------------------
# Resize and Upsample.


def f64_array(values: Sequence[float]) -> DenseArrayBase[Any]:
    return DenseArrayBase.from_list(f64, [float(v) for v in values])


@dataclass(frozen=True)
class ResizeFiltering:
    """Resize-11+'s attributes for its cubic and antialiased filters."""

    cubic_coeff_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False


def emit_resize(
    node: Node,
    x: SSAValue,
    size: Sequence[int],
    scales: Sequence[float] | None,
    mode: str,
    transformation: str,
    nearest_mode: str,
    roi: Sequence[float] | None = None,
    extrapolation_value: float = 0.0,
    filtering: ResizeFiltering = ResizeFiltering(),
) -> SSAValue:
    if any(s < 1 for s in size):
        node.fail(f"the output size {list(size)} of input {type_str_of(x)} is empty")
    props: dict[str, Attribute] = {
        "size": ints_attr(size),
        "mode": str_attr(mode),
        "coordinate_transformation_mode": str_attr(transformation),
        "nearest_mode": str_attr(nearest_mode),
    }
    if scales is not None:
        props["scales"] = f64_array(scales)
    if roi is not None:
        props["roi"] = f64_array(roi)
        props["extrapolation_value"] = float_attr(extrapolation_value)
    if mode == "cubic":
        props["cubic_coeff_a"] = float_attr(filtering.cubic_coeff_a)
    if filtering.exclude_outside and (mode == "cubic" or filtering.antialias):
        props["exclude_outside"] = bool_attr(True)
    if filtering.antialias:
        props["antialias"] = bool_attr(True)
    return node.emit1(nn.ResizeOp, [x], props)


def legacy_resize(node: Node, x: SSAValue, scales: Sequence[float], mode: str) -> SSAValue:
    """Upsample and Resize-10: asymmetric coordinates; nearest rounds down
    when enlarging and up when shrinking (as onnxruntime)."""
    xs = shape(x)
    if len(scales) != len(xs):
        node.fail(f"scales {list(scales)} must have one value per axis of {type_str_of(x)}")
    if mode not in ("nearest", "linear", "bilinear"):
        node.fail(f"mode '{mode}' is not supported (nearest and linear are)")
    mode = "linear" if mode == "bilinear" else mode
    if any(s <= 0 for s in scales):
        node.fail(f"scales {list(scales)} must be positive")
    y = x
    for shrinking in (False, True):
        axes = [i for i, s in enumerate(scales) if (s < 1) == shrinking and s != 1]
        if not axes:
            continue
        step_scales = [scales[i] if i in axes else 1.0 for i in range(len(xs))]
        size = [int(d * s) for d, s in zip(shape(y), step_scales, strict=True)]
        nearest = "ceil" if shrinking else "floor"
        y = emit_resize(node, y, size, step_scales, mode, "asymmetric", nearest)
    return y


@converts("Upsample")
def convert_upsample(node: Node) -> Outputs:
    x = node.input(0)
    if node.opset < 9:
        scales = [float(s) for s in node.attr("scales", [])]
    else:
        scales = [float(s) for s in np.asarray(node.require_const(1, "scales")).reshape(-1)]
    return [legacy_resize(node, x, scales, node.attr("mode", "nearest"))]


def per_axis(values: Sequence[T], axes: Sequence[int], default: Sequence[T]) -> list[T]:
    """`values` given for `axes` spread over every axis, `default` elsewhere."""
    full = list(default)
    for i, a in enumerate(axes):
        full[a] = values[i]
    return full


@converts("Resize")
def convert_resize(node: Node) -> Outputs:
    x = node.input(0)
    xs = shape(x)
    rank = len(xs)
    mode = node.attr("mode", "nearest")
    if node.opset < 11:
        scales_10 = [float(s) for s in np.asarray(node.require_const(1, "scales")).reshape(-1)]
        return [legacy_resize(node, x, scales_10, mode)]
    if mode not in nn.RESIZE_MODES:
        node.fail(f"mode '{mode}' is not supported (nearest, linear and cubic are)")
    antialias = bool(node.attr("antialias", 0))
    if antialias and mode not in nn.ANTIALIAS_MODES:
        node.fail(f"antialias=1 applies to the linear and cubic modes, not {mode}")
    transformation = node.attr("coordinate_transformation_mode", "half_pixel")
    if transformation not in nn.COORDINATE_MODES:
        node.fail(f"coordinate_transformation_mode '{transformation}' is not supported")
    nearest_mode = node.attr("nearest_mode", "round_prefer_floor")
    if nearest_mode not in nn.NEAREST_MODES:
        node.fail(f"nearest_mode '{nearest_mode}' is not supported")
    axes = [normalized_axis(node, int(a), rank) for a in node.attr("axes", range(rank))]
    sizes_given = node.has_input(3) and np.asarray(node.require_const(3, "sizes")).size > 0
    if sizes_given:
        sizes = per_axis(const_ints(node, 3, "sizes"), axes, xs)
        if len(sizes) != rank:
            node.fail(f"sizes must have one value per axis of {node.type_str(0)}")
        scales = [o / i for o, i in zip(sizes, xs, strict=True)]
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if policy in ("not_larger", "not_smaller"):
            chosen = [scales[a] for a in axes]
            scale = min(chosen) if policy == "not_larger" else max(chosen)
            scales = [scale if i in axes else 1.0 for i in range(rank)]
            sizes = [int(scale * xs[i] + 0.5) if i in axes else xs[i] for i in range(rank)]
        elif policy != "stretch":
            node.fail(f"keep_aspect_ratio_policy '{policy}' is not supported")
    else:
        given = np.asarray(node.require_const(2, "scales")).reshape(-1)
        if len(given) != len(axes):
            node.fail(f"scales {given.tolist()} must have one value per resized axis")
        scales = per_axis([float(s) for s in given], axes, [1.0] * rank)
        sizes = [int(s * d) for s, d in zip(scales, xs, strict=True)]
    roi: list[float] | None = None
    if transformation == "tf_crop_and_resize":
        given_roi = [float(v) for v in np.asarray(node.require_const(1, "roi")).reshape(-1)]
        if len(given_roi) != 2 * len(axes):
            node.fail(f"roi {given_roi} must have 2 values per resized axis")
        starts = per_axis(given_roi[: len(axes)], axes, [0.0] * rank)
        ends = per_axis(given_roi[len(axes) :], axes, [1.0] * rank)
        roi = starts + ends
    extrapolation = float(node.attr("extrapolation_value", 0.0))
    filtering = ResizeFiltering(
        float(node.attr("cubic_coeff_a", -0.75)), bool(node.attr("exclude_outside", 0)), antialias
    )
    y = emit_resize(
        node, x, sizes, scales, mode, transformation, nearest_mode, roi, extrapolation, filtering
    )
    return [y]


# ---------------------------------------------------------------------------
# GridSample.

GRID_SAMPLE_16_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
"""GridSample-16's mode names, as opset 20 renamed them."""


@converts("GridSample")
def convert_grid_sample(node: Node) -> Outputs:
    x, grid = node.input(0), node.input(1)
    mode = node.attr("mode", "bilinear" if node.opset < 20 else "linear")
    names = GRID_SAMPLE_16_MODES if node.opset < 20 else {m: m for m in nn.GRID_SAMPLE_MODES}
    if mode not in names:
        node.fail(f"mode '{mode}' is not one of {', '.join(names)}")
    padding = node.attr("padding_mode", "zeros")
    if padding not in nn.GRID_PADDING_MODES:
        node.fail(f"padding_mode '{padding}' is not one of {', '.join(nn.GRID_PADDING_MODES)}")
    if node.opset < 20 and len(shape(x)) != 4:
        node.fail(f"input {node.type_str(0)} must be 4-D before opset 20")
    props = {
        "mode": str_attr(names[mode]),
        "padding_mode": str_attr(padding),
        "align_corners": bool_attr(bool(node.attr("align_corners", 0))),
    }
    return [node.emit1(nn.GridSampleOp, [x, grid], props)]


# ---------------------------------------------------------------------------
# Attention (opset 23+), as onnx.reference computes it.


def split_heads(node: Node, x: SSAValue, heads: int, what: str) -> SSAValue:
    """B×S×(H·D) -> B×H×S×D."""
    b, s, hidden = shape(x)
    if heads < 1 or hidden % heads:
        node.fail(f"{what} {type_str_of(x)} does not split into {heads} heads")
    return transpose(node, reshape(node, x, (b, s, heads, hidden // heads)), (0, 2, 1, 3))


def repeat_heads(node: Node, x: SSAValue, times: int) -> SSAValue:
    """B×H×S×D -> B×(H·times)×S×D, each head repeated in place."""
    b, h, s, d = shape(x)
    tiled = node.emit1(
        tn.TileOp, [reshape(node, x, (b, h, 1, s, d))], {"repeats": ints_attr((1, 1, times, 1, 1))}
    )
    return reshape(node, tiled, (b, h * times, s, d))


def additive(node: Node, allowed: SSAValue, like: SSAValue) -> SSAValue:
    """0 where allowed, -inf elsewhere, in `like`'s element type."""
    return where(node, allowed, scalar(node, 0.0, like), scalar(node, -np.inf, like))


def attention_allowed(
    node: Node, q_len: int, kv_len: int, past: int, nonpad: SSAValue | None
) -> SSAValue | None:
    """Which keys each query may attend under is_causal, the sliding window
    and nonpad_kv_seqlen: q×kv, or B×1×q×kv with nonpad_kv_seqlen. A query i
    sits at position i + offset: past length, or nonpad[b] - q_len."""
    causal = bool(node.attr("is_causal", 0))
    left = int(node.attr("left_window_size", -1))
    right = int(node.attr("right_window_size", -1))
    i = np.arange(q_len).reshape(q_len, 1)
    j = np.arange(kv_len).reshape(1, kv_len)
    if nonpad is None:
        distance = i + past - j
        allowed = np.ones((q_len, kv_len), bool)
        if causal:
            allowed &= distance >= 0
        if left >= 0:
            allowed &= distance <= left
        if right >= 0:
            allowed &= -distance <= right
        return None if allowed.all() else node.constant(allowed)
    (batch,) = shape(nonpad)
    lengths = reshape(node, nonpad, (batch, 1, 1))
    keys = node.constant(j.astype(dtype_of(nonpad)))
    conditions = [node.emit1(ew.LessOp, [keys, lengths])]
    if causal or left >= 0 or right >= 0:
        distance = add(node, node.constant((i - q_len - j).astype(dtype_of(nonpad))), lengths)
        bounds = [(causal, 0, ew.GreaterEqualOp), (left >= 0, left, ew.LessEqualOp)]
        bounds.append((right >= 0, -right, ew.GreaterEqualOp))
        for wanted, bound, op in bounds:
            if wanted:
                conditions.append(node.emit1(op, [distance, scalar(node, bound, nonpad)]))
    allowed = conditions[0]
    for c in conditions[1:]:
        allowed = node.emit1(ew.AndOp, [allowed, c])
    return reshape(node, allowed, (batch, 1, *shape(allowed)[1:]))


def attention_bias(
    node: Node, q: SSAValue, kv_len: int, past: int, nonpad: SSAValue | None
) -> SSAValue | None:
    """The additive bias of the attention scores: the mask (boolean masks as
    0 / -inf, short masks padded to kv_len as masked) plus -inf where
    is_causal, the window or nonpad_kv_seqlen forbid."""
    q_len = shape(q)[2]
    mask = node.optional_input(3)
    bias: SSAValue | None = None
    if mask is not None:
        ms = shape(mask)
        boolean = dtype_of(mask) == np.bool_
        if ms[-1] < kv_len:
            fill = 0.0 if boolean else -np.inf
            mask = pad(node, mask, [0] * (2 * len(ms) - 1) + [kv_len - ms[-1]], fill)
        bias = additive(node, mask, q) if boolean else mask
        if elem(bias.type) != elem(q.type):
            node.fail(f"attn_mask {type_str_of(mask)} must be boolean or of Q's element type")
    allowed = attention_allowed(node, q_len, kv_len, past, nonpad)
    if allowed is not None:
        forbidden = additive(node, allowed, q)
        bias = forbidden if bias is None else add(node, bias, forbidden)
    return bias


@converts("Attention")
def convert_attention(node: Node) -> Outputs:
    q, k, v = float_input(node, 0), node.input(1), node.input(2)
    rank = len(shape(q))
    if rank not in (3, 4) or len(shape(k)) != rank or len(shape(v)) != rank:
        node.fail(
            f"Q, K, V ({node.type_str(0)}, {node.type_str(1)}, {node.type_str(2)}) "
            "must all be 3-D or all 4-D"
        )
    q_heads, kv_heads = node.attr("q_num_heads"), node.attr("kv_num_heads")
    if rank == 3:
        if q_heads is None or kv_heads is None:
            node.fail("3-D Q, K, V need the q_num_heads and kv_num_heads attributes")
        q = split_heads(node, q, int(q_heads), "Q")
        k = split_heads(node, k, int(kv_heads), "K")
        v = split_heads(node, v, int(kv_heads), "V")
    batch, heads, q_len, head_size = shape(q)
    scale = node.attr("scale")
    factor = np.sqrt(1 / np.sqrt(head_size) if scale is None else float(scale))
    past_key, past_value = node.optional_input(4), node.optional_input(5)
    if (past_key is None) != (past_value is None):
        node.fail("past_key and past_value must be given together")
    nonpad = node.optional_input(6) if node.opset >= 24 else None
    if nonpad is not None and past_key is not None:
        node.fail("nonpad_kv_seqlen cannot be combined with past_key and past_value")
    present_key = k if past_key is None else concat(node, [past_key, k], 2)
    present_value = v if past_value is None else concat(node, [past_value, v], 2)
    past = 0 if past_key is None else shape(past_key)[2]
    kv_len = shape(present_key)[2]
    k_all, v_all = present_key, present_value
    kv_heads_now = shape(k_all)[1]
    if heads != kv_heads_now and heads % kv_heads_now == 0 and shape(v_all)[1] == kv_heads_now:
        k_all = repeat_heads(node, k_all, heads // kv_heads_now)
        v_all = repeat_heads(node, v_all, heads // kv_heads_now)

    s = scalar(node, factor, q)
    scores = matmul(node, mul(node, q, s), transpose(node, mul(node, k_all, s), (0, 1, 3, 2)))
    softcap = float(node.attr("softcap", 0.0))
    if softcap > 0:
        cap = scalar(node, softcap, q)
        scores = mul(node, unary(node, ew.TanhOp, div(node, scores, cap)), cap)
    bias = attention_bias(node, q, kv_len, past, nonpad)
    biased = scores if bias is None else add(node, scores, bias)
    probabilities = softmax_in(node, biased, node.attr("softmax_precision"))
    if bias is not None:
        # A query whose every key is masked attends nothing: zeros, not NaN.
        top = reduce(node, rd.ReduceMaxOp, bias, [-1 % len(shape(bias))])
        masked_row = node.emit1(ew.EqualOp, [top, scalar(node, -np.inf, bias)])
        if (
            node.importer.constants.get(masked_row) is None
            or node.importer.constants[masked_row].any()
        ):
            probabilities = where(node, masked_row, scalar(node, 0.0, probabilities), probabilities)
    mode = int(node.attr("qk_matmul_output_mode", 0))
    qk_output = {2: biased, 3: probabilities}.get(mode, scores)
    y = matmul(node, cast(node, probabilities, elem(q.type)), v_all)
    if rank == 3:
        y = transpose(node, y, (0, 2, 1, 3))
        y = reshape(node, y, (batch, q_len, heads * shape(y)[3]))
    qk_result = cast(node, qk_output, elem(q.type)) if requested(node, 3) else None
    return [y, present_key, present_value, qk_result]


def softmax_in(node: Node, x: SSAValue, precision: int | None) -> SSAValue:
    """Softmax over the last axis, computed in the ONNX element type
    `precision` when given."""
    if precision is not None:
        x = cast(node, x, softmax_precision_type(node, precision))
    return node.emit1(nn.SoftmaxOp, [x], {"axis": int_attr(-1)})


def softmax_precision_type(node: Node, precision: int) -> Attribute:
    """The float element type of the ONNX type number `softmax_precision`."""
    try:
        element_type = element_type_of(onnx.helper.tensor_dtype_to_np_dtype(precision))
    except Exception:
        node.fail(f"softmax_precision {precision} is not a supported element type")
    if not is_float(element_type):
        node.fail(f"softmax_precision {precision} is not a float type")
    return element_type


# ---------------------------------------------------------------------------
# FlexAttention (ai.onnx.preview, opset 26): attention with the score_mod and
# prob_mod subgraphs inlined around the softmax, as onnx.reference computes it.

FLEX_DOMAIN = "ai.onnx.preview"


def flex_compute_type(node: Node, q: SSAValue) -> Attribute:
    """The element type of the scores, softmax and mods: softmax_precision,
    else f64 for f64 inputs and f32 for the others."""
    precision = node.attr("softmax_precision")
    if precision is None:
        return f64 if elem(q.type) == f64 else f32
    return softmax_precision_type(node, precision)


def flex_modified(node: Node, name: str, x: SSAValue) -> SSAValue:
    """`x` through the subgraph attribute `name` when the node has it: one
    input, one output of `x`'s shape and element type."""
    graph = node.attr(name)
    if graph is None:
        return x
    outputs = node.inline(graph, [x], name)
    if len(outputs) != 1 or not isinstance(outputs[0], SSAValue):
        node.fail(f"{name} must produce one tensor")
    (y,) = outputs
    if y.type != x.type:
        node.fail(f"{name} turns {type_str(x.type)} into {type_str(y.type)}, not the same type")
    return y


@converts("FlexAttention", domain=FLEX_DOMAIN)
def convert_flex_attention(node: Node) -> Outputs:
    q, k, v = float_input(node, 0), float_input(node, 1), float_input(node, 2)
    if not len(shape(q)) == len(shape(k)) == len(shape(v)) == 4:
        node.fail(
            f"Q, K, V ({node.type_str(0)}, {node.type_str(1)}, {node.type_str(2)}) must be 4-D"
        )
    q_heads, head_size = shape(q)[1], shape(q)[3]
    kv_heads = shape(k)[1]
    if shape(k)[3] != head_size or shape(v)[:3] != shape(k)[:3]:
        node.fail(f"K {node.type_str(1)} and V {node.type_str(2)} do not fit Q {node.type_str(0)}")
    if q_heads != kv_heads:
        if q_heads % kv_heads:
            node.fail(f"{q_heads} query heads are not a multiple of {kv_heads} key heads")
        k = repeat_heads(node, k, q_heads // kv_heads)
        v = repeat_heads(node, v, q_heads // kv_heads)
    scale = float(node.attr("scale", 1 / np.sqrt(head_size)))
    s = scalar(node, float(np.sqrt(np.float32(scale))), q)
    scores = matmul(node, mul(node, q, s), transpose(node, mul(node, k, s), (0, 1, 3, 2)))
    compute = flex_compute_type(node, q)
    scores = flex_modified(node, "score_mod", cast(node, scores, compute))
    probabilities = node.emit1(nn.SoftmaxOp, [scores], {"axis": int_attr(-1)})
    probabilities = flex_modified(node, "prob_mod", probabilities)
    return [cast(node, matmul(node, probabilities, cast(node, v, compute)), elem(v.type))]


# ---------------------------------------------------------------------------
# Classification losses.


def negative_log_likelihood(node: Node, log_prob: SSAValue, target: SSAValue) -> SSAValue:
    """ONNX NegativeLogLikelihoodLoss of N×C×D... log-probabilities: the
    negated entry of each target class, weighted, ignore_index left out."""
    xs, ts = shape(log_prob), shape(target)
    if len(xs) < 2 or ts != (xs[0], *xs[2:]):
        node.fail(
            f"target {type_str_of(target)} must be shaped like input "
            f"{type_str_of(log_prob)} without axis 1"
        )
    if dtype_of(target).kind not in "iu":
        node.fail(f"target {type_str_of(target)} must hold integer class indices")
    reduction = node.attr("reduction", "mean")
    if reduction not in ("none", "sum", "mean"):
        node.fail(f"reduction '{reduction}' is not one of none, sum, mean")
    ignore_index = node.attr("ignore_index")
    ignored: SSAValue | None = None
    if ignore_index is not None:
        ignored = node.emit1(ew.EqualOp, [target, scalar(node, ignore_index, target)])
        target = where(node, ignored, scalar(node, 0, target), target)
    indices = reshape(node, target, (xs[0], 1, *xs[2:]))
    picked = node.emit1(tn.GatherElementsOp, [log_prob, indices], {"axis": int_attr(1)})
    loss = unary(node, ew.NegOp, reshape(node, picked, ts))
    weight = node.optional_input(2)
    weights: SSAValue | None = None
    if weight is not None:
        weights = node.emit1(tn.GatherOp, [weight, target], {"axis": int_attr(0)})
        loss = mul(node, loss, weights)
    if ignored is not None:
        zero = scalar(node, 0, loss)
        loss = where(node, ignored, zero, loss)
        weights = where(node, ignored, zero, scalar(node, 1, loss) if weights is None else weights)
    every_axis = list(range(len(ts)))
    if reduction == "none":
        return loss
    total = reduce(node, rd.ReduceSumOp, loss, every_axis, keepdims=False)
    if reduction == "sum":
        return total
    if weights is None:
        return reduce(node, rd.ReduceMeanOp, loss, every_axis, keepdims=False)
    return div(node, total, reduce(node, rd.ReduceSumOp, weights, every_axis, keepdims=False))


@converts("NegativeLogLikelihoodLoss")
def convert_negative_log_likelihood_loss(node: Node) -> Outputs:
    return [negative_log_likelihood(node, float_input(node, 0), node.input(1))]


@converts("SoftmaxCrossEntropyLoss")
def convert_softmax_cross_entropy_loss(node: Node) -> Outputs:
    x = float_input(node, 0)
    if len(shape(x)) < 2:
        node.fail(f"scores {node.type_str(0)} must be N×C×...")
    log_prob = node.emit1(nn.LogSoftmaxOp, [x], {"axis": int_attr(1)})
    return [negative_log_likelihood(node, log_prob, node.input(1)), log_prob]


# ---------------------------------------------------------------------------
# Rotary embedding, causal convolution with state, linear attention.


@converts("RotaryEmbedding")
def convert_rotary_embedding(node: Node) -> Outputs:
    x = float_input(node, 0)
    xs = shape(x)
    if len(xs) == 4:
        rows = transpose(node, x, (0, 2, 1, 3))
    elif len(xs) == 3:
        heads = int(node.attr("num_heads", 0))
        if heads < 1 or xs[2] % heads:
            node.fail(f"input {node.type_str(0)} does not split into num_heads={heads} heads")
        rows = reshape(node, x, (xs[0], xs[1], heads, xs[2] // heads))
    else:
        node.fail(f"input {node.type_str(0)} must be 3-D or 4-D")
    b, s, h, d = shape(rows)
    dim = int(node.attr("rotary_embedding_dim", 0)) or d
    if dim > d or dim % 2:
        node.fail(f"rotary_embedding_dim {dim} must be even and at most the head size {d}")
    cos, sin = node.input(1), node.input(2)
    positions = node.optional_input(3)
    if positions is not None:
        cos = node.emit1(tn.GatherOp, [cos, positions], {"axis": int_attr(0)})
        sin = node.emit1(tn.GatherOp, [sin, positions], {"axis": int_attr(0)})
    for what, cache in (("cos_cache", cos), ("sin_cache", sin)):
        if shape(cache) != (b, s, dim // 2):
            node.fail(
                f"{what} gives {type_str_of(cache)}, expected {b}x{s}x{dim // 2} per position"
            )
    cos = reshape(node, cos, (b, s, 1, dim // 2))
    sin = reshape(node, sin, (b, s, 1, dim // 2))
    interleaved = bool(node.attr("interleaved", 0))
    if interleaved:
        first = slice_axis(node, rows, 3, 0, dim, 2)
        second = slice_axis(node, rows, 3, 1, dim, 2)
    else:
        first = slice_axis(node, rows, 3, 0, dim // 2)
        second = slice_axis(node, rows, 3, dim // 2, dim)
    real = sub(node, mul(node, cos, first), mul(node, sin, second))
    imaginary = add(node, mul(node, sin, first), mul(node, cos, second))
    if interleaved:
        pairs = [reshape(node, v, (b, s, h, dim // 2, 1)) for v in (real, imaginary)]
        rotated = reshape(node, concat(node, pairs, 4), (b, s, h, dim))
    else:
        rotated = concat(node, [real, imaginary], 3)
    if dim < d:
        rotated = concat(node, [rotated, slice_axis(node, rows, 3, dim, d)], 3)
    if len(xs) == 4:
        return [transpose(node, rotated, (0, 2, 1, 3))]
    return [reshape(node, rotated, xs)]


@converts("CausalConvWithState")
def convert_causal_conv_with_state(node: Node) -> Outputs:
    x = float_input(node, 0)
    w = node.input(1)
    if len(shape(x)) != 3 or len(shape(w)) != 3:
        node.fail(f"input {node.type_str(0)} and weight {node.type_str(1)} must be 3-D")
    b, c, _ = shape(x)
    k = shape(w)[2]
    if shape(w) != (c, 1, k):
        node.fail(f"weight {node.type_str(1)} must be {c}x1xK (one filter per channel)")
    activation = node.attr("activation", "none")
    if activation not in ("none", "silu", "swish"):
        node.fail(f"activation '{activation}' is not one of none, silu, swish")
    past = node.optional_input(3)
    if past is None:
        past = node.constant(np.zeros((b, c, k - 1), dtype_of(x)))
    padded = concat(node, [past, x], 2) if k > 1 else x
    window = Window((k,), (1,), (1,), (0,), (0,))
    y = bias_add(node, conv(node, padded, w, window, c), node.optional_input(2))
    if activation != "none":
        y = mul(node, y, unary(node, ew.SigmoidOp, y))
    length = shape(padded)[2]
    state = slice_axis(node, padded, 2, length - (k - 1), length)
    return [y, state]


def heads_4d(node: Node, x: SSAValue, heads: int, what: str) -> SSAValue:
    """B×T×(H·D) -> B×H×T×D in float32."""
    return cast(node, split_heads(node, x, heads, what), f32)


@converts("LinearAttention")
def convert_linear_attention(node: Node) -> Outputs:
    """The recurrence over the (static) sequence unrolled step by step."""
    query = float_input(node, 0)
    rule = node.attr("update_rule", "gated_delta")
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        node.fail(f"update_rule '{rule}' is not one of linear, gated, delta, gated_delta")
    q_heads, kv_heads = int(node.attr("q_num_heads", 0)), int(node.attr("kv_num_heads", 0))
    if q_heads < 1 or kv_heads < 1 or q_heads % kv_heads:
        node.fail(f"q_num_heads {q_heads} must be a positive multiple of kv_num_heads {kv_heads}")
    for i, what in ((0, "query"), (1, "key"), (2, "value")):
        if len(node.shape(i)) != 3:
            node.fail(f"{what} {node.type_str(i)} must be 3-D (B×T×H·D)")
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    for i, what, needed in ((4, "decay", gating), (5, "beta", delta)):
        if node.has_input(i) != needed:
            node.fail(
                f"update_rule '{rule}' {'requires' if needed else 'forbids'} the {what} input"
            )
    q = heads_4d(node, query, q_heads, "query")
    k = heads_4d(node, node.input(1), kv_heads, "key")
    v = heads_4d(node, node.input(2), kv_heads, "value")
    b, _, t, dk = shape(q)
    dv = shape(v)[3]
    decay = beta = None
    if gating:
        decay = node.input(4)
        last = shape(decay)[-1]
        if last == kv_heads:
            decay = transpose(node, reshape(node, decay, (b, t, kv_heads, 1)), (0, 2, 1, 3))
            decay = cast(node, decay, f32)
        elif last == kv_heads * dk:
            decay = heads_4d(node, decay, kv_heads, "decay")
        else:
            node.fail(f"decay {node.type_str(4)} must end in kv_num_heads or kv_num_heads·d_k")
        decay = unary(node, ew.ExpOp, decay)
    if delta:
        beta = node.input(5)
        last = shape(beta)[-1]
        if last not in (kv_heads, 1):
            node.fail(f"beta {node.type_str(5)} must end in kv_num_heads or 1")
        beta = cast(node, transpose(node, reshape(node, beta, (b, t, last, 1)), (0, 2, 1, 3)), f32)
    past = node.optional_input(3)
    state_type = elem(query.type) if past is None else elem(past.type)
    if past is None:
        state = node.constant(np.zeros((b, kv_heads, dk, dv), np.float32))
    else:
        state = cast(node, past, f32)
    scale = float(node.attr("scale", 0.0)) or 1 / math.sqrt(dk)
    scale_value = node.constant(np.array(scale, np.float32))
    outputs: list[SSAValue] = []
    for i in range(t):
        q_t, k_t, v_t = (slice_axis(node, value, 2, i, i + 1) for value in (q, k, v))
        if decay is not None:
            gate = transpose(node, slice_axis(node, decay, 2, i, i + 1), (0, 1, 3, 2))
            state = mul(node, state, gate)
        if beta is not None:
            retrieved = matmul(node, k_t, state)
            v_t = mul(node, slice_axis(node, beta, 2, i, i + 1), sub(node, v_t, retrieved))
        state = add(node, state, mul(node, transpose(node, k_t, (0, 1, 3, 2)), v_t))
        shared = repeat_heads(node, state, q_heads // kv_heads) if q_heads != kv_heads else state
        outputs.append(mul(node, matmul(node, q_t, shared), scale_value))
    y = transpose(node, concat(node, outputs, 2), (0, 2, 1, 3))
    y = cast(node, reshape(node, y, (b, t, q_heads * dv)), elem(query.type))
    return [y, cast(node, state, state_type)]
