"""ONNX's own backend test runner drives xtc through xtc.onnx_backend."""

import unittest

import numpy as np
import onnx
import onnx.backend.test
from onnx import TensorProto, helper

import xtc.onnx_backend as backend


def test_onnx_backend_runner_passes_selected_node_tests() -> None:
    runner = onnx.backend.test.BackendTest(backend, __name__)
    runner.include(r"^test_(relu|add|add_bcast|sigmoid|abs)_cpu$")
    result = unittest.TextTestRunner(verbosity=0).run(runner.test_suite)
    assert result.testsRun - len(result.skipped) == 5
    assert not result.failures and not result.errors, result.failures + result.errors


def test_run_model_and_run_node() -> None:
    node = helper.make_node("Add", ["a", "b"], ["c"])
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones(3, dtype=np.float32)
    (c,) = backend.run_node(node, [a, b])
    np.testing.assert_array_equal(c, a + b)
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    outputs = backend.run_model(model, {"x": a - 2})
    np.testing.assert_array_equal(outputs.y, np.maximum(a - 2, 0))
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")
