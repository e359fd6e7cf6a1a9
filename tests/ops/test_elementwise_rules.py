"""The elementwise compute rules (ops/elementwise.py): every op lowered by
convert-graph-to-te runs in the te interpreter exactly as the graph
interpreter runs it, on random values and on the special ones (NaN, ±inf,
±0, halves, integer extremes, -1 and zero divisors, shifts past the width),
or fails with the same run-time fault (an integer division by zero)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph.base import (
    GraphOp,
    ShapeError,
    bool_attr,
    defined_ops,
    float_attr,
    str_attr,
)
from xtc.dialects.graph.constant import element_type_of
from xtc.testing.graph_op import single_op_module, tensor_type_of
from xtc.lowering.convert_graph_to_te import ConvertGraphToTe
from xtc.ops import load_compute_rules
from xtc.ops.elementwise import FLOAT_MATH, OTHER_UNARY
from xtc.driver.textual_ir import make_context

RULES = load_compute_rules()
RNG = np.random.default_rng(0)
SETTINGS = settings(max_examples=25, deadline=None)

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 1e-3]
FLOATS = [np.float32, np.float16, np.float64]
INTEGERS = [np.int8, np.uint8, np.int32, np.int64, np.uint64]


def lower(graph: ModuleOp) -> ModuleOp:
    lowered = graph.clone()
    ConvertGraphToTe().apply(make_context(), lowered)
    lowered.verify()
    return lowered


def check(
    op_class: type[GraphOp],
    arrays: Sequence[np.ndarray],
    props: Mapping[str, Attribute] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """The graph interpreter on the op and the te interpreter on its
    lowering agree (integers and booleans exactly), or fail with the same
    run-time fault."""
    graph = single_op_module(op_class, [tensor_type_of(a) for a in arrays], props)
    try:
        with np.errstate(all="ignore"):
            expected = interp.run(graph, list(arrays))
    except interp.RunTimeFault as fault:
        with pytest.raises(interp.RunTimeFault) as raised:
            interp.run(lower(graph), list(arrays))
        assert str(raised.value) == str(fault)
        return
    actual = interp.run(lower(graph), list(arrays))
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        if e.dtype.kind == "f":
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(a, e)


def tolerance(dtype: type) -> dict[str, float]:
    return {"rtol": 2e-3, "atol": 1e-3} if dtype == np.float16 else {}


def accepts(op_class: type[GraphOp], *dtypes: type) -> bool:
    try:
        op_class.inferred_types([tensor_type_of(np.zeros((1,), d)) for d in dtypes], {})
    except ShapeError:
        return False
    return True


def sample(dtype: type, shape: Sequence[int]) -> np.ndarray:
    """Random values of dtype: normal floats, small integers of both signs
    (unsigned: up to 250), booleans."""
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind == "f":
        return (RNG.standard_normal(shape) * 3).astype(dtype)
    if np.dtype(dtype).kind == "u":
        return RNG.integers(0, 251, shape).astype(dtype)
    return RNG.integers(-100, 101, shape).astype(dtype)


def with_specials(dtype: type) -> np.ndarray:
    return np.concatenate([sample(dtype, (8,)), np.array(SPECIAL, dtype)])


def test_every_elementwise_op_has_a_rule() -> None:
    assert [op.name for op in defined_ops(ew) if op not in RULES] == []


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op_class", list(FLOAT_MATH), ids=lambda c: c.name)
def test_float_unary(op_class: type[GraphOp], dtype: type) -> None:
    x = with_specials(dtype)
    if op_class is ew.AcoshOp:
        x = np.abs(x) + np.asarray(1, dtype)
    check(op_class, [x], **tolerance(dtype))


def cases(op_classes: Sequence[type[GraphOp]], dtypes: Sequence[type], arity: int) -> list[object]:
    """(op, dtype) for each dtype the op takes."""
    return [
        pytest.param(op_class, dtype, id=f"{op_class.name}-{np.dtype(dtype).name}")
        for op_class in op_classes
        for dtype in dtypes
        if accepts(op_class, *[dtype] * arity)
    ]


@pytest.mark.parametrize(
    ("op_class", "dtype"), cases(list(OTHER_UNARY), [np.float32, *INTEGERS, np.bool_], 1)
)
def test_other_unary(op_class: type[GraphOp], dtype: type) -> None:
    x = with_specials(dtype) if dtype == np.float32 else sample(dtype, (3, 5))
    if np.dtype(dtype).kind == "i":
        x.flat[0] = np.iinfo(dtype).min  # abs and neg wrap
    check(op_class, [x])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_gelu(approximate: str, dtype: type) -> None:
    check(
        ew.GeluOp,
        [with_specials(dtype)],
        {"approximate": str_attr(approximate)},
        **tolerance(dtype),
    )


@SETTINGS
@given(alpha=st.floats(-2, 2, width=32), beta=st.floats(-2, 2, width=32))
def test_leaky_relu_and_hard_sigmoid(alpha: float, beta: float) -> None:
    x = with_specials(np.float32)
    check(ew.LeakyReluOp, [x], {"alpha": float_attr(alpha)})
    check(ew.HardSigmoidOp, [x], {"alpha": float_attr(alpha), "beta": float_attr(beta)})


@SETTINGS
@given(alpha=st.floats(-4, 4, width=32), dtype=st.sampled_from(FLOATS))
def test_swish(alpha: float, dtype: type) -> None:
    check(ew.SwishOp, [with_specials(dtype)], {"alpha": float_attr(alpha)}, **tolerance(dtype))


bound = st.none() | st.floats(-300, 300, width=32)


@SETTINGS
# Not uint64: the graph interpreter's bounds go through float64 and lose its maximum.
@given(
    dtype=st.sampled_from([np.float32, np.float16, np.int8, np.uint8, np.int32, np.int64]),
    low=bound,
    high=bound,
)
def test_clip(dtype: type, low: float | None, high: float | None) -> None:
    """Float bounds round to the element type; on integers they round inward
    and saturate at the type's range; min > max gives max."""
    props: dict[str, Attribute] = {}
    if low is not None:
        props["min"] = float_attr(low)
    if high is not None:
        props["max"] = float_attr(high)
    x = with_specials(dtype) if np.dtype(dtype).kind == "f" else sample(dtype, (12,))
    check(ew.ClipOp, [x], props)


CAST_TYPES = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64]
CAST_TYPES += [np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


@pytest.mark.parametrize("to", CAST_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("source", CAST_TYPES, ids=lambda d: np.dtype(d).name)
def test_cast(source: type, to: type) -> None:
    """numpy's astype: floats truncate toward zero (kept inside the target's
    range here, where native code is undefined), nonzero is true."""
    x = sample(source, (10,))
    if np.dtype(source).kind == "f":
        x = np.concatenate([x, np.array([0.0, -0.0, 0.7, -0.7, 99.5], source)])
        if np.dtype(to).kind == "u":
            x = np.abs(x)
        if to == np.bool_:
            x = np.concatenate([x, np.array([math.nan, math.inf], source)])
    check(ew.CastOp, [x], {"to": element_type_of(to)})


BITCASTS = [
    (np.float32, np.int32),
    (np.int32, np.float32),
    (np.float64, np.int64),
    (np.int64, np.float64),
    (np.float16, np.uint16),
    (np.uint32, np.int32),
    (np.int8, np.uint8),
    (np.bool_, np.uint8),
]


@pytest.mark.parametrize(("source", "to"), BITCASTS, ids=lambda d: np.dtype(d).name)
def test_bitcast_keeps_the_bits(source: type, to: type) -> None:
    """Compared bit for bit (NaN payloads included) with numpy's view."""
    x = sample(source, (12,))
    if np.dtype(source).kind == "f":
        x = np.concatenate([x, np.array([0.0, -0.0, math.inf, -math.nan], source)])
    check(ew.BitcastOp, [x], {"to": element_type_of(to)})
    graph = single_op_module(ew.BitcastOp, [tensor_type_of(x)], {"to": element_type_of(to)})
    (got,) = interp.run(graph, [x])
    assert got.tobytes() == x.view(to).tobytes()


BINARY = [
    ew.AddOp,
    ew.SubOp,
    ew.MulOp,
    ew.DivOp,
    ew.MaxOp,
    ew.MinOp,
    ew.ModOp,
    ew.AndOp,
    ew.OrOp,
    ew.XorOp,
    ew.BitwiseAndOp,
    ew.BitwiseOrOp,
    ew.BitwiseXorOp,
    ew.ShiftLeftOp,
    ew.ShiftRightOp,
    ew.EqualOp,
    ew.NotEqualOp,
    ew.LessOp,
    ew.LessEqualOp,
    ew.GreaterOp,
    ew.GreaterEqualOp,
]


def binary_operands(op_class: type[GraphOp], dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """A (n, m) grid against an (m,) row: every special value meets every
    other one; integer rows hold 0 (but for Div and Mod: a fault, tested
    on its own), -1 and the minimum (traps in C)."""
    kind = np.dtype(dtype).kind
    if kind == "f":
        row = np.array(SPECIAL + [3.0, -7.25], dtype)
        grid = np.concatenate([np.tile(row[:, None], (1, len(row))), sample(dtype, (3, len(row)))])
        return grid, row
    if dtype == np.bool_:
        return sample(dtype, (4, 2)), np.array([False, True])
    if op_class in (ew.ShiftLeftOp, ew.ShiftRightOp):
        width = np.dtype(dtype).itemsize * 8
        amounts = [0, 1, 3, width - 1, width, width + 5] + ([] if kind == "u" else [-1, -9])
        return sample(dtype, (3, len(amounts))), np.array(amounts, dtype)
    zero = [] if op_class in (ew.DivOp, ew.ModOp) else [0]
    row = np.array([*zero, 1, 3, 7] + ([] if kind == "u" else [-1, -3]), dtype)
    grid = sample(dtype, (3, len(row)))
    grid[0, :] = np.iinfo(dtype).min if kind == "i" else np.iinfo(dtype).max
    return grid, row


@pytest.mark.parametrize(
    ("op_class", "dtype"), cases(BINARY, [np.float32, np.float16, *INTEGERS, np.bool_], 2)
)
def test_binary(op_class: type[GraphOp], dtype: type) -> None:
    lhs, rhs = binary_operands(op_class, dtype)
    modes = [{}, {"fmod": bool_attr(True)}] if op_class is ew.ModOp else [{}]
    for props in modes:
        check(op_class, [lhs, rhs], props, **tolerance(dtype))


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("op_class", [ew.DivOp, ew.ModOp])
def test_an_integer_division_by_zero_fails_the_run(op_class: type[GraphOp], dtype: type) -> None:
    """As onnxruntime refuses it, at both levels, naming the op."""
    lhs, rhs = sample(dtype, (2, 3)), np.array([3, 0, 1], dtype)
    graph = single_op_module(op_class, [tensor_type_of(a) for a in (lhs, rhs)], {})
    what = "modulo" if op_class is ew.ModOp else "division"
    for module in (graph, lower(graph)):
        with pytest.raises(
            interp.RunTimeFault, match=f"^{op_class.name[6:].capitalize()}: integer {what} by zero"
        ):
            interp.run(module, [lhs, rhs])


def test_fmod_is_exact() -> None:
    """C fmod, not x - trunc(x / y) * y in the element type: exact for
    quotients up to 2^100 (f32 and f64)."""
    for dtype in (np.float32, np.float64):
        y = (RNG.random(64) * 2 - 1) * (1 + RNG.integers(0, 100, 64))
        x = y * (RNG.random(64) * 2 - 1) * 2.0 ** RNG.integers(0, 100, 64)
        for c_fmod in (True, False):
            props = {"fmod": bool_attr(c_fmod)}
            check(ew.ModOp, [x.astype(dtype), y.astype(dtype)], props, rtol=0, atol=0)


POW_TYPES = [
    (np.float32, np.float32),
    (np.float32, np.int32),
    (np.float16, np.float32),
    (np.float32, np.float64),
    (np.int32, np.float32),
    (np.int32, np.int32),
    (np.int64, np.int64),
    (np.int8, np.int64),
    (np.uint8, np.int32),
    (np.int64, np.uint8),
]


@pytest.mark.parametrize("types", POW_TYPES, ids=lambda t: f"{np.dtype(t[0])}^{np.dtype(t[1])}")
def test_pow(types: tuple[type, type]) -> None:
    base_type, exponent_type = types
    base = RNG.integers(-4, 5, 16).astype(base_type)
    if np.dtype(exponent_type).kind == "f":
        exponent = (RNG.random(16) * 6 - 3).astype(exponent_type)
        if np.dtype(base_type).kind == "f":
            base = np.abs(base)  # a negative base to a fractional power is NaN
        else:
            # Integral powers, and no 0 to a negative one: inf as an integer
            # is undefined.
            exponent = np.round(exponent)
            base[base == 0] = 1
    else:
        low = 0 if np.dtype(exponent_type).kind == "u" else -3
        exponent = RNG.integers(low, 9, 16).astype(exponent_type)
    check(ew.PowOp, [base, exponent], rtol=1e-3 if base_type == np.float16 else 1e-5)


def test_integer_pow_wraps_and_truncates() -> None:
    """Powers wrap at the width for any exponent; a negative exponent gives
    1 / base**n toward zero: ±1 for a base of ±1, else 0."""
    base = np.array([3, -3, 2, 7, -1, -1, 1, 0, 5], np.int64)
    exponent = np.array([100, 41, 63, 2**40 + 3, 5, -5, -9, -2, -1], np.int64)
    check(ew.PowOp, [base, exponent])
    check(ew.PowOp, [base.astype(np.int32), exponent.astype(np.int32)])


shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3)


@SETTINGS
@given(shapes, shapes, shapes)
def test_where_broadcasts(cond_shape: list[int], x_shape: list[int], y_shape: list[int]) -> None:
    arrays = [
        sample(np.bool_, cond_shape),
        sample(np.float32, x_shape),
        sample(np.float32, y_shape),
    ]
    try:
        np.broadcast_shapes(*[a.shape for a in arrays])
    except ValueError:
        return
    check(ew.WhereOp, arrays)


@SETTINGS
@given(shapes, shapes, st.sampled_from([np.float32, np.uint8, np.int32]))
def test_binary_broadcasts(lhs_shape: list[int], rhs_shape: list[int], dtype: type) -> None:
    lhs, rhs = sample(dtype, lhs_shape), sample(dtype, rhs_shape)
    try:
        np.broadcast_shapes(lhs.shape, rhs.shape)
    except ValueError:
        return
    check(ew.SubOp, [lhs, rhs])
    check(ew.DivOp, [lhs, rhs])
