"""ONNX's own backend test runner drives xtc through xtc.driver.onnx_backend,
compiled (device "CPU") and on the interpreter (device "INTERP")."""

import unittest

import numpy as np
import onnx
import onnx.backend.test
import pytest
from onnx import TensorProto, helper

import xtc.driver.onnx_backend as backend
from xtc.runtime.model import CompiledModel


def test_onnx_backend_runner_passes_selected_node_tests_compiled() -> None:
    runner = onnx.backend.test.BackendTest(backend, __name__)
    runner.include(r"^test_(relu|add_bcast|sigmoid|softmax_axis_1)_cpu$")
    result = unittest.TextTestRunner(verbosity=0).run(runner.test_suite)
    assert result.testsRun - len(result.skipped) == 4
    assert not result.failures and not result.errors, result.failures + result.errors


def _relu_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("device", ["CPU", "INTERP", "interp"])
def test_run_model_and_run_node_on_each_device(device: str) -> None:
    node = helper.make_node("Add", ["a", "b"], ["c"])
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones(3, dtype=np.float32)
    (c,) = backend.run_node(node, [a, b], device=device)
    np.testing.assert_array_equal(c, a + b)
    outputs = backend.run_model(_relu_model(), {"x": a - 2}, device=device)
    np.testing.assert_array_equal(outputs.y, np.maximum(a - 2, 0))


def test_cpu_compiles_and_interp_interprets() -> None:
    assert isinstance(backend.prepare(_relu_model()).runnable, CompiledModel)
    assert not isinstance(backend.prepare(_relu_model(), "INTERP").runnable, CompiledModel)


def test_unknown_device_is_refused_with_the_devices_named() -> None:
    assert backend.supports_device("CPU") and backend.supports_device("INTERP")
    assert not backend.supports_device("CUDA")
    with pytest.raises(ValueError, match="no device 'CUDA'.*'CPU' or 'INTERP'"):
        backend.prepare(_relu_model(), "CUDA")
