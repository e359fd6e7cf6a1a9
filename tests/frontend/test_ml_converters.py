"""Binarizer, ArrayFeatureExtractor, LabelEncoder and TreeEnsemble of
ai.onnx.ml (frontend/converters/ml.py) against onnxruntime, on the
interpreter and natively, on inputs ONNX's cases do not cover."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import xtc
from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.onnx import OnnxImportError, import_model

DOMAIN = "ai.onnx.ml"
RNG = np.random.default_rng(23)


def ml_model(
    op_type: str,
    inputs: dict[str, np.ndarray],
    output: tuple[Any, list[int] | None],
    version: int,
    **attrs: Any,
) -> onnx.ModelProto:
    """One ai.onnx.ml node on run-time inputs; the model imports only that domain."""
    values = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for n, a in inputs.items()
    ]
    out_dtype, out_shape = output
    y = helper.make_tensor_value_info(
        "y", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), out_shape
    )
    node = helper.make_node(op_type, list(inputs), ["y"], domain=DOMAIN, **attrs)
    graph = helper.make_graph([node], op_type.lower(), values, [y])
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid(DOMAIN, version)], ir_version=10
    )


def check(model: onnx.ModelProto, inputs: dict[str, np.ndarray], expected: np.ndarray) -> None:
    interpreted = specializing_model(model, "interp").run(inputs)[0]
    native = xtc.compile(model, cache=False).run(inputs)[0]
    for got in (np.asarray(interpreted), np.asarray(native)):
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def ort(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> np.ndarray:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, inputs)[0]


def test_binarizer_matches_onnxruntime() -> None:
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    model = ml_model("Binarizer", {"x": x}, (np.float32, [4, 6]), 1, threshold=0.25)
    check(model, {"x": x}, ort(model, {"x": x}))


def test_binarizer_sends_nan_to_zero_as_the_reference_does() -> None:
    """onnxruntime refuses NaN."""
    x = np.array([np.nan, 0.5, -np.inf, np.inf], np.float64)
    model = ml_model("Binarizer", {"x": x}, (np.float64, [4]), 1, threshold=0.25)
    check(model, {"x": x}, np.array([0.0, 1.0, 0.0, 1.0]))


def test_binarizer_of_integers_compares_with_the_fractional_threshold() -> None:
    x = np.array([[-2, 1, 2, 3]], np.int64)
    model = ml_model("Binarizer", {"x": x}, (np.int64, [1, 4]), 1, threshold=1.5)
    check(model, {"x": x}, np.array([[0, 0, 1, 1]], np.int64))


@pytest.mark.parametrize(
    ("data_shape", "indices"),
    [((2, 3, 5), np.array([[4, 0, 4]], np.int64)), ((6,), np.array([5, 1], np.int64))],
)
def test_array_feature_extractor_matches_onnxruntime(
    data_shape: tuple[int, ...], indices: np.ndarray
) -> None:
    x = RNG.standard_normal(data_shape).astype(np.float32)
    inputs = {"x": x, "i": indices}
    model = ml_model("ArrayFeatureExtractor", inputs, (np.float32, None), 1)
    check(model, inputs, ort(model, inputs))


def test_label_encoder_of_integers_to_floats_matches_onnxruntime() -> None:
    x = np.array([[3, -7, 12], [0, 3, 5]], np.int64)
    model = ml_model(
        "LabelEncoder",
        {"x": x},
        (np.float32, [2, 3]),
        4,
        keys_int64s=[3, 5, -7],
        values_floats=[0.5, -2.0, 8.25],
        default_float=-1.5,
    )
    check(model, {"x": x}, ort(model, {"x": x}))


def test_label_encoder_of_floats_to_integer_tensor_values_matches_the_reference() -> None:
    """onnxruntime has no int32 values."""
    x = np.array([1.5, 2.0, -0.25, 9.0, 2.0], np.float32)
    model = ml_model(
        "LabelEncoder",
        {"x": x},
        (np.int32, [5]),
        4,
        keys_tensor=helper.make_tensor("k", TensorProto.FLOAT, [3], [2.0, -0.25, 1.5]),
        values_tensor=helper.make_tensor("v", TensorProto.INT32, [3], [20, 30, 40]),
        default_tensor=helper.make_tensor("d", TensorProto.INT32, [1], [-9]),
    )
    check(model, {"x": x}, ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_label_encoder_of_numbers_to_strings_is_refused() -> None:
    x = np.array([1, 2], np.int64)
    model = ml_model(
        "LabelEncoder", {"x": x}, (object, [2]), 4, keys_int64s=[1], values_strings=["one"]
    )
    with pytest.raises(OnnxImportError, match="its values are strings"):
        import_model(model)


def random_trees(
    count: int, depth: int, features: int, targets: int, modes: list[int]
) -> dict[str, Any]:
    """`count` full binary trees of `depth` splits, as TreeEnsemble attributes."""
    columns: dict[str, list[Any]] = {
        k: [] for k in ("feature", "mode", "split", "true", "false", "true_leaf", "false_leaf")
    }
    leaf_targets: list[int] = []
    leaf_weights: list[float] = []
    roots: list[int] = []

    def add_leaf() -> int:
        leaf_targets.append(int(RNG.integers(targets)))
        leaf_weights.append(round(float(RNG.normal()), 2))
        return len(leaf_targets) - 1

    def add_split(level: int) -> int:
        index = len(columns["split"])
        columns["feature"].append(int(RNG.integers(features)))
        columns["mode"].append(int(RNG.choice(modes)))
        columns["split"].append(round(float(RNG.normal()), 1))
        for key in ("true", "false", "true_leaf", "false_leaf"):
            columns[key].append(0)
        for branch in ("true", "false"):
            leaf = level == depth
            columns[branch][index] = add_leaf() if leaf else add_split(level + 1)
            columns[f"{branch}_leaf"][index] = int(leaf)
        return index

    for _ in range(count):
        roots.append(add_split(1))
    return {
        "nodes_featureids": columns["feature"],
        "nodes_modes": helper.make_tensor(
            "modes", TensorProto.UINT8, [len(columns["mode"])], columns["mode"]
        ),
        "nodes_splits": helper.make_tensor(
            "splits", TensorProto.FLOAT, [len(columns["split"])], columns["split"]
        ),
        "nodes_truenodeids": columns["true"],
        "nodes_falsenodeids": columns["false"],
        "nodes_trueleafs": columns["true_leaf"],
        "nodes_falseleafs": columns["false_leaf"],
        "leaf_targetids": leaf_targets,
        "leaf_weights": helper.make_tensor(
            "weights", TensorProto.FLOAT, [len(leaf_weights)], leaf_weights
        ),
        "tree_roots": roots,
        "n_targets": targets,
    }


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
def test_tree_ensemble_matches_onnxruntime(aggregate: int) -> None:
    """Four trees of depth 3 over five features, every comparison mode, NaN
    rows sent to the true branch where the split says so."""
    attrs = random_trees(4, 3, 5, 3, modes=[0, 1, 2, 3, 4, 5])
    splits = len(attrs["nodes_featureids"])
    attrs["nodes_missing_value_tracks_true"] = [int(i % 2) for i in range(splits)]
    x = RNG.normal(size=(16, 5)).round(1).astype(np.float32)
    x[3, :] = np.nan
    x[5, 2] = np.nan
    model = ml_model(
        "TreeEnsemble", {"x": x}, (np.float32, [16, 3]), 5, aggregate_function=aggregate, **attrs
    )
    expected = ort(model, {"x": x})
    check(model, {"x": x}, expected)


def test_tree_ensemble_of_doubles_matches_the_reference() -> None:
    attrs = random_trees(3, 4, 2, 2, modes=[0, 3])
    attrs["nodes_splits"].data_type = TensorProto.DOUBLE
    attrs["nodes_splits"].double_data.extend(attrs["nodes_splits"].float_data)
    del attrs["nodes_splits"].float_data[:]
    attrs["leaf_weights"].data_type = TensorProto.DOUBLE
    attrs["leaf_weights"].double_data.extend(attrs["leaf_weights"].float_data)
    del attrs["leaf_weights"].float_data[:]
    x = RNG.normal(size=(8, 2))
    model = ml_model("TreeEnsemble", {"x": x}, (np.float64, [8, 2]), 5, **attrs)
    check(model, {"x": x}, ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_tree_ensemble_with_a_post_transform_is_refused() -> None:
    attrs = random_trees(1, 1, 1, 1, modes=[0])
    x = np.zeros((2, 1), np.float32)
    model = ml_model("TreeEnsemble", {"x": x}, (np.float32, [2, 1]), 5, post_transform=2, **attrs)
    with pytest.raises(OnnxImportError, match="post_transform 2 is not supported"):
        import_model(model)


def test_tree_ensemble_of_a_feature_past_x_is_refused() -> None:
    attrs = random_trees(1, 1, 1, 1, modes=[0])
    attrs["nodes_featureids"] = [4]
    x = np.zeros((2, 1), np.float32)
    model = ml_model("TreeEnsemble", {"x": x}, (np.float32, [2, 1]), 5, **attrs)
    with pytest.raises(OnnxImportError, match=r"nodes_featureids must lie in \[0, 1\)"):
        import_model(model)


def test_label_encoder_of_strings_to_strings_matches_onnxruntime() -> None:
    """Strings are specialized on: the encoding is computed at import."""
    x = np.array([["cat", "dog"], ["emu", "cat"]], dtype=object)
    model = ml_model(
        "LabelEncoder",
        {"x": x},
        (object, [2, 2]),
        4,
        keys_strings=["cat", "dog"],
        values_strings=["meow", "woof"],
        default_string="?",
    )
    expected = ort(model, {"x": x})
    got = specializing_model(model, "interp").run({"x": x})[0]
    np.testing.assert_array_equal(np.asarray(got), expected)
    np.testing.assert_array_equal(expected, [["meow", "woof"], ["?", "meow"]])


def test_label_encoder_of_a_key_given_twice_is_refused() -> None:
    """onnxruntime keeps the first value of such a key, onnx.reference the last."""
    x = np.array([1], np.int64)
    model = ml_model(
        "LabelEncoder", {"x": x}, (np.int64, [1]), 4, keys_int64s=[1, 1], values_int64s=[2, 3]
    )
    with pytest.raises(OnnxImportError, match="key 1 is given more than once"):
        import_model(model)


def test_array_feature_extractor_of_strings_selects_at_import() -> None:
    x = np.array(["a", "b", "c"], dtype=object)
    indices = helper.make_tensor("i", TensorProto.INT64, [2], [2, 0])
    model = ml_model("ArrayFeatureExtractor", {"x": x}, (object, [1, 2]), 1)
    model.graph.node[0].input.append("i")
    model.graph.initializer.append(indices)
    expected = ort(model, {"x": x})
    got = specializing_model(model, "interp").run({"x": x})[0]
    np.testing.assert_array_equal(np.asarray(got), expected)
    np.testing.assert_array_equal(expected, [["c", "a"]])
