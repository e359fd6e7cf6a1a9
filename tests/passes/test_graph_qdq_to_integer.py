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
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import i32

import xtc
from xtc import interp, remarks
from xtc.analysis.host_cpu import VNNI_VARIABLE
from xtc.dialects.graph.base import elem
from xtc.dialects.graph.nn import Conv2dOp, Conv2dU8S8Op, MatmulOp
from xtc.driver.compiler import compile_graph
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
    # a constant i8 weight: the packed u8 x i8 product, as a 1x1 conv (40 -> 16 columns)
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
PRODUCTS = {"matmul": "graph.conv2d_u8s8", "conv": "graph.conv2d_u8s8", "conv8": "graph.conv2d"}


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


def test_unpacked_keeps_the_i32_matmul() -> None:
    model = MODELS["matmul"]()
    rewritten = apply_pipeline(import_model(model), "graph-qdq-to-integer{packed=false},dce")
    assert integer_products(rewritten) == ["graph.matmul"]


def matmul_integer_model(
    rows: tuple[int, ...], weight: np.ndarray, zero_point: int, qlinear: bool
) -> onnx.ModelProto:
    """MatMulInteger (i32 out) or QLinearMatMul (u8 out) of a u8 input a by a
    constant i8 weight, a's zero point a constant scalar."""
    scalar = numpy_helper.from_array
    initializers = [
        scalar(weight, "b"),
        scalar(np.array(zero_point, np.uint8), "az"),
        scalar(np.array(0, np.int8), "bz"),
        scalar(np.array(0.02, np.float32), "as"),
        scalar(np.array(0.01, np.float32), "bs"),
        scalar(np.array(0.5, np.float32), "ys"),
        scalar(np.array(128, np.uint8), "yz"),
    ]
    if qlinear:
        node = helper.make_node(
            "QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"]
        )
    else:
        node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    k = weight.shape[0]
    graph = helper.make_graph(
        [node],
        "integer_matmul",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [*rows, k])],
        [
            helper.make_tensor_value_info(
                "y", TensorProto.UINT8 if qlinear else TensorProto.INT32, None
            )
        ],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def native_matmul_integer(
    rows: tuple[int, ...], k: int, n: int, seed: int
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(native, exact reference, remark categories) of a MatMulInteger whose
    operands span u8 x i8 (255 x -128 included)."""
    rng = np.random.default_rng(seed)
    weight = rng.integers(-128, 128, (k, n)).astype(np.int8)
    a = rng.integers(0, 256, (*rows, k)).astype(np.uint8)
    weight.reshape(-1)[0], a.reshape(-1)[0] = -128, 255
    zero_point = int(rng.integers(0, 256))
    module = import_model(matmul_integer_model(rows, weight, zero_point, qlinear=False))
    assert integer_products(apply_pipeline(module.clone(), "graph-qdq-to-integer,dce")) == [
        "graph.conv2d_u8s8"
    ]
    reported: list[remarks.Remark] = []
    (got,) = compile_graph(module, opt_level=3, on_remark=reported.append).run({"a": a})
    want = ((a.astype(np.int64) - zero_point) @ weight.astype(np.int64)).astype(np.int32)
    return got, want, [r.category for r in reported]


# K not a multiple of 4 and N not a multiple of 16 are padded; rows may be batched.
MATMUL_SHAPES = st.tuples(
    st.sampled_from([(1,), (7,), (2, 5), (33,)]),
    st.integers(1, 70),
    st.integers(1, 40),
)


@settings(max_examples=6, deadline=None)
@given(MATMUL_SHAPES, st.integers(0, 2**16))
def test_packed_matmul_is_exact_natively(
    shape: tuple[tuple[int, ...], int, int], seed: int
) -> None:
    got, want, _ = native_matmul_integer(*shape, seed)
    np.testing.assert_array_equal(got, want)


def test_packed_matmul_without_vnni_is_exact_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VNNI_VARIABLE, "0")
    got, want, categories = native_matmul_integer((2, 9), 37, 21, seed=5)
    np.testing.assert_array_equal(got, want)
    assert remarks.DOT_PRODUCT_WIDENED in categories


def test_qlinear_matmul_packs_and_matches_onnxruntime() -> None:
    weight = RNG.integers(-128, 128, (50, 24)).astype(np.int8)
    model = matmul_integer_model((6,), weight, 131, qlinear=True)
    packed = apply_pipeline(import_model(model), "graph-qdq-to-integer,dce")
    assert integer_products(packed) == ["graph.conv2d_u8s8"]
    a = RNG.integers(0, 256, (6, 50)).astype(np.uint8)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = session.run(None, {"a": a})
    (native,) = xtc.compile(model, cache=False).run({"a": a})
    within_one_step(native, want)
    assert len(np.unique(native)) > 10
