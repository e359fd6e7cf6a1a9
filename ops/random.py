"""Compute rules of the random graph ops (dialects/graph/random.py): the
integer hash on i64 (multiplies, xors, logical shifts; wrapping as the
interpreter's uint64), then the top mantissa bits as a float in [0, 1)."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import i64

from xtc.dialects.graph.base import GraphOp, elem, get_int, op_props
from xtc.dialects.graph.random import (
    GOLDEN,
    MIX_MULTIPLIERS,
    MIX_SHIFTS,
    FreshSeedOp,
    RandomUniformOp,
    draw_key,
    mantissa_bits,
)
from xtc.dialects.tir import CycleCounterOp
from xtc.ops import compute_rule
from xtc.ops.te_builder import Expr, KernelBuilder, Tensor, constant, convert
from xtc.ops.tensor import linearize, result_compute


def shift_right(x: Expr, bits: int) -> Expr:
    """Logical (unsigned) shift right of an i64."""
    return Expr(arith.ShRUIOp(x.value, constant(bits, i64).value).result)


def mix64(z: Expr) -> Expr:
    """splitmix64's output function on an i64 (dialects/graph/random.py)."""
    first, second = MIX_MULTIPLIERS
    z = (z ^ shift_right(z, MIX_SHIFTS[0])) * first
    z = (z ^ shift_right(z, MIX_SHIFTS[1])) * second
    return z ^ shift_right(z, MIX_SHIFTS[2])


@compute_rule(RandomUniformOp)
def random_uniform(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    props = op_props(op)
    key = draw_key(get_int(props, "seed"), get_int(props, "stream"))
    element = elem(op.results[0].type)
    bits = mantissa_bits(element)
    shape = list(op.results[0].type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]

    def body(*indices: Expr) -> Expr:
        draw = constant(key, i64)
        if inputs:
            draw = mix64(draw ^ inputs[0][()])
        step = convert(linearize(indices, shape), i64) + 1
        hashed = mix64(draw + step * GOLDEN)
        top = convert(shift_right(hashed, 64 - bits), element)
        return top * 2.0**-bits

    return [result_compute(k, op, body)]


@compute_rule(FreshSeedOp)
def fresh_seed(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    return [result_compute(k, op, lambda: Expr(CycleCounterOp().result))]
