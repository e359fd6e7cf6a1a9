"""Random ONNX ops, composed from graph.random_uniform draws
(dialects/graph/random.py): RandomUniform(Like) scales a draw, RandomNormal(Like)
is Box-Muller of two draws, Bernoulli compares a draw with the
probabilities, Multinomial inverts the cumulative distribution, and
training-mode Dropout keeps where a draw is at least the ratio.

With a `seed`, a node gives the same values on every run (xtc's generator:
not onnxruntime's numbers, nor those of ONNX's case data); without one, it
gives new values on each run (graph.fresh_seed)."""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import Attribute, SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph import nn
from xtc.dialects.graph import reduce as rd
from xtc.dialects.graph import tensor as t
from xtc.dialects.graph.base import (
    bool_attr,
    elem,
    float_attr,
    int_attr,
    ints_attr,
    is_float,
    shape_of,
)
from xtc.dialects.graph.constant import numpy_dtype
from xtc.dialects.graph.random import FreshSeedOp, RandomUniformOp
from xtc.frontend.converters import Node, converts
from xtc.frontend.converters.elementwise import ONNX_ELEMENT_TYPES, float_input, scalar

Outputs = Sequence[SSAValue | None]
FLOAT_TYPES = (onnx.TensorProto.FLOAT16, onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
               onnx.TensorProto.BFLOAT16)  # fmt: skip


def seed_bits(seed: float) -> int:
    """ONNX's float seed as the generator's integer: its value when whole,
    else its bits."""
    if seed.is_integer():
        return int(seed)
    return struct.unpack("<q", struct.pack("<d", seed))[0]


def draw(node: Node, shape: Sequence[int], dtype: Attribute, number: int = 0) -> SSAValue:
    """Draw `number` of the node: uniform in [0, 1), fixed by the node's seed,
    or fresh on every run when it has none."""
    seed = node.attr("seed")
    if seed is not None:
        # A node inlined from a subgraph (an iteration of an unrolled Loop,
        # say) draws its own stream; a top-level node draws stream `number`.
        place = node.name.rpartition("/")[0]
        stream = (zlib.crc32(place.encode()) if place else 0) * 4 + number
        props = {"seed": int_attr(seed_bits(float(seed))), "stream": int_attr(stream)}
        operands: list[SSAValue] = []
    else:
        # Another node's draws come from other streams (and the run's entropy).
        stream = zlib.crc32(node.name.encode()) * 4 + number
        props = {"seed": int_attr(0), "stream": int_attr(stream)}
        operands = [node.emit1(FreshSeedOp, [])]
    props |= {"shape": ints_attr(shape), "dtype": dtype}
    return node.emit1(RandomUniformOp, operands, props)


def float_type(node: Node, default: int) -> Attribute:
    """The node's `dtype` attribute (else `default`), refused unless a float."""
    dtype = int(node.attr("dtype", default))
    if dtype not in FLOAT_TYPES:
        name = onnx.TensorProto.DataType.Name(dtype) if dtype in ONNX_ELEMENT_TYPES else dtype
        node.fail(f"dtype {name} is not a float type (float16, bfloat16, float or double)")
    return ONNX_ELEMENT_TYPES[dtype]


def onnx_type(element: Attribute) -> int:
    return next(k for k, v in ONNX_ELEMENT_TYPES.items() if v == element)


def affine(node: Node, x: SSAValue, scale: float, offset: float) -> SSAValue:
    """offset + scale * x (the identity steps left out)."""
    if scale != 1:
        x = node.emit1(ew.MulOp, [x, scalar(node, scale, x)])
    if offset != 0:
        x = node.emit1(ew.AddOp, [x, scalar(node, offset, x)])
    return x


def uniform(node: Node, shape: Sequence[int], dtype: Attribute) -> Outputs:
    low, high = float(node.attr("low", 0.0)), float(node.attr("high", 1.0))
    return [affine(node, draw(node, shape, dtype), high - low, low)]


def normal(node: Node, shape: Sequence[int], dtype: Attribute) -> Outputs:
    """Box-Muller: sqrt(-2 ln(1 - u1)) cos(2 pi u2) (1 - u1 in (0, 1])."""
    one_minus = affine(node, draw(node, shape, dtype, 0), -1.0, 1.0)
    radius = node.emit1(ew.SqrtOp, [affine(node, node.emit1(ew.LogOp, [one_minus]), -2.0, 0.0)])
    angle = affine(node, draw(node, shape, dtype, 1), 2 * math.pi, 0.0)
    z = node.emit1(ew.MulOp, [radius, node.emit1(ew.CosOp, [angle])])
    return [affine(node, z, float(node.attr("scale", 1.0)), float(node.attr("mean", 0.0)))]


def static_shape(node: Node) -> list[int]:
    shape = node.attr("shape")
    if shape is None:
        node.fail("the 'shape' attribute is required")
    if any(d < 0 for d in shape):
        node.fail(f"shape {list(shape)} has a negative dimension")
    return list(shape)


def like_type(node: Node) -> Attribute:
    """The Like ops' dtype: the attribute's, else the input's (a float)."""
    if node.has_attr("dtype"):
        return float_type(node, onnx.TensorProto.FLOAT)
    element = elem(node.input(0).type)
    if not is_float(element):
        node.fail(f"input {node.type_str(0)} is not a float tensor: give 'dtype'")
    return element


@converts("RandomUniform")
def convert_random_uniform(node: Node) -> Outputs:
    return uniform(node, static_shape(node), float_type(node, onnx.TensorProto.FLOAT))


@converts("RandomUniformLike")
def convert_random_uniform_like(node: Node) -> Outputs:
    return uniform(node, node.shape(0), like_type(node))


@converts("RandomNormal")
def convert_random_normal(node: Node) -> Outputs:
    return normal(node, static_shape(node), float_type(node, onnx.TensorProto.FLOAT))


@converts("RandomNormalLike")
def convert_random_normal_like(node: Node) -> Outputs:
    return normal(node, node.shape(0), like_type(node))


@converts("Bernoulli")
def convert_bernoulli(node: Node) -> Outputs:
    """1 where a draw is below the probability, else 0, as `dtype`."""
    p = float_input(node, 0)
    hit = node.emit1(ew.LessOp, [draw(node, node.shape(0), elem(p.type)), p])
    to = ONNX_ELEMENT_TYPES.get(int(node.attr("dtype", onnx_type(elem(p.type)))))
    if to is None:
        node.fail(f"dtype {node.attr('dtype')} is not an element type xtc supports")
    return [node.emit1(ew.CastOp, [hit], {"to": to})]


@converts("Multinomial")
def convert_multinomial(node: Node) -> Outputs:
    """Each sample is the number of classes whose cumulative probability
    (softmax of the log-probabilities, summed along the classes) is at most
    a draw: the inverse of the distribution function."""
    x = float_input(node, 0)
    if len(node.shape(0)) != 2:
        node.fail(f"input must be [batch_size, class_size], got {node.type_str(0)}")
    (batch, classes), samples = node.shape(0), int(node.attr("sample_size", 1))
    if samples < 1:
        node.fail(f"sample_size {samples} must be positive")
    dtype = int(node.attr("dtype", onnx.TensorProto.INT32))
    if dtype not in (onnx.TensorProto.INT32, onnx.TensorProto.INT64):
        node.fail("dtype must be int32 or int64")
    to = ONNX_ELEMENT_TYPES[dtype]
    probabilities = node.emit1(nn.SoftmaxOp, [x], {"axis": int_attr(1)})
    cumulative = node.emit1(rd.CumSumOp, [probabilities], {"axis": int_attr(1)})
    cumulative = node.emit1(t.ReshapeOp, [cumulative], {"shape": ints_attr([batch, 1, classes])})
    u = draw(node, [batch, samples, 1], elem(x.type))
    passed = node.emit1(ew.LessEqualOp, [cumulative, u])
    counts = node.emit1(ew.CastOp, [passed], {"to": to})
    index = node.emit1(
        rd.ReduceSumOp, [counts], {"axes": ints_attr([2]), "keepdims": bool_attr(False)}
    )
    # Rounding can leave the last cumulative sum below a draw: the last class.
    last = node.constant(np.array(classes - 1, numpy_dtype(to)))
    return [node.emit1(ew.MinOp, [index, last])]


@converts("Dropout")
def convert_dropout(node: Node) -> Outputs:
    """At inference (and in training at ratio 0) the output is the input and
    the mask all true; in training mode the mask keeps where a draw is at
    least the ratio, and the output is x / (1 - ratio) there, 0 elsewhere."""
    x = node.input(0)
    if node.opset < 12:
        ratio: float | None = node.attr("ratio", 0.5)
    else:
        given = node.const(1)
        ratio = 0.5 if not node.has_input(1) else None if given is None else first(given)
    if is_training(node) and ratio != 0:
        if ratio is None:
            why = "a training Dropout draws its mask against it"
            node.fail_not_constant(1, "ratio (input 1)", why)
        if not 0 <= ratio <= 1:
            node.fail(f"ratio {ratio} is not in [0, 1]")
        return training_dropout(node, float_input(node, 0), ratio)
    props = {"ratio": float_attr(ratio)} if ratio is not None and 0 <= ratio < 1 else {}
    output = node.emit1(ew.DropoutOp, [x], props)
    if len(node.proto.output) < 2 or not node.proto.output[1]:
        return [output]
    mask_type = node.dtype(0) if node.opset < 10 else np.dtype(np.bool_)
    return [output, node.constant(np.ones(node.shape(0), mask_type))]


def first(array: np.ndarray) -> float:
    """The first element of a constant scalar (rank 0 or 1)."""
    return float(array.reshape(-1)[0].item())


def is_training(node: Node) -> bool:
    """training_mode (input 2, opset 12 on), which must be a constant."""
    if not node.has_input(2):
        return False
    training = node.const(2)
    if training is None:
        node.fail_not_constant(2, "training_mode (input 2)", "xtc compiles for inference")
    return bool(first(training))


def training_dropout(node: Node, x: SSAValue, ratio: float) -> list[SSAValue]:
    u = draw(node, shape_of(x.type), elem(x.type))
    mask = node.emit1(ew.GreaterEqualOp, [u, scalar(node, ratio, x)])
    kept = affine(node, x, 1 / (1 - ratio) if ratio < 1 else 0.0, 0.0)
    return [node.emit1(ew.WhereOp, [mask, kept, scalar(node, 0.0, x)]), mask]
