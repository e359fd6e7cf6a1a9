"""graph-sink-slice: a slice that drops a few elements moves past the ops
that act on each element (or each channel) alone, so that they join the
producer's fused group instead of a copy kernel of their own.

graph-pad-conv-channels leaves `slice(conv2d)`; the conv's bias, relu and
global pool would then run in a kernel after the slice (one more pass over
the conv's output). Each pattern below moves a slice past one op, when the
slice keeps all but at most one in MAX_DROPPED_FRACTION of its input's
elements (the op then computes a few elements more, never many) and the op
is its only user:

- `unary(slice(x))` -> `slice(unary(x))` for every elementwise unary op;
- `bias_add(slice(x), b)` with b a constant and the slice only along the
  bias axis, step 1 -> `slice(bias_add(x, b'))`, b' b padded with zeros to
  the whole axis;
- `global_pool(slice(x))` with the slice only along N and C, step 1 ->
  `slice(global_pool(x))`.

Expects: graph-level IR. Produces: the same graph with those slices moved
down; the old bias constants become dead (run dce).
"""

from __future__ import annotations

from math import prod

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xtc.dialects.graph.base import get_int, ints_attr, normalize_axis, op_props, shape_of
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.elementwise import UnaryOp
from xtc.dialects.graph.nn import BiasAddOp, GlobalPool2dOp
from xtc.dialects.graph.tensor import SliceOp

MAX_DROPPED_FRACTION = 8
"""A slice moves only when it drops at most 1/8 of its input (SqueezeNet's
1008 -> 1000 classifier channels: 0.8%)."""

Cut = dict[int, range]
"""The axes a slice narrows, each with the step-1 range of indices it keeps."""


def sinkable_cut(value: SSAValue) -> tuple[SliceOp, Cut] | None:
    """(the slice defining `value`, the axes it narrows) when the slice has
    no other user, keeps each axis as one step-1 range, and drops some but
    at most 1 / MAX_DROPPED_FRACTION of its input; None otherwise."""
    op = value.owner
    if not isinstance(op, SliceOp) or not op.output.has_one_use():
        return None
    shape = shape_of(op.input.type)
    ranges = SliceOp.ranges(op.input.type, op_props(op))
    if any(r.step != 1 for r in ranges):
        return None
    kept, whole = prod(len(r) for r in ranges), prod(shape)
    cut = {axis: r for axis, r in enumerate(ranges) if len(r) != shape[axis]}
    if not cut or (whole - kept) * MAX_DROPPED_FRACTION > whole:
        return None
    return op, cut


def slice_to(value: SSAValue, cut: Cut) -> SliceOp:
    """`value` narrowed to the ranges of `cut`."""
    axes = sorted(cut)
    props = {
        "starts": ints_attr([cut[a].start for a in axes]),
        "ends": ints_attr([cut[a].stop for a in axes]),
        "axes": ints_attr(axes),
    }
    return SliceOp.build_inferred([value], props)


class UnaryAfterSlice(RewritePattern):
    """unary(slice(x)) -> slice(unary(x))."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnaryOp, rewriter: PatternRewriter) -> None:
        found = sinkable_cut(op.input)
        if found is None:
            return
        _apply_before(op, *found, rewriter)


def _apply_before(
    op: UnaryOp | GlobalPool2dOp, sliced: SliceOp, cut: Cut, rewriter: PatternRewriter
) -> None:
    """`op` applied to the slice's input instead, the slice after it."""
    moved = type(op).build_inferred([sliced.input], dict(op.properties))
    rewriter.replace(op, [moved, slice_to(moved.output, cut)])
    rewriter.erase(sliced)


class BiasAddAfterSlice(RewritePattern):
    """bias_add(slice(x), b) -> slice(bias_add(x, b zero-padded to x's axis)),
    for a constant b and a slice along the bias axis only."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BiasAddOp, rewriter: PatternRewriter) -> None:
        bias = op.bias.owner
        found = sinkable_cut(op.input)
        if found is None or not isinstance(bias, ConstantOp):
            return
        sliced, cut = found
        shape = shape_of(sliced.input.type)
        axis = normalize_axis(op.name, get_int(op_props(op), "axis"), len(shape))
        if set(cut) != {axis}:
            return
        values = bias.view()
        padded = np.zeros((shape[axis],), dtype=values.dtype)
        padded[cut[axis].start : cut[axis].stop] = values
        padded_bias = ConstantOp.from_array(padded, "bias_padded")
        moved = BiasAddOp.build_inferred([sliced.input, padded_bias.output], dict(op.properties))
        rewriter.replace(op, [padded_bias, moved, slice_to(moved.output, cut)])
        rewriter.erase(sliced)


class GlobalPoolAfterSlice(RewritePattern):
    """global_pool(slice(x)) -> slice(global_pool(x)), for a slice along N and C only."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GlobalPool2dOp, rewriter: PatternRewriter) -> None:
        found = sinkable_cut(op.input)
        if found is None or not set(found[1]) <= {0, 1}:
            return
        _apply_before(op, *found, rewriter)


class GraphSinkSlice(ModulePass):
    """Slices that drop few elements moved past unary ops, constant bias
    adds and global pools (see the module docstring for input and output IR).

    Command line: `graph-sink-slice`."""

    name = "graph-sink-slice"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [UnaryAfterSlice(), BiasAddAfterSlice(), GlobalPoolAfterSlice()]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
