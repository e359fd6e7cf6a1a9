"""When the iterations of a loop may run at once, on threads (tir-parallel)
or on the blocks and threads of a GPU (tir-bind): once no two iterations
touch the same element.

The rule (checked per loop, with the loop variable `i`, step s):

- the loop is serial (or already parallel), not inside a parallel loop and
  holding none, and calls no function (a call may touch any memory);
- buffers allocated inside the loop body (`memref.alloca` accumulators,
  `memref.alloc` scratch) belong to one iteration: anything goes there;
- every other buffer the loop writes is written only by `memref.store`, and
  all its stores share one dimension d whose index is `i * c + x` (`i`,
  `i + x`, `x + i * c`, `(i * c) + x`, ... as index arithmetic with constant
  c != 0) where x does not depend on `i` and spans, over one iteration, less
  than |c| * s: x is made of constants, values defined outside the loop
  (one value per run of the loop) and the variables of loops inside it
  (each spanning its own range). Stores into one buffer must have the same
  c and the same values defined outside the loop in x; the rest of x (its
  constant and inner loop variables, which may differ from store to store:
  a peeled tail's copy of a loop) ranges over less than the |c| * s elements
  one iteration owns, all stores together. The iterations then write
  disjoint slices of d: `io * 16 + ii` after a split (ii in [0, 16)) is
  fine, `i + j` with an inner j is not;
- a buffer the loop writes is read (`memref.load`) only through the same
  value and inside the range of d the iteration writes, so no iteration
  reads what another writes.

A loop from 0 by 1 whose variable is used only through `arith.divui` and
`arith.remui` by constants (tir-fuse's `o = v / E`, `i = v % E`, fused
again: `v / E1`, `(v % E1) / E2`, `(v % E1) % E2`) numbers its iterations
by those digits, outermost first. Two iterations then differ first in some
digit k, agreeing in the digits outside it: the rule above must hold for
each digit k in place of `i` (step 1), with the outer digits as values that
keep one value and the inner digits as variables of loops inside, each over
its own range. The loop over a fused `a, b` nest whose stores index `[a, b,
...]` passes, as each of the two loops would alone.

Buffers are told apart by their SSA value: distinct buffers are assumed not
to alias (convert-te-to-tir and tir-plan-memory give such kernels).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import CallOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.traits import MemoryEffectKind, get_effects

from xtc.analysis.loops import constant_int, linear_index
from xtc.dialects.tir import ForOp, PrefetchOp
from xtc.passes.schedule_pass import Refuser
from xtc.passes.tir_loops import describe_buffer, loop_name

# ------------------------------------------------------- spans of an index


def _inner_range(atom: SSAValue, loop: ForOp) -> tuple[int, int] | None:
    """(lowest, highest) value of the variable of a loop inside `loop`; None
    for any other atom."""
    if not isinstance(atom, BlockArgument):
        return None
    owner = atom.block.parent_op()
    if not isinstance(owner, ForOp) or owner is loop or not loop.is_ancestor(owner):
        return None
    first = owner.lower.value.data
    last = first + max(0, owner.extent - 1) * owner.step.value.data
    return min(first, last), max(first, last)


def _fixed_in_iteration(atom: SSAValue, loop: ForOp) -> bool:
    """Whether the atom keeps one value during a run of `loop` (a value
    defined outside it, the variable of a loop around it)."""
    if isinstance(atom, BlockArgument):
        owner = atom.block.parent_op()
        return atom is not loop.induction_variable and not (
            owner is not None and loop.is_ancestor(owner)
        )
    return not loop.is_ancestor(atom.owner)


# ------------------------------------------------------- the legality rule


@dataclass
class _Accesses:
    """The stores into one buffer allocated outside the loop, and its loads."""

    buffer: SSAValue
    stores: list[memref.StoreOp] = field(default_factory=list[memref.StoreOp])
    loads: list[memref.LoadOp] = field(default_factory=list[memref.LoadOp])


def _allocated_inside(buffer: SSAValue, loop: ForOp) -> bool:
    owner = buffer.owner
    return isinstance(owner, memref.AllocOp | memref.AllocaOp) and loop.is_ancestor(owner)


def _buffers_of(op: Operation) -> list[SSAValue]:
    return [v for v in op.operands if isinstance(v.type, MemRefType)]


def _ops_inside(loop: ForOp) -> Iterator[Operation]:
    """Every op in the loop's body, nested ones included."""
    yield from loop.body.walk()


@dataclass(frozen=True)
class _Slice:
    """An index `i * scale + fixed + y`: `fixed` the terms that keep one
    value during a run of the loop, y (the constant and the variables of the
    loops inside) within [low, high]."""

    scale: int
    fixed: dict[SSAValue, int]
    low: int
    high: int


@dataclass(frozen=True)
class _Digit:
    """One digit of the loop's iterations (see the module docstring): the
    value, the step between its values, the digits outside it (one value
    while it varies) and the digits inside it with their extents."""

    value: SSAValue
    step: int
    outer: frozenset[SSAValue] = frozenset()
    inner: tuple[tuple[SSAValue, int], ...] = ()


def _digits(loop: ForOp) -> list[_Digit]:
    """The loop's digits, outermost first: its variable alone, or, when it
    is used only through divui and remui by constants (a fused loop from 0
    by 1), the leaves of that split."""
    extent = loop.extent
    plain = [_Digit(loop.induction_variable, loop.step.value.data)]
    if loop.lower.value.data != 0 or loop.step.value.data != 1:
        return plain
    leaves = _split(loop.induction_variable, extent)
    if leaves is None:
        return plain
    return [
        _Digit(value, 1, frozenset(v for v, _ in leaves[:k]), tuple(leaves[k + 1 :]))
        for k, (value, digit_extent) in enumerate(leaves)
        if digit_extent > 1  # iterations never differ in a digit of one value
    ]


def _split(value: SSAValue, extent: int) -> list[tuple[SSAValue, int]] | None:
    """The digits (value, extent) of `value`, over [0, extent), that its
    divui and remui by a constant E dividing `extent` make: those of
    value / E, then those of value % E; None when `value` has another use
    or no such pair."""
    parts: dict[type[Operation], SSAValue] = {}
    divisors: set[int | None] = set()
    for use in value.uses:
        op = use.operation
        if not isinstance(op, arith.DivUIOp | arith.RemUIOp) or use.index != 0 or type(op) in parts:
            return None
        parts[type(op)] = op.result
        divisors.add(constant_int(op.rhs))
    if len(parts) != 2 or len(divisors) != 1:
        return None
    (divisor,) = divisors
    if divisor is None or divisor <= 0 or extent % divisor:
        return None
    quotient, remainder = parts[arith.DivUIOp], parts[arith.RemUIOp]
    digits: list[tuple[SSAValue, int]] = []
    for part, part_extent in ((quotient, extent // divisor), (remainder, divisor)):
        digits += _split(part, part_extent) or [(part, part_extent)]
    return digits


def _slice_fits(
    indices: Sequence[SSAValue], dim: int, loop: ForOp, digit: _Digit
) -> _Slice | None:
    """Index `dim` as a _Slice when it is `d * c + x` with d the digit, c !=
    0 and x free of `d` and of known range; else None."""
    form = linear_index(indices[dim])
    scale = form.terms.get(digit.value, 0)
    if scale == 0:
        return None
    fixed: dict[SSAValue, int] = {}
    low = high = form.constant
    inner_digits = dict(digit.inner)
    for atom, coefficient in form.without(digit.value).items():
        inner = _inner_range(atom, loop)
        if atom in inner_digits:
            inner = (0, inner_digits[atom] - 1)
        if inner is not None:
            ends = (coefficient * inner[0], coefficient * inner[1])
            low, high = low + min(ends), high + max(ends)
        elif atom in digit.outer or _fixed_in_iteration(atom, loop):
            fixed[atom] = coefficient
        else:
            return None
    return _Slice(scale, fixed, low, high)


def _disjoint(accesses: _Accesses, loop: ForOp) -> bool:
    """Whether, for each digit of the loop, some dimension keeps every
    store and load of the buffer in the slice its iteration owns."""
    return all(_disjoint_dimension(accesses, loop, digit) is not None for digit in _digits(loop))


def _disjoint_dimension(accesses: _Accesses, loop: ForOp, digit: _Digit) -> int | None:
    """A dimension in which every store and load of the buffer stays in the
    slice its iteration's `digit` owns (see the module docstring); None if
    none does."""
    rank = len(accesses.stores[0].indices)
    step = digit.step
    for dim in range(rank):
        fitted = [_slice_fits(s.indices, dim, loop, digit) for s in accesses.stores]
        stores = [f for f in fitted if f is not None]
        if len(stores) < len(fitted):
            continue
        first = stores[0]
        if any(f.scale != first.scale or f.fixed != first.fixed for f in stores):
            continue
        low, high = min(f.low for f in stores), max(f.high for f in stores)
        if high - low >= abs(first.scale) * step:
            continue
        if all(_load_inside(load, dim, first, low, high, loop, digit) for load in accesses.loads):
            return dim
    return None


def _load_inside(
    load: memref.LoadOp, dim: int, store: _Slice, low: int, high: int, loop: ForOp, digit: _Digit
) -> bool:
    fitted = _slice_fits(load.indices, dim, loop, digit)
    if fitted is None:
        return False
    same = fitted.scale == store.scale and fitted.fixed == store.fixed
    return same and low <= fitted.low and fitted.high <= high


@dataclass
class _Checker:
    loop: ForOp
    refuse: Refuser

    def check(self) -> None:
        self.check_kind()
        self.check_iterations()

    def check_iterations(self) -> None:
        self.check_nesting()
        written = self.check_operations()
        for accesses in written.values():
            self.check_disjoint(accesses)

    def check_kind(self) -> None:
        kind = self.loop.kind.data
        if kind not in ("serial", "parallel"):
            raise self.refuse(f"is {kind}; only a serial loop becomes parallel")

    def check_nesting(self) -> None:
        parent = self.loop.parent_op()
        while parent is not None:
            if isinstance(parent, ForOp) and parent.kind.data == "parallel":
                raise self.refuse(
                    f"is inside parallel loop '{loop_name(parent)}': parallel loops do not nest"
                )
            parent = parent.parent_op()
        for op in _ops_inside(self.loop):
            if isinstance(op, ForOp) and op.kind.data == "parallel":
                raise self.refuse(
                    f"holds parallel loop '{loop_name(op)}': parallel loops do not nest", op
                )

    def check_operations(self) -> dict[SSAValue, _Accesses]:
        """Refuses calls and writes other than stores into outside buffers;
        returns the outside buffers stored into, with their accesses."""
        written: dict[SSAValue, _Accesses] = {}
        loads: list[memref.LoadOp] = []
        copies: list[memref.CopyOp] = []
        for op in _ops_inside(self.loop):
            if isinstance(op, CallOp):
                raise self.refuse(
                    f"calls @{op.callee.string_value()}: a call inside a parallel loop may "
                    "touch any memory",
                    op,
                )
            if isinstance(op, memref.StoreOp):
                if not _allocated_inside(op.memref, self.loop):
                    written.setdefault(op.memref, _Accesses(op.memref)).stores.append(op)
            elif isinstance(op, memref.LoadOp):
                loads.append(op)
            elif not op.regions:
                self.check_other_effects(op)
                if isinstance(op, memref.CopyOp):
                    copies.append(op)
        for load in loads:
            if load.memref in written:
                written[load.memref].loads.append(load)
        for copy in copies:
            if copy.source in written:
                raise self.refuse(
                    f"copies all of {describe_buffer(copy.source)}, which it writes", copy
                )
        return written

    def check_other_effects(self, op: Operation) -> None:
        """An op other than a load or store (memref.copy, memref.dealloc, ...)
        may write or free only buffers allocated inside the loop."""
        if isinstance(op, PrefetchOp):
            return  # a cache hint: it reads nothing a value depends on and writes nothing
        effects = get_effects(op)
        if effects is None:
            if not _buffers_of(op) and not any(isinstance(r.type, MemRefType) for r in op.results):
                return  # a scalar op without declared effects (arith.remui): no memory
            raise self.refuse(f"holds '{op.name}', whose memory effects are unknown", op)
        if not any(e.kind in (MemoryEffectKind.WRITE, MemoryEffectKind.FREE) for e in effects):
            return
        targets = [op.destination] if isinstance(op, memref.CopyOp) else _buffers_of(op)
        if not targets or any(not _allocated_inside(t, self.loop) for t in targets):
            raise self.refuse(
                f"holds '{op.name}', which writes memory not allocated in the loop "
                "(only memref.store may write such buffers)",
                op,
            )

    def check_disjoint(self, accesses: _Accesses) -> None:
        if _disjoint(accesses, self.loop):
            return
        iv = loop_name(self.loop)
        raise self.refuse(
            f"may let two iterations touch one element of {describe_buffer(accesses.buffer)}: "
            f"its stores do not all index one dimension `{iv} * c + x` with one c and x "
            f"(x free of '{iv}', spanning less than c in an iteration), or a load of it "
            "reads outside that slice"
            + ("" if len(_digits(self.loop)) < 2 else " (for each digit of the fused loop)"),
            accesses.stores[0],
        )


def check_parallelizable(loop: ForOp, refuse: Refuser) -> None:
    """Refuses (with `refuse`) a loop that may not become parallel: one
    neither serial nor parallel, or whose iterations are not independent
    (check_independent_iterations)."""
    _Checker(loop, refuse).check()


def check_independent_iterations(loop: ForOp, refuse: Refuser) -> None:
    """Refuses (with `refuse`) a loop whose iterations may not run at once
    by the rule of the module docstring, whatever its kind: a parallel
    loop around or inside it, a call inside it, a write other than a store
    into a buffer from outside it, or two iterations that may touch one
    element. tir-bind checks the loops it binds to a GPU axis with it."""
    _Checker(loop, refuse).check_iterations()
