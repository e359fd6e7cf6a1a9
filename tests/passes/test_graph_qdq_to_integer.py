"""graph-qdq-to-integer on quantize -> dequantize -> MatMul/Conv -> quantize
models (what onnxruntime's quantize_static writes): the products become
i32, and the outputs stay within one quantization step of the float path
and of onnxruntime (which fuses the same chains into integer kernels)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import i32

import xtc
from xtc import interp
from xtc.dialects.graph.base import elem
from xtc.dialects.graph.nn import Conv2dOp, Conv2dU8S8Op, MatmulOp
from xtc.driver.pipelines import apply_pipeline
from xtc.frontend.onnx import import_model
from xtc.interp import entry_function

RNG = np.random.default_rng(3)


def qdq_model(op: str, x_shape: list[int], weight: np.ndarray, axis: int) -> onnx.ModelProto:
    """x -> QuantizeLinear(u8) -> DequantizeLinear -> op(., dequantized i8
    weight, per-channel on `axis`) -> QuantizeLinear(u8)."""
    channels = weight.shape[axis]
    initializers = [
        numpy_helper.from_array(weight, "wq"),
        numpy_helper.from_array(RNG.uniform(0.002, 0.01, channels).astype(np.float32), "ws"),
        numpy_helper.from_array(np.zeros(channels, np.int8), "wz"),
        numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
        numpy_helper.from_array(np.array(128, np.uint8), "xz"),
        numpy_helper.from_array(np.array(0.03, np.float32), "ys"),
        numpy_helper.from_array(np.array(120, np.uint8), "yz"),
    ]
    attributes: dict[str, Any] = {"pads": [1, 1, 1, 1]} if op == "Conv" else {}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=axis),
        helper.make_node(op, ["xd", "wd"], ["y"], **attributes),
        helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("yq", TensorProto.UINT8, None)],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


MODELS = {
    "matmul": lambda: qdq_model(
        "MatMul", [3, 40], RNG.integers(-127, 128, (40, 16)).astype(np.int8), axis=1
    ),
    # 16 output channels: the packed u8 x i8 conv (3 input channels, padded to 4)
    "conv": lambda: qdq_model(
        "Conv", [1, 3, 6, 6], RNG.integers(-127, 128, (16, 3, 3, 3)).astype(np.int8), axis=0
    ),
    # 8 output channels, not a whole block of 16: conv2d on i32 operands
    "conv8": lambda: qdq_model(
        "Conv", [1, 4, 6, 6], RNG.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8), axis=0
    ),
}
PRODUCTS = {"matmul": "graph.matmul", "conv": "graph.conv2d_u8s8", "conv8": "graph.conv2d"}


def integer_products(module: Any) -> list[str]:
    return [
        op.name
        for op in entry_function(module).walk()
        if isinstance(op, MatmulOp | Conv2dOp | Conv2dU8S8Op) and elem(op.results[0].type) == i32
    ]


def within_one_step(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.abs(got.astype(np.int32) - want.astype(np.int32)).max() <= 1


@pytest.mark.parametrize("name", sorted(MODELS))
def test_products_become_integer_and_stay_within_one_step(name: str) -> None:
    model = MODELS[name]()
    x = RNG.standard_normal(
        [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    ).astype(np.float32)
    imported = import_model(model)
    assert integer_products(imported) == []
    rewritten = apply_pipeline(import_model(model), "graph-qdq-to-integer,dce")
    assert integer_products(rewritten) == [PRODUCTS[name]]

    (float_path,) = interp.run(imported, {"x": x})
    (integer_path,) = interp.run(rewritten, {"x": x})
    within_one_step(integer_path, float_path)
    assert len(np.unique(integer_path)) > 10  # a spread of outputs, not one saturated value

    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = session.run(None, {"x": x})
    (native,) = xtc.compile(model, cache=False).run({"x": x})
    within_one_step(native, want)
    np.testing.assert_array_equal(native, integer_path)  # the compiled model took the pass
