"""`graph.constant` and the conversion between numpy arrays and the attributes
that hold constant tensors.

Large tensors (weights) are `dense_resource<name>` blobs, kept in the file's
`{-# dialect_resources ... #-}` section in MLIR's blob format (a little-endian
u32 alignment, then the raw bytes, hex-encoded); small ones are inline
`dense<...>`. Both print and parse as MLIR does. The graph dialect reads
numpy here because constant data is part of the IR.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    BFloat16Type,
    Builtin,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike

from xtc.dialects.graph.base import GraphOp, OpPattern, Props, ShapeError, type_str

INLINE_LIMIT = 16
"""Constants with at most this many elements are printed inline as `dense<>`."""

ConstantAttr = DenseIntOrFPElementsAttr | DenseResourceAttr


def numpy_dtype(element_type: Attribute) -> np.dtype[np.generic]:
    """The numpy dtype of a tensor element type (bf16 is widened to f32)."""
    match element_type:
        case Float16Type():
            return np.dtype(np.float16)
        case Float32Type() | BFloat16Type():
            return np.dtype(np.float32)
        case Float64Type():
            return np.dtype(np.float64)
        case IntegerType():
            width = element_type.width.data
            if width == 1:
                return np.dtype(np.bool_)
            if element_type.signedness.data == Signedness.UNSIGNED:
                return np.dtype(f"uint{width}")
            return np.dtype(f"int{width}")
        case _:
            raise ShapeError(f"element type {element_type} has no numpy dtype")


def element_type_of(dtype: np.dtype[np.generic] | type) -> Attribute:
    """The tensor element type of a numpy dtype."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return IntegerType(1)
    if dt.kind == "f" and dt.itemsize in (2, 4, 8):
        return {2: Float16Type(), 4: Float32Type(), 8: Float64Type()}[dt.itemsize]
    if dt.kind in "iu":
        signedness = Signedness.UNSIGNED if dt.kind == "u" else Signedness.SIGNLESS
        return IntegerType(dt.itemsize * 8, signedness)
    raise ShapeError(f"numpy dtype {dt} has no tensor element type")


def _blob_storage() -> OpAsmDialectInterface:
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None
    return interface


def attr_from_array(array: np.ndarray, name: str = "blob") -> ConstantAttr:
    """A constant attribute holding `array`: inline when small, else a blob
    registered under a unique key derived from `name`."""
    array = np.asarray(array).copy(order="C")
    element_type = element_type_of(array.dtype)
    tensor_type = TensorType(element_type, list(array.shape))
    if array.size <= INLINE_LIMIT:
        data = array.astype(np.uint8) if array.dtype == np.bool_ else array
        inline = DenseIntOrFPElementsAttr(
            cast(TensorType[IntegerType], tensor_type), BytesAttr(data.tobytes())
        )
        # xDSL 0.74 prints a float that its decimal form cannot hold exactly
        # (inf, nan, some large values) as hex, and reads hex back as an
        # integer value: such data goes to a blob, which is exact.
        if "0x" not in str(inline):
            return inline
    storage = _blob_storage()
    alignment = max(array.dtype.itemsize, 1).to_bytes(4, "little")
    blob = "0x" + (alignment + array.tobytes()).hex().upper()
    key = _sanitize(name)
    # The same data under the same name reuses its key, so building the same
    # module twice in one process prints the same text; other data gets a
    # fresh key (`name_0`, `name_1`, ...).
    if storage.lookup(key) != blob:
        key = storage.declare_resource(key)
        storage.parse_resource(key, blob)
    return DenseResourceAttr.from_params(key, tensor_type)


def array_from_attr(attr: Attribute) -> np.ndarray:
    """The numpy array a constant attribute holds (a fresh, writable copy)."""
    if isinstance(attr, DenseIntOrFPElementsAttr):
        tensor_type = cast(TensorType[Attribute], attr.type)
        dtype = numpy_dtype(tensor_type.get_element_type())
        shape = tuple(tensor_type.get_shape())
        raw = np.frombuffer(attr.data.data, dtype=_storage_dtype(dtype))
        values = raw.astype(dtype) if dtype == np.bool_ else raw
        if values.size == 1 and int(np.prod(shape)) != 1:
            return np.full(shape, values[0], dtype=dtype)
        return values.reshape(shape).copy()
    if isinstance(attr, DenseResourceAttr):
        tensor_type = cast(TensorType[Attribute], attr.type)
        dtype = numpy_dtype(tensor_type.get_element_type())
        shape = tuple(tensor_type.get_shape())
        key = attr.resource_handle.data
        blob = _blob_storage().lookup(key)
        if not blob:
            raise ShapeError(f"dense_resource<{key}> has no data in the file")
        raw = bytes.fromhex(blob[2:])[4:]
        values = np.frombuffer(raw, dtype=_storage_dtype(dtype))
        if values.size != int(np.prod(shape)):
            raise ShapeError(
                f"dense_resource<{key}> holds {values.size} elements, "
                f"{type_str(tensor_type)} needs {int(np.prod(shape))}"
            )
        return values.astype(dtype).reshape(shape).copy()
    raise ShapeError(f"{attr} is not a constant tensor attribute")


def _check_blob_size(op_name: str, attr: DenseResourceAttr) -> None:
    """A blob that is present must hold exactly the tensor's bytes."""
    blob = _blob_storage().lookup(attr.resource_handle.data)
    if not blob:
        return
    tensor_type = cast(TensorType[Attribute], attr.type)
    itemsize = _storage_dtype(numpy_dtype(tensor_type.get_element_type())).itemsize
    expected = itemsize * int(np.prod(tensor_type.get_shape()))
    actual = (len(blob) - 2) // 2 - 4
    if actual != expected:
        raise ShapeError(
            f"{op_name}: dense_resource<{attr.resource_handle.data}> holds {actual} bytes, "
            f"{type_str(tensor_type)} needs {expected}"
        )


def _storage_dtype(dtype: np.dtype[np.generic]) -> np.dtype[np.generic]:
    return np.dtype(np.uint8) if dtype == np.bool_ else dtype


def _sanitize(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"_{cleaned}"


@irdl_op_definition
class ConstantOp(GraphOp):
    """A constant tensor: `%w = graph.constant dense_resource<w> : tensor<...>`."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.OPAQUE

    name = "graph.constant"

    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    output = result_def(AnyTensorTypeConstr)

    traits = traits_def(ConstantLike())

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        value = props.get("value")
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            raise ShapeError(f"{cls.name}: 'value' must be dense<...> or dense_resource<...>")
        if not isinstance(value.type, TensorType):
            raise ShapeError(f"{cls.name}: the value's type {value.type} is not a tensor")
        if isinstance(value, DenseResourceAttr):
            _check_blob_size(cls.name, value)
        return [value.type]

    @staticmethod
    def from_array(array: np.ndarray, name: str = "blob") -> ConstantOp:
        return ConstantOp.build_inferred([], {"value": attr_from_array(array, name)})

    def to_array(self) -> np.ndarray:
        return array_from_attr(self.value)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            parser.raise_error(
                "expected dense<...> or dense_resource<...> constant", pos, parser.pos
            )
        try:
            return cls.build_inferred([], {"value": value})
        except ShapeError as e:
            parser.raise_error(str(e), pos, parser.pos)
