"""Math that needs CUDA's libdevice (tanh, log, sin, erf, ... in f16, f32
and f64) builds for CUDA (PTX, and a cubin where ptxas is installed) and
computes on the interpreter device what numpy does. Skipped where
libdevice is not installed (lowering/libdevice.py says where it looks)."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from xtc.driver.cuda import compile_cuda_model
from xtc.lowering.libdevice import find_libdevice
from xtc.runtime.cuda_model import PTX_NAME

pytestmark = pytest.mark.skipif(
    find_libdevice() is None, reason="CUDA's libdevice is not installed"
)

ELEMENT_TYPES = {np.float16: TensorProto.FLOAT16, np.float32: TensorProto.FLOAT,
                 np.float64: TensorProto.DOUBLE}  # fmt: skip


def unary_model(op: str, dtype: type[np.floating], shape: list[int]) -> onnx.ModelProto:
    element = ELEMENT_TYPES[dtype]
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], name=op.lower())],
        op.lower(),
        [helper.make_tensor_value_info("x", element, shape)],
        [helper.make_tensor_value_info("y", element, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x.astype(np.float64))


CASES = [
    ("Tanh", np.float64, np.tanh, 1e-12),
    ("Log", np.float64, np.log, 1e-12),
    ("Exp", np.float64, np.exp, 1e-12),
    ("Sin", np.float32, np.sin, 1e-6),
    ("Erf", np.float64, erf, 1e-12),
    ("Tanh", np.float16, np.tanh, 1e-3),
]


@pytest.mark.parametrize(("op", "dtype", "reference", "rtol"), CASES)
def test_libdevice_math_computes_what_numpy_does(
    op: str, dtype: type[np.floating], reference: object, rtol: float
) -> None:
    x = np.random.default_rng(0).uniform(0.1, 3.0, (4, 33)).astype(dtype)
    model = compile_cuda_model(unary_model(op, dtype, [4, 33]), device="interp")
    assert ".extern" not in (model.directory / PTX_NAME).read_text()  # libdevice inlined
    (got,) = model.run([x])
    assert got.dtype == dtype
    expected = np.asarray(reference(x.astype(np.float64)))  # type: ignore[operator]
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=rtol, atol=rtol)
