"""One answer to "how many bytes does an element take", and a clear error
for a type that has none."""

import pytest
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float16Type,
    Float32Type,
    Float64Type,
    Float80Type,
    IndexType,
    IntegerType,
    VectorType,
    f32,
)
from xdsl.ir import Attribute

from xtc.analysis.types import ElementSizeError, element_bytes


@pytest.mark.parametrize(
    ("element", "size"),
    [
        (IntegerType(1), 1),
        (IntegerType(8), 1),
        (IntegerType(12), 2),
        (IntegerType(32), 4),
        (IntegerType(64), 8),
        (IndexType(), 8),
        (Float16Type(), 2),
        (BFloat16Type(), 2),
        (Float8E4M3FNType(), 1),
        (Float4E2M1FNType(), 1),
        (IntegerType(4), 1),
        (Float32Type(), 4),
        (Float64Type(), 8),
    ],
)
def test_bytes_of_each_laid_out_type(element: Attribute, size: int) -> None:
    assert element_bytes(element) == size


@pytest.mark.parametrize("element", [Float80Type(), VectorType(f32, [4])])
def test_a_type_without_layout_is_an_error_naming_it(element: Attribute) -> None:
    with pytest.raises(ElementSizeError, match=r"^no byte size for element type ") as caught:
        element_bytes(element)
    assert str(element) in str(caught.value)
    assert "\n" not in str(caught.value)
