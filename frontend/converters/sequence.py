"""ONNX sequences, resolved at import: a sequence is the list of its
tensors' values (SequenceValue), as control flow is unrolled
(frontend/converters/control.py). Positions, lengths and split sizes must
be known at import (a position given at run time is specialized on, as a
Reshape's shape is). A sequence graph input or output is flattened to its
tensors (frontend/structured.py).

SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
SequenceErase and SequenceLength work on the list; SplitToSequence
slices a tensor into one, ConcatFromSequence concatenates (or stacks)
one; SequenceMap inlines its body once per element.

Optionals are resolved at import too: an optional is its value (a tensor
or a sequence) or an AbsentValue, so Optional, OptionalHasElement and
OptionalGetElement fold away.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue

from xtc.dialects.graph.base import elem, shape_of
from xtc.frontend.converters import AbsentValue, Node, SequenceValue, Value, converts
from xtc.frontend.converters.control import stack
from xtc.frontend.converters.elementwise import ONNX_ELEMENT_TYPES

Outputs = Sequence[Value | None]


def _position(node: Node, i: int, length: int, inserting: bool, default: int) -> int:
    """Input `i` (a position, `default` when absent) as an index into a
    sequence of `length`: negative counts from the end."""
    if node.has_input(i):
        value = node.require_const(i, "the position")
        position = int(value.reshape(-1)[0])
    else:
        position = default
    high = length if inserting else length - 1
    if not -length <= position <= high:
        node.fail(f"position {position} is out of range for a sequence of {length}")
    return position + length if position < 0 else position


@converts("SequenceEmpty")
def convert_sequence_empty(node: Node) -> Outputs:
    dtype = int(node.attr("dtype", onnx.TensorProto.FLOAT))
    if dtype not in ONNX_ELEMENT_TYPES:
        node.fail(f"dtype {onnx.TensorProto.DataType.Name(dtype)} is not supported")
    return [SequenceValue((), ONNX_ELEMENT_TYPES[dtype])]


@converts("SequenceConstruct")
def convert_sequence_construct(node: Node) -> Outputs:
    items = node.inputs()
    kinds = {elem(v.type) for v in items}
    if len(kinds) != 1:
        node.fail("its tensors must all have one element type")
    return [SequenceValue(tuple(items), kinds.pop())]


@converts("SequenceInsert")
def convert_sequence_insert(node: Node) -> Outputs:
    sequence, tensor = node.sequence(0), node.input(1)
    if sequence.items and elem(tensor.type) != sequence.element:
        node.fail(f"the tensor {node.type_str(1)} has another element type than the sequence")
    items = list(sequence.items)
    items.insert(_position(node, 2, len(items), True, len(items)), tensor)
    return [SequenceValue(tuple(items), elem(tensor.type))]


@converts("SequenceAt")
def convert_sequence_at(node: Node) -> Outputs:
    sequence = node.sequence(0)
    if not node.has_input(1):
        node.fail("input 1 (the position) is required")
    return [sequence.items[_position(node, 1, len(sequence.items), False, 0)]]


@converts("SequenceErase")
def convert_sequence_erase(node: Node) -> Outputs:
    sequence = node.sequence(0)
    if not sequence.items:
        node.fail("cannot erase from an empty sequence")
    items = list(sequence.items)
    del items[_position(node, 1, len(items), False, -1)]
    return [SequenceValue(tuple(items), sequence.element)]


@converts("SequenceLength")
def convert_sequence_length(node: Node) -> Outputs:
    return [node.constant(np.array(len(node.sequence(0).items), np.int64))]


def _slice(node: Node, x: SSAValue, axis: int, start: int, end: int) -> SSAValue:
    bounds = [node.constant(np.array([v], np.int64)) for v in (start, end, axis)]
    return node.apply("Slice", [x, *bounds])[0]


def _squeeze(node: Node, x: SSAValue, axis: int) -> SSAValue:
    if node.opset < 13:  # axes an attribute
        return node.apply("Squeeze", [x], axes=[axis])[0]
    return node.apply("Squeeze", [x, node.constant(np.array([axis], np.int64))])[0]


@converts("SplitToSequence")
def convert_split_to_sequence(node: Node) -> Outputs:
    x = node.input(0)
    shape = shape_of(x.type)
    axis = int(node.attr("axis", 0))
    axis = axis + len(shape) if axis < 0 else axis
    if not 0 <= axis < len(shape):
        node.fail(f"axis {axis} is out of range for {node.type_str(0)}")
    size = shape[axis]
    keep = bool(node.attr("keepdims", 1))
    if node.has_input(1):
        split = node.require_const(1, "the split")
        if split.ndim == 0:
            step = int(split)
            if step <= 0:
                node.fail(f"split {step} must be positive")
            lengths = [min(step, size - s) for s in range(0, size, step)]
        else:
            lengths = [int(v) for v in split]
            if sum(lengths) != size or min(lengths, default=1) < 0:
                node.fail(f"split {lengths} does not add up to {size}")
        keep = True  # keepdims applies only without a split
    else:
        lengths = [1] * size
    starts = np.cumsum([0, *lengths])
    items = [
        _slice(node, x, axis, int(a), int(b)) for a, b in zip(starts, starts[1:], strict=False)
    ]
    if not keep:
        items = [_squeeze(node, item, axis) for item in items]
    return [SequenceValue(tuple(items), elem(x.type))]


@converts("ConcatFromSequence")
def convert_concat_from_sequence(node: Node) -> Outputs:
    sequence = node.sequence(0)
    if not sequence.items:
        node.fail("cannot concatenate an empty sequence")
    axis = int(node.attr("axis"))
    if node.attr("new_axis", 0):
        return [stack(node, list(sequence.items), axis, "the sequence")]
    if len(sequence.items) == 1:
        return [sequence.items[0]]
    return node.apply("Concat", list(sequence.items), axis=axis)


@converts("SequenceMap")
def convert_sequence_map(node: Node) -> Outputs:
    body = node.attr("body")
    if not isinstance(body, onnx.GraphProto):
        node.fail("has no 'body' subgraph")
    inputs = [node.value(i) for i in range(node.num_inputs)]
    length = len(node.sequence(0).items)
    for value in inputs:
        if isinstance(value, SequenceValue) and len(value.items) != length:
            node.fail(f"its sequences have different lengths ({len(value.items)}, {length})")
    outputs: list[list[SSAValue]] = [[] for _ in body.output]
    for k in range(length):
        args = [v.items[k] if isinstance(v, SequenceValue) else v for v in inputs]
        for out, value in zip(outputs, node.inline(body, args, f"element {k}"), strict=True):
            if not isinstance(value, SSAValue):
                node.fail("its body returns a sequence or an optional, which xtc does not nest")
            out.append(value)
    types = [elem(o[0].type) if o else ONNX_ELEMENT_TYPES[onnx.TensorProto.FLOAT] for o in outputs]
    return [SequenceValue(tuple(o), t) for o, t in zip(outputs, types, strict=True)]


@converts("Optional")
def convert_optional(node: Node) -> Outputs:
    if node.has_input(0):
        return [node.value(0)]
    type_proto = node.attr("type")
    if not isinstance(type_proto, onnx.TypeProto):
        node.fail("an Optional without an input needs its 'type' attribute")
    return [AbsentValue(type_proto)]


@converts("OptionalHasElement")
def convert_optional_has_element(node: Node) -> Outputs:
    present = node.has_input(0) and not isinstance(node.value(0), AbsentValue)
    return [node.constant(np.array(present))]


@converts("OptionalGetElement")
def convert_optional_get_element(node: Node) -> Outputs:
    value = node.value(0)
    if isinstance(value, AbsentValue):
        node.fail("its optional input has no value")
    return [value]
