"""One converter per ONNX op, grouped by category in this package.

A converter is a function `(node: Node) -> Sequence[SSAValue | None]` that
emits graph ops for one ONNX node and returns the values of the node's
outputs in order (None for an optional output it does not produce). It is
registered with `@converts("OpType", ...)` (a plugin's op in another domain:
`@converts("OpType", domain="com.example")`). `Node` gives the inputs as SSA
values, constant inputs as numpy arrays, attributes with defaults, the opset,
and `emit` which builds an op with its type inferred, folds it when all its
operands are constants, and names the node in every error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr
from xdsl.interpreter import Interpreter
from xdsl.ir import Attribute, Block, Operation, SSAValue

from xtc.dialects.graph.base import GraphOp, ShapeError, elem, shape_of, type_str
from xtc.dialects.graph.constant import ConstantOp, numpy_dtype
from xtc.interp import RunTimeFault


class OnnxImportError(ValueError):
    """A model xtc cannot import, with a message that names the node."""


class NeedsConstantError(OnnxImportError):
    """A node input that determines a shape (axes, sizes, counts...) is not a
    constant; `value` is its ONNX name, for callers that can freeze it."""

    def __init__(self, message: str, value: str) -> None:
        super().__init__(message)
        self.value = value


Converter = Callable[
    ["Node"], Sequence["SSAValue | SequenceValue | AbsentValue | StringValue | None"]
]
OpKey = tuple[str, str]
"""An ONNX op as (domain, op type); the ONNX domain is "" ("ai.onnx" too)."""
CONVERTERS: dict[OpKey, Converter] = {}

ONNX_DOMAINS = ("", "ai.onnx")

_C = TypeVar("_C", bound=Converter)


def op_key(domain: str, op_type: str) -> OpKey:
    """The key of CONVERTERS: "ai.onnx" is the default domain, spelt ""."""
    return ("" if domain in ONNX_DOMAINS else domain, op_type)


def op_label(domain: str, op_type: str) -> str:
    """`Relu` for an ONNX op, `com.example.MyOp` for another domain's."""
    return op_type if domain in ONNX_DOMAINS else f"{domain}.{op_type}"


def converts(*op_types: str, domain: str = "") -> Callable[[_C], _C]:
    """Registers the decorated function as the converter of these ONNX ops."""

    def register(function: _C) -> _C:
        for op_type in op_types:
            key = op_key(domain, op_type)
            assert key not in CONVERTERS, f"two converters for {op_label(*key)}"
            CONVERTERS[key] = function
        return function

    return register


def load_builtin_converters() -> dict[OpKey, Converter]:
    """xtc's own converters (importing the category modules registers them)."""
    from xtc.frontend.converters import (  # noqa: F401
        composed,
        control,
        detection,
        elementwise,
        image,
        ml,
        nn,
        quantize,
        random,
        recurrent,
        reduce,
        sequence,
        signal,
        strings,
        tensor,
        text,
        training,
    )

    return CONVERTERS


@dataclass(frozen=True)
class SequenceValue:
    """An ONNX sequence, resolved at import: the values of its tensors, in
    order (frontend/converters/sequence.py); `element` their element type
    (that of SequenceEmpty's dtype for an empty one)."""

    items: tuple[SSAValue, ...]
    element: Attribute


@dataclass(frozen=True)
class AbsentValue:
    """An ONNX optional without a value (Optional with no input, or an
    optional graph input given as None), resolved at import;
    `type_proto` is its declared optional type when known."""

    type_proto: onnx.TypeProto | None = None


@dataclass(frozen=True, eq=False)
class StringValue:
    """An ONNX string tensor, resolved at import: `array` holds Python str
    objects (dtype object). xtc has no string buffers at run time: a string
    graph input is specialized on its value, the string ops compute at
    import (frontend/converters/strings.py), and a string graph output is
    returned from this value (frontend/structured.py)."""

    array: np.ndarray


Value = SSAValue | SequenceValue | AbsentValue | StringValue
"""What an ONNX name stands for at import."""


class Importer:
    """State shared by the nodes of one model: the block ops go into, the
    values by ONNX name, and the numpy values of the constants."""

    def __init__(
        self,
        block: Block,
        opset: int,
        interpreter: Interpreter,
        domain_versions: Mapping[str, int] | None = None,
        control_regions: bool = True,
    ) -> None:
        self.block = block
        self.control_regions = control_regions
        """Whether control flow decided at run time becomes graph.if and
        graph.loop; else its conditions and trip counts must be constants
        (inputs given at run time are specialized on)."""
        self.opset = opset
        self.domain_versions = dict(domain_versions or {})
        self.interpreter = interpreter
        self.values: dict[str, Value] = {}
        self.constants: dict[SSAValue, np.ndarray] = {}

    def add_constant(self, array: np.ndarray, name: str, location: str) -> SSAValue:
        op = ConstantOp.from_array(array, name)
        op.location = NameLoc(StringAttr(location), NoneAttr())
        self.block.add_op(op)
        self.constants[op.output] = op.view()  # the op's own data, not a second copy
        op.output.name_hint = ssa_name(name)
        return op.output


class Node:
    """One ONNX node being converted."""

    def __init__(
        self, importer: Importer, proto: onnx.NodeProto, index: int, scope: str = ""
    ) -> None:
        self.importer = importer
        self.proto = proto
        self.op_type = proto.op_type
        self.domain = op_key(proto.domain, proto.op_type)[0]
        self.name = scope + (proto.name or f"{proto.op_type}_{index}")
        """The node's name, after the path of the subgraph it was inlined from
        (`Loop_0/iteration 2/`)."""
        self.opset = importer.opset
        self.domain_version = importer.domain_versions.get(self.domain, importer.opset)
        """The version of the node's domain the model imports (the opset for ONNX's)."""
        self._attrs = {a.name: a for a in proto.attribute}

    # -- inputs ---------------------------------------------------------------

    @property
    def num_inputs(self) -> int:
        """The number of inputs given, trailing empty ones not counted."""
        names = list(self.proto.input)
        while names and not names[-1]:
            names.pop()
        return len(names)

    def has_input(self, i: int) -> bool:
        return i < len(self.proto.input) and bool(self.proto.input[i])

    def input(self, i: int) -> SSAValue:
        value = self.value(i)
        if isinstance(value, SequenceValue):
            self.fail(f"input {i} is a sequence, where a tensor is expected")
        if isinstance(value, AbsentValue):
            self.fail(f"input {i} is an optional without a value, where a tensor is expected")
        if isinstance(value, StringValue):
            self.fail(
                f"input {i} holds strings, which xtc computes at import in its string ops "
                "only (StringConcat, StringSplit, StringNormalizer, RegexFullMatch, Equal)"
            )
        return value

    def value(self, i: int) -> Value:
        """Input `i`, a tensor or a sequence."""
        if not self.has_input(i):
            self.fail(f"input {i} is required")
        return self.importer.values[self.proto.input[i]]

    def sequence(self, i: int) -> SequenceValue:
        value = self.value(i)
        if not isinstance(value, SequenceValue):
            self.fail(f"input {i} is not a sequence, where a sequence is expected")
        return value

    def strings(self, i: int) -> np.ndarray:
        """Input `i`, a string tensor known at import (str objects)."""
        value = self.value(i)
        if not isinstance(value, StringValue):
            self.fail(f"input {i} must hold strings")
        return value.array

    def optional_input(self, i: int) -> SSAValue | None:
        return self.input(i) if self.has_input(i) else None

    def inputs(self) -> list[SSAValue]:
        return [self.input(i) for i in range(self.num_inputs)]

    def const(self, i: int) -> np.ndarray | None:
        """The input's value when it is a constant, else None."""
        if not self.has_input(i):
            return None
        return self.importer.constants.get(self.input(i))

    def require_const(self, i: int, what: str) -> np.ndarray:
        value = self.const(i)
        if value is None:
            self.fail_not_constant(i, f"{what} (input {i})", "xtc compiles static shapes")
        return value

    def fail_not_constant(self, i: int, what: str, why: str) -> NoReturn:
        """Fails with NeedsConstantError: `what` must be a constant, `why`."""
        raise NeedsConstantError(
            f"{op_label(self.domain, self.op_type)} node '{self.name}' (opset {self.opset}): "
            f"{what} must be a constant: {why}",
            self.proto.input[i],
        )

    def shape(self, i: int) -> tuple[int, ...]:
        return shape_of(self.input(i).type)

    def dtype(self, i: int) -> np.dtype[Any]:
        return numpy_dtype(elem(self.input(i).type))

    # -- attributes -----------------------------------------------------------

    def has_attr(self, name: str) -> bool:
        return name in self._attrs

    def attr(self, name: str, default: Any = None) -> Any:
        """The attribute's Python value (ints, floats, strings as str, tensors
        as numpy arrays, lists of those), or `default` when absent."""
        if name not in self._attrs:
            return default
        value = helper.get_attribute_value(self._attrs[name])
        if isinstance(value, bytes):
            return value.decode("utf-8")
        if isinstance(value, onnx.TensorProto):
            return numpy_helper.to_array(value)
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode("utf-8") for v in value]
        return value

    # -- building -------------------------------------------------------------

    def emit(
        self,
        op_class: type[GraphOp],
        operands: Sequence[SSAValue],
        props: Mapping[str, Attribute] | None = None,
        fold: bool = True,
    ) -> list[SSAValue]:
        """Builds the op (result types inferred) and returns its results; an op
        whose operands are all constants is evaluated and becomes constants,
        unless `fold` is false (the op is kept for a graph pass to see)."""
        try:
            op = op_class.build_inferred(list(operands), props)
        except ShapeError as e:
            self.fail(str(e))
        constants = self.importer.constants
        if fold and operands and all(v in constants for v in operands):
            try:
                values = self.importer.interpreter.run_op(op, tuple(constants[v] for v in operands))
            except RunTimeFault:
                values = None  # it faults on these constants: kept, to fail at run time
            if values is not None:
                op.drop_all_references()
                return [
                    self.constant(np.asarray(v, dtype=numpy_dtype(elem(t))))
                    for v, t in zip(values, op.result_types, strict=True)
                ]
        op.location = NameLoc(StringAttr(self.name), NoneAttr())
        self.importer.block.add_op(op)
        return list(op.results)

    def emit1(
        self,
        op_class: type[GraphOp],
        operands: Sequence[SSAValue],
        props: Mapping[str, Attribute] | None = None,
        fold: bool = True,
    ) -> SSAValue:
        """`emit` for an op with one result."""
        return self.emit(op_class, operands, props, fold)[0]

    def constant(self, array: np.ndarray | float | int, dtype: Any = None) -> SSAValue:
        """A constant value created for this node."""
        value = np.asarray(array, dtype=dtype)
        return self.importer.add_constant(value, f"{self.name}_const", self.name)

    def fail(self, message: str) -> NoReturn:
        raise OnnxImportError(
            f"{op_label(self.domain, self.op_type)} node '{self.name}' (opset {self.opset}): "
            + message
        )

    def type_str(self, i: int) -> str:
        return type_str(self.input(i).type)

    # -- subgraphs --------------------------------------------------------------

    def inline(self, graph: onnx.GraphProto, inputs: Sequence[Value], at: str) -> list[Value]:
        """The outputs of subgraph `graph` (an If branch, a Loop or Scan body)
        on `inputs`: its nodes converted here, in a scope where its input
        names are bound to `inputs` and the enclosing graphs' names stay
        visible; `at` names the place in the node's errors ("iteration 2")."""
        if len(graph.input) != len(inputs):
            self.fail(
                f"its subgraph '{graph.name}' takes {len(graph.input)} inputs, not {len(inputs)}"
            )
        importer = self.importer
        outer = importer.values
        scope = dict(outer)
        scope.update((i.name, v) for i, v in zip(graph.input, inputs, strict=True))
        path = f"{self.name}/{at}/"
        importer.values = scope
        try:
            for tensor in graph.initializer:
                scope[tensor.name] = importer.add_constant(
                    numpy_helper.to_array(tensor), tensor.name, path + tensor.name
                )
            for index, proto in enumerate(graph.node):
                convert_node(importer, proto, index, path)
        finally:
            importer.values = outer
        missing = [o.name for o in graph.output if o.name not in scope]
        if missing:
            self.fail(f"its subgraph '{graph.name}' does not produce {missing}")
        return [scope[o.name] for o in graph.output]

    def apply(
        self, op_type: str, inputs: Sequence[SSAValue], outputs: int = 1, **attrs: Any
    ) -> list[SSAValue]:
        """The outputs of ONNX op `op_type` on `inputs` (its converter run on
        a node made here), for converters built from other ops."""
        names = [f"{self.name}/{op_type}/in{i}" for i in range(len(inputs))]
        results = [f"{self.name}/{op_type}/out{i}" for i in range(outputs)]
        proto = helper.make_node(op_type, names, results, name=f"{self.name}/{op_type}", **attrs)
        importer = self.importer
        outer = importer.values
        importer.values = {**outer, **dict(zip(names, inputs, strict=True))}
        try:
            convert_node(importer, proto, 0)
            return [importer.values[r] for r in results]
        finally:
            importer.values = outer


def convert_node(importer: Importer, proto: onnx.NodeProto, index: int, scope: str = "") -> None:
    """Converts one ONNX node: its outputs' values bound to their names in
    `importer.values`."""
    node = Node(importer, proto, index, scope)
    missing = [n for n in proto.input if n and n not in importer.values]
    if missing:
        node.fail(f"uses {missing}, which no node or input defines before it")
    converter = CONVERTERS.get(op_key(proto.domain, proto.op_type))
    if converter is None:
        node.fail("is not supported")
    produced = list(converter(node))
    for name, value in zip(proto.output, produced, strict=False):
        if not name:
            continue
        if value is None:
            node.fail(f"output '{name}' is not supported")
        importer.values[name] = value
        if isinstance(value, SSAValue) and value.name_hint is None:
            value.name_hint = ssa_name(name)
    if len(proto.output) > len(produced) and any(proto.output[len(produced) :]):
        node.fail(f"produces {len(proto.output)} outputs; xtc supports the first {len(produced)}")


def ssa_name(name: str) -> str | None:
    """An ONNX value name as an SSA name hint, when it is a valid one."""
    cleaned = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        return None
    return cleaned


def operation_of(value: SSAValue) -> Operation | None:
    owner = value.owner
    return owner if isinstance(owner, Operation) else None
