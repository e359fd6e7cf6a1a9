"""tir-cache-read: the part of an argument buffer that a loop's body reads,
copied into a local buffer at the start of the body (packing), the body's
loads of the argument redirected to the copy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import (
    ScheduleError,
    check_fresh_names,
    find_loop,
    function_name,
    index_constant,
    is_pure_scalar,
    loop_name,
    nest_of,
    new_loop,
    select_functions,
)
from xtc.passes.tir_parallel import linear_index

PASS = "tir-cache-read"
LOCAL_ALIGNMENT = 64
MAX_STACK_BYTES = 64 * 1024
"""A local buffer up to this size is a `memref.alloca`, a larger one a
`memref.alloc` freed at the end of the loop body."""
MAX_LOCAL_BYTES = 16 * 1024 * 1024
"""The largest local buffer the pass makes."""


# ------------------------------------------------------- naming the buffer


def describe_buffer(func: FuncOp, buffer: SSAValue) -> str:
    """`%in1 (argument 1)`, or `argument 1` for an argument without a name."""
    position = cast(BlockArgument, buffer).index
    hint = buffer.name_hint
    return f"%{hint} (argument {position})" if hint else f"argument {position}"


def find_buffer(func: FuncOp, buffer: int | str, pass_name: str = PASS) -> SSAValue:
    """The argument of `func` that `buffer` names: its position (0 is the
    first), or its SSA name (`in1` or `%in1`). Refuses (as `pass_name`) a
    position out of range, a name no argument or several arguments have,
    and an argument that is not a memref."""
    arguments = func.body.block.args
    where = f"@{function_name(func)}"
    if isinstance(buffer, str) and buffer.isdigit():
        buffer = int(buffer)
    if isinstance(buffer, int):
        if not 0 <= buffer < len(arguments):
            raise ScheduleError(
                pass_name,
                f"buffer={buffer}: {where} has {len(arguments)} arguments; buffer is a "
                f"position from 0 to {len(arguments) - 1} or an argument's name",
                func,
            )
        chosen = arguments[buffer]
    else:
        name = buffer.removeprefix("%")
        named = [a for a in arguments if a.name_hint == name]
        if len(named) != 1:
            listed = ", ".join(f"%{a.name_hint}" for a in arguments if a.name_hint)
            problem = "no argument" if not named else f"{len(named)} arguments"
            raise ScheduleError(
                pass_name,
                f"buffer={buffer}: {problem} of {where} named %{name} (its arguments: "
                f"{listed or 'none named'}); name it by its position instead",
                func,
            )
        chosen = named[0]
    if not isinstance(chosen.type, MemRefType):
        raise ScheduleError(
            pass_name,
            f"buffer={buffer}: {describe_buffer(func, chosen)} of {where} is a "
            f"{chosen.type}, not a buffer",
            func,
        )
    return chosen


# ------------------------------------------------------- the region read


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
    to `outside + high`, both included. `kept` says whether the local
    buffer has this dimension (it does unless every load reads one fixed
    index there)."""

    outside: dict[SSAValue, int]
    low: int
    high: int
    kept: bool

    @property
    def span(self) -> int:
        return self.high - self.low + 1


@dataclass(frozen=True)
class Refuser:
    """Builds the ScheduleError of one application: names the pass, the
    buffer, the loop and the function."""

    func: FuncOp
    loop: ForOp
    buffer: SSAValue

    def __call__(self, message: str, op: Operation | None = None) -> ScheduleError:
        return ScheduleError(
            PASS,
            f"cannot cache {describe_buffer(self.func, self.buffer)} in loop "
            f"'{loop_name(self.loop)}' of @{function_name(self.func)}: {message}",
            op if op is not None else self.loop,
        )


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


def access_index(value: SSAValue, loop: ForOp, refuse: Refuser, load: memref.LoadOp) -> AccessIndex:
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
                raise refuse(f"loop '{loop_name(inner_loop)}' runs no iteration", inner_loop)
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


def loads_to_cache(loop: ForOp, buffer: SSAValue, refuse: Refuser) -> list[memref.LoadOp]:
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
    loads: Sequence[Sequence[AccessIndex]], refuse: Refuser, ops: Sequence[memref.LoadOp]
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


def _element_bytes(element: Attribute) -> int:
    bitwidth = getattr(element, "bitwidth", 64)
    return max(1, (int(bitwidth) + 7) // 8)


# ------------------------------------------------------- building the copy


def emit_sum(terms: dict[SSAValue, int], constant: int) -> tuple[list[Operation], SSAValue]:
    """Index arithmetic computing `constant + sum(c * v)`: the ops and the
    value (a term itself when it is the whole sum)."""
    ops: list[Operation] = []
    total: SSAValue | None = None
    for value, coefficient in terms.items():
        term = value
        if coefficient != 1:
            scale = index_constant(coefficient)
            product = arith.MuliOp(value, scale.result)
            ops += [scale, product]
            term = product.result
        if total is None:
            total = term
        else:
            add = arith.AddiOp(total, term)
            ops.append(add)
            total = add.result
    if total is None or constant != 0:
        offset = index_constant(constant)
        ops.append(offset)
        if total is None:
            return ops, offset.result
        add = arith.AddiOp(total, offset.result)
        ops.append(add)
        total = add.result
    return ops, total


def allocate_local(
    element: Attribute, shape: Sequence[int], name: str
) -> tuple[Operation, SSAValue, bool]:
    """A 64-byte aligned local buffer: an alloca, or an alloc when it is
    larger than MAX_STACK_BYTES. The op, its value and whether it must be
    freed."""
    on_heap = prod(shape) * _element_bytes(element) > MAX_STACK_BYTES
    kind = memref.AllocOp if on_heap else memref.AllocaOp
    op = kind.get(element, LOCAL_ALIGNMENT, shape)
    op.memref.name_hint = name
    return op, op.memref, on_heap


def copy_nest(
    buffer: SSAValue, local: SSAValue, dimensions: Sequence[Dimension], names: Sequence[str]
) -> ForOp:
    """`for <L>_cr0 .. <L>_crN { local[cr..] = buffer[outside + low + cr ..] }`,
    one loop per kept dimension (a dropped one reads at `outside + low`)."""
    kept = [d for d in dimensions if d.kept]
    loops = [new_loop(name, d.span) for name, d in zip(names, kept, strict=True)]
    body = nest_of(loops)
    ivs = iter(loop.induction_variable for loop in loops)
    source: list[SSAValue] = []
    local_indices: list[SSAValue] = []
    for dimension in dimensions:
        terms = dict(dimension.outside)
        if dimension.kept:
            iv = next(ivs)
            terms[iv] = terms.get(iv, 0) + 1
            local_indices.append(iv)
        ops, index = emit_sum(terms, dimension.low)
        body.add_ops(ops)
        source.append(index)
    value = memref.LoadOp.get(buffer, source)
    body.add_ops([value, memref.StoreOp.get(value.res, local, local_indices)])
    return loops[0]


def _erase_dead_index_ops(
    values: Sequence[SSAValue], loop: ForOp, rewriter: PatternRewriter
) -> None:
    """Erases the pure ops inside `loop` that computed `values` and that
    nothing uses any more, and those feeding only them."""
    pending = list(values)
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, Operation) or not loop.is_ancestor(owner):
            continue
        if owner is loop or not is_pure_scalar(owner):
            continue
        if any(result.uses for result in owner.results):
            continue
        operands = list(owner.operands)
        rewriter.erase(owner)
        pending.extend(operands)


def redirect(
    load: memref.LoadOp,
    indices: Sequence[AccessIndex],
    dimensions: Sequence[Dimension],
    local: SSAValue,
    loop: ForOp,
    rewriter: PatternRewriter,
) -> None:
    """`buffer[index..]` -> `local[inner + constant - low ..]` over the kept
    dimensions, the index arithmetic built just before the load."""
    new_indices: list[SSAValue] = []
    for index, dimension in zip(indices, dimensions, strict=True):
        if not dimension.kept:
            continue
        ops, value = emit_sum(index.inner, index.constant - dimension.low)
        rewriter.insert(ops, InsertPoint.before(load))
        new_indices.append(value)
    old_indices = list(load.indices)
    rewriter.replace(load, memref.LoadOp.get(local, new_indices))
    _erase_dead_index_ops(old_indices, loop, rewriter)


# ------------------------------------------------------- the pass


@dataclass(frozen=True)
class CacheRead(RewritePattern):
    """`for L { body reading buffer[f(..)] }` -> `for L { local = alloca;
    for L_cr0 .. { local[..] = buffer[..] }; body reading local[..] }` in
    the chosen functions."""

    functions: frozenset[str]
    loop: str
    buffer: int | str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        if function_name(op) not in self.functions:
            return
        loop = find_loop(PASS, op, self.loop)
        buffer = find_buffer(op, self.buffer)
        refuse = Refuser(op, loop, buffer)
        loads = loads_to_cache(loop, buffer, refuse)
        indices = [[access_index(i, loop, refuse, load) for i in load.indices] for load in loads]
        dimensions = region_read(indices, refuse, loads)
        shape = [d.span for d in dimensions if d.kept]
        if not shape:
            raise refuse("its loads read one element: nothing to pack")
        buffer_type = cast(MemRefType[Attribute], buffer.type)
        element = buffer_type.get_element_type()
        size = prod(shape) * _element_bytes(element)
        if size > MAX_LOCAL_BYTES:
            listed = "x".join(map(str, shape))
            raise refuse(
                f"the region read ({listed} elements, {size} bytes) exceeds the "
                f"{MAX_LOCAL_BYTES} bytes a local buffer may take; cache it in an inner loop"
            )
        names = [f"{self.loop}_cr{d}" for d in range(len(shape))]
        check_fresh_names(PASS, op, names, loop)
        name = f"{buffer.name_hint or 'buffer'}_local"
        allocation, local, on_heap = allocate_local(element, shape, name)
        nest = copy_nest(buffer, local, dimensions, names)
        for load, load_indices in zip(loads, indices, strict=True):
            redirect(load, load_indices, dimensions, local, loop, rewriter)
        rewriter.insert([allocation, nest], InsertPoint.at_start(loop.body.block))
        if on_heap:
            rewriter.insert(memref.DeallocOp.get(local), InsertPoint.at_end(loop.body.block))


@dataclass(frozen=True, kw_only=True)
class TirCacheRead(ModulePass):
    """Packs the region of an argument buffer that a loop's body reads into
    a contiguous local buffer at the start of the body (TVM's cache_read
    with compute_at; BLAS's packing of a B panel).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop L named `loop`, and an argument
    named by `buffer`: its position (`buffer=1` is the second argument) or
    its SSA name (`buffer=in1`). Inside L's body the buffer is only read,
    by `memref.load`s nested in tir.for loops only (no scf.if between L and
    a load), and every index of those loads is a sum `outside + c0 + sum(c_k
    * v_k)`: v_k the variables of loops inside L (each with its static
    range), c_k and c0 integer constants (addi, subi, muli by a constant:
    what tir-split leaves), and `outside` any sum of values that stay fixed
    during one run of L's body (values defined before L, and L's own
    variable). In each dimension all loads must have the same `outside`
    (they may differ in c0 and c_k: the region is the union of their
    ranges).

    Produces: at the start of L's body, `%<name>_local = memref.alloca()
    {alignment = 64}` (a `memref.alloc`, freed by a `memref.dealloc` at the
    end of the body, when larger than 64 KiB) shaped as the box read: in
    each dimension `[outside + low, outside + high]`, low and high the least
    and greatest of `c0 + sum(c_k * v_k)`; a dimension every load reads at
    one fixed index is dropped from the local shape. Then a copy nest
    `<L>_cr0 .. <L>_crN` (serial, one loop per dimension kept, outer first
    as in the buffer) filling it, and each load of the buffer in the body
    reads the local buffer at `c0 - low + sum(c_k * v_k)`; index arithmetic
    left unused is erased. Loads of the buffer outside L (the tail nests a
    peeled split leaves) are not changed. The copy reads only elements
    inside the box whose corners the loads read, so it reads in bounds
    wherever the body does.

    For a matmul tiled as `for i1_o { for i0_o { .. for r0 { for i0_i {
    for i1_i { .. B[r0, i1_o * 16 + i1_i] } } } } }`, `buffer=1 loop=i1_o`
    packs the K x 16 panel of B once per i1_o, and the micro-kernel reads
    it at [r0, i1_i]: one 64-byte line per row.

    Refuses (naming pass, buffer, loop and function): a missing function,
    loop or argument, a name two arguments have, a non-memref argument, a
    body that writes the buffer, passes it to another op, does not read it
    or reads it under an op other than tir.for, an index of another form
    (a `select`-clamped one, a division), loads whose `outside` parts
    differ, a region of one element, a local buffer over 16 MiB, and a
    copy loop name already taken.

    Command line: `tir-cache-read{func=matmul_0 loop=i1_o buffer=1}` or
    `buffer=in1`; a name other than letters, digits, `_` and `-` is quoted
    (see xtc.passes.tir_loops).
    """

    name = "tir-cache-read"

    func: str = ""
    """The function to schedule; empty: every function that has the loop."""
    loop: str
    """The loop at the start of whose body the region is packed."""
    buffer: int | str
    """The argument to pack: its position (0 is the first) or its SSA name."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = select_functions(op, self.name, self.func, [self.loop])
        pattern = CacheRead(functions, self.loop, self.buffer)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
