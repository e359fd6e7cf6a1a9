"""Sequence and optional graph inputs and outputs, as tensors.

xtc's models take and return tensors. A graph input or output of a sequence
or optional type is flattened: a sequence of n tensors is n tensors (named
`x[0]`, `x[1]`, ...), an optional with a value is that value, one without
is nothing. The importer needs the `Layout` of each such input (given at run
time: its length and item shapes, or its presence), so a model that takes
one is specialized on it (driver/specializing.py); the layouts of the
outputs are recorded on `@main` (OUTPUT_LAYOUT) for the runner to regroup
the flat results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import onnx
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

Kind = Literal["tensor", "sequence", "absent", "string"]

OUTPUT_LAYOUT = "graph.output_layout"
"""The `@main` attribute listing each graph output's layout ("tensor",
"sequence:3", "absent", 'string:[[2], ["a", "b"]]'); set only when an output
is not a tensor."""


@dataclass(frozen=True)
class Layout:
    """How a graph value is passed as tensors: one tensor, a sequence of
    tensors of `shapes`, or nothing (an optional without a value, or a
    string tensor of shape `shapes[0]` whose values, known at import, are
    `strings` in row-major order)."""

    kind: Kind
    shapes: tuple[tuple[int, ...], ...] = ()
    strings: tuple[str, ...] = ()

    @staticmethod
    def of_strings(array: np.ndarray) -> Layout:
        """The layout of a string output of value `array`."""
        return Layout("string", (array.shape,), tuple(str(s) for s in array.reshape(-1)))

    def string_value(self) -> np.ndarray:
        """A string layout's value: str objects of its shape."""
        array = np.empty(len(self.strings), dtype=object)
        array[:] = self.strings
        return array.reshape(self.shapes[0])

    def __str__(self) -> str:
        if self.kind == "string":
            return "string:" + json.dumps([list(self.shapes[0]), list(self.strings)])
        return f"sequence:{len(self.shapes)}" if self.kind == "sequence" else self.kind

    @staticmethod
    def parse(text: str) -> Layout:
        """The layout `str` wrote (sequence item shapes are not kept)."""
        if text.startswith("string:"):
            shape, strings = json.loads(text.removeprefix("string:"))
            return Layout("string", (tuple(shape),), tuple(strings))
        if text.startswith("sequence:"):
            return Layout("sequence", ((),) * int(text.removeprefix("sequence:")))
        if text not in ("tensor", "absent"):
            raise ValueError(f"'{text}' is not a layout")
        return Layout("absent" if text == "absent" else "tensor")


def is_tensor_type(type_proto: onnx.TypeProto) -> bool:
    return type_proto.HasField("tensor_type")


def type_kind(type_proto: onnx.TypeProto) -> str:
    """ "tensor", "sequence", "optional" or another field name of the type."""
    field = type_proto.WhichOneof("value")
    return {"tensor_type": "tensor", "sequence_type": "sequence", "optional_type": "optional"}.get(
        str(field), str(field)
    )


def layout_of(value: Any) -> Layout:
    """A run-time value's layout: None is an absent optional, a list or
    tuple a sequence, anything else a tensor."""
    if value is None:
        return Layout("absent")
    if isinstance(value, (list, tuple)):
        return Layout("sequence", tuple(np.shape(item) for item in value))
    return Layout("tensor", (np.shape(value),))


def flatten(value: Any) -> list[np.ndarray]:
    """The tensors a run-time value passes as."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [np.asarray(item) for item in value]
    return [np.asarray(value)]


def fits(type_proto: onnx.TypeProto, layout: Layout) -> bool:
    """Whether a value of `layout` is one of type `type_proto`."""
    kind = type_kind(type_proto)
    if kind == "optional":
        inner = type_proto.optional_type.elem_type
        return layout.kind == "absent" or fits(inner, layout)
    return kind == layout.kind


def tensor_element(type_proto: onnx.TypeProto) -> int:
    """The ONNX element type of the tensors of a tensor, sequence or
    optional type (0 when undefined)."""
    kind = type_kind(type_proto)
    if kind == "sequence":
        return tensor_element(type_proto.sequence_type.elem_type)
    if kind == "optional":
        return tensor_element(type_proto.optional_type.elem_type)
    return int(type_proto.tensor_type.elem_type) if kind == "tensor" else 0


def set_output_layouts(func: FuncOp, layouts: Sequence[Layout]) -> None:
    """Records the outputs' layouts on `func` when one is not a tensor."""
    if any(layout.kind != "tensor" for layout in layouts):
        func.attributes[OUTPUT_LAYOUT] = ArrayAttr([StringAttr(str(lay)) for lay in layouts])


def output_layouts(module: ModuleOp) -> list[Layout] | None:
    """The layouts recorded on the module's `@main`, None when every
    output is a tensor."""
    for op in module.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == "main":
            recorded = op.attributes.get(OUTPUT_LAYOUT)
            if isinstance(recorded, ArrayAttr):
                return [Layout.parse(s.data) for s in recorded if isinstance(s, StringAttr)]
    return None


def regroup(flat: Sequence[np.ndarray], layouts: Sequence[Layout]) -> list[Any]:
    """The flat results as the graph's outputs: a tensor, a list of tensors
    for a sequence, None for an absent optional, the strings of a string
    output."""
    outputs: list[Any] = []
    position = 0
    for layout in layouts:
        if layout.kind == "tensor":
            outputs.append(flat[position])
            position += 1
        elif layout.kind == "sequence":
            outputs.append(list(flat[position : position + len(layout.shapes)]))
            position += len(layout.shapes)
        elif layout.kind == "string":
            outputs.append(layout.string_value())
        else:
            outputs.append(None)
    return outputs
