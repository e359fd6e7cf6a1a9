"""numpy implementations of the random graph ops (dialects/graph/random.py):
the same integer hash as the compute rule, so a seeded draw is bit-exact
between the interpreter and native code."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from xtc.dialects.graph.base import elem, get_int, get_ints, op_props
from xtc.dialects.graph.constant import numpy_dtype
from xtc.dialects.graph.random import (
    GOLDEN,
    MIX_MULTIPLIERS,
    MIX_SHIFTS,
    FreshSeedOp,
    RandomUniformOp,
    draw_key,
    mantissa_bits,
    mix64,
)

Args = tuple[Any, ...]
Results = tuple[Any, ...]


def mix64_array(z: np.ndarray) -> np.ndarray:
    """mix64 of each element of a uint64 array (wrapping arithmetic)."""
    first, second = (np.uint64(m) for m in MIX_MULTIPLIERS)
    shift_a, shift_b, shift_c = (np.uint64(s) for s in MIX_SHIFTS)
    z = (z ^ (z >> shift_a)) * first
    z = (z ^ (z >> shift_b)) * second
    return z ^ (z >> shift_c)


def uniform(key: int, shape: tuple[int, ...], dtype: np.dtype[Any], bits: int) -> np.ndarray:
    """The draw of `key`: element i is mix64(key + (i + 1) * GOLDEN)'s top
    `bits` bits times 2**-bits."""
    count = int(np.prod(shape, dtype=np.int64))
    with np.errstate(over="ignore"):
        steps = np.arange(1, count + 1, dtype=np.uint64) * np.uint64(GOLDEN)
        hashes = mix64_array(steps + np.uint64(key))
    top = (hashes >> np.uint64(64 - bits)).astype(dtype)
    return (top * dtype.type(2.0**-bits)).reshape(shape)


def fresh_entropy() -> int:
    """A new 64-bit value from the OS (differs across runs and processes)."""
    return int.from_bytes(os.urandom(8), "little", signed=True)


@register_impls
class RandomFunctions(InterpreterFunctions):
    @impl(RandomUniformOp)
    def run_random_uniform(
        self, interpreter: Interpreter, op: RandomUniformOp, args: Args
    ) -> Results:
        props = op_props(op)
        key = draw_key(get_int(props, "seed"), get_int(props, "stream"))
        if args:
            key = mix64(key ^ (int(np.asarray(args[0])) & ((1 << 64) - 1)))
        element = elem(op.output.type)
        dtype = numpy_dtype(element)
        shape = tuple(get_ints(props, "shape"))
        return (uniform(key, shape, dtype, mantissa_bits(element)),)

    @impl(FreshSeedOp)
    def run_fresh_seed(self, interpreter: Interpreter, op: FreshSeedOp, args: Args) -> Results:
        return (np.array(fresh_entropy(), np.int64),)
