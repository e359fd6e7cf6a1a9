"""`graph.constant` and the conversion between numpy arrays and the attributes
that hold constant tensors.

Large tensors (weights) are `dense_resource<name>` blobs, kept in the file's
`{-# dialect_resources ... #-}` section in MLIR's blob format (a little-endian
u32 alignment, then the raw bytes, hex-encoded); small ones are inline
`dense<...>`. Both print and parse as MLIR does. In memory a blob is one
`bytes` object (dialects/resource_blobs.py), which an array made from the
bytes it views is stored as, without a copy. The graph dialect reads numpy
here because constant data is part of the IR.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
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
from xtc.dialects.resource_blobs import blob_storage

INLINE_LIMIT = 16
"""Constants with at most this many elements are printed inline as `dense<>`."""

ConstantAttr = DenseIntOrFPElementsAttr | DenseResourceAttr


NARROW_DTYPES: dict[Attribute, np.dtype[np.generic]] = {
    BFloat16Type(): np.dtype(ml_dtypes.bfloat16),
    Float8E4M3FNType(): np.dtype(ml_dtypes.float8_e4m3fn),
    Float8E4M3FNUZType(): np.dtype(ml_dtypes.float8_e4m3fnuz),
    Float8E5M2Type(): np.dtype(ml_dtypes.float8_e5m2),
    Float8E5M2FNUZType(): np.dtype(ml_dtypes.float8_e5m2fnuz),
    Float8E8M0FNUType(): np.dtype(ml_dtypes.float8_e8m0fnu),
    Float4E2M1FNType(): np.dtype(ml_dtypes.float4_e2m1fn),
    IntegerType(4): np.dtype(ml_dtypes.int4),
    IntegerType(4, Signedness.UNSIGNED): np.dtype(ml_dtypes.uint4),
    IntegerType(2): np.dtype(ml_dtypes.int2),
    IntegerType(2, Signedness.UNSIGNED): np.dtype(ml_dtypes.uint2),
}
"""The element types numpy lacks, with their ml_dtypes dtype: one element a
byte (bf16 two), the sub-byte integers in the low bits of their byte."""
_NARROW_TYPES = {dtype: t for t, dtype in NARROW_DTYPES.items()}


def numpy_dtype(element_type: Attribute) -> np.dtype[np.generic]:
    """The numpy dtype of a tensor element type (ml_dtypes for bf16, the
    float8 and float4 types and the 4- and 2-bit integers)."""
    narrow = NARROW_DTYPES.get(element_type)
    if narrow is not None:
        return narrow
    match element_type:
        case Float16Type():
            return np.dtype(np.float16)
        case Float32Type():
            return np.dtype(np.float32)
        case Float64Type():
            return np.dtype(np.float64)
        case IntegerType() if element_type.width.data in (1, 8, 16, 32, 64):
            width = element_type.width.data
            if width == 1:
                return np.dtype(np.bool_)
            if element_type.signedness.data == Signedness.UNSIGNED:
                return np.dtype(f"uint{width}")
            return np.dtype(f"int{width}")
        case _:
            raise ShapeError(f"element type {element_type} has no numpy dtype")


def element_type_of(dtype: np.dtype[np.generic] | type) -> Attribute:
    """The tensor element type of a numpy (or ml_dtypes) dtype."""
    dt = np.dtype(dtype)
    if dt in _NARROW_TYPES:
        return _NARROW_TYPES[dt]
    if dt == np.bool_:
        return IntegerType(1)
    if dt.kind == "f" and dt.itemsize in (2, 4, 8):
        return {2: Float16Type(), 4: Float32Type(), 8: Float64Type()}[dt.itemsize]
    if dt.kind in "iu":
        signedness = Signedness.UNSIGNED if dt.kind == "u" else Signedness.SIGNLESS
        return IntegerType(dt.itemsize * 8, signedness)
    raise ShapeError(f"numpy dtype {dt} has no tensor element type")


def attr_from_array(array: np.ndarray, name: str = "blob") -> ConstantAttr:
    """A constant attribute holding `array`: inline when small, else a blob
    registered under a unique key derived from `name`. A blob is the very
    bytes object `array` views when it views a whole one (an ONNX tensor's
    raw data), else one copy of its data."""
    array = np.asarray(array)
    element_type = element_type_of(array.dtype)
    tensor_type = TensorType(element_type, list(array.shape))
    if array.size <= INLINE_LIMIT and array.dtype not in _NARROW_TYPES:
        data = array.astype(np.uint8) if array.dtype == np.bool_ else array
        inline = DenseIntOrFPElementsAttr(
            cast(TensorType[IntegerType], tensor_type), BytesAttr(data.tobytes())
        )
        # xDSL 0.74 prints a float that its decimal form cannot hold exactly
        # (inf, nan, some large values) as hex, and reads hex back as an
        # integer value: such data goes to a blob, which is exact, as do the
        # types whose dense<> xDSL cannot print (NARROW_DTYPES).
        if "0x" not in str(inline):
            return inline
    key = blob_storage().store(_sanitize(name), _bytes_of(array), max(array.dtype.itemsize, 1))
    return DenseResourceAttr.from_params(key, tensor_type)


def _bytes_of(array: np.ndarray) -> bytes:
    """The array's data in C order: the bytes object it views, when it is
    a whole one in that order, else a copy."""
    base: object = array.base
    while isinstance(base, np.ndarray):
        base = cast(object, base.base)
    if (
        isinstance(base, bytes)
        and array.flags.c_contiguous
        and array.dtype.isnative
        and array.nbytes == len(base)
    ):
        return base
    return array.tobytes()


def blob_data(attr: DenseResourceAttr, checked: bool = False) -> bytes:
    """The bytes a dense_resource holds (shared, not copied); `checked`:
    refused unless they are exactly the tensor's."""
    data = blob_storage().data(attr.resource_handle.data)
    if data is None:
        raise ShapeError(f"dense_resource<{attr.resource_handle.data}> has no data in the file")
    if checked:
        _check_blob_size("", attr)
    return data


def array_from_attr(attr: Attribute) -> np.ndarray:
    """The numpy array a constant attribute holds (a fresh, writable copy)."""
    return np.array(array_view(attr))


def array_view(attr: Attribute) -> np.ndarray:
    """The numpy array a constant attribute holds, read-only, viewing the
    attribute's bytes (no copy, but for bool and splat constants)."""
    if isinstance(attr, DenseIntOrFPElementsAttr):
        tensor_type = cast(TensorType[Attribute], attr.type)
        dtype = numpy_dtype(tensor_type.get_element_type())
        shape = tuple(tensor_type.get_shape())
        raw = np.frombuffer(attr.data.data, dtype=_storage_dtype(dtype))
        values = raw.astype(dtype) if dtype == np.bool_ else raw
        if values.size == 1 and int(np.prod(shape)) != 1:
            values = np.full(shape, values[0], dtype=dtype)
        return _read_only(values.reshape(shape))
    if isinstance(attr, DenseResourceAttr):
        tensor_type = cast(TensorType[Attribute], attr.type)
        dtype = numpy_dtype(tensor_type.get_element_type())
        shape = tuple(tensor_type.get_shape())
        values = np.frombuffer(blob_data(attr), dtype=_storage_dtype(dtype))
        if values.size != int(np.prod(shape)):
            raise ShapeError(
                f"dense_resource<{attr.resource_handle.data}> holds {values.size} elements, "
                f"{type_str(tensor_type)} needs {int(np.prod(shape))}"
            )
        values = values.astype(dtype) if dtype == np.bool_ else values
        return _read_only(values.reshape(shape))
    raise ShapeError(f"{attr} is not a constant tensor attribute")


def _check_blob_size(op_name: str, attr: DenseResourceAttr) -> None:
    """A blob that is present must hold exactly the tensor's bytes."""
    data = blob_storage().data(attr.resource_handle.data)
    if data is None:
        return
    tensor_type = cast(TensorType[Attribute], attr.type)
    itemsize = _storage_dtype(numpy_dtype(tensor_type.get_element_type())).itemsize
    expected = itemsize * int(np.prod(tensor_type.get_shape()))
    actual = len(data)
    if actual != expected:
        where = f"{op_name}: " if op_name else ""
        raise ShapeError(
            f"{where}dense_resource<{attr.resource_handle.data}> holds {actual} bytes, "
            f"{type_str(tensor_type)} needs {expected}"
        )


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


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

    def view(self) -> np.ndarray:
        """The value, read-only, without a copy (see array_view)."""
        return array_view(self.value)

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
