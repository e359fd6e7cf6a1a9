"""Shared machinery of the graph dialect: the op base class with result-type
inference, property readers, and shape helpers.

Every graph op declares a class method `infer_types(operand_types, props)` that
computes its result types from its operand types and properties, and raises
`ShapeError` when they are inconsistent. The same method is used by the Python
builders (`Op.build_inferred(...)`) and by the verifier, so a hand-written IR file and
an importer see one set of rules.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from enum import Enum
from types import ModuleType
from typing import ClassVar, Self, cast

from xdsl.dialects.builtin import (
    AnyFloat,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    NameLoc,
    StringAttr,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

Shape = tuple[int, ...]
Props = Mapping[str, Attribute]


class ShapeError(VerifyException):
    """Operand types or properties that no result type is consistent with."""


def type_str(t: Attribute) -> str:
    """`tensor<2x3xf32>` as MLIR prints it, for messages."""
    if isinstance(t, TensorType):
        tt = cast(TensorType[Attribute], t)
        dims = "".join(f"{d}x" for d in tt.get_shape())
        return f"tensor<{dims}{tt.get_element_type()}>"
    return str(t)


def tensor(shape: Sequence[int], element_type: Attribute) -> TensorType[Attribute]:
    return TensorType(element_type, list(shape))


def as_tensor(op_name: str, t: Attribute, what: str) -> TensorType[Attribute]:
    if not isinstance(t, TensorType):
        raise ShapeError(f"{op_name}: {what} must be a ranked tensor, got {t}")
    return cast(TensorType[Attribute], t)


def shape_of(t: Attribute) -> Shape:
    return tuple(cast(TensorType[Attribute], t).get_shape())


def elem(t: Attribute) -> Attribute:
    return cast(TensorType[Attribute], t).get_element_type()


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, AnyFloat)


def is_integer(element_type: Attribute) -> bool:
    return isinstance(element_type, IntegerType)


# ---------------------------------------------------------------------------
# Property constructors and readers. Lists of ints are `array<i64: ...>`,
# single ints `N : i64`, floats `X : f32`, flags `true`/`false`, modes strings.


def ints_attr(values: Sequence[int]) -> DenseArrayBase[IntegerType]:
    return DenseArrayBase.from_list(i64, list(values))


def int_attr(value: int) -> IntegerAttr[IntegerType]:
    return IntegerAttr(value, i64)


def float_attr(value: float) -> FloatAttr[AnyFloat]:
    return FloatAttr(value, f32)


def bool_attr(value: bool) -> BoolAttr:
    return IntegerAttr(int(value), i1)


def str_attr(value: str) -> StringAttr:
    return StringAttr(value)


_MISSING = object()


def _get(props: Props, name: str, default: object) -> Attribute | None:
    if name in props:
        return props[name]
    if default is _MISSING:
        raise ShapeError(f"missing property '{name}'")
    return None


def get_ints(props: Props, name: str, default: Sequence[int] | None = None) -> Shape:
    attr = _get(props, name, _MISSING if default is None else default)
    if attr is None:
        assert default is not None
        return tuple(default)
    if not isinstance(attr, DenseArrayBase):
        raise ShapeError(f"property '{name}' must be array<i64: ...>, got {attr}")
    return tuple(int(v) for v in cast(DenseArrayBase[IntegerType], attr).get_values())


def get_int(props: Props, name: str, default: int | None = None) -> int:
    attr = _get(props, name, _MISSING if default is None else default)
    if attr is None:
        assert default is not None
        return default
    if not isinstance(attr, IntegerAttr):
        raise ShapeError(f"property '{name}' must be an integer, got {attr}")
    return cast(IntegerAttr[IntegerType], attr).value.data


def get_float(props: Props, name: str, default: float | None = None) -> float:
    attr = _get(props, name, _MISSING if default is None else default)
    if attr is None:
        assert default is not None
        return default
    if not isinstance(attr, FloatAttr):
        raise ShapeError(f"property '{name}' must be a float, got {attr}")
    return float(cast(FloatAttr[AnyFloat], attr).value.data)


def get_bool(props: Props, name: str, default: bool | None = None) -> bool:
    attr = _get(props, name, _MISSING if default is None else default)
    if attr is None:
        assert default is not None
        return default
    if not isinstance(attr, IntegerAttr):
        raise ShapeError(f"property '{name}' must be true or false, got {attr}")
    return bool(cast(IntegerAttr[IntegerType], attr).value.data)


def get_str(
    props: Props, name: str, default: str | None = None, choices: Sequence[str] = ()
) -> str:
    attr = _get(props, name, _MISSING if default is None else default)
    if attr is None:
        assert default is not None
        value = default
    elif not isinstance(attr, StringAttr):
        raise ShapeError(f"property '{name}' must be a string, got {attr}")
    else:
        value = attr.data
    if choices and value not in choices:
        raise ShapeError(
            f"property '{name}' is \"{value}\", expected one of "
            + ", ".join(f'"{c}"' for c in choices)
        )
    return value


@functools.cache
def declared_defaults(op_class: type[Operation]) -> Props:
    """The default of each optional property of `op_class`: its `DEFAULTS`
    merged with its bases' (the one place a default is written)."""
    merged: dict[str, Attribute] = {}
    for cls in reversed(op_class.__mro__):
        merged.update(cast(Props, vars(cls).get("DEFAULTS", {})))
    return merged


def with_defaults(op_class: type[Operation], props: Props) -> Props:
    """`props` with the declared default of each property they lack, so the
    readers above need no default of their own."""
    return {**declared_defaults(op_class), **props}


def op_props(op: Operation) -> Props:
    """The op's properties, defaults included (see `with_defaults`)."""
    return with_defaults(type(op), op.properties)


# ---------------------------------------------------------------------------
# Shape helpers shared by several op categories.


def normalize_axis(op_name: str, axis: int, rank: int) -> int:
    """A possibly negative axis as a non-negative one, or a ShapeError."""
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"{op_name}: axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def axis_in_range(op_name: str, axis: int, rank: int, what: str = "axis") -> int:
    """A possibly negative axis of a rank-`rank` tensor as a non-negative one."""
    if not -rank <= axis < rank:
        raise ShapeError(f"{op_name}: {what} {axis} is out of range for rank {rank}")
    return axis % rank


def axes_in_range(op_name: str, axes: Sequence[int], rank: int) -> tuple[int, ...]:
    """Possibly negative, distinct axes as non-negative ones."""
    normalized = tuple(axis_in_range(op_name, a, rank) for a in axes)
    for i, a in enumerate(normalized):
        if a in normalized[:i]:
            listed = "[" + ", ".join(str(x) for x in axes) + "]"
            raise ShapeError(f"{op_name}: axes {listed} name axis {a} more than once")
    return normalized


def broadcast_shapes(op_name: str, *types: Attribute) -> Shape:
    """numpy broadcasting of the shapes of `types`; names all of them on failure."""
    shapes = [shape_of(t) for t in types]
    rank = max(len(s) for s in shapes)
    result: list[int] = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ShapeError(
                f"{op_name}: shapes "
                + " and ".join(type_str(t) for t in types)
                + " are not broadcast-compatible"
            )
        result.append(dims.pop() if dims else 1)
    return tuple(result)


def same_element_type(op_name: str, *types: Attribute) -> Attribute:
    element_types = [elem(t) for t in types]
    if any(e != element_types[0] for e in element_types):
        raise ShapeError(
            f"{op_name}: operand element types differ: " + ", ".join(type_str(t) for t in types)
        )
    return element_types[0]


# ---------------------------------------------------------------------------
# The op base class.


class OpPattern(Enum):
    """How an op's output elements depend on its inputs (TVM's OpPatternKind):
    what graph-fuse-ops may fuse it with."""

    ELEMENTWISE = "elementwise"
    """Each output element from the input elements at the same (broadcast) index."""
    INJECTIVE = "injective"
    """Each output element a copy of one input element, or of a few (reindexing)."""
    REDUCTION = "reduction"
    """Output elements fold many input elements (also softmax, layer norm)."""
    ANCHOR = "anchor"
    """A reduction worth a tuned loop nest whose output takes an elementwise
    epilogue (conv, dense, matmul, pooling): TVM's out-elementwise-fusable."""
    OPAQUE = "opaque"
    """Never fused."""


class GraphOp(IRDLOperation, ABC):
    """A graph op: pure, over tensors, with result types inferred from operands.

    Subclasses implement `infer_types`. The printed form is
    `graph.op %a, %b {props} : (operand types) -> result types`. Every op
    class states how graph-fuse-ops fuses it with `FUSION_KIND` (on the base
    class where a family shares it; `OpPattern.OPAQUE` for never): an op
    that states none is refused when its dialect is collected or registered.
    An optional property's default is written once, in `DEFAULTS`;
    `infer_types` receives the properties with it, and other readers get
    them from `op_props(op)`.
    """

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    FUSION_KIND: ClassVar[OpPattern | None] = None
    """None here only: `defined_ops` and plugin registration refuse it."""
    DEFAULTS: ClassVar[Props] = {}
    """The value of each optional property the op reads when it is absent,
    by property name. Not xDSL's `opt_prop_def(..., default_value)`: that
    would stop printing a property written with its default value, and the
    textual IR would change."""

    @classmethod
    @abstractmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        """The result types for these operand types and properties (which
        hold the declared defaults: call `inferred_types`)."""
        ...

    @classmethod
    def inferred_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        """`infer_types` with the declared defaults of missing properties."""
        return cls.infer_types(operand_types, with_defaults(cls, props))

    @classmethod
    def build_inferred(
        cls,
        operands: Sequence[SSAValue | Operation],
        props: Mapping[str, Attribute] | None = None,
    ) -> Self:
        """Builds the op with its result types inferred (raises ShapeError)."""
        props = dict(props or {})
        values = [SSAValue.get(o) for o in operands]
        try:
            result_types = cls.inferred_types([v.type for v in values], props)
        except ShapeError as e:
            raise ShapeError(f"{cls.name}: {_strip_name(cls.name, e)}") from e
        return cls.create(operands=values, result_types=result_types, properties=props)

    def verify_(self) -> None:
        try:
            expected = type(self).inferred_types([o.type for o in self.operands], self.properties)
        except ShapeError as e:
            raise VerifyException(f"'{self.name}' op {_strip_name(self.name, e)}") from e
        actual = list(self.result_types)
        if expected != actual:
            raise VerifyException(
                f"'{self.name}' op result type "
                + ", ".join(type_str(t) for t in actual)
                + " does not match the type inferred from its operands "
                + ", ".join(type_str(t) for t in expected)
                + " (operands: "
                + ", ".join(type_str(o.type) for o in self.operands)
                + ")"
            )


def missing_fusion_kind(op_class: type[GraphOp]) -> str | None:
    """Why `op_class` may not be registered, when it states no fusion kind."""
    if op_class.FUSION_KIND is not None:
        return None
    return (
        f"{op_class.name} states no fusion kind: set FUSION_KIND on its class "
        "(OpPattern.OPAQUE for an op never fused)"
    )


def defined_ops(module: ModuleType) -> list[type[GraphOp]]:
    """The op classes `module` defines (an `irdl_op_definition` each, not
    its abstract bases nor the ops it imports), in definition order; raises
    TypeError when one states no fusion kind."""
    ops = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, GraphOp)
        and value.__module__ == module.__name__
        and "name" in vars(value)
    ]
    for op in ops:
        if (why := missing_fusion_kind(op)) is not None:
            raise TypeError(why)
    return ops


# ---------------------------------------------------------------------------
# Run-time faults: the messages that native code and the interpreter give.


def op_kind(op: Operation) -> str:
    """The op's kind as ONNX spells it: graph.gather_nd is GatherND."""
    words = op.name.removeprefix("graph.").split("_")
    return "".join("ND" if word == "nd" else word.capitalize() for word in words)


def name_stem(op: Operation) -> str:
    """The op's name as part of a symbol: `relu` for graph.relu,
    `example_channel_shuffle` for a plugin's example.channel_shuffle."""
    return op.name.removeprefix("graph.").replace(".", "_")


def node_label(op: Operation) -> str:
    """How a run-time fault names the op: `Gather node 'g'` when it carries
    the name of the ONNX node it comes from (its location, which the
    importer sets), else `Gather`."""
    location = op.location
    if isinstance(location, NameLoc):
        return f"{op_kind(op)} node '{location.desc.data}'"
    return op_kind(op)


def index_fault(op: Operation, dim: int, axis: int, data_type: Attribute) -> str:
    """The message of an index read from a tensor that is out of range on an
    axis of size `dim`, with `{}` for the index (a `tir.assert` message;
    `.format(index)` gives the text): negative indices count from the end,
    so the range is [-dim, dim)."""
    label = node_label(op).replace("{", "{{").replace("}", "}}")
    return (
        f"{label}: index {{}} is out of range [-{dim}, {dim}) on axis {axis} "
        f"of {type_str(data_type)}"
    )


def division_fault(op: Operation) -> str:
    """The message of an integer Div or Mod by zero (onnxruntime refuses it
    too: x86 traps on it), without a `{}`."""
    label = node_label(op).replace("{", "{{").replace("}", "}}")
    what = "modulo" if op_kind(op) == "Mod" else "division"
    return f"{label}: integer {what} by zero"


def _strip_name(op_name: str, e: Exception) -> str:
    message = str(e)
    prefix = f"{op_name}: "
    return message[len(prefix) :] if message.startswith(prefix) else message
