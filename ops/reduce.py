"""Compute rules: reduce graph ops.

A reduction is a `te.compute` over the result whose element is a `te.reduce`
over the reduced axes, with the graph interpreter's semantics
(interp/graph/reduce.py): i1 sums are `or` and products `and`, unsigned
max/min compare unsigned, f16 and bf16 sums accumulate in f32, an integer
mean is the i64 sum divided toward zero. argmax/argmin fold the extreme value,
then the first (or last) index holding it, a NaN counting as the extreme as
in numpy. cumsum sums the prefix (or suffix) of each element; topk ranks
every element (the number of elements that sort before it), then picks the
element of each rank.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i1, i8, i64
from xdsl.ir import Attribute

from xtc.dialects.graph import reduce as r
from xtc.dialects.graph.base import (
    GraphOp,
    axis_in_range,
    elem,
    get_bool,
    get_int,
    op_props,
    shape_of,
)
from xtc.ops import compute_rule
from xtc.ops.elementwise import is_half, is_nan, like
from xtc.ops.te_builder import (
    Expr,
    KernelBuilder,
    Tensor,
    cast_width,
    convert,
    index,
    is_float,
    is_unsigned,
    maximum,
    select,
)

Term = Callable[..., Expr]


def fold(
    k: KernelBuilder, kind: str, extents: Sequence[int], term: Term, element_type: Attribute
) -> Expr:
    """`kind` ("sum", "prod", "max", "min") of term(r0, r1, ...) over the box
    `extents`, with numpy's semantics for tensors of `element_type`; the
    result is a scalar of that type."""
    if not extents:
        return term()
    if element_type == i1:
        # Over 0/1 bytes: or, and, max and min are max, min, max, min.
        byte_kind = {"sum": "max", "prod": "min"}.get(kind, kind)
        folded = k.reduce(byte_kind, extents, lambda *rs: convert(term(*rs), i8))
        if byte_kind == "max":
            # The i8 identity of max is -128: an empty `or`/max must be false.
            folded = maximum(folded, 0)
        return folded.ne(0)
    if is_half(element_type) and kind in ("sum", "prod"):
        folded = k.reduce(kind, extents, lambda *rs: convert(term(*rs), f32))
        return convert(folded, element_type)
    if is_unsigned(element_type) and kind in ("max", "min"):
        # te.reduce compares signless integers as signed: flipping the top bit
        # maps the unsigned order onto the signed one.
        top = 1 << (cast_width(element_type) - 1)
        return k.reduce(kind, extents, lambda *rs: term(*rs) ^ top) ^ top
    return k.reduce(kind, extents, term)


def reduce_index(
    rank: int,
    axes: Sequence[int],
    keepdims: bool,
    out: Sequence[Expr],
    reduced: Sequence[Expr],
) -> list[Expr]:
    """The input index of result element `out` at reduce position `reduced`."""
    rest, result, position_ = iter(reduced), [], 0
    for a in range(rank):
        if a in axes:
            result.append(next(rest))
            position_ += 1 if keepdims else 0
        else:
            result.append(out[position_])
            position_ += 1
    return result


def reduce_rule(kind: str) -> Callable[[KernelBuilder, GraphOp, list[Tensor]], list[Tensor]]:
    def rule(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
        (x,) = inputs
        assert isinstance(op, r.ReduceOp)
        axes = sorted(type(op).reduced_axes(op.input.type, op.properties))
        keepdims = get_bool(op_props(op), "keepdims")
        extents = [x.shape[a] for a in axes]
        result_type = op.output.type

        def body(*out: Expr) -> Expr:
            def term(*rs: Expr) -> Expr:
                return x[reduce_index(x.rank, axes, keepdims, out, rs)]

            if kind == "mean":
                return mean(k, extents, term, x.element_type)
            return fold(k, kind, extents, term, x.element_type)

        return [k.compute(shape_of(result_type), elem(result_type), body)]

    rule.__name__ = f"reduce_{kind}"
    return rule


def mean(k: KernelBuilder, extents: Sequence[int], term: Term, element_type: Attribute) -> Expr:
    """Sum / count: floats accumulate as the sum does, integers in i64 and
    divide toward zero (0 for an empty box, where the interpreter refuses)."""
    count = prod(extents)
    if is_float(element_type):
        accumulator = f32 if is_half(element_type) else element_type
        total = (
            k.reduce("sum", extents, lambda *rs: convert(term(*rs), accumulator))
            if extents
            else convert(term(), accumulator)
        )
        return convert(total / float(count), element_type)
    total = (
        k.reduce("sum", extents, lambda *rs: convert(term(*rs), i64))
        if extents
        else convert(term(), i64)
    )
    quotient = total / count if count else like(total, 0)
    return convert(quotient, element_type)


for _kind, _op_class in (
    ("sum", r.ReduceSumOp),
    ("mean", r.ReduceMeanOp),
    ("max", r.ReduceMaxOp),
    ("min", r.ReduceMinOp),
    ("prod", r.ReduceProdOp),
):
    compute_rule(_op_class)(reduce_rule(_kind))


def replace_axis(indices: Sequence[Expr], axis: int, value: Expr) -> list[Expr]:
    return [value if a == axis else i for a, i in enumerate(indices)]


def arg_reduce(kind: str) -> Callable[[KernelBuilder, GraphOp, list[Tensor]], list[Tensor]]:
    """argmax / argmin: the extreme value, then the first (last) index holding
    it. A NaN is the extreme (numpy): its index is coded below 0 (above n) so
    that the first (last) NaN wins over any other candidate."""

    def rule(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
        (x,) = inputs
        props = op_props(op)
        axis = axis_in_range(op.name, get_int(props, "axis"), x.rank)
        keepdims = get_bool(props, "keepdims")
        last = get_bool(props, "select_last_index")
        n = x.shape[axis]
        floats = is_float(x.element_type)

        def body(*out: Expr) -> Expr:
            def at(i: Expr) -> Expr:
                return x[reduce_index(x.rank, [axis], keepdims, out, [i])]

            extreme = fold(k, kind, [n], at, x.element_type)

            def candidate(i: Expr) -> Expr:
                v, code = at(i), convert(i, i64)
                found = select(v.eq(extreme), code, -1 if last else n)
                if floats:
                    found = select(is_nan(v), code + n if last else code - n, found)
                return found

            index = k.reduce("max" if last else "min", [n], candidate)
            if floats:
                index = (
                    select(index >= n, index - n, index)
                    if last
                    else select(index < 0, index + n, index)
                )
            return index

        result_type = op.results[0].type
        return [k.compute(shape_of(result_type), elem(result_type), body)]

    rule.__name__ = f"arg{kind}"
    return rule


compute_rule(r.ArgMaxOp)(arg_reduce("max"))
compute_rule(r.ArgMinOp)(arg_reduce("min"))


def cumulative(kind: str) -> Callable[[KernelBuilder, GraphOp, list[Tensor]], list[Tensor]]:
    """Each element folds (`kind`: sum or prod) the elements up to it (from
    it, with `reverse`), itself left out with `exclusive`."""
    identity = 0 if kind == "sum" else 1

    def rule(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
        return [_cumulative(k, op, inputs[0], kind, identity)]

    return rule


compute_rule(r.CumSumOp)(cumulative("sum"))
compute_rule(r.CumProdOp)(cumulative("prod"))


def _cumulative(k: KernelBuilder, op: GraphOp, x: Tensor, kind: str, identity: int) -> Tensor:
    axis = axis_in_range(op.name, get_int(op.properties, "axis"), x.rank)
    exclusive = get_bool(op_props(op), "exclusive")
    reverse = get_bool(op_props(op), "reverse")

    def body(*out: Expr) -> Expr:
        i = out[axis]

        def term(j: Expr) -> Expr:
            if reverse:
                included = j > i if exclusive else j >= i
            else:
                included = j < i if exclusive else j <= i
            return select(included, x[replace_axis(out, axis, j)], identity)

        return fold(k, kind, [x.shape[axis]], term, x.element_type)

    return k.compute(x.shape, x.element_type, body)


def not_nan(x: Expr) -> Expr:
    return Expr(arith.CmpfOp(x.value, x.value, "ord").result)


def sorts_before(largest: bool) -> Callable[[Expr, Expr], tuple[Expr, Expr]]:
    """(a strictly before b, a ties with b) in topk's order: descending (or
    ascending) values, NaN first when descending and last when ascending, as
    numpy's stable sorts place it."""

    def compare(a: Expr, b: Expr) -> tuple[Expr, Expr]:
        if not is_float(a.type):
            return (a > b if largest else a < b), a.eq(b)
        a_nan, b_nan = is_nan(a), is_nan(b)
        if largest:
            before = (a > b) | (a_nan & not_nan(b))
        else:
            before = (a < b) | (b_nan & not_nan(a))
        return before, a.eq(b) | (a_nan & b_nan)

    return compare


@compute_rule(r.TopKOp)
def topk(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """rank[i] = how many elements sort before x[i] (ties: lower index first),
    a permutation of 0..n-1 on each line; indices[j] = the i of rank j;
    values[j] = x[indices[j]]."""
    (x,) = inputs
    axis = axis_in_range(op.name, get_int(op_props(op), "axis"), x.rank)
    compare = sorts_before(get_bool(op_props(op), "largest"))
    n = x.shape[axis]

    def rank_of(*at: Expr) -> Expr:
        value, i = x[at], at[axis]

        def precedes(j: Expr) -> Expr:
            before, tie = compare(x[replace_axis(at, axis, j)], value)
            return convert(before | (tie & (j < i)), i64)

        return k.reduce("sum", [n], precedes)

    ranks = k.compute(x.shape, i64, rank_of)
    values_type, indices_type = op.result_types

    def index_of_rank(*out: Expr) -> Expr:
        wanted = convert(out[axis], i64)

        def holder(i: Expr) -> Expr:
            return select(ranks[replace_axis(out, axis, i)].eq(wanted), convert(i, i64), 0)

        return k.reduce("sum", [n], holder)

    indices = k.compute(shape_of(indices_type), elem(indices_type), index_of_rank)

    def value_of_rank(*out: Expr) -> Expr:
        # Ranks are a permutation: the index is always in range.
        return x[replace_axis(out, axis, index(indices[out]))]

    values = k.compute(shape_of(values_type), elem(values_type), value_of_rank)
    return [values, indices]
