"""DFT, STFT and the windows (frontend/converters/signal.py) against numpy's
FFT and the windows' formulas: forward and inverse, complex and real
(one-sided: RFFT, IRFFT), cut or zero-padded to dft_length, along each
signal axis; on the interpreter, and natively for one of each."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc.driver.onnx_backend import specializing_model

RNG = np.random.default_rng(3)


def model(
    op: str, x: np.ndarray | None, constants: dict[str, np.ndarray], opset: int, **attrs: Any
) -> onnx.ModelProto:
    inputs = ["x", *constants] if x is not None else list(constants)
    node = helper.make_node(op, inputs, ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)] if x is not None else [],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run(m: onnx.ModelProto, x: np.ndarray | None, native: bool = False) -> np.ndarray:
    inputs = {"x": x} if x is not None else {}
    if native:
        return np.asarray(xtc.compile(m, cache=False).run(inputs)[0])
    return np.asarray(specializing_model(m, "interp").run(inputs)[0])


def as_pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1).astype(np.float32)


@settings(max_examples=12, deadline=None)
@given(
    axis=st.sampled_from([1, 2, -2]),
    inverse=st.booleans(),
    length=st.sampled_from([None, 4, 9]),
    complex_input=st.booleans(),
)
def test_dft_is_numpys_fft(
    axis: int, inverse: bool, length: int | None, complex_input: bool
) -> None:
    x = RNG.standard_normal((2, 6, 5, 2 if complex_input else 1)).astype(np.float32)
    z = x[..., 0] + (1j * x[..., 1] if complex_input else 0)
    signal_axis = axis if axis >= 0 else axis + 4
    want = (np.fft.ifft if inverse else np.fft.fft)(z, n=length, axis=signal_axis)
    constants = {"dft_length": np.array(length or z.shape[signal_axis], np.int64)}
    constants["axis"] = np.array(axis, np.int64)
    got = run(model("DFT", x, constants, 20, inverse=int(inverse)), x)
    np.testing.assert_allclose(got, as_pairs(want), rtol=1e-4, atol=1e-5)


def test_a_one_sided_dft_and_its_inverse() -> None:
    x = RNG.standard_normal((3, 8, 1)).astype(np.float32)
    spectrum = run(model("DFT", x, {}, 20, onesided=1), x, native=True)
    np.testing.assert_allclose(spectrum, as_pairs(np.fft.rfft(x[..., 0], axis=1)), atol=1e-5)
    back = run(model("DFT", spectrum, {}, 20, onesided=1, inverse=1), spectrum, native=True)
    np.testing.assert_allclose(back[..., 0], x[..., 0], atol=1e-5)


def test_dft_opset_17_takes_its_axis_as_an_attribute() -> None:
    x = RNG.standard_normal((2, 4, 6, 2)).astype(np.float32)
    got = run(model("DFT", x, {}, 17, axis=2), x)
    want = np.fft.fft(x[..., 0] + 1j * x[..., 1], axis=2)
    np.testing.assert_allclose(got, as_pairs(want), rtol=1e-4, atol=1e-5)


def test_stft_frames_windows_and_transforms() -> None:
    x = RNG.standard_normal((2, 20, 1)).astype(np.float32)
    window = np.hanning(8).astype(np.float32)
    constants = {"step": np.array(4, np.int64), "window": window}
    got = run(model("STFT", x, constants, 17), x, native=True)
    frames = np.stack([x[:, f * 4 : f * 4 + 8, 0] * window for f in range(4)], axis=1)
    np.testing.assert_allclose(got, as_pairs(np.fft.rfft(frames, axis=2)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows_follow_their_formulas(op: str, periodic: int) -> None:
    got = run(model(op, None, {"size": np.array(10, np.int64)}, 17, periodic=periodic), None)
    period = 10 if periodic else 9
    angle = 2 * np.pi * np.arange(10) / period
    want = {
        "HannWindow": 0.5 - 0.5 * np.cos(angle),
        "HammingWindow": 25 / 46 - 21 / 46 * np.cos(angle),
        "BlackmanWindow": 0.42 - 0.5 * np.cos(angle) + 0.08 * np.cos(2 * angle),
    }[op]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_a_dft_along_the_component_axis_is_refused() -> None:
    x = RNG.standard_normal((2, 4, 2)).astype(np.float32)
    with pytest.raises(Exception, match="axis 2 is not a signal axis"):
        run(model("DFT", x, {"n": np.array(4, np.int64), "axis": np.array(-1, np.int64)}, 20), x)


@pytest.mark.parametrize(
    ("bins", "dft_length", "rate", "edges", "dtype"),
    [
        (20, 512, 16000, (0.0, 8000.0), TensorProto.FLOAT),
        (13, 400, 22050, (80.0, 7600.0), TensorProto.DOUBLE),
        (40, 64, 8000, (100.0, 4000.0), TensorProto.FLOAT),
    ],
)
def test_mel_weight_matrix_is_onnxruntimes(
    bins: int, dft_length: int, rate: int, edges: tuple[float, float], dtype: int
) -> None:
    """Bins wider and narrower than a spectrogram bin (the last: several
    mel bins share one), f64 output; the case has one setting."""
    constants = {
        "bins": np.array(bins, np.int32),
        "length": np.array(dft_length, np.int32),
        "rate": np.array(rate, np.int32),
        "lower": np.array(edges[0], np.float32),
        "upper": np.array(edges[1], np.float32),
    }
    m = model("MelWeightMatrix", None, constants, 17, output_datatype=dtype)
    got = run(m, None)
    assert got.shape == (dft_length // 2 + 1, bins)
    assert got.dtype == helper.tensor_dtype_to_np_dtype(dtype)
    session = onnxruntime.InferenceSession(m.SerializeToString())
    np.testing.assert_allclose(got, session.run(None, {})[0], rtol=1e-6)
    np.testing.assert_array_equal(run(m, None, native=True), got)


def test_mel_weight_matrix_past_the_nyquist_frequency_is_refused() -> None:
    from xtc.frontend.onnx import OnnxImportError, import_model

    constants = {
        "bins": np.array(8, np.int32),
        "length": np.array(64, np.int32),
        "rate": np.array(8000, np.int32),
        "lower": np.array(0, np.float32),
        "upper": np.array(6000, np.float32),
    }
    with pytest.raises(OnnxImportError, match="past the 33 bins of a DFT of length 64"):
        import_model(model("MelWeightMatrix", None, constants, 17))
