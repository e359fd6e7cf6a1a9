"""graph-sink-transpose: a transpose moved below the elementwise ops, pads
and transposes that read it, so that two transposes that undo each other
meet and cancel (the NHWC output of a u8 conv, transposed back to NCHW,
reaching the next u8 conv's NCHW-to-NHWC transpose)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xtc.dialects.graph.base import (
    GraphOp,
    OpPattern,
    get_int,
    get_ints,
    int_attr,
    ints_attr,
    shape_of,
)
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.nn import BiasAddOp, PadOp
from xtc.dialects.graph.tensor import TransposeOp

Perm = tuple[int, ...]


def permutation(op: TransposeOp) -> Perm:
    rank = len(shape_of(op.operands[0].type))
    return TransposeOp.permutation(rank, op.properties)


def inverse(perm: Perm) -> Perm:
    return tuple(int(i) for i in np.argsort(perm))


def one_value(value: SSAValue) -> bool:
    return all(d == 1 for d in shape_of(value.type))


def is_elementwise(user: Operation) -> bool:
    """An elementwise graph op with one result and no axis of its own."""
    return (
        isinstance(user, GraphOp)
        and user.FUSION_KIND is OpPattern.ELEMENTWISE
        and len(user.results) == 1
        and "axis" not in user.properties
    )


def untransposed(value: SSAValue, through: TransposeOp, perm: Perm) -> SSAValue | None:
    """`value` as an operand of the user of `through` with that transpose
    undone: its input for `through` itself or a transpose of the same
    perm; a value of one element as it is; None for any other (a
    constant the caller transposes, or a value that stops the sinking)."""
    owner = value.owner
    if owner is through or (isinstance(owner, TransposeOp) and permutation(owner) == perm):
        assert isinstance(owner, TransposeOp)
        return owner.operands[0]
    return value if one_value(value) else None


def transposed_constant(ops: list[Operation], value: SSAValue, perm: Perm) -> SSAValue:
    """A constant broadcast against a transposed tensor of rank len(perm),
    laid out for the tensor before the transpose (graph-fold-constants
    folds the reshape and transpose made here)."""
    assert isinstance(value.owner, ConstantOp)
    shape = shape_of(value.type)
    full = (1,) * (len(perm) - len(shape)) + shape
    array = value.owner.to_array().reshape(full).transpose(inverse(perm))
    constant = ConstantOp.from_array(np.ascontiguousarray(array), "transposed")
    ops.append(constant)
    return constant.results[0]


def sunk_operands(
    user: Operation, through: TransposeOp, perm: Perm, ops: list[Operation]
) -> list[SSAValue] | None:
    """The operands of an elementwise `user` of `through` laid out as
    `through`'s input; None when one of them can't be (it broadcasts the
    transposed operand, or is neither transposed alike, one value nor a
    constant)."""
    rank = len(perm)
    if shape_of(user.results[0].type) != shape_of(through.results[0].type):
        return None
    operands: list[SSAValue] = []
    for value in user.operands:
        found = untransposed(value, through, perm)
        if found is None and isinstance(value.owner, ConstantOp):
            if len(shape_of(value.type)) <= rank:
                found = transposed_constant(ops, value, perm)
        if found is None:
            return None
        operands.append(found)
    return operands


def sunk_user(user: Operation, through: TransposeOp) -> list[Operation] | None:
    """The ops that compute `user` of `through` from `through`'s input,
    ending in `through`'s transpose (or in none, when it cancels one); None
    when `user` stops the sinking."""
    perm = permutation(through)
    x = through.operands[0]
    ops: list[Operation] = []
    if isinstance(user, TransposeOp):
        composed = tuple(perm[i] for i in permutation(user))
        if composed == tuple(range(len(perm))):
            return []
        return [TransposeOp.build_inferred([x], {"perm": ints_attr(composed)})]
    if isinstance(user, PadOp):
        if user.operands[0] is not through.results[0]:
            return None
        pads = get_ints(user.properties, "pads")
        rank = len(perm)
        moved = [0] * (2 * rank)
        for axis, source in enumerate(perm):
            moved[source], moved[source + rank] = pads[axis], pads[axis + rank]
        props = {**user.properties, "pads": ints_attr(moved)}
        ops.append(PadOp.build_inferred([x], props))
    elif isinstance(user, BiasAddOp):
        if user.operands[0] is not through.results[0] or user.operands[1] is through.results[0]:
            return None
        axis = get_int(user.properties, "axis", 1) % len(perm)
        props = {**user.properties, "axis": int_attr(perm[axis])}
        ops.append(BiasAddOp.build_inferred([x, user.operands[1]], props))
    elif is_elementwise(user):
        operands = sunk_operands(user, through, perm, ops)
        if operands is None:
            return None
        assert isinstance(user, GraphOp)
        ops.append(type(user).build_inferred(operands, dict(user.properties)))
    else:
        return None
    ops.append(TransposeOp.build_inferred([ops[-1].results[0]], {"perm": ints_attr(perm)}))
    return ops


class SinkTransposeBelowUsers(RewritePattern):
    """transpose(x) read only by ops it moves below -> each of them on x
    (pads and an elementwise op's constants permuted, a bias_add's axis
    moved), followed by the transpose; transpose(transpose(x)) -> one
    transpose, or x when they cancel. A transpose with a user it can't
    move below (a pool, a matmul, an op broadcasting it) stays where it is:
    moving it below only some users would add transposes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        users = list(dict.fromkeys(use.operation for use in op.results[0].uses))
        if not users:
            return
        sink_below_users(rewriter, op, users, [sunk_user(user, op) for user in users])


def sink_below_users(
    rewriter: PatternRewriter,
    op: Operation,
    users: list[Operation],
    replacements: list[list[Operation] | None],
) -> None:
    """Each of `users` of `op` replaced by its ops (the last one's result
    taking its place; none: `op`'s input does), then `op` erased once
    unused; nothing when one user has no replacement (None), the ops built
    for the others dropped."""
    if any(r is None for r in replacements):
        for built in replacements:
            for unused in built or []:
                unused.drop_all_references()  # its operands forget it
        return
    for user, ops in zip(users, replacements, strict=True):
        assert ops is not None
        if ops:
            rewriter.replace(user, ops, [ops[-1].results[0]])
        else:
            rewriter.replace(user, [], [op.operands[0]])
    if not op.results[0].uses:
        rewriter.erase(op)


@dataclass(frozen=True)
class GraphSinkTranspose(ModulePass):
    """Moves transposes down the graph until they cancel.

    Expects: a graph module. Produces: each `graph.transpose` whose users
    are all elementwise ops (with the same transpose, one value or a
    constant as their other operands, none broadcasting the transposed
    one), `graph.bias_add`, `graph.pad` or `graph.transpose`, moved below
    them, repeatedly; two transposes that meet compose, and vanish when
    they undo each other. Constants permuted here are new `graph.constant`
    ops (the old ones become dead: run `dce`).
    """

    name = "graph-sink-transpose"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(SinkTransposeBelowUsers(), apply_recursively=True).rewrite_module(op)
