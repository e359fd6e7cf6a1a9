"""Shape-determining inputs fed at run time: the model is specialized on
their values, once per distinct value."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from xtc.driver.onnx_backend import specializing_model
from xtc.driver.specializing import SpecializingModel, graph_inputs_of


def reshape_relu_model(shape_through_concat: bool = False) -> onnx.ModelProto:
    """relu(reshape(data, shape)); with `shape_through_concat` the shape is
    concat(lead, [-1]) of a graph input `lead`."""
    shape_input = "lead" if shape_through_concat else "shape"
    nodes = [
        helper.make_node("Reshape", ["data", "shape"], ["r"]),
        helper.make_node("Relu", ["r"], ["out"]),
    ]
    initializers = []
    if shape_through_concat:
        nodes.insert(0, helper.make_node("Concat", ["lead", "minus_one"], ["shape"], axis=0))
        initializers.append(numpy_helper.from_array(np.array([-1], np.int64), "minus_one"))
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info(shape_input, TensorProto.INT64, [None]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def counting(model: SpecializingModel) -> list[int]:
    """Counts the model's builds in the returned list's length."""
    builds: list[int] = []
    build = model.build

    def counted(module, frozen):  # type: ignore[no-untyped-def]
        builds.append(1)
        return build(module, frozen)

    model.build = counted
    return builds


DATA = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6)


@pytest.mark.parametrize("path", ["interp", "native"])
def test_one_specialization_per_distinct_value(path: str) -> None:
    model = specializing_model(reshape_relu_model(), path)
    builds = counting(model)
    for shape in ([3, 4], [4, 3], [3, 4], [12]):
        (got,) = model.run({"data": DATA, "shape": np.array(shape, np.int64)})
        np.testing.assert_array_equal(got, np.maximum(DATA.reshape(shape), 0))
    assert model.specialized_inputs == ["shape"]
    assert len(model.specializations) == 3
    assert len(builds) == 3


def test_inputs_a_shape_is_computed_from_are_specialized() -> None:
    model = specializing_model(reshape_relu_model(shape_through_concat=True))
    (got,) = model.run([DATA, np.array([4], np.int64)])
    assert got.shape == (4, 3)
    assert model.specialized_inputs == ["lead"]
    assert graph_inputs_of(model.model, "shape") == ["lead"]


def test_a_model_without_shape_inputs_is_built_once() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = specializing_model(helper.make_model(graph))
    builds = counting(model)
    for x in ([-1, 0, 1], [2, -2, 0]):
        np.testing.assert_array_equal(model.run([np.array(x, np.float32)])[0], np.maximum(x, 0))
    assert model.specialized_inputs == [] and len(builds) == 1


def test_symbolic_dimensions_are_specialized_on_their_shapes() -> None:
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3]),
            helper.make_tensor_value_info("axes", TensorProto.INT64, [1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = specializing_model(helper.make_model(graph))
    for rows in (2, 5):
        x = np.ones((rows, 3), np.float32)
        (got,) = model.run([x, np.array([0], np.int64)])
        np.testing.assert_array_equal(got, [rows] * 3)
    assert model.symbolic_inputs == ["x"] and model.specialized_inputs == ["axes"]
    assert len(model.specializations) == 2


def test_wrong_inputs_are_named() -> None:
    model = specializing_model(reshape_relu_model())
    with pytest.raises(ValueError, match=r"1 inputs given; the model takes 2: \['data', 'shape'\]"):
        model.run([DATA])
    with pytest.raises(ValueError, match=r"inputs \['shape'\] are missing"):
        model.run({"data": DATA})
