"""Sequence and optional graph inputs and outputs (frontend/structured.py):
a SpecializingModel takes them as lists of arrays or None, specialized on
their layout, and returns them the same way; import_model alone refuses
them in one line."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.frontend.structured import Layout, layout_of, regroup

RNG = np.random.default_rng(5)
PATHS = ["interp", "native"]


def float_sequence(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, TensorProto.FLOAT, None)


def sequence_map_model() -> onnx.ModelProto:
    """ys = [x * t + 1 for x in xs]; also the first item, and the length."""
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["item", "t_in"], ["m"]),
            helper.make_node("Add", ["m", "one"], ["out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("item", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("t_in", TensorProto.FLOAT, None),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.array(1.0, np.float32), "one")],
    )
    nodes = [
        helper.make_node("SequenceMap", ["xs", "t"], ["ys"], body=body),
        helper.make_node("SequenceAt", ["ys", "zero"], ["first"]),
        helper.make_node("SequenceLength", ["xs"], ["n"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [float_sequence("xs"), helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])],
        [
            float_sequence("ys"),
            helper.make_tensor_value_info("first", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
        ],
        [onnx.numpy_helper.from_array(np.array(0, np.int64), "zero")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def assert_same(got: Any, want: Any) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
    else:
        assert got is not None and np.asarray(got).shape == np.asarray(want).shape
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("path", PATHS)
def test_sequence_input_and_output_match_onnxruntime_for_two_lengths(path: str) -> None:
    model = sequence_map_model()
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    runner = specializing_model(model, path)
    t = RNG.standard_normal(3).astype(np.float32)
    for shapes in ([(2, 3), (4, 3), (1, 3)], [(5, 3)]):
        xs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
        want = session.run(None, {"xs": xs, "t": t})
        got = runner.run({"xs": xs, "t": t})
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
    assert len(runner.specializations) == 2


def optional_model() -> onnx.ModelProto:
    """has = OptionalHasElement(o); out = Optional(o) passed through."""
    optional = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    )
    o = helper.make_value_info("o", optional)
    nodes = [
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
        helper.make_node("Identity", ["o"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [o],
        [
            helper.make_tensor_value_info("has", TensorProto.BOOL, []),
            helper.make_value_info("out", optional),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("given", [None, np.array([1.5, -2.0], np.float32)])
def test_optional_input_with_and_without_a_value_matches_onnx_reference(
    path: str, given: np.ndarray | None
) -> None:
    model = optional_model()
    has, out = specializing_model(model, path).run({"o": given})
    if given is None:  # onnx.reference's Identity refuses an empty optional
        assert not has and out is None
        return
    want_has, want_out = ReferenceEvaluator(model).run(None, {"o": given})
    assert has and want_has
    np.testing.assert_array_equal(out, want_out)


def test_import_without_a_layout_refuses_the_sequence_input_by_name() -> None:
    with pytest.raises(OnnxImportError, match="input 'xs' is a sequence: xtc compiles models"):
        import_model(sequence_map_model())


def test_a_layout_of_the_wrong_kind_is_refused() -> None:
    layouts = {"xs": Layout("tensor", ((3,),))}
    with pytest.raises(OnnxImportError, match="input 'xs' is a sequence, given a tensor"):
        import_model(sequence_map_model(), layouts=layouts)


def test_a_sequence_output_is_flattened_and_regrouped() -> None:
    xs = [np.ones((2, 3), np.float32), np.zeros((1, 3), np.float32)]
    layouts = {"xs": layout_of(xs)}
    module = import_model(sequence_map_model(), layouts=layouts)
    text = str(module)
    assert 'graph.name = "xs[1]"' in text and 'graph.name = "ys[1]"' in text
    assert 'graph.output_layout = ["sequence:2", "tensor", "tensor"]' in text
    flat = [np.full(1, v) for v in range(4)]
    grouped = regroup(flat, [Layout.parse("sequence:2"), Layout("absent"), Layout("tensor")])
    assert grouped[0] == [flat[0], flat[1]] and grouped[1] is None and grouped[2] is flat[2]


def split_by_input_model() -> onnx.ModelProto:
    """SplitToSequence with its split sizes given at run time: xtc.compile
    specializes on them."""
    graph = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "sizes"], ["pieces"], axis=0)],
        "split",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
            helper.make_tensor_value_info("sizes", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_sequence_value_info("pieces", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("sizes", [[1, 3], [2, 2]])
def test_xtc_compile_of_a_specialized_model_returns_a_sequence_output_flattened(
    sizes: list[int],
) -> None:
    import xtc

    x = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)
    model = xtc.compile(split_by_input_model(), cache=False)
    got = model.run({"x": x, "sizes": np.array(sizes, np.int64)})
    want = np.split(x, np.cumsum(sizes)[:-1], axis=0)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
