"""Whole architectures (ResNet-style CNN, BERT-style encoder, stacked LSTM)
imported and interpreted (the LSTM compiled too), compared with onnxruntime
on random inputs."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import xtc
from xtc import interp
from xtc.driver.pipelines import apply_pipeline
from xtc.frontend.onnx import import_model
from xtc.tools.model_builders import bert_encoder, lstm_classifier, resnet_like


def onnxruntime_outputs(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return list(session.run(None, inputs))


def assert_close_to_scale(got: np.ndarray, expected: np.ndarray, rtol: float = 1e-4) -> None:
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("pipeline", ["", "graph-simplify-inference,graph-fold-constants,dce"])
def test_resnet_like_matches_onnxruntime(pipeline: str) -> None:
    model = resnet_like()
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"data": x})
    module = import_model(model)
    if pipeline:
        apply_pipeline(module, pipeline)
        assert "graph.batch_norm" not in str(module)
    (got,) = interp.run(module, {"data": x})
    assert got.shape == (1, 10)
    assert_close_to_scale(got, expected)


def test_bert_encoder_matches_onnxruntime() -> None:
    model = bert_encoder(layers=2)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 16, 32)).astype(np.float32)
    mask = np.ones((1, 16), np.int64)
    mask[0, 12:] = 0
    inputs = {"input": x, "mask": mask}
    (expected,) = onnxruntime_outputs(model, inputs)
    module = import_model(model)
    # The head split's Shape -> Gather -> Concat -> Reshape chain folded at import.
    text = str(module)
    assert "graph.reshape" in text and "Shape" not in text
    (got,) = interp.run(module, inputs)
    assert_close_to_scale(got, expected)


def test_lstm_classifier_matches_onnxruntime_interpreted_and_compiled() -> None:
    model = lstm_classifier(seq=8, features=8, hidden=16, classes=5, batch=2)
    assert [n.op_type for n in model.graph.node].count("LSTM") == 2
    x = np.random.default_rng(2).standard_normal((8, 2, 8)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"input": x})
    assert expected.shape == (2, 5)
    (interpreted,) = interp.run(import_model(model), {"input": x})
    assert_close_to_scale(interpreted, expected)
    (compiled,) = xtc.compile(model).run({"input": x})
    assert_close_to_scale(compiled, expected)


def test_symbolic_batch_is_fixed_by_input_shapes() -> None:
    model = bert_encoder(batch="batch")
    module = import_model(model, {"input": [2, 16, 32], "mask": [2, 16]})
    rng = np.random.default_rng(2)
    inputs = {
        "input": rng.standard_normal((2, 16, 32)).astype(np.float32),
        "mask": np.ones((2, 16), np.int64),
    }
    (expected,) = onnxruntime_outputs(model, inputs)
    (got,) = interp.run(module, inputs)
    assert_close_to_scale(got, expected)


@pytest.mark.parametrize("build", [resnet_like, bert_encoder, lstm_classifier])
def test_built_models_carry_the_oldest_ir_version_of_their_opset(build) -> None:
    """As exporters write: onnxruntime builds older than the installed onnx
    (1.30 refuses IR 14, onnx 1.23's newest) load the bench models."""
    model = build()
    assert model.ir_version == onnx.helper.find_min_ir_version_for(list(model.opset_import))
    assert model.ir_version < onnx.IR_VERSION
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
