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
  c and the same x up to a constant, and those constants too must fit in
  the |c| * s elements one iteration owns. The iterations then write
  disjoint slices of d: `io * 16 + ii` after a split (ii in [0, 16)) is
  fine, `i + j` with an inner j is not;
- a buffer the loop writes is read (`memref.load`) only through the same
  value and inside the slice of d the iteration writes, so no iteration
  reads what another writes.

Buffers are told apart by their SSA value: distinct buffers are assumed not
to alias (convert-te-to-tir and tir-plan-memory give such kernels).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import CallOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.traits import MemoryEffectKind, get_effects

from xtc.analysis.loops import linear_index
from xtc.dialects.tir import ForOp, PrefetchOp
from xtc.passes.schedule_pass import Refuser
from xtc.passes.tir_loops import describe_buffer, loop_name

# ------------------------------------------------------- spans of an index


def _atom_span(atom: SSAValue, loop: ForOp) -> int | None:
    """How far the atom's value moves during one iteration of `loop`: 0 for
    a value defined outside the loop, (extent - 1) * step for the variable of
    a loop inside it; None when unknown (anything computed inside)."""
    if isinstance(atom, BlockArgument):
        owner = atom.block.parent_op()
        if atom is loop.induction_variable:
            return None
        if isinstance(owner, ForOp) and loop.is_ancestor(owner):
            return max(0, owner.extent - 1) * owner.step.value.data
        return None if owner is not None and loop.is_ancestor(owner) else 0
    return None if loop.is_ancestor(atom.owner) else 0


def _terms_span(terms: dict[SSAValue, int], loop: ForOp) -> int | None:
    total = 0
    for atom, coefficient in terms.items():
        span = _atom_span(atom, loop)
        if span is None:
            return None
        total += abs(coefficient) * span
    return total


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


def _slice_fits(
    indices: Sequence[SSAValue], dim: int, loop: ForOp
) -> tuple[int, dict[SSAValue, int], int] | None:
    """(c, x's terms, x's constant) when index `dim` is `i * c + x` with x
    free of `i` and of known span; else None."""
    form = linear_index(indices[dim])
    iv = loop.induction_variable
    c = form.terms.get(iv, 0)
    rest = form.without(iv)
    if c == 0 or _terms_span(rest, loop) is None:
        return None
    return c, rest, form.constant


def _disjoint_dimension(accesses: _Accesses, loop: ForOp) -> int | None:
    """A dimension in which every store and load of the buffer stays in the
    slice its iteration owns (see the module docstring); None if none does."""
    rank = len(accesses.stores[0].indices)
    step = loop.step.value.data
    for dim in range(rank):
        stores = [_slice_fits(s.indices, dim, loop) for s in accesses.stores]
        if any(s is None for s in stores):
            continue
        fitted = [s for s in stores if s is not None]
        c, terms, _ = fitted[0]
        if any(f[0] != c or f[1] != terms for f in fitted):
            continue
        constants = [f[2] for f in fitted]
        span = _terms_span(terms, loop)
        assert span is not None
        if span + max(constants) - min(constants) >= abs(c) * step:
            continue
        if all(_load_inside(load, dim, c, terms, constants, loop) for load in accesses.loads):
            return dim
    return None


def _load_inside(
    load: memref.LoadOp,
    dim: int,
    c: int,
    terms: dict[SSAValue, int],
    constants: list[int],
    loop: ForOp,
) -> bool:
    fitted = _slice_fits(load.indices, dim, loop)
    if fitted is None:
        return False
    return fitted[0] == c and fitted[1] == terms and min(constants) <= fitted[2] <= max(constants)


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
        if _disjoint_dimension(accesses, self.loop) is not None:
            return
        iv = loop_name(self.loop)
        raise self.refuse(
            f"may let two iterations touch one element of {describe_buffer(accesses.buffer)}: "
            f"its stores do not all index one dimension `{iv} * c + x` with one c and x "
            f"(x free of '{iv}', spanning less than c in an iteration), or a load of it "
            "reads outside that slice",
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
