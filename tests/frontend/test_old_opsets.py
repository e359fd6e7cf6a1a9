"""Models older than opset 7 are upgraded on import by onnx.version_converter,
keeping what their ops meant in the old opset."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from xtc import interp
from xtc.frontend.onnx import OPSET_UPGRADED, OnnxImportError, import_model
from xtc.remarks import collect_remarks


def old_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, list[int]],
    initializers: dict[str, np.ndarray],
    opset: int = 6,
) -> onnx.ModelProto:
    """An opset-`opset` model that lists its initializers among its inputs, as
    IR version 3 requires."""
    shapes = {**inputs, **{n: list(a.shape) for n, a in initializers.items()}}
    graph = helper.make_graph(
        nodes,
        "old",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in shapes.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, n) for n, a in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3
    return model


def run(model: onnx.ModelProto, *inputs: np.ndarray) -> np.ndarray:
    return interp.run(import_model(model), list(inputs))[0]


@pytest.mark.parametrize(
    ("op", "function"), [("Add", np.add), ("Mul", np.multiply), ("Sub", np.subtract)]
)
@pytest.mark.parametrize(("axis", "b_shape"), [(0, [2]), (1, [3]), (1, [3, 4]), (2, [4])])
def test_legacy_broadcast_along_an_axis(
    op: str, function: np.ufunc, axis: int, b_shape: list[int]
) -> None:
    """Opset 6 aligned B with A from `axis` on, not from the right."""
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    b = np.arange(1, 1 + int(np.prod(b_shape)), dtype=np.float32).reshape(b_shape)
    node = helper.make_node(op, ["a", "b"], ["y"], broadcast=1, axis=axis)
    got = run(old_model([node], {"a": [2, 3, 4]}, {"b": b}), a)
    aligned = b.reshape(b_shape + [1] * (3 - axis - len(b_shape)))
    np.testing.assert_array_equal(got, function(a, aligned))


def test_batch_normalization_with_consumed_inputs() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    scale, bias, mean = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2, 3).astype(np.float32)
    node = helper.make_node(
        "BatchNormalization",
        ["x", "scale", "bias", "mean", "var"],
        ["y"],
        epsilon=1e-5,
        is_test=1,
        consumed_inputs=[0, 0, 0, 1, 1],
    )
    params = {"scale": scale, "bias": bias, "mean": mean, "var": var}
    got = run(old_model([node], {"x": [2, 3, 4, 4]}, params), x)
    c = (slice(None), None, None)
    want = (x - mean[c]) / np.sqrt(var[c] + 1e-5) * scale[c] + bias[c]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_prelu_slope_of_shape_c_stays_per_channel() -> None:
    """Before opset 7 a slope [C] applied along axis 1; after the upgrade it
    would broadcast against the last axis (and here not broadcast at all)."""
    x = np.linspace(-2, 2, 2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    slope = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    node = helper.make_node("PRelu", ["x", "slope"], ["y"])
    got = run(old_model([node], {"x": [2, 3, 5]}, {"slope": slope}), x)
    np.testing.assert_allclose(got, np.where(x < 0, x * slope[None, :, None], x))


def test_the_upgrade_is_a_remark() -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    with collect_remarks() as remarks:
        import_model(old_model([node], {"x": [4]}, {}, opset=5))
    assert [(r.category, r.message) for r in remarks] == [
        (OPSET_UPGRADED, "the model's opset 5 was upgraded to 7 by onnx.version_converter")
    ]
    with collect_remarks() as remarks:
        import_model(old_model([node], {"x": [4]}, {}, opset=7))
    assert remarks == []


def test_a_node_the_converter_cannot_upgrade_is_named() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="fine"),
        helper.make_node("NoSuchOp", ["r"], ["y"], name="odd"),
    ]
    with pytest.raises(OnnxImportError) as info:
        import_model(old_model(nodes, {"x": [4]}, {}))
    message = str(info.value)
    assert message.startswith("the model uses opset 6, which xtc upgrades to 7")
    assert "at node 'odd' (NoSuchOp)" in message
    assert "\n" not in message


def test_compiling_an_old_model_counts_the_upgrade_in_the_manifest() -> None:
    from xtc.driver.compiler import compile_model

    node = helper.make_node("Relu", ["x"], ["y"])
    seen: list[str] = []
    compiled = compile_model(
        old_model([node], {"x": [4]}, {}), on_remark=lambda r: seen.append(r.category)
    )
    assert compiled.manifest["remarks"] == {OPSET_UPGRADED: 1}
    assert seen == [OPSET_UPGRADED]
    x = np.array([-1, 0, 2, -3], np.float32)
    np.testing.assert_array_equal(compiled.run([x])[0], np.maximum(x, 0))
