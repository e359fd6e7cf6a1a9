"""Random graph ops: uniform values from a counter-based generator.

`graph.random_uniform` gives each element a value in [0, 1) that is a hash
of (seed, stream, element index), and of a per-run `entropy` when that
operand is given: the same numbers in the interpreter and in native code,
for a given seed on every run. Without a seed, ONNX wants fresh numbers on
each run: the importer feeds the op `graph.fresh_seed`, a new i64 each time
it runs (the CPU's cycle counter natively, the OS's entropy in the
interpreter). Normal, Bernoulli, Multinomial and training Dropout are
composed from uniforms by the ONNX converters (frontend/converters/random.py).

The hash is splitmix64's output function (`mix64`): the element at flat
index i of a draw with key k is `mix64(k + (i + 1) * GOLDEN)` (splitmix64's
i-th output from state k), its top mantissa-width bits scaled into [0, 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, TypeAttribute
from xdsl.irdl import irdl_op_definition, opt_operand_def, opt_prop_def, prop_def, result_def

from xtc.dialects.graph.base import (
    GraphOp,
    OpPattern,
    Props,
    ShapeError,
    get_int,
    get_ints,
    tensor,
    type_str,
)

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
"""splitmix64's increment (2**64 / the golden ratio, odd)."""
MIX_MULTIPLIERS = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
MIX_SHIFTS = (30, 27, 31)
MANTISSA_BITS = {Float16Type: 11, BFloat16Type: 8, Float32Type: 24, Float64Type: 53}
"""The bits of a uniform value of each float type: integers below 2**bits
convert exactly, so u = (hash >> (64 - bits)) * 2**-bits is exact and < 1."""


def mix64(z: int) -> int:
    """splitmix64's output function of a 64-bit integer (Python int)."""
    first, second = MIX_MULTIPLIERS
    z = ((z ^ (z >> MIX_SHIFTS[0])) * first) & MASK64
    z = ((z ^ (z >> MIX_SHIFTS[1])) * second) & MASK64
    return z ^ (z >> MIX_SHIFTS[2])


def draw_key(seed: int, stream: int) -> int:
    """The key of draw `stream` of a node seeded with `seed` (as unsigned)."""
    return mix64((seed & MASK64) ^ mix64(((stream + 1) * GOLDEN) & MASK64))


def mantissa_bits(element_type: Attribute) -> int:
    for float_type, bits in MANTISSA_BITS.items():
        if isinstance(element_type, float_type):
            return bits
    raise ShapeError(f"draws f16, bf16, f32 or f64 values, not {type_str(element_type)}")


SEED_TYPE = TensorType(i64, [])
"""What graph.fresh_seed gives and graph.random_uniform's entropy is."""


@irdl_op_definition
class RandomUniformOp(GraphOp):
    """Values uniform in [0, 1) of `shape` and float type `dtype`, element i
    from (seed, stream, i) and the scalar `entropy` when given (module
    docstring). No entropy: the same values on every run."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE
    DEFAULTS: ClassVar[Props] = {"stream": IntegerAttr(0, i64)}

    name = "graph.random_uniform"

    entropy = opt_operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    shape = prop_def(DenseArrayBase.constr(i64))
    dtype = prop_def(TypeAttribute)
    seed = prop_def(IntegerAttr[IntegerType])
    stream = opt_prop_def(IntegerAttr[IntegerType])

    assembly_format = "($entropy^)? attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        if operand_types and operand_types[0] != SEED_TYPE:
            raise ShapeError(
                f"{cls.name}: entropy is {type_str(operand_types[0])}, not {type_str(SEED_TYPE)}"
            )
        shape = get_ints(props, "shape")
        if any(d < 0 for d in shape):
            raise ShapeError(f"{cls.name}: negative dimension in shape {list(shape)}")
        dtype = props.get("dtype")
        assert dtype is not None  # a required property
        try:
            mantissa_bits(dtype)
        except ShapeError as e:
            raise ShapeError(f"{cls.name}: {e}") from None
        get_int(props, "seed")
        return [tensor(shape, dtype)]


@irdl_op_definition
class FreshSeedOp(GraphOp):
    """A new i64 each time it runs (not reproducible): the entropy of
    unseeded graph.random_uniform ops."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.OPAQUE

    name = "graph.fresh_seed"

    output = result_def(AnyTensorTypeConstr)

    assembly_format = "attr-dict `:` type($output)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        return [SEED_TYPE]
