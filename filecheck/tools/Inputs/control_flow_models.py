"""Writes the ONNX models of import-control-flow.mlir into the directory
given: if.onnx (an If on an input), loop.onnx (a Loop whose trip count is an
input) and unrolled.onnx (a Loop of a constant trip count of 2)."""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT


def tensor(name: str, shape: list[int], elem: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def save(nodes, inputs, outputs, constants, path: Path) -> None:
    graph = helper.make_graph(
        nodes,
        "g",
        inputs,
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.save(model, path)


def branch(name: str, node: onnx.NodeProto) -> onnx.GraphProto:
    return helper.make_graph(
        [node], name, [], [helper.make_empty_tensor_value_info(node.output[0])]
    )


def body() -> onnx.GraphProto:
    return helper.make_graph(
        [
            helper.make_node("Add", ["x_in", "x_in"], ["x_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            tensor("i", [], TensorProto.INT64),
            tensor("cond_in", [], TensorProto.BOOL),
            tensor("x_in", [3]),
        ],
        [helper.make_empty_tensor_value_info(n) for n in ("cond_out", "x_out")],
    )


def main(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    then = branch("then", helper.make_node("Relu", ["x"], ["a"]))
    other = branch("else", helper.make_node("Neg", ["x"], ["b"]))
    pick = helper.make_node("If", ["c"], ["y"], name="pick", then_branch=then, else_branch=other)
    save(
        [pick],
        [tensor("c", [], TensorProto.BOOL), tensor("x", [3])],
        ["y"],
        {},
        directory / "if.onnx",
    )
    loop = helper.make_node("Loop", ["M", "", "x"], ["y"], name="repeat", body=body())
    save(
        [loop],
        [tensor("M", [], TensorProto.INT64), tensor("x", [3])],
        ["y"],
        {},
        directory / "loop.onnx",
    )
    save(
        [loop], [tensor("x", [3])], ["y"], {"M": np.array(2, np.int64)}, directory / "unrolled.onnx"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
