from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float16Type,
    IndexType,
    IntegerType,
    Signedness,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph.base import (
    GraphOp,
    ShapeError,
    bool_attr,
    float_attr,
    str_attr,
    tensor,
)
from xtc.interp import RunTimeFault
from xtc.testing.graph_op import run_single_op, single_op_module

RNG = np.random.default_rng(0)
shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)
pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4)


def onnx_reference(
    op_type: str, inputs: list[np.ndarray], opset: int = 21, **attributes: Any
) -> np.ndarray:
    """Runs a one-node ONNX model on `inputs` with onnx.reference."""
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attributes)
    graph = helper.make_graph(
        [node],
        "single",
        [
            helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)
            )
            for n, a in zip(names, inputs, strict=True)
        ],
        [helper.make_tensor_value_info("y", onnx.TensorProto.UNDEFINED, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    (result,) = ReferenceEvaluator(model).run(None, dict(zip(names, inputs, strict=True)))
    return np.asarray(result)


def run_one(
    op_class: type[GraphOp],
    inputs: list[np.ndarray],
    props: dict[str, Attribute] | None = None,
) -> np.ndarray:
    """The op's only result on `inputs`, after the text round-trip checks."""
    (got,) = run_single_op(op_class, inputs, props)
    return got


def floats(shape: tuple[int, ...], dtype: Any = np.float32, scale: float = 3.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(dtype)


# ---------------------------------------------------------------------------
# Unary ops against onnx.reference.

FLOAT_UNARY: list[tuple[type[GraphOp], str, dict[str, Attribute], dict[str, Any]]] = [
    (ew.SigmoidOp, "Sigmoid", {}, {}),
    (ew.TanhOp, "Tanh", {}, {}),
    (ew.GeluOp, "Gelu", {}, {}),
    (ew.GeluOp, "Gelu", {"approximate": str_attr("tanh")}, {"approximate": "tanh"}),
    (ew.ErfOp, "Erf", {}, {}),
    (ew.ExpOp, "Exp", {}, {}),
    (ew.AbsOp, "Abs", {}, {}),
    (ew.NegOp, "Neg", {}, {}),
    (ew.FloorOp, "Floor", {}, {}),
    (ew.CeilOp, "Ceil", {}, {}),
    (ew.SignOp, "Sign", {}, {}),
    (ew.SinOp, "Sin", {}, {}),
    (ew.CosOp, "Cos", {}, {}),
    (ew.SoftplusOp, "Softplus", {}, {}),
    (ew.ReluOp, "Relu", {}, {}),
    (ew.IdentityOp, "Identity", {}, {}),
    (ew.DropoutOp, "Dropout", {"ratio": float_attr(0.25)}, {}),
    (ew.LeakyReluOp, "LeakyRelu", {}, {}),
    (ew.LeakyReluOp, "LeakyRelu", {"alpha": float_attr(0.3)}, {"alpha": 0.3}),
    (ew.HardSigmoidOp, "HardSigmoid", {}, {}),
    (
        ew.HardSigmoidOp,
        "HardSigmoid",
        {"alpha": float_attr(0.5), "beta": float_attr(0.25)},
        {"alpha": 0.5, "beta": 0.25},
    ),
]


@pytest.mark.parametrize(
    "op_class, onnx_type, props, attributes",
    FLOAT_UNARY,
    ids=[f"{o.name}{'+' if p else ''}" for o, _, p, _ in FLOAT_UNARY],
)
@settings(max_examples=5, deadline=None)
@given(shape=shapes)
def test_float_unary_matches_onnx(
    op_class: type[GraphOp],
    onnx_type: str,
    props: dict[str, Attribute],
    attributes: dict[str, Any],
    shape: tuple[int, ...],
) -> None:
    x = floats(shape)
    got = run_one(op_class, [x], props)
    want = onnx_reference(onnx_type, [x], **attributes)
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize(
    "op_class, onnx_type",
    [(ew.LogOp, "Log"), (ew.SqrtOp, "Sqrt"), (ew.ReciprocalOp, "Reciprocal")],
)
def test_positive_domain_unary_matches_onnx(op_class: type[GraphOp], onnx_type: str) -> None:
    x = np.abs(floats((3, 4))) + 0.01
    np.testing.assert_allclose(run_one(op_class, [x]), onnx_reference(onnx_type, [x]), rtol=1e-6)


TRIGONOMETRIC: list[tuple[type[GraphOp], str, float, float]] = [
    (ew.TanOp, "Tan", -1.5, 1.5),
    (ew.AsinOp, "Asin", -1.0, 1.0),
    (ew.AcosOp, "Acos", -1.0, 1.0),
    (ew.AtanOp, "Atan", -10.0, 10.0),
    (ew.SinhOp, "Sinh", -5.0, 5.0),
    (ew.CoshOp, "Cosh", -5.0, 5.0),
    (ew.AsinhOp, "Asinh", -10.0, 10.0),
    (ew.AcoshOp, "Acosh", 1.0, 10.0),
    (ew.AtanhOp, "Atanh", -0.99, 0.99),
]


@pytest.mark.parametrize("op_class, onnx_type, low, high", TRIGONOMETRIC)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_trigonometric_unary_matches_onnx(
    op_class: type[GraphOp], onnx_type: str, low: float, high: float, dtype: Any
) -> None:
    x = RNG.uniform(low, high, (3, 4)).astype(dtype)
    got = run_one(op_class, [x])
    assert got.dtype == dtype and got.shape == x.shape
    rtol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(got, onnx_reference(onnx_type, [x]), rtol=rtol, atol=rtol)


def test_inverse_trigonometric_outside_domain_is_nan_without_warnings() -> None:
    x = np.array([-2.0, 2.0], np.float32)
    with np.errstate(all="raise"):
        for op_class in (ew.AsinOp, ew.AcosOp, ew.AtanhOp, ew.AcoshOp):
            if op_class is ew.AcoshOp:
                x = np.array([0.5, -3.0], np.float32)
            assert np.isnan(run_one(op_class, [x])).all()
        ends = run_one(ew.AtanhOp, [np.array([-1.0, 1.0], np.float32)])
    np.testing.assert_array_equal(ends, [-np.inf, np.inf])


def test_log_sqrt_reciprocal_special_values_without_warnings() -> None:
    x = np.array([-1.0, 0.0, 4.0], np.float32)
    with np.errstate(all="raise"):
        log = run_one(ew.LogOp, [x])
        sqrt = run_one(ew.SqrtOp, [x])
        reciprocal = run_one(ew.ReciprocalOp, [x])
    np.testing.assert_array_equal(log, [np.nan, -np.inf, np.log(np.float32(4))])
    np.testing.assert_array_equal(sqrt, [np.nan, 0.0, 2.0])
    np.testing.assert_array_equal(reciprocal, [-1.0, np.inf, 0.25])


@pytest.mark.parametrize("alpha", [None, 1.0, 0.5, -2.0])
def test_swish_matches_onnx_of_opset_24(alpha: float | None) -> None:
    x = floats((3, 4))
    props = {} if alpha is None else {"alpha": float_attr(alpha)}
    attributes = {} if alpha is None else {"alpha": alpha}
    want = onnx_reference("Swish", [x], opset=24, **attributes)
    np.testing.assert_allclose(run_one(ew.SwishOp, [x], props), want, rtol=2e-6, atol=1e-6)


def test_swish_stays_finite_at_extremes() -> None:
    x = np.array([-1000.0, -10.0, 0.0, 10.0, 1000.0], np.float32)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        got = run_one(ew.SwishOp, [x])
    want = [0.0, -10.0 / (1.0 + math.exp(10.0)), 0.0, 10.0 / (1.0 + math.exp(-10.0)), 1000.0]
    np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-6)


def test_round_halves_to_even_like_onnx() -> None:
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6], np.float32)
    got = run_one(ew.RoundOp, [x])
    np.testing.assert_array_equal(got, onnx_reference("Round", [x]))
    np.testing.assert_array_equal(got, [-2, -2, -0, 0, 2, 2, 2, -3])


def test_sigmoid_and_softplus_stay_finite_at_extremes() -> None:
    x = np.array([-1000.0, -100.0, 0.0, 100.0, 1000.0], np.float64)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        sig = run_one(ew.SigmoidOp, [x])
        soft = run_one(ew.SoftplusOp, [x])
    np.testing.assert_allclose(sig, [0.0, np.exp(-100.0), 0.5, 1.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(soft, [0.0, np.exp(-100.0), np.log(2), 100.0, 1000.0])


SCALAR_FORMULAS: dict[type[GraphOp], Any] = {
    ew.ErfOp: math.erf,
    ew.GeluOp: lambda x: 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))),
    ew.SigmoidOp: lambda x: 1.0 / (1.0 + math.exp(-x)),
    ew.SoftplusOp: lambda x: math.log1p(math.exp(x)),
    ew.SwishOp: lambda x: x / (1.0 + math.exp(-x)),
}


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
@pytest.mark.parametrize("op_class", list(SCALAR_FORMULAS))
def test_float_unary_keeps_narrow_and_wide_types(op_class: type[GraphOp], dtype: Any) -> None:
    # onnx.reference evaluates erf in float32, so f64 is checked against math.
    x = floats((5,), dtype)
    got = run_one(op_class, [x])
    assert got.dtype == dtype
    want = np.array([SCALAR_FORMULAS[op_class](float(v)) for v in x]).astype(dtype)
    np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == np.float16 else 1e-14)


@pytest.mark.parametrize(
    "op_class, reference",
    [
        (ew.ReluOp, lambda x: np.maximum(x, 0)),
        (ew.AbsOp, np.abs),
        (ew.NegOp, np.negative),
        (ew.SignOp, np.sign),
        (ew.IdentityOp, lambda x: x),
    ],
)
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_unary(op_class: type[GraphOp], reference: Any, dtype: Any) -> None:
    x = RNG.integers(-100, 100, (3, 5)).astype(dtype)
    got = run_one(op_class, [x])
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, reference(x))


def test_not() -> None:
    x = RNG.random((2, 3)) < 0.5
    np.testing.assert_array_equal(run_one(ew.NotOp, [x]), ~x)


# ---------------------------------------------------------------------------
# Clip.


@settings(max_examples=20, deadline=None)
@given(
    low=st.one_of(st.none(), st.floats(-4, 4, width=32)),
    high=st.one_of(st.none(), st.floats(-4, 4, width=32)),
)
def test_clip_float_matches_onnx(low: float | None, high: float | None) -> None:
    x = floats((4, 5))
    props: dict[str, Attribute] = {}
    if low is not None:
        props["min"] = float_attr(low)
    if high is not None:
        props["max"] = float_attr(high)
    # ONNX Clip takes the bounds as optional inputs; "" skips min.
    names = ["x0", "x1" if low is not None else "", "x2" if high is not None else ""]
    bounds = [np.array(b, np.float32) for b in (low, high) if b is not None]
    got = run_one(ew.ClipOp, [x], props)
    node = helper.make_node("Clip", names, ["y"])
    graph = helper.make_graph(
        [node],
        "clip",
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in names if n],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    feeds = dict(zip([n for n in names if n], [x, *bounds], strict=True))
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_array_equal(got, want)


def test_clip_integer_rounds_bounds_inward_and_saturates() -> None:
    x = np.arange(-6, 7, dtype=np.int32)
    got = run_one(ew.ClipOp, [x], {"min": float_attr(-2.5), "max": float_attr(3.5)})
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.clip(x, -2, 3))
    x8 = np.array([-128, 0, 127], np.int8)
    huge = {"min": float_attr(-1e30), "max": float_attr(1e30)}
    np.testing.assert_array_equal(run_one(ew.ClipOp, [x8], huge), x8)


def test_clip_min_above_max_gives_max() -> None:
    x = floats((6,))
    got = run_one(ew.ClipOp, [x], {"min": float_attr(2.0), "max": float_attr(1.0)})
    np.testing.assert_array_equal(got, np.ones(6, np.float32))


# ---------------------------------------------------------------------------
# Binary ops.

ARITHMETIC = [
    (ew.AddOp, "Add"),
    (ew.SubOp, "Sub"),
    (ew.MulOp, "Mul"),
    (ew.DivOp, "Div"),
    (ew.MaxOp, "Max"),
    (ew.MinOp, "Min"),
]


@pytest.mark.parametrize("op_class, onnx_type", ARITHMETIC)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@settings(max_examples=5, deadline=None)
@given(shapes=pairs)
def test_arithmetic_broadcasts_like_onnx(
    op_class: type[GraphOp], onnx_type: str, dtype: Any, shapes: hnp.BroadcastableShapes
) -> None:
    a, b = (RNG.integers(-20, 20, s).astype(dtype) for s in shapes.input_shapes)
    b = np.where(b == 0, 7, b).astype(dtype)
    got = run_one(op_class, [a, b])
    assert got.dtype == dtype and got.shape == shapes.result_shape
    np.testing.assert_allclose(got, onnx_reference(onnx_type, [a, b]), rtol=1e-6)


def test_integer_div_truncates_toward_zero() -> None:
    a = np.array([7, -7, 7, -7, 0, np.iinfo(np.int64).min], np.int64)
    b = np.array([2, 2, -2, -2, 3, 1], np.int64)
    np.testing.assert_array_equal(run_one(ew.DivOp, [a, b]), [3, -3, -3, 3, 0, a[-1]])


def test_float_division_by_zero_is_a_value_not_a_warning() -> None:
    with np.errstate(all="raise"):
        f = run_one(ew.DivOp, [np.array([1.0, 0.0], np.float32), np.zeros(2, np.float32)])
    assert np.isinf(f[0]) and np.isnan(f[1])


@pytest.mark.parametrize("op_class", [ew.DivOp, ew.ModOp])
def test_integer_division_by_zero_is_a_run_time_fault(op_class: type[GraphOp]) -> None:
    """As onnxruntime refuses it; INT_MIN / -1 wraps and INT_MIN % -1 is 0,
    as onnxruntime gives (for int8 to int32: it crashes on int64)."""
    what = "modulo" if op_class is ew.ModOp else "division"
    with pytest.raises(RunTimeFault, match=f"integer {what} by zero"):
        run_one(op_class, [np.array([5, -5], np.int32), np.array([1, 0], np.int32)])
    for dtype in (np.int8, np.int32, np.int64):
        low = np.iinfo(dtype).min
        got = run_one(op_class, [np.array([low, 7], dtype), np.array([-1, -1], dtype)])
        np.testing.assert_array_equal(got, [low, -7] if op_class is ew.DivOp else [0, 0])


@pytest.mark.parametrize("c_fmod", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
@settings(max_examples=5, deadline=None)
@given(shapes=pairs)
def test_mod_matches_onnx(c_fmod: bool, dtype: Any, shapes: hnp.BroadcastableShapes) -> None:
    a, b = (RNG.integers(-20, 20, s).astype(dtype) for s in shapes.input_shapes)
    b = np.where(b == 0, -3, b).astype(dtype)
    if dtype == np.float32:
        a = a + np.float32(0.25)
    props = {"fmod": bool_attr(True)} if c_fmod else {}
    got = run_one(ew.ModOp, [a, b], props)
    np.testing.assert_array_equal(got, onnx_reference("Mod", [a, b], fmod=int(c_fmod)))


def test_mod_sign_follows_divisor_or_dividend() -> None:
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([3, 3, -3, -3], np.int32)
    np.testing.assert_array_equal(run_one(ew.ModOp, [a, b]), [1, 2, -2, -1])
    fmod = run_one(ew.ModOp, [a, b], {"fmod": bool_attr(True)})
    np.testing.assert_array_equal(fmod, [1, -1, 1, -1])


@pytest.mark.parametrize(
    "base_dtype, exponent_dtype",
    [
        (np.float32, np.float32),
        (np.float32, np.int64),
        (np.int32, np.float32),
        (np.int64, np.int64),
        (np.float16, np.float32),
    ],
)
def test_pow_result_takes_base_type(base_dtype: Any, exponent_dtype: Any) -> None:
    base = RNG.integers(1, 5, (2, 3)).astype(base_dtype)
    exponent = RNG.integers(0, 4, (3,)).astype(exponent_dtype)
    got = run_one(ew.PowOp, [base, exponent])
    assert got.dtype == base_dtype and got.shape == (2, 3)
    np.testing.assert_allclose(got, onnx_reference("Pow", [base, exponent]), rtol=1e-3)


def test_integer_pow_negative_exponents_truncate() -> None:
    base = np.array([2, -2, 1, -1, -1, 0, 3], np.int32)
    exponent = np.array([-1, -1, -5, -3, -2, -1, 2], np.int32)
    got = run_one(ew.PowOp, [base, exponent])
    np.testing.assert_array_equal(got, [0, 0, 1, -1, 1, 0, 9])


def test_integer_base_float_exponent_truncates() -> None:
    base = np.array([2, 9, 10], np.int32)
    exponent = np.array([0.5, 0.5, -1.0], np.float32)
    np.testing.assert_array_equal(run_one(ew.PowOp, [base, exponent]), [1, 3, 0])


LOGICAL = [
    (ew.AndOp, "And", np.logical_and),
    (ew.OrOp, "Or", np.logical_or),
    (ew.XorOp, "Xor", np.logical_xor),
]


@pytest.mark.parametrize("op_class, onnx_type, reference", LOGICAL)
@settings(max_examples=5, deadline=None)
@given(shapes=pairs)
def test_logical(
    op_class: type[GraphOp],
    onnx_type: str,
    reference: Any,
    shapes: hnp.BroadcastableShapes,
) -> None:
    a, b = (RNG.random(s) < 0.5 for s in shapes.input_shapes)
    got = run_one(op_class, [a, b])
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, reference(a, b))
    np.testing.assert_array_equal(got, onnx_reference(onnx_type, [a, b]))


BITWISE = [
    (ew.BitwiseAndOp, "BitwiseAnd", np.bitwise_and),
    (ew.BitwiseOrOp, "BitwiseOr", np.bitwise_or),
    (ew.BitwiseXorOp, "BitwiseXor", np.bitwise_xor),
]
INTEGER_TYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint16, np.uint64]


@pytest.mark.parametrize("op_class, onnx_type, reference", BITWISE)
@pytest.mark.parametrize("dtype", INTEGER_TYPES)
@settings(max_examples=3, deadline=None)
@given(shapes=pairs)
def test_bitwise_binary_matches_onnx(
    op_class: type[GraphOp],
    onnx_type: str,
    reference: Any,
    dtype: Any,
    shapes: hnp.BroadcastableShapes,
) -> None:
    info = np.iinfo(dtype)
    a, b = (
        RNG.integers(info.min, info.max, s, dtype=dtype, endpoint=True) for s in shapes.input_shapes
    )
    got = run_one(op_class, [a, b])
    assert got.dtype == dtype and got.shape == shapes.result_shape
    np.testing.assert_array_equal(got, reference(a, b))
    np.testing.assert_array_equal(got, onnx_reference(onnx_type, [a, b], opset=18))


@pytest.mark.parametrize("dtype", INTEGER_TYPES)
def test_bitwise_not_matches_onnx(dtype: Any) -> None:
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (2, 5), dtype=dtype, endpoint=True)
    got = run_one(ew.BitwiseNotOp, [x])
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, onnx_reference("BitwiseNot", [x], opset=18))


@pytest.mark.parametrize(
    "op_class, direction", [(ew.ShiftLeftOp, "LEFT"), (ew.ShiftRightOp, "RIGHT")]
)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
@settings(max_examples=3, deadline=None)
@given(shapes=pairs)
def test_shifts_match_onnx_bit_shift(
    op_class: type[GraphOp], direction: str, dtype: Any, shapes: hnp.BroadcastableShapes
) -> None:
    x_shape, amount_shape = shapes.input_shapes
    x = RNG.integers(0, np.iinfo(dtype).max, x_shape, dtype=dtype, endpoint=True)
    amount = RNG.integers(0, np.dtype(dtype).itemsize * 8, amount_shape).astype(dtype)
    got = run_one(op_class, [x, amount])
    assert got.dtype == dtype and got.shape == shapes.result_shape
    want = onnx_reference("BitShift", [x, amount], direction=direction)
    np.testing.assert_array_equal(got, want)


def test_shifts_out_of_range_and_signed() -> None:
    x = np.array([-8, -8, 8, 8, -8, 1], np.int8)
    amount = np.array([1, 8, 8, -1, -1, 7], np.int8)
    np.testing.assert_array_equal(run_one(ew.ShiftRightOp, [x, amount]), [-4, -1, 0, 0, -1, 0])
    np.testing.assert_array_equal(run_one(ew.ShiftLeftOp, [x, amount]), [-16, 0, 0, 0, 0, -128])
    big = np.array([1, 1, 1], np.uint32)
    shifts = np.array([31, 32, 200], np.uint32)
    np.testing.assert_array_equal(run_one(ew.ShiftLeftOp, [big, shifts]), [2**31, 0, 0])


COMPARISONS = [
    (ew.EqualOp, np.equal),
    (ew.NotEqualOp, np.not_equal),
    (ew.LessOp, np.less),
    (ew.LessEqualOp, np.less_equal),
    (ew.GreaterOp, np.greater),
    (ew.GreaterEqualOp, np.greater_equal),
]


@pytest.mark.parametrize("op_class, reference", COMPARISONS)
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@settings(max_examples=5, deadline=None)
@given(shapes=pairs)
def test_comparisons_give_i1(
    op_class: type[GraphOp], reference: Any, dtype: Any, shapes: hnp.BroadcastableShapes
) -> None:
    a, b = (RNG.integers(-2, 3, s).astype(dtype) for s in shapes.input_shapes)
    got = run_one(op_class, [a, b])
    assert got.dtype == np.bool_ and got.shape == shapes.result_shape
    np.testing.assert_array_equal(got, reference(a, b))


@pytest.mark.parametrize(
    "op_class, onnx_type",
    [
        (ew.EqualOp, "Equal"),
        (ew.LessOp, "Less"),
        (ew.GreaterOp, "Greater"),
        (ew.LessEqualOp, "LessOrEqual"),
        (ew.GreaterEqualOp, "GreaterOrEqual"),
    ],
)
def test_comparisons_match_onnx_with_nan(op_class: type[GraphOp], onnx_type: str) -> None:
    a = np.array([1.0, np.nan, 2.0, -np.inf], np.float32)
    b = np.array([1.0, np.nan, 3.0, -np.inf], np.float32)
    want = onnx_reference(onnx_type, [a, b])
    np.testing.assert_array_equal(run_one(op_class, [a, b]), want)


def test_equal_on_i1() -> None:
    a = np.array([True, False, True])
    got = run_one(ew.EqualOp, [a, a[::-1].copy()])
    np.testing.assert_array_equal(got, [True, True, True])


@settings(max_examples=20, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=3))
def test_where_broadcasts_three_ways(shapes: hnp.BroadcastableShapes) -> None:
    c_shape, x_shape, y_shape = shapes.input_shapes
    condition = RNG.random(c_shape) < 0.5
    x, y = floats(x_shape), floats(y_shape)
    got = run_one(ew.WhereOp, [condition, x, y])
    assert got.shape == shapes.result_shape
    np.testing.assert_array_equal(got, np.where(condition, x, y))
    np.testing.assert_array_equal(got, onnx_reference("Where", [condition, x, y]))


# ---------------------------------------------------------------------------
# Cast.

CAST_TARGETS: list[tuple[Attribute, Any]] = [
    (f16, np.float16),
    (f32, np.float32),
    (f64, np.float64),
    (i1, np.bool_),
    (i8, np.int8),
    (i32, np.int32),
    (i64, np.int64),
    (IntegerType(8, Signedness.UNSIGNED), np.uint8),
]


@pytest.mark.parametrize("to, dtype", CAST_TARGETS, ids=[str(t) for t, _ in CAST_TARGETS])
@pytest.mark.parametrize("source", [np.float32, np.int32, np.bool_])
def test_cast_matches_onnx(to: Attribute, dtype: Any, source: Any) -> None:
    x = np.array([[0.0, 1.0, -2.75, 3.5], [2.5, -0.5, 100.9, 0.0]]).astype(source)
    if dtype == np.uint8:
        x = np.abs(x)
    got = run_one(ew.CastOp, [x], {"to": to})
    assert got.dtype == dtype and got.shape == x.shape
    onnx_to = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    want = onnx_reference("Cast", [x], to=onnx_to)
    np.testing.assert_array_equal(got, want)


def test_cast_result_type_and_text() -> None:
    module = single_op_module(ew.CastOp, [tensor([2, 3], f32)], {"to": Float16Type()})
    op = next(o for o in module.walk() if isinstance(o, ew.CastOp))
    assert op.result_types[0] == tensor([2, 3], f16)
    assert "{to = f16}" in str(module)


def test_cast_to_bf16_rounds_to_nearest_even() -> None:
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even gives 1.
    x = np.array([1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-9, np.nan], np.float32)
    got = run_one(ew.CastOp, [x], {"to": BFloat16Type()})
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), [1.0, 1.0 + 2**-6, 1.0, np.nan])


def test_cast_saturate_clamps_to_the_largest_finite_value() -> None:
    x = np.array([1e6, -np.inf, np.nan, 464.0, 500.0], np.float32)
    props = {"to": Float8E4M3FNType(), "saturate": bool_attr(True)}
    got = run_one(ew.CastOp, [x], props).astype(np.float32)
    np.testing.assert_array_equal(got, [448.0, -448.0, np.nan, 448.0, 448.0])
    unsaturated = run_one(ew.CastOp, [x], {"to": Float8E4M3FNType()}).astype(np.float32)
    assert np.isnan(unsaturated[[0, 1, 2, 4]]).all() and unsaturated[3] == 448.0


def test_cast_saturate_needs_a_float_target() -> None:
    with pytest.raises(ShapeError, match="'saturate' needs a float target type, got i8"):
        ew.CastOp.infer_types([tensor([2], f32)], {"to": i8, "saturate": bool_attr(True)})


# ---------------------------------------------------------------------------
# Verifier messages.


def types(*pairs: tuple[tuple[int, ...], Attribute]) -> list[Attribute]:
    return [tensor(s, e) for s, e in pairs]


@pytest.mark.parametrize("op_class", [ew.AddOp, ew.EqualOp, ew.AndOp, ew.PowOp])
def test_binary_refuses_incompatible_shapes_naming_both(
    op_class: type[GraphOp],
) -> None:
    e = i1 if op_class is ew.AndOp else f32
    message = r"tensor<2x3x\w+> and tensor<4x\w+> are not broadcast-compatible"
    with pytest.raises(ShapeError, match=message):
        single_op_module(op_class, types(((2, 3), e), ((4,), e)))


def test_where_refuses_incompatible_shapes_naming_all_three() -> None:
    with pytest.raises(
        ShapeError,
        match=r"tensor<2x1xi1> and tensor<3xf32> and tensor<4xf32> are not broadcast",
    ):
        single_op_module(ew.WhereOp, types(((2, 1), i1), ((3,), f32), ((4,), f32)))


@pytest.mark.parametrize("op_class", [ew.SubOp, ew.ModOp, ew.LessOp, ew.XorOp])
def test_binary_refuses_differing_element_types(op_class: type[GraphOp]) -> None:
    with pytest.raises(ShapeError, match=r"element types differ: tensor<3xf32>, tensor<3xi32>"):
        single_op_module(op_class, types(((3,), f32), ((3,), i32)))


def test_where_refuses_differing_branch_types_and_non_i1_condition() -> None:
    with pytest.raises(ShapeError, match=r"differ: tensor<3xf32>, tensor<3xf16>"):
        single_op_module(ew.WhereOp, types(((3,), i1), ((3,), f32), ((3,), f16)))
    message = r"condition tensor<3xf32> must have element type i1"
    with pytest.raises(ShapeError, match=message):
        single_op_module(ew.WhereOp, types(((3,), f32), ((3,), f32), ((3,), f32)))


@pytest.mark.parametrize("op_class", [ew.NotOp, ew.AndOp, ew.OrOp, ew.XorOp])
def test_logical_ops_need_i1(op_class: type[GraphOp]) -> None:
    operands = types(*[((2,), i32)] * (1 if op_class is ew.NotOp else 2))
    message = r"operand tensor<2xi32> must have element type i1"
    with pytest.raises(ShapeError, match=message):
        single_op_module(op_class, operands)


FLOAT_ONLY = [
    ew.SigmoidOp, ew.TanhOp, ew.GeluOp, ew.ErfOp, ew.ExpOp, ew.LogOp, ew.SqrtOp,
    ew.FloorOp, ew.CeilOp, ew.RoundOp, ew.ReciprocalOp, ew.SinOp, ew.CosOp,
    ew.SoftplusOp, ew.SwishOp, ew.LeakyReluOp, ew.HardSigmoidOp, ew.TanOp, ew.AsinOp,
    ew.AcosOp, ew.AtanOp, ew.SinhOp, ew.CoshOp, ew.AsinhOp, ew.AcoshOp, ew.AtanhOp,
]  # fmt: skip


@pytest.mark.parametrize("op_class", FLOAT_ONLY)
def test_float_only_ops_refuse_integers(op_class: type[GraphOp]) -> None:
    message = rf"{op_class.name}: operand tensor<2xi32> must have a float element type"
    with pytest.raises(ShapeError, match=message):
        single_op_module(op_class, types(((2,), i32)))


@pytest.mark.parametrize(
    "op_class, count",
    [(ew.ReluOp, 1), (ew.AbsOp, 1), (ew.ClipOp, 1), (ew.AddOp, 2), (ew.LessOp, 2)],
)
def test_numeric_ops_refuse_i1(op_class: type[GraphOp], count: int) -> None:
    message = r"operand tensor<2xi1> must have an integer or float element type"
    with pytest.raises(ShapeError, match=message):
        single_op_module(op_class, types(*[((2,), i1)] * count))


@pytest.mark.parametrize(
    "op_class, count",
    [
        (ew.BitwiseNotOp, 1),
        (ew.BitwiseAndOp, 2),
        (ew.BitwiseOrOp, 2),
        (ew.BitwiseXorOp, 2),
        (ew.ShiftLeftOp, 2),
        (ew.ShiftRightOp, 2),
    ],
)
@pytest.mark.parametrize("element_type", [f32, i1])
def test_bitwise_ops_need_integers(
    op_class: type[GraphOp], count: int, element_type: Attribute
) -> None:
    message = (
        rf"{op_class.name}: operand tensor<2x{element_type}> must have an integer "
        "element type other than i1"
    )
    with pytest.raises(ShapeError, match=message):
        single_op_module(op_class, types(*[((2,), element_type)] * count))


def test_pow_names_base_or_exponent() -> None:
    with pytest.raises(ShapeError, match=r"base tensor<2xi1> must have an integer"):
        single_op_module(ew.PowOp, types(((2,), i1), ((2,), f32)))
    with pytest.raises(ShapeError, match=r"exponent tensor<2xi1> must have an integer"):
        single_op_module(ew.PowOp, types(((2,), f32), ((2,), i1)))


def test_property_checks() -> None:
    with pytest.raises(ShapeError, match=r"'approximate' is \"fast\", expected one of"):
        props = {"approximate": str_attr("fast")}
        single_op_module(ew.GeluOp, types(((2,), f32)), props)
    with pytest.raises(ShapeError, match=r"ratio 1.0 is outside \[0, 1\)"):
        single_op_module(ew.DropoutOp, types(((2,), f32)), {"ratio": float_attr(1.0)})
    with pytest.raises(ShapeError, match=r"target type index is not an integer"):
        single_op_module(ew.CastOp, types(((2,), f32)), {"to": IndexType()})
    with pytest.raises(ShapeError, match=r"missing property 'to'"):
        single_op_module(ew.CastOp, types(((2,), f32)))
