"""ONNX elementwise ops through the importer and the interpreter, against
onnxruntime (onnx.reference where onnxruntime lacks the opset)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from xtc import interp
from xtc.dialects.graph import elementwise as ew
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.interp import entry_function
from xtc.testing.onnx_models import one_node_model

RNG = np.random.default_rng(0)


def model_of(
    op_type: str,
    inputs: Mapping[str, np.ndarray],
    opset: int = 18,
    constants: Mapping[str, np.ndarray] | None = None,
    outputs: int = 1,
    input_names: list[str] | None = None,
    **attributes: Any,
) -> onnx.ModelProto:
    return one_node_model(
        op_type,
        inputs,
        constants,
        opset=opset,
        outputs=outputs,
        input_names=input_names,
        **attributes,
    )


def run_xtc(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    return interp.run(import_model(model), dict(inputs))


def run_oracle(
    model: onnx.ModelProto, inputs: Mapping[str, np.ndarray], oracle: str = "ort"
) -> list[np.ndarray]:
    if oracle == "reference":
        return [np.asarray(r) for r in ReferenceEvaluator(model).run(None, dict(inputs))]
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return [np.asarray(r) for r in session.run(None, dict(inputs))]


def check(
    model: onnx.ModelProto,
    inputs: Mapping[str, np.ndarray],
    oracle: str = "ort",
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> list[np.ndarray]:
    got = run_xtc(model, inputs)
    want = run_oracle(model, inputs, oracle)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)
    return got


def floats(*shape: int, dtype: Any = np.float32, scale: float = 2.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def graph_ops(model: onnx.ModelProto) -> list[str]:
    return [op.name for op in entry_function(import_model(model)).walk()][1:-1]


# ---------------------------------------------------------------------------
# One-to-one unary and binary ops.

UNARY_DOMAINS: dict[str, tuple[float, float]] = {
    "Relu": (-3, 3), "Sigmoid": (-5, 5), "Tanh": (-3, 3), "Erf": (-2, 2),
    "Exp": (-3, 3), "Log": (0.1, 5), "Sqrt": (0, 5), "Abs": (-3, 3),
    "Neg": (-3, 3), "Floor": (-3, 3), "Ceil": (-3, 3), "Round": (-3, 3),
    "Sign": (-3, 3), "Reciprocal": (0.5, 3), "Sin": (-3, 3), "Cos": (-3, 3),
    "Tan": (-1.4, 1.4), "Asin": (-1, 1), "Acos": (-1, 1), "Atan": (-5, 5),
    "Sinh": (-3, 3), "Cosh": (-3, 3), "Asinh": (-5, 5), "Acosh": (1, 5),
    "Atanh": (-0.9, 0.9), "Softplus": (-5, 5), "Softsign": (-5, 5),
    "Identity": (-3, 3), "Mish": (-5, 5), "HardSwish": (-5, 5),
    "Elu": (-3, 3), "Selu": (-3, 3), "Celu": (-3, 3), "ThresholdedRelu": (-3, 3),
    "LeakyRelu": (-3, 3), "HardSigmoid": (-5, 5), "Gelu": (-3, 3),
}  # fmt: skip


@pytest.mark.parametrize("op_type", sorted(UNARY_DOMAINS))
def test_float_unary_matches_onnxruntime(op_type: str) -> None:
    low, high = UNARY_DOMAINS[op_type]
    x = RNG.uniform(low, high, (2, 3, 4)).astype(np.float32)
    opset = 20 if op_type == "Gelu" else 18
    check(model_of(op_type, {"x": x}, opset=opset), {"x": x})


@pytest.mark.parametrize(
    "op_type, attributes",
    [
        ("LeakyRelu", {"alpha": 0.3}),
        ("HardSigmoid", {"alpha": 0.4, "beta": 0.3}),
        ("Gelu", {"approximate": "tanh"}),
        ("Elu", {"alpha": 0.5}),
        ("Selu", {"alpha": 1.5, "gamma": 2.0}),
        ("Celu", {"alpha": 2.0}),
        ("ThresholdedRelu", {"alpha": 0.5}),
        ("Shrink", {}),
        ("Shrink", {"lambd": 1.0, "bias": 0.25}),
    ],
)
def test_activation_attributes(op_type: str, attributes: dict[str, Any]) -> None:
    x = floats(3, 5)
    opset = 20 if op_type == "Gelu" else 18
    check(model_of(op_type, {"x": x}, opset=opset, **attributes), {"x": x})


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_swish_of_opset_24_is_one_graph_swish(alpha: float) -> None:
    x = floats(2, 6)
    model = model_of("Swish", {"x": x}, opset=24, alpha=alpha)
    assert graph_ops(model) == ["graph.swish"]
    check(model, {"x": x})


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_shrink_on_integers_compares_with_the_real_threshold(dtype: Any) -> None:
    x = np.arange(-4, 5).astype(np.int32)
    x = (x + 4).astype(dtype) if dtype == np.uint8 else x.astype(dtype)
    model = model_of("Shrink", {"x": x}, lambd=1.5, bias=1.0)
    check(model, {"x": x}, "reference")


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_activations_keep_narrow_and_wide_types(dtype: Any) -> None:
    """Each activation computes in its input's type. In f16, Elu's and
    Selu's exp(x) - 1 (ONNX's definition, in the type) cancels near 0: an
    absolute error up to an ulp of 1, 2^-10 (x = -0.0104: -0.01025 against
    the reference's -0.01035); hence the f16 atol. Inputs from a seed of
    their own: the module's RNG gives each test what earlier tests left."""
    x = (np.random.default_rng(7).standard_normal((4, 3)) * 2.0).astype(dtype)
    narrow = dtype == np.float16
    for op_type in ("Elu", "Softsign", "HardSwish", "Selu"):
        (got,) = run_xtc(model_of(op_type, {"x": x}), {"x": x})
        assert got.dtype == dtype
        (want,) = run_oracle(model_of(op_type, {"x": x}), {"x": x}, "reference")
        rtol, atol = (2e-3, 2.0**-10) if narrow else (1e-7, 0.0)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("slope_shape", [(), (1,), (4,), (3, 1), (2, 3, 4)])
def test_prelu_broadcasts_the_slope_to_the_input(slope_shape: tuple[int, ...]) -> None:
    x = floats(2, 3, 4)
    slope = RNG.uniform(0, 1, slope_shape).astype(np.float32)
    check(model_of("PRelu", {"x": x, "slope": slope}), {"x": x, "slope": slope})


def test_prelu_refuses_a_slope_larger_than_the_input() -> None:
    x, slope = floats(4), floats(3, 4)
    with pytest.raises(
        OnnxImportError,
        match=r"PRelu node .*slope tensor<3x4xf32> does not broadcast to the input tensor<4xf32>",
    ):
        import_model(model_of("PRelu", {"x": x, "slope": slope}))


BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Equal", "Greater", "Less",
          "GreaterOrEqual", "LessOrEqual"]  # fmt: skip


@pytest.mark.parametrize("op_type", BINARY)
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_binary_broadcasts_like_onnxruntime(op_type: str, dtype: Any) -> None:
    a = RNG.integers(-4, 5, (2, 1, 4)).astype(dtype)
    b = RNG.integers(1, 4, (3, 1)).astype(dtype)
    check(model_of(op_type, {"a": a, "b": b}), {"a": a, "b": b})


@pytest.mark.parametrize(  # ONNX requires fmod=1 for floats
    "fmod, dtype", [(0, np.int32), (1, np.int32), (1, np.float32)]
)
def test_mod(fmod: int, dtype: Any) -> None:
    a = (RNG.integers(-9, 10, (3, 4)) + (0.5 if dtype == np.float32 else 0)).astype(dtype)
    b = np.array([3, -3, 2, -4], dtype)
    check(model_of("Mod", {"a": a, "b": b}, fmod=fmod), {"a": a, "b": b})


@pytest.mark.parametrize("op_type", ["And", "Or", "Xor"])
def test_logical(op_type: str) -> None:
    a, b = RNG.random((3, 4)) < 0.5, RNG.random((4,)) < 0.5
    check(model_of(op_type, {"a": a, "b": b}), {"a": a, "b": b})
    check(model_of("Not", {"a": a}), {"a": a})


def test_where() -> None:
    c = RNG.random((2, 1, 4)) < 0.5
    x, y = floats(3, 1), floats(4)
    check(model_of("Where", {"c": c, "x": x, "y": y}), {"c": c, "x": x, "y": y})


@pytest.mark.parametrize("op_type", ["Max", "Min", "Sum", "Mean"])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_variadic_ops_broadcast(op_type: str, count: int) -> None:
    shapes = [(2, 1, 4), (3, 1), (4,)][:count]
    inputs = {f"x{i}": floats(*s) for i, s in enumerate(shapes)}
    check(model_of(op_type, inputs), inputs)


def test_variadic_max_of_integers() -> None:
    inputs = {f"x{i}": RNG.integers(0, 200, (3, 4)).astype(np.uint8) for i in range(3)}
    check(model_of("Max", inputs, opset=13), inputs)


# ---------------------------------------------------------------------------
# Bitwise ops and shifts.


@pytest.mark.parametrize("op_type", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.int64])
def test_bitwise(op_type: str, dtype: Any) -> None:
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, (2, 3), dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, (3,), dtype=dtype, endpoint=True)
    check(model_of(op_type, {"a": a, "b": b}), {"a": a, "b": b})
    check(model_of("BitwiseNot", {"a": a}), {"a": a})


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64])
def test_bit_shift(direction: str, dtype: Any) -> None:
    x = RNG.integers(0, 200, (2, 4)).astype(dtype)
    y = np.array([0, 1, 3, 7], dtype)
    check(model_of("BitShift", {"x": x, "y": y}, direction=direction), {"x": x, "y": y})


def test_bit_shift_refuses_an_unknown_direction() -> None:
    x = np.ones(3, np.uint8)
    with pytest.raises(OnnxImportError, match=r"BitShift node .*direction is 'UP'"):
        import_model(model_of("BitShift", {"x": x, "y": x}, direction="UP"))


# ---------------------------------------------------------------------------
# Clip.


def test_clip_with_attributes_before_opset_11() -> None:
    x = floats(3, 4)
    model = model_of("Clip", {"x": x}, opset=7, min=-0.5, max=1.0)
    check(model, {"x": x})
    assert graph_ops(model) == ["graph.clip"]
    only_max = model_of("Clip", {"x": x}, opset=7, max=0.25)
    check(only_max, {"x": x})


@pytest.mark.parametrize("low, high", [(-1.0, 1.0), (None, 0.5), (-0.5, None), (1.0, -1.0)])
def test_clip_with_constant_bounds_is_one_op(low: float | None, high: float | None) -> None:
    x = floats(3, 4)
    names = ["x", "" if low is None else "lo", "" if high is None else "hi"]
    constants = {
        n: np.array(v, np.float32) for n, v in (("lo", low), ("hi", high)) if v is not None
    }
    model = model_of("Clip", {"x": x}, opset=13, constants=constants, input_names=names)
    check(model, {"x": x})
    assert graph_ops(model) == ["graph.clip"]


def test_clip_with_runtime_bounds_uses_max_and_min() -> None:
    x = RNG.integers(-100, 100, (3, 4)).astype(np.int8)
    bounds = {"lo": np.array(-20, np.int8), "hi": np.array(30, np.int8)}
    model = model_of("Clip", {"x": x, **bounds}, opset=13)
    check(model, {"x": x, **bounds})
    assert graph_ops(model) == ["graph.max", "graph.min"]


def test_clip_keeps_a_bound_no_f32_holds_exactly() -> None:
    x = np.array([0.1, 0.2, 0.09999999], np.float64)
    model = model_of("Clip", {"x": x}, opset=13, constants={"lo": np.array(0.1)})
    (got,) = check(model, {"x": x})
    assert got[0] == got[2] == 0.1


def test_clip_refuses_a_bound_that_is_not_a_scalar() -> None:
    x = floats(3)
    model = model_of("Clip", {"x": x}, opset=13, constants={"lo": np.zeros(2, np.float32)})
    with pytest.raises(OnnxImportError, match=r"min \(input 1\) must be a scalar, got shape \[2\]"):
        import_model(model)


# ---------------------------------------------------------------------------
# Casts and tests.

CAST_TYPES = [np.float16, np.float32, np.float64, np.bool_, np.int8, np.int32,
              np.int64, np.uint8, np.uint16]  # fmt: skip


@pytest.mark.parametrize("to", CAST_TYPES)
@pytest.mark.parametrize("source", [np.float32, np.int32, np.bool_])
def test_cast_and_cast_like(source: Any, to: Any) -> None:
    x = np.array([[0.0, 1.0, 2.75, 3.5], [2.5, 0.5, 100.9, 0.0]]).astype(source)
    onnx_to = helper.np_dtype_to_tensor_dtype(np.dtype(to))
    check(model_of("Cast", {"x": x}, to=onnx_to), {"x": x})
    like = np.zeros((1,), to)
    check(model_of("CastLike", {"x": x, "like": like}), {"x": x, "like": like})


def test_cast_to_bfloat16_rounds() -> None:
    x = np.array([1.0 + 2**-8, 1.0 + 3 * 2**-8], np.float32)
    module = import_model(model_of("Cast", {"x": x}, to=TensorProto.BFLOAT16))
    (got,) = interp.run(module, [x])
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), [1.0, 1.0 + 2**-6])


@pytest.mark.parametrize(
    ("to", "saturated"),
    [
        (TensorProto.FLOAT8E4M3FN, True),
        (TensorProto.FLOAT8E5M2FNUZ, True),
        (TensorProto.FLOAT4E2M1, False),
        (TensorProto.BFLOAT16, False),
        (TensorProto.INT4, False),
    ],
)
def test_cast_saturates_the_float8_targets_unless_told_not_to(to: int, saturated: bool) -> None:
    x = floats(3)
    for attributes, expected in (({}, saturated), ({"saturate": 0}, False)):
        module = import_model(model_of("Cast", {"x": x}, opset=23, to=to, **attributes))
        op = next(o for o in module.walk() if isinstance(o, ew.CastOp))
        assert ("saturate" in op.properties) == expected


@pytest.mark.parametrize(
    ("to", "message"),
    [
        (TensorProto.STRING, "casting to STRING is not supported"),
        (TensorProto.FLOAT8E8M0, "round_mode 'sideways' is not one of up, down, nearest"),
    ],
)
def test_cast_refuses_unsupported_targets(to: int, message: str) -> None:
    with pytest.raises(OnnxImportError, match=rf"Cast node .*{message}"):
        import_model(model_of("Cast", {"x": floats(3)}, to=to, round_mode="sideways"))


@pytest.mark.parametrize("attributes", [{}, {"round_mode": "down", "saturate": 0}])
def test_cast_to_e8m0_carries_its_round_mode(attributes: dict[str, int | str]) -> None:
    """ONNX's defaults are round_mode "up" and saturate 1."""
    model = model_of("Cast", {"x": floats(3)}, opset=24, to=TensorProto.FLOAT8E8M0, **attributes)
    op = next(o for o in import_model(model).walk() if isinstance(o, ew.CastOp))
    assert op.round_mode is not None and op.round_mode.data == attributes.get("round_mode", "up")
    assert ("saturate" in op.properties) == bool(attributes.get("saturate", 1))


def test_int4_initializer_is_unpacked_one_element_a_byte() -> None:
    values = np.array([-8, -1, 0, 7, 3], ml_dtypes.int4)
    weight = helper.make_tensor("w", TensorProto.INT4, [5], values.astype(np.int8).tolist())
    graph = helper.make_graph(
        [helper.make_node("Cast", ["w"], ["y"], to=TensorProto.FLOAT)],
        "unpack",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    (got,) = interp.run(import_model(model), [])
    np.testing.assert_array_equal(got, [-8, -1, 0, 7, 3])


def test_is_nan_and_is_inf() -> None:
    x = np.array([1.0, np.nan, np.inf, -np.inf, 0.0, -2.0], np.float32)
    check(model_of("IsNaN", {"x": x}), {"x": x})
    for negative in (0, 1):
        for positive in (0, 1):
            model = model_of("IsInf", {"x": x}, detect_negative=negative, detect_positive=positive)
            check(model, {"x": x})


def test_float_only_ops_name_the_input_type() -> None:
    x = np.arange(3, dtype=np.int32)
    with pytest.raises(OnnxImportError, match=r"Exp node .*tensor<3xi32> must have a float"):
        import_model(model_of("Exp", {"x": x}))
    with pytest.raises(
        OnnxImportError, match=r"IsNaN node .*input 0 tensor<3xi32> must have a float"
    ):
        import_model(model_of("IsNaN", {"x": x}))


# ---------------------------------------------------------------------------
# Dropout.


def test_dropout_before_opset_10_gives_a_mask_of_the_input_type() -> None:
    # Dropout-7 types its mask T: all ones, every element kept (onnxruntime
    # writes zeros, onnx.reference booleans).
    x = floats(2, 3)
    got = run_xtc(model_of("Dropout", {"x": x}, opset=7, outputs=2, ratio=0.3), {"x": x})
    np.testing.assert_array_equal(got[0], x)
    assert got[1].dtype == np.float32 and (got[1] == 1).all()


def test_dropout_with_constant_ratio_and_training_mode_off() -> None:
    x = floats(2, 3)
    constants = {"r": np.array(0.2, np.float32), "t": np.array(False)}
    model = model_of("Dropout", {"x": x}, opset=13, constants=constants, outputs=2)
    got = check(model, {"x": x})
    assert got[1].dtype == np.bool_ and got[1].all()
    assert graph_ops(model) == ["graph.dropout", "graph.constant"]


def test_dropout_with_runtime_ratio_at_inference() -> None:
    x, r = floats(4), np.array(0.4, np.float32)
    check(model_of("Dropout", {"x": x, "r": r}, opset=13), {"x": x, "r": r})


def test_dropout_needs_constant_training_mode_and_then_ratio() -> None:
    """Training mode draws a mask (tests/frontend/test_random_converters.py)
    against a ratio known at import (a SpecializingModel specializes both)."""
    x = floats(4)
    runtime = {"x": x, "r": np.array(0.2, np.float32), "t": np.array(True)}
    with pytest.raises(OnnxImportError, match=r"training_mode \(input 2\) must be a constant"):
        import_model(model_of("Dropout", runtime, opset=13))
    model = model_of(
        "Dropout", {"x": x, "r": runtime["r"]}, opset=13, constants={"t": runtime["t"]}
    )
    with pytest.raises(OnnxImportError, match=r"ratio \(input 1\) must be a constant"):
        import_model(model)


def test_dropout_in_training_mode_with_ratio_zero_is_the_identity() -> None:
    x = floats(4)
    constants = {"r": np.array(0.0, np.float32), "t": np.array(True)}
    model = model_of("Dropout", {"x": x}, opset=13, constants=constants)
    np.testing.assert_array_equal(run_xtc(model, {"x": x})[0], x)


def test_identity_and_constant_folding() -> None:
    x = floats(2, 2)
    check(model_of("Identity", {"x": x}), {"x": x})
    # all-constant operands are evaluated at import: no graph op is left.
    model = model_of("Elu", {}, constants={"c": x})
    assert graph_ops(model) == ["graph.constant"]


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_swiglu_gates_b_with_the_swish_of_a(alpha: float) -> None:
    a, b = (RNG.standard_normal((3, 8)).astype(np.float32) for _ in range(2))
    model = model_of("SwiGLU", {"a": a, "b": b}, opset=28, alpha=alpha)
    (got,) = run_xtc(model, {"a": a, "b": b})
    want = a / (1 + np.exp(-alpha * a)) * b
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_swiglu_refuses_a_broadcast() -> None:
    a, b = np.ones((3, 8), np.float32), np.ones((1, 8), np.float32)
    with pytest.raises(OnnxImportError, match="must have one shape"):
        import_model(model_of("SwiGLU", {"a": a, "b": b}, opset=28))
