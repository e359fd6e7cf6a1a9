"""Small ONNX models that several tests build."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper


def reshape_relu_model() -> onnx.ModelProto:
    """relu(reshape(data, shape)): `data` a 2x6 f32 input, `shape` a graph
    input of two int64 elements, so the output's shape depends on a value
    given at run time."""
    graph = helper.make_graph(
        [
            helper.make_node("Reshape", ["data", "shape"], ["r"]),
            helper.make_node("Relu", ["r"], ["out"]),
        ],
        "reshape_relu",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
