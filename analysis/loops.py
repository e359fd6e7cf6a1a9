"""Affine analysis of loop indices, and the region of a buffer that a loop
body reads.

An index is read as `constant + sum(coefficient * atom)` (LinearIndex):
atoms are SSA values that are not integer constants, sums, differences or
products by a constant. Within the body of a loop L, each atom is either
fixed during one run of the body (a value defined before L, L's own
variable) or the variable of a loop inside L, whose static range bounds
the index: AccessIndex and Dimension (the box the loads read), what
tir-cache-read packs, tir-compute-at computes and tir-prefetch fetches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from xtc.dialects.tir import ForOp

# ------------------------------------------------------- trip counts


def trips_around(op: Operation, within: Operation | None = None) -> int:
    """How many times `op` runs per run of `within` (by default, of its
    outermost op): the product of the extents of the loops around it."""
    trips, parent = 1, op.parent_op()
    while parent is not None and parent is not within:
        if isinstance(parent, ForOp):
            trips *= parent.extent
        parent = parent.parent_op()
    return trips


# ------------------------------------------------------- linear indices


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer (or index) arith.constant, None for another value."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def depends_on(value: SSAValue, index: SSAValue) -> bool:
    """Whether `value` is `index` or computed from it, through any ops."""
    if value == index:
        return True
    owner = value.owner
    return isinstance(owner, Operation) and any(
        depends_on(operand, index) for operand in owner.operands
    )


def constant_float(value: SSAValue) -> float | None:
    """The value of a float arith.constant, None for another value."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return owner.value.value.data
    return None


@dataclass(frozen=True)
class LinearIndex:
    """An index as `constant + sum(coefficient * atom)`: atoms are SSA values
    that are not sums, differences or products by a constant."""

    terms: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    constant: int = 0

    def plus(self, other: LinearIndex, sign: int = 1) -> LinearIndex:
        terms = dict(self.terms)
        for atom, coefficient in other.terms.items():
            terms[atom] = terms.get(atom, 0) + sign * coefficient
        return LinearIndex(
            {a: c for a, c in terms.items() if c != 0}, self.constant + sign * other.constant
        )

    def times(self, factor: int) -> LinearIndex:
        if factor == 0:
            return LinearIndex()
        return LinearIndex({a: c * factor for a, c in self.terms.items()}, self.constant * factor)

    def without(self, atom: SSAValue) -> dict[SSAValue, int]:
        """The terms other than `atom`'s."""
        return {a: c for a, c in self.terms.items() if a is not atom}


def linear_index(value: SSAValue) -> LinearIndex:
    """`value` as a linear form over the atoms it is built from by addi,
    subi and muli by a constant (constants folded)."""
    constant = constant_int(value)
    if constant is not None:
        return LinearIndex(constant=constant)
    owner = value.owner
    if isinstance(owner, arith.AddiOp | arith.SubiOp):
        sign = 1 if isinstance(owner, arith.AddiOp) else -1
        return linear_index(owner.lhs).plus(linear_index(owner.rhs), sign)
    if isinstance(owner, arith.MuliOp):
        for scaled, factor in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            k = constant_int(factor)
            if k is not None:
                return linear_index(scaled).times(k)
    return LinearIndex({value: 1})


# ------------------------------------------------------- the region read


class Refuse(Protocol):
    """How an analysis run for a pass refuses: the pass's diagnostic for
    `message`, located at `op` (the pass's loop by default)."""

    def __call__(self, message: str, op: Operation | None = None) -> Exception: ...


@dataclass(frozen=True)
class AccessIndex:
    """One index of a load inside loop L's body, split as `outside +
    constant + sum(c * v)`: `outside` are the terms whose values do not
    change during one run of the body (values defined before L and L's own
    variable), `inner` the variables v of loops inside L with their
    coefficients c. `low` and `high` bound `constant + sum(c * v)` over the
    inner loops' ranges."""

    outside: dict[SSAValue, int]
    constant: int
    inner: dict[SSAValue, int]
    low: int
    high: int


@dataclass(frozen=True)
class Dimension:
    """What the loads read in one dimension of the buffer: `outside + low`
    to `outside + high`, both included. `kept` says whether a local copy
    has this dimension (it does unless every load reads one fixed index
    there)."""

    outside: dict[SSAValue, int]
    low: int
    high: int
    kept: bool

    @property
    def span(self) -> int:
        return self.high - self.low + 1


def _inner_loop_of(value: SSAValue, loop: ForOp) -> ForOp | None:
    """The loop strictly inside `loop` whose variable `value` is, if any."""
    if not isinstance(value, BlockArgument):
        return None
    owner = value.block.parent_op()
    if isinstance(owner, ForOp) and owner is not loop and loop.is_ancestor(owner):
        return owner
    return None


def _defined_inside(value: SSAValue, loop: ForOp) -> Operation | None:
    """The op inside `loop`'s body that defines `value` (for a block
    argument, the op owning its block); None for a value that stays fixed
    during one run of the body."""
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        return (
            owner if owner is not None and owner is not loop and loop.is_ancestor(owner) else None
        )
    owner = cast(Operation, value.owner)
    return owner if loop.is_ancestor(owner) else None


def _value_range(loop: ForOp, coefficient: int) -> tuple[int, int]:
    """The least and greatest `coefficient * v` over the values v of the
    loop's variable."""
    first = loop.lower.value.data
    last = first + (loop.extent - 1) * loop.step.value.data
    ends = (coefficient * first, coefficient * last)
    return min(ends), max(ends)


def access_index(value: SSAValue, loop: ForOp, refuse: Refuse, load: memref.LoadOp) -> AccessIndex:
    """`value` (an index of `load`) as an AccessIndex; refuses an index
    that is not such a sum."""
    form = linear_index(value)
    outside: dict[SSAValue, int] = {}
    inner: dict[SSAValue, int] = {}
    low = high = form.constant
    for atom, coefficient in form.terms.items():
        inner_loop = _inner_loop_of(atom, loop)
        if inner_loop is not None:
            if inner_loop.extent == 0:
                raise refuse(f"loop '{inner_loop.loop_name.data}' runs no iteration", inner_loop)
            inner[atom] = coefficient
            least, greatest = _value_range(inner_loop, coefficient)
            low, high = low + least, high + greatest
            continue
        definer = _defined_inside(atom, loop)
        if definer is not None:
            raise refuse(
                f"an index of its load is not a sum of constant multiples of loop "
                f"variables: it uses the result of '{definer.name}'",
                load,
            )
        outside[atom] = coefficient
    return AccessIndex(outside, form.constant, inner, low, high)


def loads_of(loop: ForOp, buffer: SSAValue, refuse: Refuse) -> list[memref.LoadOp]:
    """The loads of `buffer` in `loop`'s body; refuses a body that writes
    `buffer` or passes it to another op, a load under an op other than
    tir.for, and a body that does not read it."""
    loads: list[memref.LoadOp] = []
    for op in loop.body.walk():
        if buffer not in op.operands:
            continue
        if isinstance(op, memref.StoreOp) and op.memref is buffer:
            raise refuse("the loop body writes it", op)
        if not isinstance(op, memref.LoadOp):
            raise refuse(f"the loop body passes it to '{op.name}'", op)
        parent = op.parent_op()
        while isinstance(parent, ForOp) and parent is not loop:
            parent = parent.parent_op()
        if parent is not loop:
            under = parent.name if parent is not None else "no loop"
            raise refuse(f"the loop body reads it under '{under}'", op)
        loads.append(op)
    if not loads:
        raise refuse("the loop body does not read it")
    return loads


def region_read(
    loads: Sequence[Sequence[AccessIndex]], refuse: Refuse, ops: Sequence[memref.LoadOp]
) -> list[Dimension]:
    """The box the loads read: per dimension, the union of their ranges.
    Refuses loads whose fixed parts differ in a dimension (constants
    aside)."""
    dimensions: list[Dimension] = []
    for d, first in enumerate(loads[0]):
        low, high = first.low, first.high
        for indices, op in zip(loads[1:], ops[1:], strict=True):
            index = indices[d]
            if index.outside != first.outside:
                raise refuse(
                    f"its loads read different regions in dimension {d} (their indices "
                    "differ by more than a constant outside the inner loops)",
                    op,
                )
            low, high = min(low, index.low), max(high, index.high)
        kept = low != high or any(indices[d].inner for indices in loads)
        dimensions.append(Dimension(first.outside, low, high, kept))
    return dimensions


@dataclass(frozen=True)
class Region:
    """The loads of a buffer in a loop's body, their indices split
    (AccessIndex, one list per load) and the box they read."""

    loads: list[memref.LoadOp]
    indices: list[list[AccessIndex]]
    dimensions: list[Dimension]


def region_of(loop: ForOp, buffer: SSAValue, refuse: Refuse) -> Region:
    """The region of `buffer` that `loop`'s body reads; refuses (through
    `refuse`) a body that writes the buffer or reads it otherwise than by
    loads under tir.for at affine indices (see loads_of, access_index,
    region_read)."""
    loads = loads_of(loop, buffer, refuse)
    indices = [[access_index(i, loop, refuse, load) for i in load.indices] for load in loads]
    return Region(loads, indices, region_read(indices, refuse, loads))
