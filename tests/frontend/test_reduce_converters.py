"""ONNX reduce-op converters against onnxruntime: axes as an attribute and
as an input (the opset where each op moved it), keepdims,
noop_with_empty_axes, the composed reductions and arg reductions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import helper, numpy_helper

from xtc import interp
from xtc.frontend.onnx import OnnxImportError, import_model

REDUCTIONS = [
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
]


def axes_input_since(op_type: str) -> int:
    return 13 if op_type == "ReduceSum" else 18


def reduce_model(
    op_type: str,
    x: np.ndarray,
    axes: list[int] | None,
    opset: int,
    axes_as_input: bool = False,
    **attrs: Any,
) -> onnx.ModelProto:
    """One reduce node; axes an attribute before the op's input opset, else
    an initializer (or a graph input with `axes_as_input`)."""
    inputs = ["x"]
    initializers = []
    value_infos = [
        helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
    ]
    if axes is not None and opset < axes_input_since(op_type):
        attrs["axes"] = axes
    elif axes is not None:
        inputs.append("axes")
        if axes_as_input:
            value_infos.append(
                helper.make_tensor_value_info("axes", onnx.TensorProto.INT64, [len(axes)])
            )
        else:
            initializers.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
    node = helper.make_node(op_type, inputs, ["y"], name="n", **attrs)
    graph = helper.make_graph(
        [node], "g", value_infos, [helper.make_empty_tensor_value_info("y")], initializers
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def compare(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray], rtol: float = 1e-5) -> None:
    (got,) = interp.run(import_model(model), dict(inputs))
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = session.run(None, dict(inputs))
    assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


def positive(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(np.float32)


@pytest.mark.parametrize("op_type", REDUCTIONS)
@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize(("axes", "keepdims"), [([1], 1), ([0, -1], 0), (None, 1), (None, 0)])
def test_reductions_like_onnxruntime(
    op_type: str, opset: int, axes: list[int] | None, keepdims: int
) -> None:
    x = positive(2, 3, 4)
    compare(reduce_model(op_type, x, axes, opset, keepdims=keepdims), {"x": x})


@pytest.mark.parametrize("op_type", REDUCTIONS)
def test_empty_axes_with_noop_is_the_identity(op_type: str) -> None:
    x = positive(2, 3)
    model = reduce_model(op_type, x, [], 18, noop_with_empty_axes=1)
    module = import_model(model)
    (got,) = interp.run(module, [x])
    np.testing.assert_array_equal(got, x)
    # And without noop, empty axes reduce everything.
    compare(reduce_model(op_type, x, [], 18, keepdims=0), {"x": x})


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceL1", "ReduceSumSquare", "ReduceMax"])
def test_integer_reductions(op_type: str) -> None:
    x = np.random.default_rng(1).integers(-4, 5, (3, 4)).astype(np.int32)
    compare(reduce_model(op_type, x, [1], 18, keepdims=0), {"x": x})


def test_log_sum_exp_is_stable_for_large_and_infinite_inputs() -> None:
    x = np.array([[1000.0, 1000.0], [-np.inf, -np.inf]], np.float32)
    (got,) = interp.run(import_model(reduce_model("ReduceLogSumExp", x, [1], 18)), [x])
    np.testing.assert_allclose(got, [[1000.0 + np.log(2.0)], [-np.inf]])


def test_reduction_axes_must_be_constant() -> None:
    x = positive(2, 3)
    model = reduce_model("ReduceMean", x, [1], 18, axes_as_input=True)
    with pytest.raises(
        OnnxImportError,
        match=r"ReduceMean node 'n' \(opset 18\): axes \(input 1\) must be a constant",
    ):
        import_model(model)


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize(
    "attrs",
    [{}, {"axis": -1, "keepdims": 0}, {"axis": 1, "select_last_index": 1}],
)
def test_arg_reductions_with_ties(op_type: str, attrs: dict[str, int]) -> None:
    x = np.random.default_rng(2).integers(0, 3, (3, 4)).astype(np.float32)
    node = helper.make_node(op_type, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 4])],
        [helper.make_empty_tensor_value_info("y")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    compare(model, {"x": x})


def test_an_empty_axes_input_is_known_even_at_run_time() -> None:
    x = positive(2, 3)
    model = reduce_model("ReduceSum", x, [], 13, axes_as_input=True, keepdims=0)
    inputs = {"x": x, "axes": np.zeros(0, np.int64)}
    (got,) = interp.run(import_model(model), inputs)
    np.testing.assert_allclose(got, x.sum(), rtol=1e-6)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    np.testing.assert_allclose(got, session.run(None, inputs)[0], rtol=1e-6)
