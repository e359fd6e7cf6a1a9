"""The ONNX importer's driver: names, constants, shapes, opsets, errors."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from xtc import interp
from xtc.dialects.graph.constant import ConstantOp
from xtc.driver.textual_ir import module_to_text, parse_module
from xtc.frontend.onnx import OnnxImportError, import_model, parse_input_shapes
from xtc.interp import entry_function, input_names

XTC = str(Path(sys.executable).parent / "xtc")


def add_relu_model(
    x_shape: list[int | str] | None = None, opset: int = 17, weight_as_input: bool = False
) -> onnx.ModelProto:
    w = numpy_helper.from_array(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5), "layer.w")
    inputs = [helper.make_tensor_value_info("data", TensorProto.FLOAT, x_shape or [4, 5])]
    if weight_as_input:  # old exporters list initializers among the inputs
        inputs.append(helper.make_tensor_value_info("layer.w", TensorProto.FLOAT, [4, 5]))
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["data", "layer.w"], ["sum"], name="add_node"),
            helper.make_node("Relu", ["sum"], ["out"], name="relu_node"),
        ],
        "g",
        inputs,
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_names_constants_and_locations() -> None:
    module = import_model(add_relu_model())
    func = entry_function(module)
    assert input_names(func) == ["data"]
    assert func.res_attrs is not None and func.res_attrs.data[0].data["graph.name"].data == "out"  # type: ignore[union-attr]
    text = module_to_text(module)
    assert "dense_resource<layer.w>" in text
    with_locations = module_to_text(module).count("graph.")  # sanity: ops printed
    assert with_locations >= 3
    locations = {str(op.location) for op in func.walk() if op.name.startswith("graph.")}
    assert {'loc("add_node")', 'loc("relu_node")', 'loc("layer.w")'} <= locations


def test_initializer_listed_as_input_is_a_constant() -> None:
    module = import_model(add_relu_model(weight_as_input=True))
    assert input_names(entry_function(module)) == ["data"]
    assert any(isinstance(op, ConstantOp) for op in module.walk())


def test_outputs_match_onnxruntime() -> None:
    import onnxruntime as ort

    model = add_relu_model()
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"data": x})
    (got,) = interp.run(import_model(model), {"data": x})
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_importing_twice_gives_identical_text_that_reparses() -> None:
    first = module_to_text(import_model(add_relu_model()))
    second = module_to_text(import_model(add_relu_model()))
    assert first == second
    assert module_to_text(parse_module(first)) == first


def test_symbolic_inputs_are_listed_and_fixed_by_input_shapes() -> None:
    model = add_relu_model(["batch", 5])
    with pytest.raises(OnnxImportError, match=r"symbolic.*data \[batch, 5\]"):
        import_model(model)
    module = import_model(model, {"data": [4, 5]})
    assert "tensor<4x5xf32>" in module_to_text(module)
    with pytest.raises(OnnxImportError, match=r"names \['nope'\].*inputs: \['data'\]"):
        import_model(model, {"data": [4, 5], "nope": [1]})


def test_every_unsupported_op_is_listed_at_once() -> None:
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name="ok"),
            helper.make_node("FancyOp", ["a"], ["b"], name="first_bad"),
            helper.make_node("OtherOp", ["b"], ["c"], name="second_bad"),
            helper.make_node("LinearRegressor", ["c"], ["y"], name="ml", domain="ai.onnx.ml"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    with pytest.raises(OnnxImportError) as info:
        import_model(model)
    message = str(info.value)
    assert "opset 17" in message and "3 unsupported nodes" in message
    for part in [
        "FancyOp (node 'first_bad')",
        "OtherOp (node 'second_bad')",
        "ai.onnx.ml.LinearRegressor (node 'ml')",
    ]:
        assert part in message


def test_opsets_newer_than_onnx_knows_are_refused() -> None:
    with pytest.raises(OnnxImportError, match="opset 99; xtc imports opsets 7 to"):
        import_model(add_relu_model(opset=99))


def test_shape_error_names_the_node() -> None:
    model = add_relu_model([2, 5])
    with pytest.raises(
        OnnxImportError,
        match=r"Add node 'add_node' \(opset 17\): .*tensor<2x5xf32> and tensor<4x5xf32>",
    ):
        import_model(model)


def test_parse_input_shapes() -> None:
    assert parse_input_shapes("data:[1,3,224,224] mask:[1, 128]") == {
        "data": [1, 3, 224, 224],
        "mask": [1, 128],
    }
    with pytest.raises(OnnxImportError, match="expected name:"):
        parse_input_shapes("data:1,3")


def test_cli_import(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(add_relu_model(["n", 5]), str(path))
    ok = subprocess.run(
        [XTC, "import", str(path), "--input-shapes", "data:[4,5]", "-o", str(tmp_path / "m.mlir")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert "graph.relu" in (tmp_path / "m.mlir").read_text()
    bad = subprocess.run([XTC, "import", str(path)], capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and bad.stderr.startswith("xtc: error: inputs with symbolic")
    assert "Traceback" not in bad.stderr
    missing = subprocess.run(
        [XTC, "import", str(tmp_path / "none.onnx")], capture_output=True, text=True, check=False
    )
    assert missing.returncode == 1 and "no such file" in missing.stderr


def test_freeze_turns_shape_inputs_into_constants() -> None:
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match=r"Reshape node 'reshape'.*must be a constant"):
        import_model(model)
    module = import_model(model, freeze={"shape": np.array([3, 4], np.int64)})
    assert input_names(entry_function(module)) == ["x"]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    (y,) = interp.run(module, {"x": x})
    np.testing.assert_array_equal(y, x.reshape(3, 4))
    with pytest.raises(OnnxImportError, match="dtype int32, the model declares int64"):
        import_model(model, freeze={"shape": np.array([3, 4], np.int32)})
    with pytest.raises(OnnxImportError, match=r"cannot freeze \['nope'\]"):
        import_model(model, freeze={"nope": np.array([1])})
