"""ONNX tensor-op converters against onnxruntime (numpy where onnxruntime
lacks the op or opset), across the opsets where the ops changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import helper, numpy_helper

from xtc import interp
from xtc.frontend.onnx import OnnxImportError, import_model

RNG = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def one_node_model(
    op_type: str,
    inputs: Mapping[str, np.ndarray],
    constants: Mapping[str, np.ndarray] | None = None,
    outputs: Sequence[str] = ("y",),
    opset: int = 18,
    input_order: Sequence[str] | None = None,
    **attrs: Any,
) -> onnx.ModelProto:
    """One node; `inputs` are graph inputs, `constants` initializers; the
    node takes them in `input_order` (default: inputs then constants; an
    empty name skips an optional input)."""
    constants = constants or {}
    order = list(input_order) if input_order is not None else [*inputs, *constants]
    node = helper.make_node(op_type, order, list(outputs), name="n", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in inputs.items()
        ],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(np.asarray(a), name) for name, a in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_xtc(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    return interp.run(import_model(model), dict(inputs))


def run_ort(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[Any]:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return list(session.run(None, dict(inputs)))


def check(
    op_type: str,
    inputs: Mapping[str, np.ndarray],
    constants: Mapping[str, np.ndarray] | None = None,
    outputs: Sequence[str] = ("y",),
    opset: int = 18,
    input_order: Sequence[str] | None = None,
    **attrs: Any,
) -> list[np.ndarray]:
    """Runs one node through xtc and onnxruntime and compares every output."""
    model = one_node_model(op_type, inputs, constants, outputs, opset, input_order, **attrs)
    got = run_xtc(model, inputs)
    want = run_ort(model, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    return got


# ---------------------------------------------------------------------------
# Reshaping.


@pytest.mark.parametrize(
    ("shape", "opset"), [([0, -1, 2], 13), ([4, 0, 2], 13), ([-1], 5 + 8), ([2, 3, 4], 14)]
)
def test_reshape_copies_zero_dims_and_infers_minus_one(shape: list[int], opset: int) -> None:
    check("Reshape", {"x": f32(2, 3, 4)}, {"shape": i64(*shape)}, opset=opset)


def test_reshape_allowzero_keeps_a_zero_dim() -> None:
    (y,) = check("Reshape", {"x": f32(0, 3)}, {"shape": i64(3, 0)}, opset=14, allowzero=1)
    assert y.shape == (3, 0)


def test_reshape_needs_a_constant_shape() -> None:
    model = one_node_model("Reshape", {"x": f32(2, 3), "shape": i64(3, 2)})
    with pytest.raises(
        OnnxImportError,
        match=r"Reshape node 'n' \(opset 18\): shape \(input 1\) must be a constant",
    ):
        import_model(model)


def test_transpose_with_and_without_perm() -> None:
    check("Transpose", {"x": f32(2, 3, 4)}, perm=[1, 2, 0])
    check("Transpose", {"x": f32(2, 3, 4)})


def test_squeeze_and_unsqueeze_axes_attribute_then_input() -> None:
    x = f32(1, 3, 1)
    check("Squeeze", {"x": x}, opset=11, axes=[0])
    check("Squeeze", {"x": x}, opset=11)
    check("Squeeze", {"x": x}, {"axes": i64(-1)}, opset=13)
    check("Unsqueeze", {"x": f32(3, 4)}, opset=11, axes=[0, 3])
    check("Unsqueeze", {"x": f32(3, 4)}, {"axes": i64(-1, 1)}, opset=13)


def test_flatten_expand_tile() -> None:
    check("Flatten", {"x": f32(2, 3, 4)}, axis=2)
    check("Flatten", {"x": f32(2, 3, 4)}, opset=11, axis=-3)
    check("Expand", {"x": f32(3, 1)}, {"shape": i64(2, 1, 4)})
    check("Tile", {"x": f32(2, 3)}, {"repeats": i64(2, 3)})


# ---------------------------------------------------------------------------
# Joining and cutting.


def test_concat_and_split_by_opset() -> None:
    check("Concat", {"a": f32(2, 3), "b": f32(2, 1)}, axis=-1)
    x = f32(2, 7)
    check("Split", {"x": x}, outputs=("a", "b"), opset=11, axis=1, split=[3, 4])
    check("Split", {"x": x}, {"split": i64(5, 2)}, outputs=("a", "b"), opset=13, axis=1)
    check("Split", {"x": f32(6, 2)}, outputs=("a", "b", "c"), opset=13)
    # Not divisible: pieces of ceil(7 / 3) = 3, the last one smaller.
    a, b, c = check("Split", {"x": x}, outputs=("a", "b", "c"), opset=18, axis=1, num_outputs=3)
    assert [a.shape[1], b.shape[1], c.shape[1]] == [3, 3, 1]


def test_slice_attributes_before_opset_10_then_inputs() -> None:
    x = f32(5, 6)
    check("Slice", {"x": x}, opset=9, starts=[1, -4], ends=[4, 1000], axes=[0, 1])
    check("Slice", {"x": x}, opset=9, starts=[1], ends=[-1])
    constants = {
        "starts": i64(-1, 0),
        "ends": i64(-(2**63), 5),
        "axes": i64(1, 0),
        "steps": i64(-2, 2),
    }
    check("Slice", {"x": x}, constants, opset=13)
    check("Slice", {"x": x}, {"starts": i64(1), "ends": i64(3)}, opset=10)
    check(
        "Slice",
        {"x": x},
        {
            "starts": np.array([2], np.int32),
            "ends": np.array([4], np.int32),
            "steps": np.array([1], np.int32),
        },
        opset=13,
        input_order=["x", "starts", "ends", "", "steps"],
    )


# ---------------------------------------------------------------------------
# Indexing.


def test_gathers() -> None:
    x = f32(3, 4)
    check("Gather", {"x": x, "i": i64(2, -1, 0)}, axis=1)
    check("GatherElements", {"x": x, "i": np.array([[0, -1], [2, 1]], np.int64)}, axis=0)
    check("GatherND", {"x": x, "i": np.array([[0, 1], [2, -1]], np.int64)})
    check(
        "GatherND",
        {"x": f32(2, 3, 4), "i": np.array([[1], [0]], np.int64)},
        opset=12,
        batch_dims=1,
    )


def test_scatters() -> None:
    x = f32(3, 4)
    indices = np.array([[1, 0, 2, 0]], np.int64)
    check("ScatterElements", {"x": x, "i": indices, "u": f32(1, 4)}, opset=11, axis=0)
    check("Scatter", {"x": x, "i": indices, "u": f32(1, 4)}, opset=9)
    check(
        "ScatterElements",
        {"x": x, "i": indices, "u": f32(1, 4)},
        opset=18,
        reduction="max",
    )
    check("ScatterND", {"x": x, "i": np.array([[2], [0]], np.int64), "u": f32(2, 4)}, opset=11)
    check(
        "ScatterND",
        {"x": x, "i": np.array([[2, 1], [2, 1]], np.int64), "u": f32(2)},
        opset=16,
        reduction="add",
    )


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_and_back(mode: str) -> None:
    check("DepthToSpace", {"x": f32(1, 8, 2, 3)}, opset=13, blocksize=2, mode=mode)
    check("SpaceToDepth", {"x": f32(1, 2, 4, 6)}, opset=13, blocksize=2)


# ---------------------------------------------------------------------------
# Known at import.


def test_shape_and_size_become_constants() -> None:
    x = f32(2, 3, 4)
    check("Shape", {"x": x})
    check("Shape", {"x": x}, opset=15, start=-2)
    check("Shape", {"x": x}, opset=15, start=1, end=-1)
    check("Size", {"x": x})


def test_a_shape_computation_folds_into_a_static_reshape() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "first"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [
            numpy_helper.from_array(np.array(0, np.int64), "first"),
            numpy_helper.from_array(i64(0), "zero"),
            numpy_helper.from_array(i64(-1), "minus_one"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    module = import_model(model)
    names = [op.name for op in module.walk() if op.name.startswith("graph.")]
    assert names == ["graph.reshape"]
    x = f32(2, 3, 4)
    np.testing.assert_array_equal(interp.run(module, [x])[0], x.reshape(2, 12))


def test_constants_of_every_kind() -> None:
    check("ConstantOfShape", {}, {"s": i64(2, 3)})
    value = numpy_helper.from_array(np.array([7], np.int32))
    check("ConstantOfShape", {}, {"s": i64(3)}, value=value)
    check("Constant", {}, value_floats=[1.0, 2.5])
    check("Constant", {}, value_ints=[1, 2])
    check("Constant", {}, value_int=4)
    check("Constant", {}, value=numpy_helper.from_array(f32(2, 2)))
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([1.5, -2.0], np.float32)),
        numpy_helper.from_array(i64(1, 4)),
        [2, 3],
    )
    (y,) = run_xtc(one_node_model("Constant", {}, sparse_value=sparse), {})
    np.testing.assert_array_equal(y, [[0, 1.5, 0], [0, -2.0, 0]])


def test_range_and_eye_like() -> None:
    check(
        "Range",
        {},
        {
            "a": np.array(1.0, np.float32),
            "b": np.array(3.2, np.float32),
            "c": np.array(0.5, np.float32),
        },
    )
    check(
        "Range",
        {},
        {"a": np.array(10, np.int32), "b": np.array(2, np.int32), "c": np.array(-3, np.int32)},
    )
    check("EyeLike", {"x": f32(3, 4)}, k=1)
    check("EyeLike", {"x": f32(4, 3)}, k=-2, dtype=onnx.TensorProto.INT32)


def test_data_dependent_shapes_fold_when_constant_and_fail_otherwise() -> None:
    x = np.array([[1, 0, 2], [0, 0, 3]], np.float32)
    check("NonZero", {}, {"x": x})
    check(
        "Unique",
        {},
        {"x": np.array([2, 1, 1, 3, 2], np.int64)},
        outputs=("y", "i", "inv", "c"),
        sorted=0,
    )
    check(
        "Unique",
        {},
        {"x": np.array([[1, 0], [1, 0], [2, 1]], np.int64)},
        outputs=("y", "i", "inv", "c"),
        opset=11,
        axis=0,
    )
    check("Compress", {"x": f32(3, 4)}, {"c": np.array([True, False, True])}, axis=0)
    check("Compress", {"x": f32(3, 4)}, {"c": np.array([False, True])})
    with pytest.raises(
        OnnxImportError,
        match=r"NonZero node .n. \(opset 18\): input 0 must be a constant: the result.s shape",
    ):
        import_model(one_node_model("NonZero", {"x": x}))


# ---------------------------------------------------------------------------
# Compositions.


def test_one_hot_with_runtime_indices_and_values() -> None:
    indices = np.array([[0, 3, -1], [5, 1, -5]], np.int64)
    values = np.array([-1.0, 2.0], np.float32)
    check(
        "OneHot", {"i": indices, "v": values}, {"d": i64(4)}, opset=11, input_order=["i", "d", "v"]
    )
    check(
        "OneHot",
        {"i": indices.astype(np.float32), "v": values},
        {"d": np.array(4.0, np.float32)},
        opset=11,
        input_order=["i", "d", "v"],
        axis=0,
    )


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_with_constant_and_runtime_k(upper: int) -> None:
    x = f32(2, 3, 5)
    check("Trilu", {"x": x}, opset=14, upper=upper)
    check("Trilu", {"x": x}, {"k": i64(-1)}, opset=14, upper=upper)
    check("Trilu", {"x": x, "k": np.array(2, np.int64)}, opset=14, upper=upper)


def test_cumsum_topk_and_reverse_sequence() -> None:
    x = f32(3, 4)
    check("CumSum", {"x": x}, {"axis": np.array(1, np.int32)}, exclusive=1, reverse=1)
    check("CumSum", {"x": np.arange(6, dtype=np.int64)}, {"axis": i64(0)})
    x = f32(3, 4)
    want = np.flip(np.cumprod(np.flip(x, 1), axis=1), 1)  # reverse, then shifted by one
    want = np.concatenate([want[:, 1:], np.ones((3, 1), np.float32)], axis=1)
    model = one_node_model("CumProd", {"x": x}, {"axis": i64(1)}, opset=26, exclusive=1, reverse=1)
    np.testing.assert_allclose(run_xtc(model, {"x": x})[0], want, rtol=1e-6)
    check("TopK", {"x": x}, opset=9, outputs=("v", "i"), k=2)
    check("TopK", {"x": x}, {"k": i64(3)}, opset=11, outputs=("v", "i"), axis=0, largest=0)
    check(
        "ReverseSequence",
        {"x": f32(4, 3, 2), "lens": i64(4, 1, 3)},
        opset=10,
        batch_axis=1,
        time_axis=0,
    )
    check(
        "ReverseSequence",
        {"x": f32(2, 5)},
        {"lens": i64(5, 2)},
        opset=10,
        batch_axis=0,
        time_axis=1,
    )


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
        ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
        ("ii->i", [(3, 3)]),
        ("ii", [(3, 3)]),
        ("ij->", [(2, 3)]),
        ("ba", [(2, 3)]),
        ("i,i", [(4,), (4,)]),
        ("i,j->ij", [(2,), (3,)]),
        ("ij,ij->ij", [(2, 3), (2, 3)]),
        ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
        ("...ii->...i", [(2, 3, 3)]),
        ("ijk,ikl,ilm->ijm", [(2, 2, 3), (2, 3, 4), (2, 4, 2)]),
        ("ij,jk", [(2, 3), (3, 2)]),
        ("abc,cd->ad", [(2, 3, 4), (4, 5)]),
    ],
)
def test_einsum_like_numpy(equation: str, shapes: list[tuple[int, ...]]) -> None:
    arrays = {f"x{i}": f32(*s) for i, s in enumerate(shapes)}
    model = one_node_model("Einsum", arrays, opset=12, equation=equation)
    (got,) = run_xtc(model, arrays)
    want = np.einsum(equation, *arrays.values())
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_einsum_uses_batch_matmul_for_a_contraction() -> None:
    arrays = {"a": f32(2, 3, 4), "b": f32(2, 4, 5)}
    module = import_model(one_node_model("Einsum", arrays, opset=12, equation="bij,bjk->bik"))
    names = [op.name for op in module.walk() if op.name.startswith("graph.")]
    assert names == ["graph.batch_matmul"]


@pytest.mark.parametrize(
    ("shape", "axes"), [([3, 6], None), ([5, 2], None), ([2, 9], [-2, -1]), ([4], [1])]
)
def test_center_crop_pad(shape: list[int], axes: list[int] | None) -> None:
    x = f32(2, 4, 5)
    inputs = {"x": x[0] if axes is None else x}
    attrs = {} if axes is None else {"axes": axes}
    model = one_node_model("CenterCropPad", inputs, {"s": i64(*shape)}, **attrs)
    (got,) = run_xtc(model, inputs)
    from onnx.reference import ReferenceEvaluator

    (want,) = ReferenceEvaluator(model).run(None, inputs)
    np.testing.assert_array_equal(got, want)
