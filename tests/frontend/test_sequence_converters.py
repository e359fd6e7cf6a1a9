"""ONNX sequences resolved at import (frontend/converters/sequence.py)
against onnxruntime: models whose inputs and outputs are tensors and that
build, edit, split, map and concatenate sequences inside, a sequence output
(flattened); and the messages where a sequence meets what xtc cannot do
with one."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.onnx import OnnxImportError, import_model

RNG = np.random.default_rng(11)


def model(nodes: list[onnx.NodeProto], constants: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 4])],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def check(m: onnx.ModelProto) -> None:
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    session = onnxruntime.InferenceSession(
        m.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = session.run(None, {"x": x})
    for got in (
        specializing_model(m, "interp").run({"x": x}),
        xtc.compile(m, cache=False).run({"x": x}),
    ):
        np.testing.assert_allclose(np.asarray(got[0]), want, rtol=1e-6)


def i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def test_split_edit_and_concatenate_a_sequence() -> None:
    """x split in rows of 2, 1, 3; the second erased, x's first row
    inserted first; concatenated along 0, plus the sequence's length."""
    nodes = [
        helper.make_node("SplitToSequence", ["x", "split"], ["s"], axis=0),
        helper.make_node("SequenceErase", ["s", "one"], ["e"]),
        helper.make_node("Slice", ["x", "zero", "one", "zero"], ["row"]),
        helper.make_node("SequenceInsert", ["e", "row", "zero"], ["i"]),
        helper.make_node("ConcatFromSequence", ["i"], ["c"], axis=0),
        helper.make_node("SequenceLength", ["i"], ["n"]),
        helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["c", "nf"], ["y"]),
    ]
    check(model(nodes, {"split": i64(2, 1, 3), "one": i64(1), "zero": i64(0)}))


def test_sequence_map_and_stack() -> None:
    """Each row of x (split without keepdims) doubled by SequenceMap, then
    stacked on a new axis 1; the last element read with SequenceAt."""
    body = helper.make_graph(
        [helper.make_node("Add", ["r", "r"], ["d"])],
        "double",
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("d", TensorProto.FLOAT, [4])],
    )
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
        helper.make_node("SequenceMap", ["s"], ["m"], body=body),
        helper.make_node("ConcatFromSequence", ["m"], ["stacked"], axis=1, new_axis=1),
        helper.make_node("SequenceAt", ["m", "last"], ["tail"]),
        helper.make_node("Add", ["stacked", "tail_col"], ["y"]),
        helper.make_node("Unsqueeze", ["tail", "one"], ["tail_col"]),
    ]
    nodes = [nodes[0], nodes[1], nodes[2], nodes[3], nodes[5], nodes[4]]
    check(model(nodes, {"last": i64(-1), "one": i64(1)}))


def test_a_sequence_where_a_tensor_is_expected_is_refused() -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    with pytest.raises(OnnxImportError, match="Relu node .*input 0 is a sequence, where a tensor"):
        import_model(model(nodes, {}))


def test_a_sequence_output_is_flattened_by_compile_and_regrouped_by_the_runner() -> None:
    nodes = [
        helper.make_node("Neg", ["x"], ["n"]),
        helper.make_node("SequenceConstruct", ["x", "n"], ["y"]),
    ]
    m = model(nodes, {})
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    assert 'graph.name = "y[1]"' in str(import_model(m))
    flat = xtc.compile(m, cache=False).run({"x": x})
    ((first, second),) = specializing_model(m, "interp").run({"x": x})
    for got in (flat, [first, second]):
        np.testing.assert_array_equal(got[0], x)
        np.testing.assert_array_equal(got[1], -x)


def test_a_position_out_of_range_is_refused() -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
        helper.make_node("SequenceAt", ["s", "five"], ["y"]),
    ]
    with pytest.raises(OnnxImportError, match="position 5 is out of range for a sequence of 2"):
        import_model(model(nodes, {"five": i64(5)}))
