"""ONNX quantization ops (QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear) and integer products (MatMulInteger, ConvInteger,
QLinearMatMul, QLinearConv) through the importer, on the interpreter and
natively, against onnxruntime (onnx.reference where onnxruntime lacks the
form)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx.reference import ReferenceEvaluator

import xtc
from xtc import interp
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.testing.onnx_models import one_node_model

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(7)


def model_of(
    op_type: str,
    inputs: Mapping[str, Array],
    constants: Mapping[str, Array] | None = None,
    opset: int = 21,
    outputs: int = 1,
    **attributes: Any,
) -> onnx.ModelProto:
    """One node over graph inputs, then initializers, in that order."""
    return one_node_model(op_type, inputs, constants, opset=opset, outputs=outputs, **attributes)


def oracle(model: onnx.ModelProto, inputs: Mapping[str, Array], which: str) -> list[Array]:
    if which == "reference":
        return [np.asarray(r) for r in ReferenceEvaluator(model).run(None, dict(inputs))]
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return [np.asarray(r) for r in session.run(None, dict(inputs))]


def assert_same(got: list[Array], want: list[Array], path: str) -> None:
    assert len(got) == len(want), path
    for g, w in zip(got, want, strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), (path, g.dtype, g.shape, w.dtype, w.shape)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=path)
        else:
            np.testing.assert_array_equal(g, w, err_msg=path)


def check(
    model: onnx.ModelProto,
    inputs: Mapping[str, Array],
    which: str = "ort",
    native: bool = True,
) -> list[Array]:
    """The interpreter's and (native) the compiled model's outputs equal the
    oracle's: integers exactly."""
    want = oracle(model, inputs, which)
    check_outputs(model, inputs, want, native)
    return want


def check_outputs(
    model: onnx.ModelProto, inputs: Mapping[str, Array], want: list[Array], native: bool = True
) -> None:
    got = interp.run(import_model(model), dict(inputs))
    assert_same(got, want, "interpreter")
    if native:
        compiled = xtc.compile(model, cache=False)
        assert_same(compiled.run(dict(inputs)), want, "native")


def halves(*shape: int, scale: float, spread: float) -> Array:
    """f32 values on a grid of scale / 2: exact halves after dividing by a
    power-of-two scale (to test rounding half to even), and beyond the
    quantized range (to test saturation)."""
    steps = RNG.integers(-int(2 * spread), int(2 * spread) + 1, shape)
    return (steps * scale / 2).astype(np.float32)


QUANTIZED = {
    "uint8": (np.uint8, 300),
    "int8": (np.int8, 300),
    "uint16": (np.uint16, 70000),
    "int16": (np.int16, 70000),
}


def zero_point(dtype: Any, *shape: int) -> Array:
    info = np.iinfo(dtype)
    low, high = max(info.min, -100), min(info.max, 100) + 1
    return RNG.integers(low, high, shape).astype(dtype)


# ---------------------------------------------------------------------------
# QuantizeLinear, DequantizeLinear.


@pytest.mark.parametrize("type_name", sorted(QUANTIZED))
def test_quantize_per_tensor_rounds_half_to_even_and_saturates(type_name: str) -> None:
    dtype, spread = QUANTIZED[type_name]
    x = halves(4, 16, scale=0.5, spread=spread)
    x[0, :4] = [0.25, 0.75, -0.25, -0.75]  # x / scale = ±0.5, ±1.5: halves go to even
    inputs = {"x": x, "scale": np.array(0.5, np.float32), "zp": zero_point(dtype)}
    want = check(model_of("QuantizeLinear", inputs), inputs)
    info = np.iinfo(dtype)
    assert {info.min, info.max} <= set(want[0].ravel().tolist())  # saturation is exercised


@pytest.mark.parametrize("type_name", ["uint8", "int8"])
@pytest.mark.parametrize("axis", [1, -1])
def test_quantize_per_axis(type_name: str, axis: int) -> None:
    dtype, spread = QUANTIZED[type_name]
    x = halves(2, 3, 5, scale=0.25, spread=spread)
    channels = x.shape[axis]
    inputs = {"x": x}
    constants = {
        "scale": np.array([0.25, 0.5, 1.0, 2.0, 0.125][:channels], np.float32),
        "zp": zero_point(dtype, channels),
    }
    check(model_of("QuantizeLinear", inputs, constants, axis=axis), inputs)


def test_quantize_blocked_with_a_partial_last_block() -> None:
    x = halves(2, 7, scale=0.5, spread=200)
    inputs = {
        "x": x,
        "scale": np.array([[0.5, 1.0, 0.25], [2.0, 0.5, 1.0]], np.float32),
        "zp": zero_point(np.int8, 2, 3),
    }
    model = model_of("QuantizeLinear", inputs, axis=1, block_size=3)
    check(model, inputs, which="reference")


def test_quantize_without_zero_point_defaults_to_uint8() -> None:
    inputs = {"x": halves(3, 8, scale=0.5, spread=300), "scale": np.array(0.5, np.float32)}
    (y,) = check(model_of("QuantizeLinear", inputs), inputs, native=False)
    assert y.dtype == np.uint8


def test_quantize_output_dtype_without_zero_point() -> None:
    inputs = {"x": halves(3, 8, scale=0.5, spread=300), "scale": np.array(0.5, np.float32)}
    model = model_of("QuantizeLinear", inputs, output_dtype=onnx.TensorProto.INT16)
    (y,) = check(model, inputs, which="reference", native=False)
    assert y.dtype == np.int16


@pytest.mark.parametrize("type_name", [*sorted(QUANTIZED), "int32"])
def test_dequantize_per_tensor(type_name: str) -> None:
    dtype = QUANTIZED[type_name][0] if type_name != "int32" else np.int32
    info = np.iinfo(dtype)
    x = RNG.integers(max(info.min, -(2**20)), min(info.max, 2**20) + 1, (4, 9)).astype(dtype)
    inputs = {"x": x, "scale": np.array(0.037, np.float32), "zp": zero_point(dtype)}
    check(model_of("DequantizeLinear", inputs), inputs)


@pytest.mark.parametrize("type_name", ["uint8", "int8"])
def test_dequantize_per_axis(type_name: str) -> None:
    dtype = QUANTIZED[type_name][0]
    x = zero_point(dtype, 2, 3, 4)
    inputs = {"x": x}
    constants = {"scale": np.array([0.1, 0.02, 3.0], np.float32), "zp": zero_point(dtype, 3)}
    check(model_of("DequantizeLinear", inputs, constants, axis=1), inputs)


def test_dequantize_blocked() -> None:
    x = zero_point(np.uint8, 5, 4)
    inputs = {
        "x": x,
        "scale": RNG.uniform(0.01, 1, (2, 4)).astype(np.float32),
        "zp": zero_point(np.uint8, 2, 4),
    }
    model = model_of("DequantizeLinear", inputs, axis=0, block_size=3)
    check(model, inputs, which="reference")


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=4),
    data=st.data(),
    signed=st.booleans(),
)
def test_quantize_dequantize_round_trip_any_axis(
    shape: list[int], data: st.DataObject, signed: bool
) -> None:
    """Per-axis on any axis of any rank, on the interpreter, against
    onnx.reference: quantize, then dequantize."""
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    channels = shape[axis]
    dtype = np.int8 if signed else np.uint8
    x = halves(*shape, scale=0.5, spread=300)
    scale = (2.0 ** RNG.integers(-3, 3, channels)).astype(np.float32)
    zp = zero_point(dtype, channels)
    inputs = {"x": x, "scale": scale, "zp": zp}
    for op_type in ("QuantizeLinear", "DequantizeLinear"):
        check(model_of(op_type, inputs, axis=axis), inputs, which="reference", native=False)
        x = oracle(model_of("QuantizeLinear", inputs, axis=axis), inputs, "reference")[0]
        inputs = {"x": x, "scale": scale, "zp": zp}


def test_dynamic_quantize_linear() -> None:
    for x in (
        RNG.standard_normal((3, 11)).astype(np.float32) * 4,
        RNG.uniform(1, 9, (3, 11)).astype(np.float32),  # min 0 is outside the data
    ):
        inputs = {"x": x}
        check(model_of("DynamicQuantizeLinear", inputs, opset=11, outputs=3), inputs)


# ---------------------------------------------------------------------------
# Integer products.

EIGHT_BIT_PAIRS = [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)]


def ints8(dtype: Any, *shape: int) -> Array:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, int(info.max) + 1, shape).astype(dtype)


@pytest.mark.parametrize("a_type, b_type", EIGHT_BIT_PAIRS)
def test_matmul_integer_per_tensor(a_type: Any, b_type: Any) -> None:
    inputs = {"a": ints8(a_type, 2, 5, 37), "b": ints8(b_type, 37, 9)}
    constants = {"a_zp": ints8(a_type), "b_zp": ints8(b_type)}
    (y,) = check(model_of("MatMulInteger", inputs, constants, opset=10), inputs)
    assert y.dtype == np.int32


def test_matmul_integer_per_row_and_column() -> None:
    """Zero points per row of A and per column of B, as the spec allows
    (onnxruntime takes only scalars for A): against numpy."""
    inputs = {"a": ints8(np.uint8, 6, 20), "b": ints8(np.int8, 20, 7)}
    constants = {"a_zp": ints8(np.uint8, 6), "b_zp": ints8(np.int8, 7)}
    model = model_of("MatMulInteger", inputs, constants, opset=10)
    a = inputs["a"].astype(np.int32) - constants["a_zp"].astype(np.int32)[:, None]
    b = inputs["b"].astype(np.int32) - constants["b_zp"].astype(np.int32)
    check_outputs(model, inputs, [a @ b])


@pytest.mark.parametrize("x_type, w_type", [(np.uint8, np.uint8), (np.uint8, np.int8)])
def test_conv_integer_with_padding(x_type: Any, w_type: Any) -> None:
    inputs = {"x": ints8(x_type, 1, 3, 7, 6)}
    constants = {"w": ints8(w_type, 4, 3, 3, 3), "x_zp": ints8(x_type), "w_zp": ints8(w_type)}
    model = model_of("ConvInteger", inputs, constants, opset=10, pads=[1, 1, 1, 1], strides=[2, 1])
    check(model, inputs, which="reference")


def test_conv_integer_per_channel_weight_zero_point() -> None:
    inputs = {"x": ints8(np.uint8, 2, 4, 5, 5)}
    constants = {
        "w": ints8(np.uint8, 6, 2, 3, 3),
        "x_zp": ints8(np.uint8),
        "w_zp": ints8(np.uint8, 6),
    }
    model = model_of("ConvInteger", inputs, constants, opset=10, group=2, pads=[0, 1, 0, 1])
    check(model, inputs, which="reference")


def middle(dtype: Any, *shape: int) -> Array:
    """Zero points near the middle of the type's range, so that products
    spread over the output range rather than saturate."""
    info = np.iinfo(dtype)
    centre = (int(info.min) + int(info.max) + 1) // 2
    return RNG.integers(centre - 10, centre + 10, shape).astype(dtype)


def qlinear_matmul_inputs(a_type: Any, b_type: Any, per_column: bool) -> dict[str, Array]:
    n = 11
    columns = (n,) if per_column else ()
    return {
        "a": ints8(a_type, 2, 3, 40),
        "a_scale": np.array(0.031, np.float32),
        "a_zp": middle(a_type),
        "b": ints8(b_type, 40, n),
        "b_scale": RNG.uniform(0.001, 0.02, columns).astype(np.float32),
        "b_zp": middle(b_type, *columns) if b_type == np.uint8 else np.zeros(columns, np.int8),
        "y_scale": np.array(0.2, np.float32),
        "y_zp": middle(a_type),
    }


@pytest.mark.parametrize("a_type, b_type", EIGHT_BIT_PAIRS)
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinear_matmul(a_type: Any, b_type: Any, per_column: bool) -> None:
    values = qlinear_matmul_inputs(a_type, b_type, per_column)
    inputs = {"a": values.pop("a")}
    order = ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"]
    model = model_of("QLinearMatMul", inputs, values, opset=10)
    model.graph.node[0].input[:] = order
    (y,) = check(model, inputs)
    assert len(np.unique(y)) > 10  # a spread of outputs, not one saturated value


@pytest.mark.parametrize("x_type, w_type", [(np.uint8, np.uint8), (np.uint8, np.int8)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_conv_with_bias(x_type: Any, w_type: Any, per_channel: bool) -> None:
    channels = (5,) if per_channel else ()
    inputs = {"x": ints8(x_type, 1, 3, 8, 8)}
    constants = {
        "x_scale": np.array(0.02, np.float32),
        "x_zp": middle(x_type),
        "w": ints8(w_type, 5, 3, 3, 3),
        "w_scale": RNG.uniform(0.005, 0.02, channels).astype(np.float32),
        "w_zp": middle(w_type, *channels) if w_type == np.uint8 else np.zeros(channels, np.int8),
        "y_scale": np.array(0.3, np.float32),
        "y_zp": middle(x_type),
        "bias": RNG.integers(-2000, 2000, 5).astype(np.int32),
    }
    model = model_of("QLinearConv", inputs, constants, opset=10, pads=[1, 1, 1, 1])
    (y,) = check(model, inputs)
    assert len(np.unique(y)) > 10


# ---------------------------------------------------------------------------
# Refusals.


def import_error(model: onnx.ModelProto) -> str:
    with pytest.raises(OnnxImportError) as caught:
        import_model(model)
    return str(caught.value)


def test_quantize_to_e8m0_is_refused_by_name() -> None:
    inputs = {"x": halves(2, 3, scale=1, spread=3), "scale": np.array(1.0, np.float32)}
    model = model_of("QuantizeLinear", inputs, output_dtype=onnx.TensorProto.FLOAT8E8M0)
    message = import_error(model)
    assert "output_dtype has element type FLOAT8E8M0, which xtc does not support" in message
    assert "QuantizeLinear node" in message


def test_scale_that_matches_no_axis_is_refused() -> None:
    inputs = {"x": halves(2, 3, scale=1, spread=3)}
    constants = {"scale": np.ones(4, np.float32), "zp": np.zeros(4, np.uint8)}
    message = import_error(model_of("QuantizeLinear", inputs, constants, axis=1))
    assert "must be a scalar or have 3 values, one per index of axis 1" in message


def test_blocked_scale_of_the_wrong_shape_is_refused() -> None:
    inputs = {"x": ints8(np.int8, 2, 7)}
    constants = {"scale": np.ones((2, 2), np.float32)}
    model = model_of("DequantizeLinear", inputs, constants, axis=1, block_size=3)
    assert "must have shape [2, 3]" in import_error(model)


def test_integer_product_of_wider_types_is_refused() -> None:
    inputs = {"a": np.ones((2, 3), np.int16), "b": np.ones((3, 2), np.int16)}
    message = import_error(model_of("MatMulInteger", inputs, opset=10))
    assert "must have element type int8, uint8" in message


NARROW = {
    "int4": (ml_dtypes.int4, 0),
    "uint2": (ml_dtypes.uint2, 1),
    "float8e4m3fn": (ml_dtypes.float8_e4m3fn, 0.0),
    "float8e5m2": (ml_dtypes.float8_e5m2, 0.0),
    "float4e2m1": (ml_dtypes.float4_e2m1fn, 0.0),
}


@pytest.mark.parametrize("type_name", sorted(NARROW))
def test_quantize_and_dequantize_to_the_narrow_types(type_name: str) -> None:
    """int4/uint2: rounded half to even and clamped; float8/float4: rounded
    to nearest even and saturated (onnx.reference: onnxruntime lacks some);
    then back to f32."""
    dtype, zero = NARROW[type_name]
    x = halves(4, 6, scale=0.5, spread=12)
    scale = np.float32(0.5)
    constants = {"s": scale, "z": np.array(zero, dtype)}
    quantized = check(model_of("QuantizeLinear", {"x": x}, constants), {"x": x}, "reference")
    y = quantized[0]
    assert y.dtype == np.dtype(dtype)
    back = model_of("DequantizeLinear", {"y": y}, constants)
    check(back, {"y": y}, "reference")
