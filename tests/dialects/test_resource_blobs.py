"""dialects/resource_blobs.py: blobs held as bytes, shared rather than
copied, written as MLIR's hex only when printed, and freed by the scope
that made them once no op refers to them."""

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.utils.exceptions import ParseError

from xtc.dialects.graph.constant import ConstantOp, array_view, attr_from_array
from xtc.dialects.resource_blobs import blob_storage, referenced_blobs
from xtc.driver.textual_ir import module_to_text, parse_module


def blob_key(attr: object) -> str:
    assert isinstance(attr, DenseResourceAttr)
    return attr.resource_handle.data


def constants_module(*ops: ConstantOp) -> ModuleOp:
    func = FuncOp("main", ([], [op.output.type for op in ops]))
    func.body.block.add_ops([*ops, ReturnOp(*ops)])
    return ModuleOp([func])


def test_a_blob_is_the_bytes_of_the_array_and_prints_as_mlir_hex() -> None:
    array = np.arange(24, dtype=np.float32).reshape(4, 6)
    op = ConstantOp.from_array(array, "hex_printed")
    key = blob_key(op.value)
    assert blob_storage().data(key) == array.tobytes()
    expected = "0x04000000" + array.tobytes().hex().upper()
    assert blob_storage().lookup(key) == expected
    text = module_to_text(constants_module(op))
    assert f'{key}: "{expected}"' in text
    np.testing.assert_array_equal(_first_constant(parse_module(text)).view(), array)


def test_an_array_that_views_whole_bytes_is_stored_as_those_bytes() -> None:
    raw = np.arange(32, dtype=np.float32).tobytes()
    viewing = np.frombuffer(raw, np.float32).reshape(4, 8)  # as onnx's to_array gives
    assert blob_storage().data(blob_key(attr_from_array(viewing, "shared"))) is raw
    # a view in another order is copied in C order, its own bytes
    transposed = attr_from_array(viewing.T, "transposed")
    data = blob_storage().data(blob_key(transposed))
    assert data is not raw and data == viewing.T.tobytes()
    np.testing.assert_array_equal(array_view(transposed), viewing.T)


def test_a_view_of_a_constant_is_read_only_and_shares_the_blob() -> None:
    op = ConstantOp.from_array(np.ones((5, 5), np.float32), "viewed")
    view = op.view()
    assert not view.flags.writeable
    assert view.base is not None and np.shares_memory(view, np.frombuffer(_data(op), np.uint8))
    copy = op.to_array()
    copy[0, 0] = 7  # to_array stays a fresh, writable copy
    assert op.view()[0, 0] == 1


def _first_constant(module: ModuleOp) -> ConstantOp:
    op = next(op for op in module.walk() if isinstance(op, ConstantOp))
    return op


def _data(op: ConstantOp) -> bytes:
    data = blob_storage().data(blob_key(op.value))
    assert data is not None
    return data


def test_a_scope_frees_the_blobs_it_made_once_no_op_uses_them() -> None:
    outside = ConstantOp.from_array(np.full((6, 6), 2, np.float32), "made_outside")
    with blob_storage().scope() as scope:
        kept = ConstantOp.from_array(np.full((6, 6), 3, np.float32), "kept")
        dropped = ConstantOp.from_array(np.full((6, 6), 4, np.float32), "dropped")
        module = constants_module(outside, kept, dropped)
        assert referenced_blobs(module) >= {blob_key(kept.value), blob_key(dropped.value)}
        func = module.body.block.first_op
        assert isinstance(func, FuncOp)
        func.body.block.erase_op(func.body.block.last_op)  # the return
        func.body.block.erase_op(dropped)
        func.body.block.add_op(ReturnOp(outside, kept))
        scope.release_unreferenced(module)
        assert blob_storage().data(blob_key(dropped.value)) is None
        assert blob_storage().data(blob_key(kept.value)) is not None
        module.body.block.erase_op(func)
        scope.release_unreferenced(module)
        assert blob_storage().data(blob_key(outside.value)) is not None  # not the scope's
        assert blob_storage().data(blob_key(kept.value)) is None
    with blob_storage().scope() as scope:
        late = ConstantOp.from_array(np.full((6, 6), 5, np.float32), "late")
    assert blob_storage().data(blob_key(late.value)) is None  # the end of a scope frees all
    assert blob_storage().data(blob_key(outside.value)) is not None


@pytest.mark.parametrize(
    ("blob", "message"),
    [("0x0400000G", "is not hexadecimal"), ("0x0400", "shorter than its 4-byte alignment")],
)
def test_a_malformed_blob_is_a_parse_error(blob: str, message: str) -> None:
    text = (
        "func.func @f() -> tensor<1xi8> {\n"
        "  %0 = graph.constant dense_resource<malformed> : tensor<1xi8>\n"
        "  func.return %0 : tensor<1xi8>\n"
        "}\n"
        "{-#\n  dialect_resources: {\n    builtin: {\n"
        f'      malformed: "{blob}"\n'
        "    }\n  }\n#-}\n"
    )
    with pytest.raises(ParseError, match=message):
        parse_module(text)


def test_an_empty_blob_is_data_not_a_missing_one() -> None:
    key = blob_storage().store("empty", b"", 4)
    attr = DenseResourceAttr.from_params(key, TensorType(f32, [0, 3]))
    assert blob_storage().lookup(key) == "0x04000000"
    assert array_view(attr).shape == (0, 3)
    op = ConstantOp.build_inferred([], {"value": attr})
    reparsed = _first_constant(parse_module(module_to_text(constants_module(op))))
    assert reparsed.view().shape == (0, 3)
