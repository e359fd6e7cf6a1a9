"""The compiled path end to end: ONNX -> graph -> te -> tir -> LLVM -> JIT,
on whole architectures, compared with onnxruntime; bad inputs refused
before native code runs."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from xtc.frontend.onnx import import_model
from xtc.interp import InterpreterError
from xtc.tools.model_builders import bert_encoder, resnet_like
from xtc.tools.native import NativeModel


def onnxruntime_outputs(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, inputs))


def assert_close_to_scale(got: np.ndarray, expected: np.ndarray, rtol: float = 1e-4) -> None:
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * float(np.abs(expected).max()))


def test_resnet_like_native_matches_onnxruntime() -> None:
    model = resnet_like()
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"data": x})
    native = NativeModel(import_model(model))
    (got,) = native.run({"data": x})
    assert_close_to_scale(got, expected)
    # Running twice gives the same answer (no state left in the buffers).
    np.testing.assert_array_equal(native.run({"data": x})[0], got)


def test_bert_encoder_native_matches_onnxruntime() -> None:
    model = bert_encoder(layers=1)
    rng = np.random.default_rng(1)
    mask = np.ones((1, 16), np.int64)
    mask[0, 10:] = 0
    inputs = {"input": rng.standard_normal((1, 16, 32)).astype(np.float32), "mask": mask}
    (expected,) = onnxruntime_outputs(model, inputs)
    (got,) = NativeModel(import_model(model)).run(inputs)
    assert_close_to_scale(got, expected)


def test_wrong_inputs_are_refused_before_native_code_runs() -> None:
    native = NativeModel(import_model(resnet_like(widths=(4, 8), image=16)))
    with pytest.raises(InterpreterError, match=r"input 'data' has shape \[1, 3, 8, 8\]"):
        native.run({"data": np.zeros((1, 3, 8, 8), np.float32)})
    with pytest.raises(InterpreterError, match="missing"):
        native.run({"image": np.zeros((1, 3, 16, 16), np.float32)})
    with pytest.raises(InterpreterError, match="dtype"):
        native.run({"data": np.zeros((1, 3, 16, 16), np.complex64)})
