"""bf16, the float8 types, f4E2M1FN and the 2- and 4-bit integers: every bit
pattern decoded, a dense sweep of f32 values encoded (NaN, infinities, signed
zeros, subnormals, the halfway points between neighbours and the values
beside them, out of range with and without ONNX's `saturate`), on the
interpreter and in native code, bit for bit against ml_dtypes; the casts to
f8E8M0FNU, which round by ONNX's own rule, against onnx.reference."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import xtc
from xtc import interp
from xtc.frontend.onnx import import_model

NARROW_FLOATS = {
    TensorProto.BFLOAT16: ml_dtypes.bfloat16,
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
}
SATURATING = {
    TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E4M3FNUZ,
    TensorProto.FLOAT8E5M2,
    TensorProto.FLOAT8E5M2FNUZ,
}
SMALL_INTEGERS = {
    TensorProto.INT4: ml_dtypes.int4,
    TensorProto.UINT4: ml_dtypes.uint4,
    TensorProto.INT2: ml_dtypes.int2,
    TensorProto.UINT2: ml_dtypes.uint2,
}


def cast_model(
    source: int, target: int, count: int, opset: int = 23, **attributes: int | str
) -> onnx.ModelProto:
    node = helper.make_node("Cast", ["x"], ["y"], to=target, **attributes)
    graph = helper.make_graph(
        [node],
        "cast",
        [helper.make_tensor_value_info("x", source, [count])],
        [helper.make_tensor_value_info("y", target, [count])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def both_paths(model: onnx.ModelProto, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the interpreter's result, the native code's)."""
    (on_interpreter,) = interp.run(import_model(model), [x])
    (native,) = xtc.compile(model, cache=False).run({"x": x})
    return np.asarray(on_interpreter), np.asarray(native)


def bits(array: np.ndarray) -> np.ndarray:
    return array.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[array.dtype.itemsize])


def all_patterns(dtype: type) -> np.ndarray:
    width = np.dtype(dtype).itemsize * 8
    count = 1 << (width if dtype is ml_dtypes.bfloat16 else min(width, 8))
    storage = np.uint16 if width == 16 else np.uint8
    patterns = np.arange(count, dtype=storage)
    if dtype is ml_dtypes.float4_e2m1fn:
        patterns = patterns[:16]  # four bits: the others are not values
    return patterns.view(dtype)


def f32_sweep(dtype: type) -> np.ndarray:
    """f32 values that probe every rounding path of a cast to `dtype`."""
    strided = (np.arange(0, 1 << 32, 40961, dtype=np.uint64).astype(np.uint32)).view(np.float32)
    values = np.sort(np.unique(all_patterns(dtype).astype(np.float32)))
    finite = values[np.isfinite(values)]
    halfway = (finite[:-1].astype(np.float64) + finite[1:]) / 2
    near = np.concatenate([np.nextafter(halfway.astype(np.float32), s) for s in (-np.inf, np.inf)])
    largest = float(ml_dtypes.finfo(dtype).max)
    special = np.float32(
        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40]
        + [min(largest * 1.5, 3e38), -min(largest * 4, 3e38)]
    )
    return np.concatenate([strided, halfway.astype(np.float32), near, special])


def same_floats(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal bits, NaN payloads aside."""
    nan = np.isnan(expected.astype(np.float32))
    assert np.array_equal(np.isnan(actual.astype(np.float32)), nan)
    assert np.array_equal(bits(actual)[~nan], bits(expected)[~nan])


@pytest.mark.parametrize("onnx_type", sorted(NARROW_FLOATS), ids=onnx.TensorProto.DataType.Name)
def test_every_bit_pattern_decodes_as_ml_dtypes_does(onnx_type: int) -> None:
    x = all_patterns(NARROW_FLOATS[onnx_type])
    expected = x.astype(np.float32)
    for result in both_paths(cast_model(onnx_type, TensorProto.FLOAT, x.size), x):
        assert result.dtype == np.float32
        same_floats(result, expected)


@pytest.mark.parametrize("onnx_type", sorted(NARROW_FLOATS), ids=onnx.TensorProto.DataType.Name)
def test_f32_encodes_as_ml_dtypes_rounds(onnx_type: int) -> None:
    dtype = NARROW_FLOATS[onnx_type]
    x = f32_sweep(dtype)
    with np.errstate(invalid="ignore"):
        expected = x.astype(dtype)
    for result in both_paths(cast_model(TensorProto.FLOAT, onnx_type, x.size, saturate=0), x):
        assert result.dtype == np.dtype(dtype)
        assert np.array_equal(bits(result), bits(expected))


@pytest.mark.parametrize("onnx_type", sorted(SATURATING), ids=onnx.TensorProto.DataType.Name)
def test_saturate_gives_the_largest_finite_value(onnx_type: int) -> None:
    dtype = NARROW_FLOATS[onnx_type]
    x = f32_sweep(dtype)
    largest = float(ml_dtypes.finfo(dtype).max)
    with np.errstate(invalid="ignore"):
        expected = np.clip(x, -largest, largest).astype(dtype)
    assert np.isnan(expected.astype(np.float32)).sum() == np.isnan(x).sum()
    for result in both_paths(cast_model(TensorProto.FLOAT, onnx_type, x.size), x):
        assert np.array_equal(bits(result), bits(expected))


@pytest.mark.parametrize("onnx_type", sorted(SMALL_INTEGERS), ids=onnx.TensorProto.DataType.Name)
def test_small_integers_widen_and_wrap(onnx_type: int) -> None:
    dtype = SMALL_INTEGERS[onnx_type]
    every = np.arange(1 << (4 if "4" in np.dtype(dtype).name else 2)).astype(np.uint8).view(dtype)
    for result in both_paths(cast_model(onnx_type, TensorProto.FLOAT, every.size), every):
        assert np.array_equal(result, every.astype(np.float32))
    x = np.arange(-40.5, 40.5, 0.25, dtype=np.float32)
    expected = x.astype(dtype)  # truncated toward zero, then wrapped to the width
    for result in both_paths(cast_model(TensorProto.FLOAT, onnx_type, x.size), x):
        assert result.dtype == np.dtype(dtype)
        assert np.array_equal(result.view(np.uint8), expected.view(np.uint8))


def test_bfloat16_add_runs_in_f32_and_rounds_once() -> None:
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        "add",
        [helper.make_tensor_value_info(n, TensorProto.BFLOAT16, [64]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [64])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(64).astype(ml_dtypes.bfloat16) for _ in range(2))
    expected = (a.astype(np.float32) + b.astype(np.float32)).astype(ml_dtypes.bfloat16)
    (native,) = xtc.compile(model, cache=False).run({"a": a, "b": b})
    (on_interpreter,) = interp.run(import_model(model), [a, b])
    assert native.dtype == np.dtype(ml_dtypes.bfloat16)
    assert np.array_equal(bits(native), bits(expected))
    assert np.array_equal(bits(np.asarray(on_interpreter)), bits(expected))


def test_an_exported_bfloat16_model_takes_ml_dtypes_arrays(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E5M2)],
        "cast",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT8E5M2, [4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    xtc.compile(model, cache=False).export(tmp_path / "m.tar")
    loaded = xtc.load(tmp_path / "m.tar")
    x = np.array([1.0, -3.5, 1e5, np.nan], ml_dtypes.bfloat16)
    (y,) = loaded.run({"x": x})
    assert y.dtype == np.dtype(ml_dtypes.float8_e5m2)
    np.testing.assert_array_equal(y.astype(np.float32), [1.0, -3.5, 57344.0, np.nan])
    message = r"input 'x' has dtype float32, the model takes bfloat16 \(convert with "
    with pytest.raises(xtc.InputError, match=message + r"\.astype\(ml_dtypes\.bfloat16\)\)"):
        loaded.run({"x": x.astype(np.float32)})


def test_a_bfloat16_matmul_with_an_infinite_mask() -> None:
    """bf16 MatMul, then a mask of -inf where False (as attention's causal
    mask): products accumulate in floats on both paths (the interpreter once
    truncated bf16 to integers), and the -inf constant of a vectorized loop
    is encoded as its bf16 bits."""
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(9)
    a = rng.standard_normal((4, 8)).astype(bf16)
    b = rng.standard_normal((8, 16)).astype(bf16)
    keep = rng.random((4, 16)) > 0.3
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["p"]),
        helper.make_node("Where", ["keep", "p", "minus_inf"], ["y"]),
    ]
    minus_inf = helper.make_tensor("minus_inf", TensorProto.BFLOAT16, [], [float("-inf")])
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.BFLOAT16, [4, 8]),
            helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [8, 16]),
            helper.make_tensor_value_info("keep", TensorProto.BOOL, [4, 16]),
        ],
        [helper.make_empty_tensor_value_info("y")],
        [minus_inf],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inputs = {"a": a, "b": b, "keep": keep}
    want = np.where(keep, a.astype(np.float32) @ b.astype(np.float32), -np.inf)
    for got in (
        interp.run(import_model(model), inputs)[0],
        xtc.compile(model, cache=False).run(inputs)[0],
    ):
        assert got.dtype == bf16
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=1e-2, atol=1e-2)


def test_a_bfloat16_max_pool_gives_its_indices() -> None:
    """MaxPool's Indices on a bf16 input (its lowest value was asked of
    np.iinfo, which refuses ml_dtypes' floats)."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)[:, :, ::-1].astype(ml_dtypes.bfloat16)
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [1, 1, 4, 4])],
        [helper.make_empty_tensor_value_info("y"), helper.make_empty_tensor_value_info("i")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    y, indices = interp.run(import_model(model), {"x": x})
    assert y.astype(np.float32).reshape(-1).tolist() == [13, 15, 5, 7]
    assert indices.reshape(-1).tolist() == [1, 3, 9, 11]


E8M0_COUNT = 64
E8M0_MANTISSAS = [0, 1, 0x1FFFFF, 0x200000, 0x3FFFFF, 0x400000, 0x400001, 0x600000, 0x7FFFFF]
"""The significands where ONNX's e8m0 rounding turns: none, the least, just
under, at and just over a half, the most."""

f32_bit_patterns = st.one_of(
    st.integers(0, (1 << 32) - 1),
    st.builds(
        lambda sign, exponent, mantissa: sign << 31 | exponent << 23 | mantissa,
        st.integers(0, 1),
        st.sampled_from([0, 1, 2, 126, 127, 128, 253, 254, 255]) | st.integers(0, 255),
        st.sampled_from(E8M0_MANTISSAS),
    ),
)


@functools.cache
def e8m0_cast(round_mode: str, saturate: int) -> tuple[onnx.ModelProto, Any]:
    model = cast_model(
        TensorProto.FLOAT,
        TensorProto.FLOAT8E8M0,
        E8M0_COUNT,
        opset=24,
        round_mode=round_mode,
        saturate=saturate,
    )
    return model, xtc.compile(model, cache=False)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@settings(max_examples=40, deadline=None)
@given(patterns=st.lists(f32_bit_patterns, min_size=E8M0_COUNT, max_size=E8M0_COUNT))
def test_f32_to_e8m0_rounds_as_onnx_reference(
    round_mode: str, saturate: int, patterns: list[int]
) -> None:
    """NaN, infinities, zeros, subnormals, the rounding boundaries and the
    largest exponent (rounding past it gives NaN unless saturating)."""
    x = np.array(patterns, np.uint32).view(np.float32)
    model, compiled = e8m0_cast(round_mode, saturate)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    (on_interpreter,) = interp.run(import_model(model), [x])
    (native,) = compiled.run({"x": x})
    for result in (np.asarray(on_interpreter), np.asarray(native)):
        assert result.dtype == ml_dtypes.float8_e8m0fnu
        assert np.array_equal(bits(result), bits(expected))


@pytest.mark.parametrize("source", [TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT32])
def test_e8m0_from_other_types_goes_through_f32(source: int) -> None:
    """f16 is exact in f32; f64 and int32 round to it first (as
    onnx.reference's float32 view of them)."""
    dtype = helper.tensor_dtype_to_np_dtype(source)
    with np.errstate(over="ignore"):
        x = np.array(
            [0, 1, 3, 5, -6, 1 << 24 | 1, 2047, 65504, 1e-7, 0.75, -0.124, 3e38, np.inf, np.nan]
            if source != TensorProto.INT32
            else [0, 1, 3, 5, -6, 1 << 24 | 1, 2047, 65504, -(1 << 31), (1 << 31) - 1]
        ).astype(dtype)
    model = cast_model(source, TensorProto.FLOAT8E8M0, x.size, opset=24, round_mode="nearest")
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    for result in both_paths(model, x):
        assert np.array_equal(bits(result), bits(expected))
