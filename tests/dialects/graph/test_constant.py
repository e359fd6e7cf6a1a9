import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp

from xtc import interp
from xtc.dialects.graph.base import ShapeError
from xtc.dialects.graph.constant import (
    INLINE_LIMIT,
    ConstantOp,
    array_from_attr,
    attr_from_array,
)
from xtc.testing.graph_op import check_roundtrip
from xtc.driver.textual_ir import module_to_text, parse_module

DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_]


def constant_module(array: np.ndarray, name: str = "w") -> ModuleOp:
    op = ConstantOp.from_array(array, name)
    func = FuncOp("main", ([], [op.output.type]))
    func.body.block.add_ops([op, ReturnOp(op)])
    return ModuleOp([func])


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(DTYPES).flatmap(
        lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, max_side=6))
    )
)
def test_array_survives_attribute_text_and_interpreter(array: np.ndarray) -> None:
    attr = attr_from_array(array, "w")
    if array.size > INLINE_LIMIT:
        assert isinstance(attr, DenseResourceAttr)
    if array.size <= INLINE_LIMIT and array.dtype.kind != "f":
        assert isinstance(attr, DenseIntOrFPElementsAttr)
    np.testing.assert_array_equal(array_from_attr(attr), array)
    module = constant_module(array)
    check_roundtrip(module)
    reparsed = parse_module(module_to_text(module))
    (got,) = interp.run(reparsed, [])
    assert got.dtype == array.dtype and got.shape == array.shape
    np.testing.assert_array_equal(got, array)


def test_same_data_same_name_reuses_the_key() -> None:
    data = np.linspace(0, 1, 40, dtype=np.float32)
    a = attr_from_array(data, "reused")
    b = attr_from_array(data.copy(), "reused")
    c = attr_from_array(data + 1, "reused")
    assert isinstance(a, DenseResourceAttr) and a == b
    assert c != a
    np.testing.assert_array_equal(array_from_attr(c), data + 1)


def test_blob_keys_are_unique_and_survive_a_second_parse() -> None:
    a = constant_module(np.arange(32, dtype=np.float32), "same")
    b = constant_module(np.arange(32, dtype=np.float32) * 2, "same")
    text_a, text_b = module_to_text(a), module_to_text(b)
    assert "dense_resource<same>" in text_a and "dense_resource<same_0>" in text_b
    for text in (text_a, text_a, text_b):
        (got,) = interp.run(parse_module(text), [])
        expected = np.arange(32) * (2 if text is text_b else 1)
        np.testing.assert_array_equal(got, expected)


def test_splat_dense_expands_to_the_full_shape() -> None:
    text = """
    func.func @main() -> tensor<2x3xi32> {
      %0 = graph.constant dense<7> : tensor<2x3xi32>
      func.return %0 : tensor<2x3xi32>
    }"""
    (got,) = interp.run(parse_module(text), [])
    np.testing.assert_array_equal(got, np.full((2, 3), 7, np.int32))


def test_missing_blob_is_reported_by_name() -> None:
    text = """
    func.func @main() -> tensor<2x3xf32> {
      %0 = graph.constant dense_resource<nowhere_to_be_found> : tensor<2x3xf32>
      func.return %0 : tensor<2x3xf32>
    }"""
    with pytest.raises(ShapeError, match="nowhere_to_be_found"):
        interp.run(parse_module(text), [])
