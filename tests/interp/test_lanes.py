"""`arith` and `math` on lanes (interp/lanes.py) compute, lane by lane, what
the scalar interpreter (interp/scalar.py) computes: every integer op at
every width (signed and unsigned readings, zero divisors, shifts past the
width), every float op (NaN, infinities, signed zeros), the comparisons and
the casts; with each operand an array of lanes or one uniform scalar."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType, IntegerType, f16, f32, f64, i1, i8, i32, i64
from xdsl.ir import Attribute, Operation
from xdsl.utils.test_value import create_ssa_value

from xtc.interp import lanes, scalar

LANES = 6
INT_TYPES: list[Attribute] = [i8, i32, i64, IndexType()]
FLOAT_TYPES: list[Attribute] = [f16, f32, f64]


def _ints(t: Attribute) -> st.SearchStrategy[int]:
    width = scalar.width_of(t)
    edges = st.sampled_from([0, 1, -1, width - 1, width, 1 << (width - 1), -(1 << (width - 1))])
    return st.one_of(edges, st.integers(-(1 << (width - 1)), (1 << (width - 1)) - 1)).map(
        lambda v: scalar.wrap(v, t)
    )


def _floats(t: Attribute) -> st.SearchStrategy[Any]:
    width = {f16: 16, f32: 32, f64: 64}[t]
    edges = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -2.5, 1e30])
    values = st.one_of(edges, st.floats(width=width, allow_subnormal=False))

    def rounded(v: float) -> Any:
        with np.errstate(over="ignore"):
            return scalar.to_float(t, v)

    return values.map(rounded)


def _lanes_of(values: list[Any], t: Attribute, uniform: bool) -> lanes.Lanes:
    array = np.array(values, lanes.dtype_of(t))
    return array[0] if uniform else array


def _same(got: Any, expected: Any, signed_zeros: bool = True) -> bool:
    """Equal as the type's values: NaN matches NaN, -0.0 does not match +0.0
    (unless not `signed_zeros`)."""
    if isinstance(expected, float | np.floating):
        got, expected = float(got), float(expected)
        return (np.isnan(got) and np.isnan(expected)) or (
            got == expected and (np.signbit(got) == np.signbit(expected) or not signed_zeros)
        )
    return int(got) == int(expected)


def check(
    op: Operation,
    operands: list[list[Any]],
    uniform: list[bool],
    scalar_op: Any,
    signed_zeros: bool = True,
) -> None:
    """`lanes.evaluate(op)` on the operands as lanes equals `scalar_op` per lane."""
    args = [
        _lanes_of(values, o.type, u)
        for values, o, u in zip(operands, op.operands, uniform, strict=True)
    ]
    with np.errstate(all="ignore"):
        got = np.broadcast_to(lanes.evaluate(op, args), (LANES,))
        for lane in range(LANES):
            scalars = [
                values[0 if u else lane] for values, u in zip(operands, uniform, strict=True)
            ]
            expected = scalar_op(scalars)
            assert _same(got[lane], expected, signed_zeros), (op.name, scalars, got[lane], expected)


def _table(op: Operation) -> Any:
    impl = scalar.TABLE_IMPLS[type(op)]
    return lambda args: impl(None, None, op, tuple(args))[0]


INT_OPS = [op for op in scalar.INT_BINARY if op in lanes.BINARY]
FLOAT_OPS = [op for op in scalar.FLOAT_BINARY if op in lanes.BINARY]


def test_every_scalar_binary_op_has_a_lane_form() -> None:
    assert set(lanes.BINARY) >= set(scalar.INT_BINARY) - {arith.CeilDivSIOp, arith.CeilDivUIOp}
    assert set(lanes.BINARY) >= set(scalar.FLOAT_BINARY)


@pytest.mark.parametrize("op_type", INT_OPS, ids=lambda o: o.name)
@settings(max_examples=40, deadline=None)
@given(data=st.data(), t=st.sampled_from(INT_TYPES))
def test_integer_ops_compute_what_the_scalar_interpreter_does(
    data: st.DataObject, op_type: type[Operation], t: Attribute
) -> None:
    op = op_type(create_ssa_value(t), create_ssa_value(t))
    operands = [data.draw(st.lists(_ints(t), min_size=LANES, max_size=LANES)) for _ in range(2)]
    uniform = data.draw(st.lists(st.booleans(), min_size=2, max_size=2))
    check(op, operands, uniform, _table(op))


@pytest.mark.parametrize("op_type", FLOAT_OPS, ids=lambda o: o.name)
@settings(max_examples=40, deadline=None)
@given(data=st.data(), t=st.sampled_from(FLOAT_TYPES))
def test_float_ops_compute_what_the_scalar_interpreter_does(
    data: st.DataObject, op_type: type[Operation], t: Attribute
) -> None:
    op = op_type(create_ssa_value(t), create_ssa_value(t))
    operands = [data.draw(st.lists(_floats(t), min_size=LANES, max_size=LANES)) for _ in range(2)]
    uniform = data.draw(st.lists(st.booleans(), min_size=2, max_size=2))
    # numpy's scalar power gives pow(-0, 0.5) = -0, its array loop IEEE's +0
    check(op, operands, uniform, _table(op), signed_zeros=op_type is not math.PowFOp)


UNARY = [
    arith.NegfOp,
    math.AbsFOp,
    math.ExpOp,
    math.LogOp,
    math.SqrtOp,
    math.RsqrtOp,
    math.ErfOp,
    math.TanhOp,
    math.FloorOp,
    math.RoundOp,
    math.RoundEvenOp,
    math.TruncOp,
]


@pytest.mark.parametrize("op_type", UNARY, ids=lambda o: o.name)
@settings(max_examples=25, deadline=None)
@given(data=st.data(), t=st.sampled_from([f32, f64]))
def test_float_functions_compute_what_the_scalar_interpreter_does(
    data: st.DataObject, op_type: type[Operation], t: Attribute
) -> None:
    op = op_type(create_ssa_value(t))
    operands = [data.draw(st.lists(_floats(t), min_size=LANES, max_size=LANES))]
    check(op, operands, [data.draw(st.booleans())], _table(op))


@pytest.mark.parametrize("predicate", range(10))
@settings(max_examples=25, deadline=None)
@given(data=st.data(), t=st.sampled_from(INT_TYPES))
def test_cmpi_computes_what_the_scalar_interpreter_does(
    data: st.DataObject, predicate: int, t: Attribute
) -> None:
    op = arith.CmpiOp(create_ssa_value(t), create_ssa_value(t), predicate)
    operands = [data.draw(st.lists(_ints(t), min_size=LANES, max_size=LANES)) for _ in range(2)]
    width = scalar.width_of(t)
    check(
        op,
        operands,
        [False, data.draw(st.booleans())],
        lambda a: scalar.cmpi(predicate, a[0], a[1], width),
    )


@pytest.mark.parametrize("predicate", range(16))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_cmpf_computes_what_the_scalar_interpreter_does(
    data: st.DataObject, predicate: int
) -> None:
    op = arith.CmpfOp(create_ssa_value(f32), create_ssa_value(f32), predicate)
    operands = [data.draw(st.lists(_floats(f32), min_size=LANES, max_size=LANES)) for _ in range(2)]
    check(
        op,
        operands,
        [False, data.draw(st.booleans())],
        lambda a: scalar.cmpf(predicate, a[0], a[1]),
    )


CASTS = [
    (arith.FPToSIOp, f32, i32),
    (arith.FPToSIOp, f64, i64),
    (arith.FPToSIOp, f32, i8),
    (arith.FPToUIOp, f32, i32),
    (arith.FPToUIOp, f64, i64),
    (arith.SIToFPOp, i32, f32),
    (arith.SIToFPOp, i64, f32),
    (arith.UIToFPOp, i32, f64),
    (arith.ExtSIOp, i8, i32),
    (arith.ExtUIOp, i8, i64),
    (arith.TruncIOp, i64, i8),
    (arith.IndexCastOp, IndexType(), i32),
    (arith.IndexCastOp, i32, IndexType()),
    (arith.ExtFOp, f16, f32),
    (arith.TruncFOp, f64, f32),
    (arith.BitcastOp, f32, i32),
    (arith.BitcastOp, i64, f64),
]


@pytest.mark.parametrize("cast", CASTS, ids=lambda c: f"{c[0].name}-{c[1]}-{c[2]}")
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_casts_compute_what_the_scalar_interpreter_does(
    data: st.DataObject, cast: tuple[type[Operation], Attribute, Attribute]
) -> None:
    op_type, source, result = cast
    op = op_type(create_ssa_value(source), result)
    values = _floats(source) if source in FLOAT_TYPES else _ints(source)
    operands = [data.draw(st.lists(values, min_size=LANES, max_size=LANES))]
    check(op, operands, [data.draw(st.booleans())], _table(op))


def test_select_picks_per_lane_or_for_all() -> None:
    op = arith.SelectOp(create_ssa_value(i1), create_ssa_value(f32), create_ssa_value(f32))
    condition = np.array([True, False, True])
    yes, no = np.float32(1), np.array([5, 6, 7], np.float32)
    np.testing.assert_array_equal(lanes.evaluate(op, [condition, yes, no]), [1, 6, 1])
    assert lanes.evaluate(op, [np.bool_(False), yes, no]) is no


@pytest.mark.parametrize("op_type", [arith.AddiOp, arith.MuliOp, arith.DivUIOp])
def test_i1_arithmetic_is_not_lane_wise(op_type: type[Operation]) -> None:
    """numpy's bool add is an or, not i1's xor: such ops run one thread at a time."""
    assert not lanes.is_lane_wise(op_type(create_ssa_value(i1), create_ssa_value(i1)))
    assert lanes.is_lane_wise(arith.XOrIOp(create_ssa_value(i1), create_ssa_value(i1)))


def test_a_vector_type_is_not_lane_wise() -> None:
    from xdsl.dialects.builtin import VectorType

    v4 = VectorType(f32, [4])
    assert not lanes.is_lane_wise(arith.AddfOp(create_ssa_value(v4), create_ssa_value(v4)))
    assert not lanes.is_lane_wise(
        arith.AddiOp(create_ssa_value(IntegerType(3)), create_ssa_value(IntegerType(3)))
    )


def test_a_cast_between_signless_and_unsigned_keeps_the_bits() -> None:
    """iN <-> uiN (builtin.unrealized_conversion_cast, how unsigned
    buffers reach arith) on lanes: the same bits, as the scalar path."""
    from xdsl.dialects.builtin import Signedness, UnrealizedConversionCastOp

    ui8 = IntegerType(8, Signedness.UNSIGNED)
    to_signless = UnrealizedConversionCastOp.get([create_ssa_value(ui8)], [i8])
    to_unsigned = UnrealizedConversionCastOp.get([create_ssa_value(i8)], [ui8])
    assert lanes.is_lane_wise(to_signless) and lanes.is_lane_wise(to_unsigned)
    raw = np.array([0, 1, 127, 128, 255], np.uint8)
    signless = lanes.evaluate(to_signless, [raw])
    assert signless.dtype == np.int8 and signless.tolist() == [0, 1, 127, -128, -1]
    assert lanes.evaluate(to_unsigned, [signless]).tolist() == raw.tolist()
    wider = UnrealizedConversionCastOp.get([create_ssa_value(ui8)], [i32])
    assert not lanes.is_lane_wise(wider)


def test_pow_of_minus_infinity_to_one_half_is_infinity_with_one_exponent_for_all() -> None:
    """C (and llvm.pow) give +inf; numpy's power with a scalar or broadcast
    exponent takes its sqrt path and gives nan (hypothesis found it)."""
    base = np.array([-np.inf, 4.0, 0.0, -np.inf], np.float32)
    for exponent in (np.float32(0.5), np.full(4, 0.5, np.float32)):
        np.testing.assert_array_equal(lanes.powf(base, exponent), [np.inf, 2.0, 0.0, np.inf])
    assert lanes.powf(np.float32(-np.inf), np.float32(0.5)) == np.inf
