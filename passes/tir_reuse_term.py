"""tir-reuse-term: a reduction's term stored into the buffer a later nest
writes, that nest reading it back instead of computing it again (softmax's
exp(x - max), summed by one nest and scaled by the next)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from xtc.dialects.tir import ForOp
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    describe_buffer,
    direct_loops,
    enclosing_loops,
    function_name,
    has_inner_loop,
    is_pure_scalar,
    loop_name,
    only_inner_loop,
    top_level_op,
)


@dataclass(frozen=True)
class Term:
    """The value a reduction accumulates per iteration of its innermost loop,
    and the loops around it (outer first, the innermost last)."""

    value: OpResult
    loops: list[ForOp]


@dataclass(frozen=True)
class Consumer:
    """A perfect nest (loops outer first) storing each element of `buffer`
    once, at its loop variables."""

    loops: list[ForOp]
    store: memref.StoreOp

    @property
    def buffer(self) -> SSAValue:
        return self.store.memref


@dataclass
class Correspondence:
    """Which loop variable of the consumer stands for each one of the
    reduction, as a structural comparison finds them (one to one)."""

    reduction: set[SSAValue]
    consumer: set[SSAValue]
    pairs: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    def same(self, a: SSAValue, b: SSAValue) -> bool:
        """Whether `a` (of the reduction) computes what `b` (of the consumer)
        does, pairing loop variables on the way."""
        if a in self.reduction or b in self.consumer:
            return self.pair(a, b)
        if not isinstance(a, OpResult) or not isinstance(b, OpResult):
            return a is b
        if not (self.inside(a.op) and self.inside(b.op)):
            return a is b
        return a.index == b.index and self.same_op(a.op, b.op)

    def pair(self, a: SSAValue, b: SSAValue) -> bool:
        if a not in self.reduction or b not in self.consumer:
            return False
        if a in self.pairs:
            return self.pairs[a] is b
        if b in self.pairs.values():
            return False
        self.pairs[a] = b
        return True

    def same_op(self, a: Operation, b: Operation) -> bool:
        if not (is_pure_scalar(a) or isinstance(a, memref.LoadOp)):
            return False
        return (
            a.name == b.name
            and a.properties == b.properties
            and a.attributes == b.attributes
            and a.result_types == b.result_types
            and len(a.operands) == len(b.operands)
            and all(self.same(x, y) for x, y in zip(a.operands, b.operands, strict=True))
        )

    def inside(self, op: Operation) -> bool:
        """Whether `op` lies in either nest (values from outside compare by
        identity: buffers, constants hoisted before the loops)."""
        parent = op.parent_op()
        while parent is not None:
            if isinstance(parent, ForOp) and parent.induction_variable in (
                self.reduction | self.consumer
            ):
                return True
            parent = parent.parent_op()
        return False


def reduction_term(loop: ForOp, refuse: Refuser) -> Term:
    """The term `loop` accumulates into a rank-0 accumulator; refuses a loop
    with loops inside or another body."""
    if has_inner_loop(loop):
        raise refuse("holds loops; the term must be computed in the innermost reduction loop")
    stores = [op for op in loop.body.block.ops if isinstance(op, memref.StoreOp)]
    if len(stores) != 1 or stores[0].indices:
        raise refuse("does not hold exactly one store, into a rank-0 accumulator")
    combine = stores[0].value.owner
    if not isinstance(combine, Operation) or len(combine.operands) != 2:
        raise refuse("does not combine its accumulator with one term", stores[0])
    accumulator = stores[0].memref
    terms = [
        operand
        for operand in combine.operands
        if not (isinstance(operand.owner, memref.LoadOp) and operand.owner.memref is accumulator)
    ]
    term = terms[0] if len(terms) == 1 else None
    if not isinstance(term, OpResult) or term.op.parent_op() is not loop:
        raise refuse("does not combine its accumulator with a term computed in it", combine)
    return Term(term, enclosing_loops(loop)[::-1])  # outer first


def consumer_nest(root: ForOp, func: FuncOp, refuse: Refuser) -> Consumer:
    """`root`'s perfect nest and its one store; refuses another nest."""
    if root.parent_op() is not func:
        raise refuse(f"loop '{loop_name(root)}' is not a top-level loop nest", root)
    loops = [root]
    while direct_loops(loops[-1]):
        inner = only_inner_loop(loops[-1])
        if inner is None:
            raise refuse(
                f"loop '{loop_name(loops[-1])}' is not perfectly nested (the consumer must be "
                "an elementwise nest)",
                loops[-1],
            )
        loops.append(inner)
    body = list(loops[-1].body.block.ops)
    stores = [op for op in body if isinstance(op, memref.StoreOp)]
    others = [
        op
        for op in body
        if not (is_pure_scalar(op) or isinstance(op, memref.LoadOp | memref.StoreOp))
    ]
    if len(stores) != 1 or others:
        raise refuse(f"loop '{loop_name(root)}' does not hold exactly one store and pure ops", root)
    store = stores[0]
    variables = [loop.induction_variable for loop in loops]
    shape = cast(MemRefType[Attribute], store.memref.type).get_shape()
    if len(store.indices) != len(loops) or set(store.indices) != set(variables):
        raise refuse("its store index is not exactly its loop variables, each once", store)
    by_variable = {loop.induction_variable: loop for loop in loops}
    for index, size in zip(store.indices, shape, strict=True):
        loop = by_variable[index]
        if loop.lower.value.data != 0 or loop.step.value.data != 1 or loop.extent != size:
            raise refuse(f"loop '{loop_name(loop)}' does not run over its whole dimension", loop)
    return Consumer(loops, store)


def values_in(loop: ForOp) -> Iterator[OpResult]:
    """The results of the ops of `loop`'s body, in order."""
    for op in loop.body.block.ops:
        yield from op.results


def matching_value(term: Term, consumer: Consumer) -> tuple[OpResult, dict[SSAValue, SSAValue]]:
    """The consumer's value that computes the term, and the consumer's loop
    variable for each of the reduction's; raises LookupError when none does
    with every loop of both paired (the consumer then reads the term at
    every element the reduction stores, once)."""
    reduction = {loop.induction_variable for loop in term.loops}
    variables = {loop.induction_variable for loop in consumer.loops}
    for candidate in values_in(consumer.loops[-1]):
        match = Correspondence(reduction, variables)
        found = match.same(term.value, candidate)
        if found and len(match.pairs) == len(reduction) == len(variables):
            return candidate, match.pairs
    raise LookupError


def check_extents(
    term: Term, consumer: Consumer, pairs: dict[SSAValue, SSAValue], refuse: Refuser
) -> None:
    """Refuses paired loops of different ranges."""
    by_variable = {loop.induction_variable: loop for loop in consumer.loops}
    for loop in term.loops:
        other = by_variable[pairs[loop.induction_variable]]
        same = (loop.lower.value.data, loop.step.value.data, loop.extent) == (
            other.lower.value.data,
            other.step.value.data,
            other.extent,
        )
        if not same:
            raise refuse(
                f"loop '{loop_name(loop)}' and loop '{loop_name(other)}', which index the term "
                "alike, run over different ranges",
                loop,
            )


def check_buffers(func: FuncOp, term: Term, consumer: Consumer, refuse: Refuser) -> None:
    """Refuses when the buffer's values stored by the reduction could change
    or be seen before the consumer reads them, or the term's inputs could
    change in between: the buffer used from the reduction's nest up to the
    consumer (but for the consumer's store), or read by the term; a buffer
    the term reads written from the reduction's nest up to the consumer."""
    buffer = consumer.buffer
    nest = top_level_op(func, term.loops[0])
    root = consumer.loops[0]
    read = {op.memref for op in term_ops(term.value) if isinstance(op, memref.LoadOp)}
    if buffer in read:
        raise refuse(f"the term reads {describe_buffer(buffer)}, which the consumer writes")
    if term.value.type != cast(MemRefType[Attribute], buffer.type).get_element_type():
        raise refuse(
            f"the term is {term.value.type}, not the element type of {describe_buffer(buffer)}"
        )
    current: Operation | None = nest
    while current is not None and current is not root:
        for op in current.walk():
            if buffer in op.operands:
                raise refuse(f"'{op.name}' uses {describe_buffer(buffer)} before the consumer", op)
            if not isinstance(op, memref.LoadOp) and read & set(op.operands):
                raise refuse(f"'{op.name}' may change a buffer the term reads", op)
        current = current.next_op
    for op in root.walk():
        if buffer in op.operands and op is not consumer.store:
            raise refuse(f"the consumer also uses {describe_buffer(buffer)} in '{op.name}'", op)


def term_ops(value: SSAValue) -> Iterator[Operation]:
    """The ops of the term's computation inside its loop."""
    owner = value.owner
    if isinstance(owner, BlockArgument) or not isinstance(owner, Operation):
        return
    if isinstance(owner.parent_op(), ForOp):
        yield owner
        for operand in owner.operands:
            yield from term_ops(operand)


@dataclass(frozen=True)
class Reuse:
    """A term, the consumer computing it again as `candidate`, and the
    consumer's loop variable for each of the term's."""

    term: Term
    consumer: Consumer
    candidate: OpResult
    pairs: dict[SSAValue, SSAValue]

    def calls_math(self) -> bool:
        """Whether the term computes a math function (what storing it saves)."""
        return any(op.name.startswith("math.") for op in term_ops(self.term.value))


def find_reuse(func: FuncOp, reduction: ForOp, root: ForOp, pass_name: str) -> Reuse:
    """The term of `reduction` that the nest of `root` computes again;
    refuses (a ScheduleError of `pass_name`) when the rewrite does not hold."""
    head = (
        f"cannot reuse the term of loop '{loop_name(reduction)}' in loop "
        f"'{loop_name(root)}' of @{function_name(func)}: "
    )
    refuse = Refuser(pass_name, func, reduction, head)
    term = reduction_term(reduction, refuse.about(reduction, f"loop '{loop_name(reduction)}' "))
    consumer = consumer_nest(root, func, refuse)
    if not top_level_op(func, reduction).is_before_in_block(root):
        raise refuse(f"loop '{loop_name(root)}' does not come after the reduction", root)
    try:
        candidate, pairs = matching_value(term, consumer)
    except LookupError:
        raise refuse(
            "the consumer computes no value as the term does, with every loop of both paired",
            root,
        ) from None
    check_extents(term, consumer, pairs, refuse)
    check_buffers(func, term, consumer, refuse)
    return Reuse(term, consumer, candidate, pairs)


def erase_unused(op: Operation, rewriter: PatternRewriter) -> None:
    """Erases `op` when nothing uses it any more, then its operands' owners."""
    if any(result.uses for result in op.results):
        return
    if not (is_pure_scalar(op) or isinstance(op, memref.LoadOp)):
        return
    owners = [operand.owner for operand in op.operands if isinstance(operand, OpResult)]
    rewriter.erase(op)
    for owner in owners:
        if owner.parent_block() is not None:
            erase_unused(owner, rewriter)


@dataclass(frozen=True, kw_only=True)
class TirReuseTerm(SchedulePass):
    """Stores the term a reduction accumulates into the buffer a later loop
    nest writes, and has that nest read it back instead of computing it
    again (softmax: the sum stores each exp(x - max) into the output, which
    the output nest then scales, one exp per element instead of two).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has both) a loop named `loop` (R), with no loop
    inside, whose body holds one store, into a rank-0 accumulator, of the
    accumulator's load combined with a term T computed in R's body; and a
    loop named `consumer` (C), the root of a later top-level perfect nest
    whose innermost body holds pure scalar ops, loads and one store into a
    buffer B at indices that are exactly its loop variables, each once,
    each loop from 0 step 1 over its whole dimension of B. C's innermost
    body computes T': the same pure ops and loads as T, from the same
    values defined outside both nests, with the variables of R and the
    loops around it paired one to one with C's loop variables, paired
    loops running over the same range. T's type is B's element type; T
    reads no B; from R's top-level nest up to C nothing uses B and nothing
    but loads uses a buffer T reads; C uses B only in its store.

    Produces: `memref.store T, B[...]` after T in R's body, at the
    variables of R's loops paired with C's store indices; in C's body,
    T' replaced by `memref.load B` at C's store indices (just before T'),
    and the ops computing T' that nothing else uses erased. Every element
    of B is written by R once with the value C computed there; C reads it
    before its own store to that element.

    Refuses (naming pass, both loops and the function): a missing function
    or loop; R with a loop inside or another body; C not a top-level
    perfect nest after R's, or storing otherwise; no value of C computing
    T with every loop paired; paired loops of different ranges; T of
    another type than B's elements or reading B; B used from R's nest up to
    C, or in C beside its store; a buffer T reads changed between R and C.

    Command line: `tir-reuse-term{func=softmax_0 loop=r0_1 consumer=i0_2}`;
    a name other than letters, digits, `_` and `-` is quoted (see
    xtc.passes.tir_loops).
    """

    name = "tir-reuse-term"
    LOOP_OPTIONS = ("loop", "consumer")

    loop: str
    """The reduction loop whose term is stored."""
    consumer: str
    """The root loop of the later nest that computes the term again."""

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """`for r { acc = acc + T(r) }; .. for c { B[c] = f(T(c)) }` ->
        `for r { t = T(r); B[r] = t; acc = acc + t }; .. for c { B[c] =
        f(B[c]) }`."""
        reduction, root = self.find_loop(func, self.loop), self.find_loop(func, self.consumer)
        reuse = find_reuse(func, reduction, root, self.name)
        store_term(reuse, rewriter)
        candidate, consumer = reuse.candidate, reuse.consumer
        load = memref.LoadOp.get(consumer.buffer, list(consumer.store.indices))
        rewriter.insert(load, InsertPoint.before(candidate.op))
        rewriter.replace_all_uses_with(candidate, load.res)
        erase_unused(candidate.op, rewriter)


def store_term(reuse: Reuse, rewriter: PatternRewriter) -> None:
    """`memref.store T, B[...]` right after T, at the reduction's variables
    that pair with the consumer's store indices."""
    reduction_of = {mine: theirs for theirs, mine in reuse.pairs.items()}
    indices = [reduction_of[index] for index in reuse.consumer.store.indices]
    store = memref.StoreOp.get(reuse.term.value, reuse.consumer.buffer, indices)
    rewriter.insert(store, InsertPoint.after(reuse.term.value.op))

