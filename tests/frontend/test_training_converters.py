"""Adagrad, Adam and Momentum of ai.onnx.preview.training
(frontend/converters/training.py) against onnx.reference (onnxruntime has
no training ops), on the interpreter and natively."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import xtc
from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.onnx import OnnxImportError, import_model

DOMAIN = "ai.onnx.preview.training"
RNG = np.random.default_rng(17)


def optimizer_model(
    op_type: str, shapes: list[tuple[int, ...]], per_tensor: int, dtype: Any, **attrs: Any
) -> tuple[onnx.ModelProto, list[str]]:
    """One optimizer node on len(shapes) tensors, importing only the
    training domain; and its input names in order."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    groups = "XGVH"[:per_tensor] if per_tensor == 4 else "XGH"
    names = [f"{g}{i}" for g in groups for i in range(len(shapes))]
    tensors = [helper.make_tensor_value_info(n, elem, shapes[int(n[1:])]) for n in names]
    inputs = [
        helper.make_tensor_value_info("R", elem, []),
        helper.make_tensor_value_info("T", TensorProto.INT64, []),
        *tensors,
    ]
    output_names = [f"{n}_new" for n in names if n[0] != "G"]
    outputs = [
        helper.make_tensor_value_info(n, elem, shapes[int(n[1:].split("_")[0])])
        for n in output_names
    ]
    node = helper.make_node(op_type, ["R", "T", *names], output_names, domain=DOMAIN, **attrs)
    graph = helper.make_graph([node], op_type.lower(), inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(DOMAIN, 1)])
    return model, ["R", "T", *names]


def feeds(names: list[str], model: onnx.ModelProto, step: int, dtype: Any) -> dict[str, Any]:
    shapes = {
        i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input
    }
    values: dict[str, Any] = {"R": np.array(0.2, dtype), "T": np.array(step, np.int64)}
    for name in names[2:]:
        sample = RNG.standard_normal(shapes[name])
        # The accumulated squares (H) are not negative.
        values[name] = (np.abs(sample) if name[0] == "H" else sample).astype(dtype)
    return values


def check_against_reference(model: onnx.ModelProto, inputs: dict[str, Any]) -> None:
    expected = ReferenceEvaluator(model).run(None, inputs)
    interpreted = specializing_model(model, "interp").run(inputs)
    native = xtc.compile(model, cache=False).run(inputs)
    for want, got, compiled in zip(expected, interpreted, native, strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(compiled), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("step", [0, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adagrad_matches_the_reference(step: int, dtype: Any) -> None:
    model, names = optimizer_model(
        "Adagrad", [(2, 3), (4,)], 3, dtype, decay_factor=0.3, epsilon=1e-4, norm_coefficient=0.01
    )
    check_against_reference(model, feeds(names, model, step, dtype))


@pytest.mark.parametrize("step", [0, 4])
def test_adam_matches_the_reference_with_and_without_bias_correction(step: int) -> None:
    model, names = optimizer_model(
        "Adam", [(3, 2), (5,)], 4, np.float32, alpha=0.8, beta=0.7, norm_coefficient_post=0.05
    )
    check_against_reference(model, feeds(names, model, step, np.float32))


@pytest.mark.parametrize("mode", ["standard", "nesterov"])
@pytest.mark.parametrize("step", [0, 2])
def test_momentum_matches_the_reference(mode: str, step: int) -> None:
    model, names = optimizer_model(
        "Momentum", [(2, 2, 2)], 3, np.float32, alpha=0.7, beta=0.4, mode=mode, norm_coefficient=0.1
    )
    check_against_reference(model, feeds(names, model, step, np.float32))


def test_momentum_of_an_unknown_mode_is_refused() -> None:
    model, _ = optimizer_model(
        "Momentum", [(2,)], 3, np.float32, alpha=0.7, beta=0.4, mode="heavy", norm_coefficient=0.0
    )
    with pytest.raises(OnnxImportError, match="mode 'heavy' is not one of standard, nesterov"):
        import_model(model)


def test_an_optimizer_with_inputs_not_grouped_by_tensor_is_refused() -> None:
    model, _ = optimizer_model("Adagrad", [(2,)], 3, np.float32)
    model.graph.node[0].input.append("X0")
    with pytest.raises(OnnxImportError, match="takes R, T and 3 inputs per optimized tensor"):
        import_model(model)


def test_a_model_of_an_unknown_domain_alone_is_refused_naming_the_domain() -> None:
    node = helper.make_node("Frobnicate", ["x"], ["y"], domain="com.unknown")
    value = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = helper.make_graph([node], "g", [value], [value])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("com.unknown", 1)])
    with pytest.raises(OnnxImportError, match="no xtc op plugin defines domain 'com.unknown'"):
        import_model(model)


def test_an_onnx_op_in_a_model_importing_no_onnx_opset_is_refused() -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([node], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(DOMAIN, 1)])
    with pytest.raises(OnnxImportError, match="imports no version of the ONNX operator set"):
        import_model(model)
