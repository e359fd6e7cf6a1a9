"""Compute rules: tensor graph ops.

Data movement is index arithmetic: each result element reads the input
element it comes from. Reshapes pair groups of axes with equal sizes and
divide only inside a group; concat is a chain of selects over the axis (every
branch reads a clamped, in-bounds index). Indices read from tensors are
checked at run time, each once, in a compute of their own
(`checked_positions`): a negative index counts from the end, one outside
[-dim, dim) fails the run with a message naming the node and the index
(`tir.assert`), and is clamped into the axis, so that a bad index never reads
outside a buffer. Scatters compute each result element from the updates that
land on it: the last one in row-major order (reduction none), or all of them
folded with the reduction.
"""

from __future__ import annotations

import itertools
import math as pymath
from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, i1, i64

from xtc.dialects.graph import nn
from xtc.dialects.graph import tensor as t
from xtc.dialects.graph.base import (
    GraphOp,
    elem,
    get_int,
    get_ints,
    get_str,
    index_fault,
    op_props,
    shape_of,
)
from xtc.ops import compute_rule
from xtc.ops.elementwise import broadcast_read, int_bounds
from xtc.ops.reduce import fold, replace_axis
from xtc.ops.te_builder import (
    Expr,
    ExprLike,
    KernelBuilder,
    Tensor,
    check,
    constant,
    convert,
    index,
    is_float,
    maximum,
    minimum,
    select,
)

# ---------------------------------------------------------------------------
# Index arithmetic on non-negative indices.


def div(i: Expr, n: int) -> Expr:
    return i if n == 1 else Expr(arith.DivUIOp(i.value, constant(n, IndexType()).value).result)


def rem(i: Expr, n: int) -> Expr:
    return Expr(arith.RemUIOp(i.value, constant(n, IndexType()).value).result)


def linearize(indices: Sequence[Expr], shape: Sequence[int]) -> Expr:
    """The row-major offset of `indices` in `shape` (size-1 axes skipped)."""
    flat: Expr | None = None
    for i, d in zip(indices, shape, strict=True):
        if d == 1:
            continue
        flat = i if flat is None else flat * d + i
    return flat if flat is not None else index(0)


def delinearize(flat: Expr, shape: Sequence[int]) -> list[ExprLike]:
    """The indices in `shape` of the row-major offset `flat` (< prod(shape))."""
    result: list[ExprLike] = []
    stride = prod(shape)
    for axis, d in enumerate(shape):
        stride //= max(d, 1)
        if d == 1:
            result.append(0)
            continue
        i = div(flat, stride)
        outermost = all(e == 1 for e in shape[:axis])
        result.append(i if outermost else rem(i, d))
    return result


def reshape_index(
    in_shape: Sequence[int], out_shape: Sequence[int], out: Sequence[Expr]
) -> list[ExprLike]:
    """The input index of result element `out` of a row-major reshape. The
    axes are paired into groups of equal total size (size-1 axes aside), so
    that e.g. a squeeze reads straight through."""
    if prod(in_shape) == 0:
        return [0] * len(in_shape)
    in_axes = [a for a, d in enumerate(in_shape) if d != 1]
    out_axes = [a for a, d in enumerate(out_shape) if d != 1]
    result: list[ExprLike] = [0] * len(in_shape)
    i = j = 0
    while i < len(in_axes):
        group_in, group_out = [in_axes[i]], [out_axes[j]]
        size_in, size_out = in_shape[in_axes[i]], out_shape[out_axes[j]]
        i, j = i + 1, j + 1
        while size_in != size_out:
            if size_in < size_out:
                group_in.append(in_axes[i])
                size_in *= in_shape[in_axes[i]]
                i += 1
            else:
                group_out.append(out_axes[j])
                size_out *= out_shape[out_axes[j]]
                j += 1
        if len(group_in) == 1 and len(group_out) == 1:
            result[group_in[0]] = out[group_out[0]]
            continue
        flat = linearize([out[a] for a in group_out], [out_shape[a] for a in group_out])
        for a, v in zip(group_in, delinearize(flat, [in_shape[a] for a in group_in]), strict=True):
            result[a] = v
    return result


def result_compute(
    k: KernelBuilder, op: GraphOp, body: Callable[..., ExprLike], result: int = 0
) -> Tensor:
    """The compute of the op's result number `result`."""
    result_type = op.results[result].type
    return k.compute(shape_of(result_type), elem(result_type), body)


# ---------------------------------------------------------------------------
# Reshaping.


@compute_rule(t.ReshapeOp, t.SqueezeOp, t.UnsqueezeOp, t.FlattenOp)
def reshape(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    (x,) = inputs
    out_shape = shape_of(op.results[0].type)
    return [result_compute(k, op, lambda *out: x[reshape_index(x.shape, out_shape, out)])]


@compute_rule(t.TransposeOp)
def transpose(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    (x,) = inputs
    perm = t.TransposeOp.permutation(x.rank, op.properties)

    def body(*out: Expr) -> Expr:
        indices: dict[int, Expr] = {p: out[i] for i, p in enumerate(perm)}
        return x[[indices[a] for a in range(x.rank)]]

    return [result_compute(k, op, body)]


@compute_rule(nn.LayoutTransformOp)
def layout_transform(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """NCHW to NCHW<b>c: out[n, c / b, y, x, c mod b] = x[n, c, y, x]; and back."""
    (x,) = inputs
    to_blocked = nn.channel_block(nn.LayoutTransformOp.layouts(op.properties)[1])

    def body(*out: Expr) -> Expr:
        if to_blocked is not None:
            n, cb, y, xx, lane = out
            return x[n, cb * to_blocked + lane, y, xx]
        block = x.shape[4]
        n, c, y, xx = out
        return x[n, c // block, y, xx, c % block]

    return [result_compute(k, op, body)]


@compute_rule(t.BroadcastToOp)
def broadcast_to(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    (x,) = inputs
    return [result_compute(k, op, lambda *out: broadcast_read(x, out))]


@compute_rule(t.TileOp)
def tile(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    (x,) = inputs
    repeats = get_ints(op.properties, "repeats")

    def body(*out: Expr) -> Expr:
        return x[
            [
                0 if d == 1 else (i if r == 1 else rem(i, d))
                for i, d, r in zip(out, x.shape, repeats, strict=True)
            ]
        ]

    return [result_compute(k, op, body)]


# ---------------------------------------------------------------------------
# Joining and cutting.


@compute_rule(t.ConcatOp)
def concat(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """select(i < end_0, x0[i], select(i < end_1, x1[i - start_1], ...))."""
    axis = t.axis_in_range(op.name, get_int(op.properties, "axis"), inputs[0].rank)
    pieces: list[tuple[Tensor, int]] = []
    total = 0
    for x in inputs:
        if x.shape[axis]:
            pieces.append((x, total))
        total += x.shape[axis]
    if not pieces:  # every input is empty, and so is the result
        return [result_compute(k, op, lambda *out: 0)]

    def body(*out: Expr) -> Expr:
        i = out[axis]

        def read(x: Tensor, start: int) -> Expr:
            # Every branch of the chain is evaluated: keep its index in bounds.
            size = x.shape[axis]
            if size == 1:
                return x[replace_axis(out, axis, index(0))]
            local = maximum(i - start, 0) if start else i
            if start + size < total:
                local = minimum(local, size - 1)
            return x[replace_axis(out, axis, local)]

        value = read(*pieces[-1])
        for x, start in reversed(pieces[:-1]):
            value = select(i < start + x.shape[axis], read(x, start), value)
        return value

    return [result_compute(k, op, body)]


@compute_rule(t.SplitOp)
def split(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    (x,) = inputs
    axis = t.axis_in_range(op.name, get_int(op_props(op), "axis"), x.rank)
    starts = list(itertools.accumulate(get_ints(op.properties, "sizes"), initial=0))
    outputs: list[Tensor] = []
    for result, start in enumerate(starts[:-1]):

        def body(*out: Expr, start: int = start) -> Expr:
            return x[replace_axis(out, axis, out[axis] + start if start else out[axis])]

        outputs.append(result_compute(k, op, body, result))
    return outputs


@compute_rule(t.SliceOp)
def slice_(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    (x,) = inputs
    ranges = t.SliceOp.ranges(op.operands[0].type, op.properties)

    def body(*out: Expr) -> Expr:
        indices: list[ExprLike] = []
        for i, kept, d in zip(out, ranges, x.shape, strict=True):
            if kept == range(d):
                indices.append(i)
            elif kept.step == 1:
                indices.append(i + kept.start if kept.start else i)
            else:
                indices.append(i * kept.step + kept.start)
        return x[indices]

    return [result_compute(k, op, body)]


# ---------------------------------------------------------------------------
# Indexing.


def zeros_if_empty(k: KernelBuilder, op: GraphOp, data: Tensor) -> list[Tensor] | None:
    """Reading an empty tensor (any index into it is out of range, which
    the checks report): the result is zeros, so that no read is ever out of
    bounds."""
    if prod(data.shape) != 0:
        return None
    return [result_compute(k, op, lambda *out: 0)]


def checked_positions(
    k: KernelBuilder,
    op: GraphOp,
    shape: Sequence[int],
    read: Callable[..., Expr],
    data: Tensor,
    axis: int,
) -> Tensor:
    """The positions on `axis` of `data` that the indices `read(*p)` (p in
    `shape`) stand for, as an i64 tensor: a negative index counts from the
    end; one outside [-dim, dim) fails the run with a message naming the
    node, the index and the axis (a run-time check), and is clamped into
    the axis so that no read leaves a buffer. Each index is checked once,
    in row-major order (the interpreter's order). An unsigned index is
    never negative (a ui64 above 2^63 is out of range, though the message
    prints it as a signed 64-bit number)."""
    dim = data.shape[axis]
    message = index_fault(op, dim, axis, data.type)

    def body(*at: Expr) -> Expr:
        index = read(*at)
        value = convert(index, i64)
        if index.unsigned:
            as_unsigned = Expr(value.value, unsigned=True)
            check(as_unsigned < dim, message, value)
            return minimum(as_unsigned, max(dim - 1, 0))
        check((value >= -dim) & (value < dim), message, value)
        wrapped = select(value < 0, value + dim, value)
        return minimum(maximum(wrapped, 0), max(dim - 1, 0))

    return k.compute(shape, i64, body)


@compute_rule(t.GatherOp)
def gather(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    data, indices = inputs
    axis = t.axis_in_range(op.name, get_int(op_props(op), "axis"), data.rank)
    positions = checked_positions(k, op, indices.shape, lambda *p: indices[p], data, axis)
    if (empty := zeros_if_empty(k, op, data)) is not None:
        return empty
    q = indices.rank

    def body(*out: Expr) -> Expr:
        at = index(positions[out[axis : axis + q]])
        return data[[*out[:axis], at, *out[axis + q :]]]

    return [result_compute(k, op, body)]


@compute_rule(t.GatherElementsOp)
def gather_elements(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    data, indices = inputs
    axis = t.axis_in_range(op.name, get_int(op_props(op), "axis"), data.rank)
    positions = checked_positions(k, op, indices.shape, lambda *p: indices[p], data, axis)
    if (empty := zeros_if_empty(k, op, data)) is not None:
        return empty

    def body(*out: Expr) -> Expr:
        return data[replace_axis(out, axis, index(positions[out]))]

    return [result_compute(k, op, body)]


def checked_tuples(
    k: KernelBuilder, op: GraphOp, data: Tensor, indices: Tensor, first_axis: int
) -> list[Tensor]:
    """The positions of each component j of the index tuples (the last axis
    of `indices`) on axis first_axis + j of `data`, checked
    (`checked_positions`), component after component."""
    tuple_shape = indices.shape[:-1]

    def component(j: int) -> Callable[..., Expr]:
        return lambda *at: indices[[*at, j]]

    return [
        checked_positions(k, op, tuple_shape, component(j), data, first_axis + j)
        for j in range(indices.shape[-1])
    ]


@compute_rule(t.GatherNDOp)
def gather_nd(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[b.., t.., rest..] = data[b.., indices[b.., t.., :]..., rest..]."""
    data, indices = inputs
    batch_dims = get_int(op_props(op), "batch_dims")
    positions = checked_tuples(k, op, data, indices, batch_dims)
    if (empty := zeros_if_empty(k, op, data)) is not None:
        return empty
    tuple_rank = indices.rank - 1

    def body(*out: Expr) -> Expr:
        tuple_at = list(out[:tuple_rank])
        addressed = [index(p[tuple_at]) for p in positions]
        return data[[*out[:batch_dims], *addressed, *out[tuple_rank:]]]

    return [result_compute(k, op, body)]


SCATTER_FOLDS = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}


def combine(reduction: str, old: Expr, folded: Expr) -> Expr:
    """old (+, *, max, min) folded; on i1 add and max are or, mul and min and."""
    if old.type == i1:
        return old | folded if reduction in ("add", "max") else old & folded
    if reduction == "add":
        return old + folded
    if reduction == "mul":
        return old * folded
    return maximum(old, folded) if reduction == "max" else minimum(old, folded)


def neutral(reduction: str, data: Tensor) -> ExprLike:
    """What an update that lands elsewhere contributes: the fold's identity."""
    if reduction in ("add", "mul"):
        return 0 if reduction == "add" else 1
    element_type = data.element_type
    if is_float(element_type):
        return -pymath.inf if reduction == "max" else pymath.inf
    low, high = (0, 1) if element_type == i1 else int_bounds(element_type, data.unsigned)
    return low if reduction == "max" else high


@compute_rule(t.ScatterElementsOp)
def scatter_elements(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[p] for p on `axis`: the updates at positions q (q = p off the axis)
    whose index is p[axis]."""
    data, indices, updates = inputs
    axis = t.axis_in_range(op.name, get_int(op_props(op), "axis"), data.rank)
    reduction = get_str(op_props(op), "reduction")
    n = indices.shape[axis]
    if prod(indices.shape) == 0:
        return [result_compute(k, op, lambda *out: data[out])]
    positions = checked_positions(k, op, indices.shape, lambda *p: indices[p], data, axis)

    def body(*out: Expr) -> Expr:
        old = data[out]
        # q shares p's coordinates off the axis; they may lie outside indices.
        inside: Expr | None = None
        shared: list[Expr] = []
        for a, (p, size, d) in enumerate(zip(out, indices.shape, data.shape, strict=True)):
            if a == axis or size >= d:
                shared.append(p)
                continue
            below = p < size
            inside = below if inside is None else inside & below
            shared.append(minimum(p, size - 1))

        def lands(r: Expr) -> Expr:
            at = replace_axis(shared, axis, r)
            hit = index(positions[at]).eq(out[axis])
            return hit if inside is None else hit & inside

        if reduction == "none":

            def last_hit(r: Expr) -> Expr:
                return select(lands(r), convert(r, i64), -1)

            found = fold(k, "max", [n], last_hit, i64)
            at = replace_axis(shared, axis, index(maximum(found, 0)))
            return select(found >= 0, updates[at], old)

        def term(r: Expr) -> Expr:
            update = updates[replace_axis(shared, axis, r)]
            return select(lands(r), update, neutral(reduction, data))

        folded = fold(k, SCATTER_FOLDS[reduction], [n], term, data.element_type)
        return combine(reduction, old, folded)

    return [result_compute(k, op, body)]


@compute_rule(t.ScatterNDOp)
def scatter_nd(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[p] with p = (p_0..p_{k-1}, rest): the updates[t, rest] whose index
    tuple indices[t, :] is (p_0..p_{k-1})."""
    data, indices, updates = inputs
    reduction = get_str(op_props(op), "reduction")
    depth = indices.shape[-1]
    box = list(indices.shape[:-1])
    if prod(box) == 0:
        return [result_compute(k, op, lambda *out: data[out])]
    positions = checked_tuples(k, op, data, indices, 0)

    def body(*out: Expr) -> Expr:
        old = data[out]

        def lands(*tuple_at: Expr) -> Expr:
            hit: Expr | None = None
            for j in range(depth):
                v = index(positions[j][list(tuple_at)]).eq(out[j])
                hit = v if hit is None else hit & v
            assert hit is not None
            return hit

        if reduction == "none":

            def last_hit(*tuple_at: Expr) -> Expr:
                return select(lands(*tuple_at), convert(linearize(tuple_at, box), i64), -1)

            found = fold(k, "max", box, last_hit, i64)
            tuple_at = delinearize(index(maximum(found, 0)), box)
            return select(found >= 0, updates[[*tuple_at, *out[depth:]]], old)

        def term(*tuple_at: Expr) -> Expr:
            update = updates[[*tuple_at, *out[depth:]]]
            return select(lands(*tuple_at), update, neutral(reduction, data))

        folded = fold(k, SCATTER_FOLDS[reduction], box, term, data.element_type)
        return combine(reduction, old, folded)

    return [result_compute(k, op, body)]


# ---------------------------------------------------------------------------
# Depth and space.


@compute_rule(t.DepthToSpaceOp)
def depth_to_space(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[n, c, y, x] = in[n, channel, y / b, x / b] with channel made of
    (y % b, x % b, c) in DCR order, (c, y % b, x % b) in CRD order."""
    (x,) = inputs
    b = get_int(op.properties, "blocksize")
    channels = x.shape[1] // (b * b)
    dcr = get_str(op_props(op), "mode") == "DCR"

    def body(n: Expr, c: Expr, y: Expr, x_: Expr) -> Expr:
        by, bx = rem(y, b), rem(x_, b)
        block = by * b + bx
        channel = block * channels + c if dcr else c * (b * b) + block
        return x[[n, channel, div(y, b), div(x_, b)]]

    return [result_compute(k, op, body)]


@compute_rule(t.SpaceToDepthOp)
def space_to_depth(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[n, channel, y, x] = in[n, c, y * b + by, x * b + bx] with channel
    made of (by, bx, c) in DCR order, (c, by, bx) in CRD order."""
    (x,) = inputs
    b = get_int(op.properties, "blocksize")
    channels = x.shape[1]
    dcr = get_str(op_props(op), "mode") == "DCR"

    def body(n: Expr, channel: Expr, y: Expr, x_: Expr) -> Expr:
        if dcr:
            c, block = rem(channel, channels), div(channel, channels)
        else:
            c, block = div(channel, b * b), rem(channel, b * b)
        by, bx = div(block, b), rem(block, b)
        return x[[n, c, y * b + by, x_ * b + bx]]

    return [result_compute(k, op, body)]
