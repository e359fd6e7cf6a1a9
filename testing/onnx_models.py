"""Small ONNX models that several tests build."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def one_node_model(
    op_type: str,
    inputs: Mapping[str, np.ndarray],
    constants: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int = 18,
    outputs: int = 1,
    input_names: Sequence[str] | None = None,
    **attributes: Any,
) -> onnx.ModelProto:
    """One node over graph inputs `inputs` and initializers `constants`
    (by default in that order; `input_names` orders them, "" skipping an
    optional input); its outputs are y0, y1, ..."""
    constants = dict(constants or {})
    names = list(input_names) if input_names is not None else [*inputs, *constants]
    output_names = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op_type, names, output_names, **attributes)
    graph = helper.make_graph(
        [node],
        op_type.lower(),
        [
            helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)
            )
            for n, a in inputs.items()
        ],
        [onnx.ValueInfoProto(name=n) for n in output_names],
        [numpy_helper.from_array(a, n) for n, a in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


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
