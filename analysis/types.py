"""The memory an element type takes: one answer for the schedule passes,
the lowering and the runtime."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute

INDEX_BYTES = 8
"""An index is lowered to i64 (xtc targets 64-bit hosts)."""


class ElementSizeError(ValueError):
    """An element type with no byte size in a buffer (a vector, f80, ...)."""

    def __init__(self, element: Attribute) -> None:
        super().__init__(
            f"no byte size for element type {element}: only integers, index, "
            "f16, bf16, f32, f64, the float8 types and f4E2M1FN are laid out in buffers"
        )
        self.element = element


def element_bytes(element: Attribute) -> int:
    """Bytes one element of this type takes in a buffer: an integer its bits
    rounded up to whole bytes (i1 and i4 take one), index 8, f16 and bf16 2,
    f32 4, f64 8, the float8 types and f4E2M1FN one (f4 in the low bits).
    Raises ElementSizeError for any other type."""
    match element:
        case IndexType():
            return INDEX_BYTES
        case IntegerType():
            return max(1, (element.width.data + 7) // 8)
        case Float16Type() | BFloat16Type():
            return 2
        case (
            Float8E4M3FNType()
            | Float8E4M3FNUZType()
            | Float8E5M2Type()
            | Float8E5M2FNUZType()
            | Float8E8M0FNUType()
            | Float4E2M1FNType()
        ):
            return 1
        case Float32Type():
            return 4
        case Float64Type():
            return 8
        case _:
            raise ElementSizeError(element)
