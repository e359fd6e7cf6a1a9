"""Compute rules: nn graph ops.

Each rule follows the numpy semantics of `interp/graph/nn.py`. Products and
sums accumulate in the element type (f16 / bf16 in f32, booleans in i64), so
integers wrap as the interpreter's int64 sums do once cast back. A window
that may leave its tensor (padding, ceil_mode overhang, transposed strides)
reads a clamped index and `select`s the fill value: no read ever falls
outside a tensor.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import cast

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    IndexType,
    IntegerType,
    TensorType,
    f32,
    f64,
    i64,
)
from xdsl.ir import Attribute

from xtc.dialects.graph import nn
from xtc.dialects.graph.base import (
    GraphOp,
    get_bool,
    get_float,
    get_int,
    get_ints,
    get_str,
    op_props,
    shape_of,
)
from xtc.ops import compute_rule
from xtc.ops.te_builder import (
    Expr,
    ExprLike,
    KernelBuilder,
    Tensor,
    absolute,
    ceil,
    constant,
    convert,
    exp,
    floor,
    is_float,
    is_unsigned,
    log,
    maximum,
    minimum,
    round_even,
    scalar_type,
    select,
    sqrt,
)

# ---------------------------------------------------------------------------
# Helpers shared by the rules of this module.


def accumulator_type(element_type: Attribute) -> Attribute:
    """The arith type sums of `element_type` values are computed in."""
    if isinstance(element_type, Float16Type | BFloat16Type):
        return f32
    if isinstance(element_type, IntegerType) and element_type.width.data == 1:
        return i64
    return scalar_type(element_type)


def _is_bool(element_type: Attribute) -> bool:
    return isinstance(element_type, IntegerType) and element_type.width.data == 1


def _result(op: GraphOp) -> tuple[tuple[int, ...], Attribute]:
    """Shape and element type of the op's (only) result."""
    t = cast(TensorType[Attribute], op.result_types[0])
    return shape_of(t), t.get_element_type()


def affine(*terms: tuple[ExprLike, int], offset: int = 0) -> ExprLike:
    """Σ index · coefficient + offset, leaving out the trivial operations
    (an int when every index is an int)."""
    total: Expr | None = None
    for value, coefficient in terms:
        if not isinstance(value, Expr):
            offset += int(value) * coefficient
            continue
        if coefficient == 0:
            continue
        term = value if coefficient == 1 else value * coefficient
        total = term if total is None else total + term
    if total is None:
        return offset
    return total + offset if offset else total


def clamp(i: ExprLike, size: int) -> ExprLike:
    """An index clamped into [0, size)."""
    if not isinstance(i, Expr):
        return min(max(i, 0), size - 1)
    return minimum(maximum(i, 0), size - 1)


def within(i: ExprLike, lo: int, hi: int) -> Expr:
    """lo <= i < hi (i1)."""
    assert isinstance(i, Expr)
    return (i >= lo) & (i < hi)


def all_of(conditions: Sequence[Expr]) -> Expr | None:
    """The conjunction of the conditions, None when there are none."""
    result: Expr | None = None
    for c in conditions:
        result = c if result is None else result & c
    return result


def _window(op: GraphOp, kernel: Sequence[int]) -> nn.Window2d:
    props = op_props(op)
    return nn.Window2d(
        kernel=tuple(kernel),
        strides=get_ints(props, "strides"),
        dilation=get_ints(props, "dilation"),
        padding=get_ints(props, "padding"),
    )


def _lowest(element_type: Attribute) -> float | int:
    """The identity of max over `element_type` (-inf, the smallest integer)."""
    if is_float(element_type):
        return -pymath.inf
    if is_unsigned(element_type) or _is_bool(element_type):
        return 0
    return -(1 << (cast(IntegerType, element_type).width.data - 1))


def reduce_max(
    k: KernelBuilder, extents: Sequence[int], term: Callable[..., Expr], element_type: Attribute
) -> Expr:
    """max of term over the box. te.reduce compares integers as signed: an
    unsigned term is read with its top bit flipped, which maps the unsigned
    order onto the signed one, and flipped back after."""
    if not is_unsigned(element_type):
        return k.reduce("max", extents, term)
    top = 1 << (cast(IntegerType, element_type).width.data - 1)
    return k.reduce("max", extents, lambda *r: term(*r) ^ top) ^ top


def _insert(indices: Sequence[Expr], axis: int, value: Expr) -> list[Expr]:
    return [*indices[:axis], value, *indices[axis:]]


# ---------------------------------------------------------------------------
# Convolutions.


def zero_padded(k: KernelBuilder, x: Tensor, padding: Sequence[int]) -> Tensor:
    """x (N×C×H×W) with `padding` [top, left, bottom, right] rows and columns
    of zeros around H×W (x itself when there are none)."""
    return padded(k, x, padding, 0)


def padded(k: KernelBuilder, x: Tensor, padding: Sequence[int], fill: ExprLike) -> Tensor:
    """x (N×C×H×W, or N×C/b×H×W×b) with `padding` [top, left, bottom, right]
    rows and columns of `fill` around H×W (x itself when there are none)."""
    if not any(padding):
        return x
    n, c, h, w, *lanes = x.shape
    top, left, bottom, right = padding
    shape = (n, c, h + top + bottom, w + left + right, *lanes)

    def element(b: Expr, ch: Expr, y: Expr, xx: Expr, *lane: Expr) -> Expr:
        reads: list[ExprLike] = []
        inside: list[Expr] = []
        for p, before, after, size in zip(
            (y, xx), (top, left), (bottom, right), (h, w), strict=True
        ):
            source = affine((p, 1), offset=-before)
            if before or after:
                inside.append(within(source, 0, size))
                source = clamp(source, size)
            reads.append(source)
        return select(cast(Expr, all_of(inside)), x[[b, ch, *reads, *lane]], fill)

    return k.compute(shape, x.element_type, element)


def _grouped_channel(
    oc: Expr, per_group_out: int, per_group_in: int, groups: int, c: Expr, block: int | None
) -> ExprLike:
    """Input channel c of the group of output channel oc. With weights in
    blocks of `block` output channels that never straddle a group, the
    group is taken from the block (`oc // block`), which a split of oc by
    the block turns into the outer loop variable: one group per vector."""
    if groups == 1:
        return c
    if per_group_out == 1:
        return oc * per_group_in + c
    if block is not None and per_group_out % block == 0:
        blocks_per_group = per_group_out // block
        group = oc // block if blocks_per_group == 1 else (oc // block) // blocks_per_group
        return group * per_group_in + c
    return (oc // per_group_out) * per_group_in + c


@compute_rule(nn.Conv2dOp)
def conv2d(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[n, o, y, x] = Σ_{c, i, j} xpad[n, g·C/g + c, y·sh + i·dh, x·sw + j·dw]
    · w[o, c, i, j], g the group of o; padding is a zero-padded stage. An
    input in NCHW<b>c (groups = 1) is read as xpad[n, c / b, ..., c mod b],
    summed block by block."""
    x, w = inputs
    out_block = nn.channel_block(nn.out_layout(op.properties))
    if out_block is not None:
        return conv2d_blocked(k, op, x, w, out_block)
    shape, element_type = _result(op)
    layout = nn.kernel_layout(op.properties)
    o, cg, kh, kw = nn.conv2d_weight_oihw(w.shape, layout)
    block = nn.output_block(layout)
    input_block = nn.channel_block(nn.data_layout(op.properties))
    window = _window(op, (kh, kw))
    groups = get_int(op_props(op), "groups")
    (sh, sw), (dh, dw) = window.strides, window.dilation
    padded = zero_padded(k, x, window.padding)
    acc = accumulator_type(element_type)

    def element(b: Expr, oc: Expr, y: Expr, xx: Expr) -> Expr:
        def times_weight(value: Expr, c: ExprLike, i: Expr, j: Expr) -> Expr:
            if layout == "IHWO":
                weight = w[[c, i, j, oc]]
            elif block is not None:
                weight = w[[oc // block, c, i, j, oc % block]]
            else:
                weight = w[[oc, c, i, j]]
            return convert(value, acc) * convert(weight, acc)

        def tap(i: Expr, j: Expr) -> list[ExprLike]:
            return [affine((y, sh), (i, dh)), affine((xx, sw), (j, dw))]

        def term(c: Expr, i: Expr, j: Expr) -> Expr:
            channel = _grouped_channel(oc, o // groups, cg, groups, c, block)
            return times_weight(padded[[b, channel, *tap(i, j)]], c, i, j)

        def blocked_term(cb: Expr, ci: Expr, i: Expr, j: Expr) -> Expr:
            value = padded[[b, cb, *tap(i, j), ci]]
            return times_weight(value, affine((cb, input_block), (ci, 1)), i, j)

        if input_block is not None:
            total = k.reduce("sum", (cg // input_block, input_block, kh, kw), blocked_term)
        else:
            total = k.reduce("sum", (cg, kh, kw), term)
        return convert(total, element_type)

    return [k.compute(shape, element_type, element)]


def conv2d_blocked(
    k: KernelBuilder, op: GraphOp, x: Tensor, w: Tensor, block: int
) -> list[Tensor]:
    """conv2d with its output in layout NCHW<b>c (weights OIHW<b>o): with
    groups = 1, out[n, o / b, y, x, o mod b] = Σ_{c, i, j} xpad[n, c, y·sh +
    i·dh, x·sw + j·dw] · w[o / b, c, i, j, o mod b], the input in NCHW or in
    NCHW<b>c (xpad[n, c / b, ..., c mod b], summed block by block); a
    depthwise conv (groups = C = O, its input in NCHW<b>c) sums its own
    channel only: Σ_{i, j} xpad[n, o / b, ..., o mod b] · w[o / b, 0, i, j,
    o mod b]."""
    shape, element_type = _result(op)
    _, c, kh, kw, _ = w.shape
    window = _window(op, (kh, kw))
    (sh, sw), (dh, dw) = window.strides, window.dilation
    source = zero_padded(k, x, window.padding)
    blocked_input = nn.channel_block(nn.data_layout(op.properties)) is not None
    depthwise = get_int(op_props(op), "groups") != 1
    acc = accumulator_type(element_type)

    def element(b: Expr, ob: Expr, y: Expr, xx: Expr, lane: Expr) -> Expr:
        def times_weight(value: Expr, channel: ExprLike, i: Expr, j: Expr) -> Expr:
            return convert(value, acc) * convert(w[[ob, channel, i, j, lane]], acc)

        def tap(i: Expr, j: Expr) -> list[ExprLike]:
            return [affine((y, sh), (i, dh)), affine((xx, sw), (j, dw))]

        def depthwise_term(i: Expr, j: Expr) -> Expr:
            return times_weight(source[[b, ob, *tap(i, j), lane]], 0, i, j)

        def blocked_term(cb: Expr, ci: Expr, i: Expr, j: Expr) -> Expr:
            value = source[[b, cb, *tap(i, j), ci]]
            return times_weight(value, affine((cb, block), (ci, 1)), i, j)

        def term(ch: Expr, i: Expr, j: Expr) -> Expr:
            return times_weight(source[[b, ch, *tap(i, j)]], ch, i, j)

        if depthwise:
            total = k.reduce("sum", (kh, kw), depthwise_term)
        elif blocked_input:
            total = k.reduce("sum", (c // block, block, kh, kw), blocked_term)
        else:
            total = k.reduce("sum", (c, kh, kw), term)
        return convert(total, element_type)

    return [k.compute(shape, element_type, element)]


@compute_rule(nn.WinogradConv2dOp)
def winograd_conv2d(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """Five stages over the m×m output tiles, numbered p = ty·tiles_w + tx (one
    loop, that the products' register tile runs along), b the channel block:
    rows t[a, cb, n, p, j, l] = Σ_i Bᵀ[a, i] xpad[n, cb, ty·m + i, tx·m + j,
    l]; tiles v[a, β, cb, n, p, l] = Σ_j Bᵀ[β, j] t[a, cb, n, p, j, l];
    products q[a, β, kb, n, p, l] = Σ_c v[a, β, c / b, n, p, c mod b] · U[a,
    β, kb, c, l]; rows r[a, kb, n, p, v, l] = Σ_β Aᵀ[v, β] q[a, β, kb, n, p,
    l]; out[n, kb, y, x, l] = Σ_a Aᵀ[y mod m, a] r[a, kb, n, p(y / m, x /
    m), x mod m, l]. xpad is the input zero-padded to whole tiles."""
    x, u, bt, at = inputs
    shape, element_type = _result(op)
    batch, blocks_in, height, width, block = x.shape
    m, alpha = at.shape
    _, _, blocks_out, channels, _ = u.shape
    tiles_h, tiles_w = -(-shape[2] // m), -(-shape[3] // m)
    top, left, _, _ = get_ints(op_props(op), "padding")
    source = zero_padded(
        k,
        x,
        (
            top,
            left,
            tiles_h * m + alpha - m - height - top,
            tiles_w * m + alpha - m - width - left,
        ),
    )
    acc = accumulator_type(element_type)

    def summed(extents: Sequence[int], term: Callable[..., Expr]) -> Expr:
        return convert(k.reduce("sum", extents, term), element_type)

    def product(a: Expr, b: Expr) -> Expr:
        return convert(a, acc) * convert(b, acc)

    tiles = (batch, tiles_h * tiles_w)
    rows = k.compute(
        (alpha, blocks_in, *tiles, alpha, block),
        element_type,
        lambda a, cb, n, p, j, lane: summed(
            (alpha,),
            lambda i: product(
                bt[a, i],
                source[
                    n,
                    cb,
                    affine((p // tiles_w, m), (i, 1)),
                    affine((p % tiles_w, m), (j, 1)),
                    lane,
                ],
            ),
        ),
    )
    transformed = k.compute(
        (alpha, alpha, blocks_in, *tiles, block),
        element_type,
        lambda a, b, cb, n, p, lane: summed(
            (alpha,), lambda j: product(bt[b, j], rows[a, cb, n, p, j, lane])
        ),
    )
    products = k.compute(
        (alpha, alpha, blocks_out, *tiles, block),
        element_type,
        lambda a, b, kb, n, p, lane: summed(
            (channels // block, block),
            lambda cb, cl: product(
                transformed[a, b, cb, n, p, cl],
                u[a, b, kb, affine((cb, block), (cl, 1)), lane],
            ),
        ),
    )
    output_rows = k.compute(
        (alpha, blocks_out, *tiles, m, block),
        element_type,
        lambda a, kb, n, p, v, lane: summed(
            (alpha,), lambda b: product(at[v, b], products[a, b, kb, n, p, lane])
        ),
    )

    def element(n: Expr, kb: Expr, y: Expr, xx: Expr, lane: Expr) -> Expr:
        tile = affine((y // m, tiles_w), (xx // m, 1))
        return summed(
            (alpha,),
            lambda a: product(at[y % m, a], output_rows[a, kb, n, tile, xx % m, lane]),
        )

    return [k.compute(shape, element_type, element)]


@compute_rule(nn.Conv2dU8S8Op)
def conv2d_u8s8(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[n, y, x, o] = Σ_{c4, i, j} Σ_{t < 4} in[n, y·sh + i·dh, x·sw + j·dw,
    4·c4 + t] · w[o / 16, c4, i, j, o mod 16, t] in i32 (NHWC): the four
    products of one weight lane written out, the shape tir-lower-vectorized
    turns into one `vpdpbusd` where the CPU has VNNI."""
    x, w = inputs
    shape, element_type = _result(op)
    props = op_props(op)
    (sh, sw), (dh, dw) = get_ints(props, "strides"), get_ints(props, "dilation")
    _, c4, kh, kw, lanes, depth = w.shape

    def element(b: Expr, y: Expr, xx: Expr, oc: Expr) -> Expr:
        def term(c: Expr, i: Expr, j: Expr) -> Expr:
            row, col = affine((y, sh), (i, dh)), affine((xx, sw), (j, dw))
            products = [
                convert(x[b, row, col, affine((c, depth), offset=t)], element_type)
                * convert(w[oc // lanes, c, i, j, oc % lanes, t], element_type)
                for t in range(depth)
            ]
            while len(products) > 1:
                pairs = zip(products[::2], products[1::2], strict=True)
                products = [lhs + rhs for lhs, rhs in pairs]
            return products[0]

        return k.reduce("sum", (c4, kh, kw), term)

    return [k.compute(shape, element_type, element)]


@compute_rule(nn.Conv2dTransposeOp)
def conv2d_transpose(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """A convolution (flipped kernel) over the input spread by the strides
    and padded by dilation·(K-1) - padding: out[n, o, y, x] = Σ_{c, i, j}
    e[n, ch, y + (KH-1-i)·dh, x + (KW-1-j)·dw] · w[ch, o mod O/g, i, j]
    with ch = g·C/g + c, g the group of o."""
    x, w = inputs
    shape, element_type = _result(op)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    _, o, oh, ow = shape
    window = _window(op, (kh, kw))
    groups = get_int(op_props(op), "groups")
    cg = c // groups
    (sh, sw), (dh, dw) = window.strides, window.dilation
    # e[a] = x[(a - lead) / stride] where that is a whole input index, else 0.
    lead_h = (kh - 1) * dh - window.padding[0]
    lead_w = (kw - 1) * dw - window.padding[1]
    eh, ew = oh + (kh - 1) * dh, ow + (kw - 1) * dw

    def spread(b: Expr, ch: Expr, a: Expr, bb: Expr) -> Expr:
        conditions: list[Expr] = []
        sources: list[ExprLike] = []
        for position, lead, stride, size in ((a, lead_h, sh, h), (bb, lead_w, sw, wd)):
            shifted = affine((position, 1), offset=-lead)
            source = shifted if stride == 1 else cast(Expr, shifted) // stride
            conditions.append(within(source, 0, size))
            if stride != 1:
                conditions.append((cast(Expr, shifted) % stride).eq(0))
            sources.append(clamp(source, size))
        inside = cast(Expr, all_of(conditions))
        return select(inside, x[b, ch, sources[0], sources[1]], 0)

    spread_x = k.compute((n, c, eh, ew), x.element_type, spread)
    acc = accumulator_type(element_type)

    def element(b: Expr, oc: Expr, y: Expr, xx: Expr) -> Expr:
        def term(ci: Expr, i: Expr, j: Expr) -> Expr:
            channel = _grouped_channel(oc, og, cg, groups, ci, None)
            out_channel = oc if groups == 1 else oc % og
            row = affine((y, 1), (i, -dh), offset=(kh - 1) * dh)
            col = affine((xx, 1), (j, -dw), offset=(kw - 1) * dw)
            value = spread_x[b, channel, row, col]
            return convert(value, acc) * convert(w[channel, out_channel, i, j], acc)

        return convert(k.reduce("sum", (cg, kh, kw), term), element_type)

    return [k.compute(shape, element_type, element)]


# ---------------------------------------------------------------------------
# Matrix products.


def _dot(
    k: KernelBuilder,
    extent: int,
    lhs: Callable[[Expr], Expr],
    rhs: Callable[[Expr], Expr],
    element_type: Attribute,
) -> Expr:
    """Σ_r lhs(r) · rhs(r), accumulated as accumulator_type(element_type)."""
    acc = accumulator_type(element_type)
    total = k.reduce("sum", (extent,), lambda r: convert(lhs(r), acc) * convert(rhs(r), acc))
    return convert(total, element_type)


@compute_rule(nn.DenseOp)
def dense(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[..., j] = Σ_r x[..., r] · w[j, r]."""
    x, w = inputs
    shape, element_type = _result(op)
    depth = w.shape[1]

    def element(*indices: Expr) -> Expr:
        *batch, j = indices
        return _dot(k, depth, lambda r: x[[*batch, r]], lambda r: w[j, r], element_type)

    return [k.compute(shape, element_type, element)]


def _batch_indices(batch: Sequence[Expr], shape: Sequence[int]) -> list[ExprLike]:
    """The indices of a broadcast operand's batch dims `shape` (right-aligned
    on the output batch indices; a dim of 1 reads index 0)."""
    aligned = batch[len(batch) - len(shape) :] if shape else []
    return [0 if size == 1 else i for i, size in zip(aligned, shape, strict=True)]


@compute_rule(nn.MatmulOp)
def matmul(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """numpy matmul: a 1-D lhs is a row, a 1-D rhs a column (both squeezed
    from the result), batch dims broadcast."""
    a, b = inputs
    shape, element_type = _result(op)
    lhs_vector, rhs_vector = a.rank == 1, b.rank == 1
    depth = a.shape[-1]
    batch_rank = len(shape) - (not lhs_vector) - (not rhs_vector)

    def element(*indices: Expr) -> Expr:
        batch, rest = indices[:batch_rank], list(indices[batch_rank:])
        row = None if lhs_vector else rest.pop(0)
        col = None if rhs_vector else rest.pop(0)

        def lhs(r: Expr) -> Expr:
            if row is None:
                return a[r]
            return a[[*_batch_indices(batch, a.shape[:-2]), row, r]]

        def rhs(r: Expr) -> Expr:
            if col is None:
                return b[r]
            return b[[*_batch_indices(batch, b.shape[:-2]), r, col]]

        return _dot(k, depth, lhs, rhs, element_type)

    return [k.compute(shape, element_type, element)]


@compute_rule(nn.BatchMatmulOp)
def batch_matmul(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[b, i, j] = Σ_r a[b, i, r] · b[b, r, j], each operand read
    transposed when transpose_a / transpose_b, a batch of 1 broadcast."""
    a, b = inputs
    shape, element_type = _result(op)
    transpose_a = get_bool(op_props(op), "transpose_a")
    transpose_b = get_bool(op_props(op), "transpose_b")
    depth = a.shape[1] if transpose_a else a.shape[2]

    def element(batch: Expr, i: Expr, j: Expr) -> Expr:
        ba: ExprLike = 0 if a.shape[0] == 1 else batch
        bb: ExprLike = 0 if b.shape[0] == 1 else batch
        return _dot(
            k,
            depth,
            lambda r: a[ba, r, i] if transpose_a else a[ba, i, r],
            lambda r: b[bb, j, r] if transpose_b else b[bb, r, j],
            element_type,
        )

    return [k.compute(shape, element_type, element)]


# ---------------------------------------------------------------------------
# Bias and normalisation.


@compute_rule(nn.BiasAddOp)
def bias_add(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[..., c, ...] = x[..., c, ...] + bias[c] (logical or for booleans, as numpy)."""
    x, bias = inputs
    axis = get_int(op_props(op), "axis") % x.rank

    def element(*indices: Expr) -> Expr:
        value, offset = x[indices], bias[indices[axis]]
        return value | offset if _is_bool(x.element_type) else value + offset

    return [k.compute(x.shape, x.element_type, element)]


@compute_rule(nn.BatchNormOp)
def batch_norm(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """scale = gamma / sqrt(variance + epsilon), shift = beta - mean · scale
    (per channel), then out = x · scale + shift."""
    x, gamma, beta, mean, variance = inputs
    axis = get_int(op_props(op), "axis") % x.rank
    epsilon = get_float(op_props(op), "epsilon")
    element_type = x.element_type
    acc = accumulator_type(element_type)
    channels = (x.shape[axis],)

    def wide(t: Tensor, i: ExprLike) -> Expr:
        return convert(t[i], acc)

    scale = k.compute(channels, acc, lambda c: wide(gamma, c) / sqrt(wide(variance, c) + epsilon))
    shift = k.compute(channels, acc, lambda c: wide(beta, c) - wide(mean, c) * scale[c])

    def element(*indices: Expr) -> Expr:
        c = indices[axis]
        return convert(convert(x[indices], acc) * scale[c] + shift[c], element_type)

    return [k.compute(x.shape, element_type, element)]


@compute_rule(nn.LayerNormOp)
def layer_norm(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """Over the dims from `axis` on: mean, std = sqrt(mean((x - mean)²) +
    epsilon), then (x - mean) / std · gamma + beta."""
    x, gamma, beta = inputs
    axis = get_int(op_props(op), "axis") % x.rank
    epsilon = get_float(op_props(op), "epsilon")
    element_type = x.element_type
    acc = accumulator_type(element_type)
    outer, inner = x.shape[:axis], x.shape[axis:]
    count = pymath.prod(inner)

    def value(indices: Sequence[ExprLike]) -> Expr:
        return convert(x[indices], acc)

    mean = k.compute(
        outer,
        acc,
        lambda *o: k.reduce("sum", inner, lambda *r: value([*o, *r])) / float(count),
    )

    def std(*o: Expr) -> Expr:
        def squared(*r: Expr) -> Expr:
            centred = value([*o, *r]) - mean[o]
            return centred * centred

        return sqrt(k.reduce("sum", inner, squared) / float(count) + epsilon)

    deviation = k.compute(outer, acc, std)

    def broadcast(t: Tensor, indices: Sequence[Expr]) -> Expr:
        tail = indices[len(indices) - t.rank :] if t.rank else []
        return convert(
            t[[0 if size == 1 else i for i, size in zip(tail, t.shape, strict=True)]], acc
        )

    def element(*indices: Expr) -> Expr:
        o = indices[:axis]
        normalised = (value(indices) - mean[o]) / deviation[o]
        return convert(
            normalised * broadcast(gamma, indices) + broadcast(beta, indices), element_type
        )

    return [k.compute(x.shape, element_type, element)]


# ---------------------------------------------------------------------------
# Pooling.


def _taps_within(start: Expr, lo: int, hi: int, kernel: int, dilation: int) -> Expr:
    """How many k in [0, kernel) have lo <= start + k·dilation < hi (index)."""
    after_lo = cast(Expr, affine((start, 1), offset=-lo))
    before_hi = (hi - 1) - start
    if dilation != 1:
        # (no division by 1: a vector loop would run it lane by lane)
        after_lo, before_hi = after_lo // dilation, before_hi // dilation
    first = maximum(-after_lo, 0)
    last = minimum(before_hi, kernel - 1)
    return maximum(last - first + 1, 0)


def _pool2d(k: KernelBuilder, op: GraphOp, x: Tensor, take_max: bool) -> Tensor:
    """max, or Σ / count, over the window's taps that lie in the input."""
    shape, element_type = _result(op)
    window = _window(op, get_ints(op.properties, "kernel"))
    count_include_pad = isinstance(op, nn.AvgPool2dOp) and get_bool(
        op_props(op), "count_include_pad"
    )
    sizes, out_sizes = x.shape[2:4], shape[2:4]  # (N×C/b×H×W×b: b after them)
    strides, dilation, padding = window.strides, window.dilation, window.padding

    def reaches_outside(axis: int, lo: int, hi: int) -> bool:
        """Whether a tap of some window lies outside [lo, hi) along `axis`."""
        first = -padding[axis]
        last = (out_sizes[axis] - 1) * strides[axis] + first + window.extent(axis) - 1
        return first < lo or last >= hi

    acc = accumulator_type(element_type)
    # Pad first: the windows read a copy of x filled out to every tap they
    # reach (with a value that never wins), so that their loads are affine
    # in the output position (vector loads along the row, strided ones for
    # a stride of 2 to 4) instead of guarded and clamped per tap.
    reach = [
        (out_sizes[a] - 1) * strides[a] - padding[a] + window.extent(a) - sizes[a] for a in range(2)
    ]
    source = padded(
        k,
        x,
        (padding[0], padding[1], max(reach[0], 0), max(reach[1], 0)),
        _lowest(element_type) if take_max else 0,
    )

    def element(b: Expr, c: Expr, y: Expr, xx: Expr, *lane: Expr) -> Expr:
        outs = (y, xx)

        def term(*taps: Expr) -> Expr:
            positions = (affine((outs[a], strides[a]), (taps[a], dilation[a])) for a in range(2))
            read = source[[b, c, *positions, *lane]]
            return read if take_max else convert(read, acc)

        if take_max:
            return reduce_max(k, window.kernel, term, element_type)
        total = k.reduce("sum", window.kernel, term)
        count: ExprLike = 1
        for a in range(2):
            lo, hi = 0, sizes[a]
            if count_include_pad:
                lo, hi = -padding[a], sizes[a] + padding[a + 2]
            if reaches_outside(a, lo, hi):
                start = cast(Expr, affine((outs[a], strides[a]), offset=-padding[a]))
                taps = _taps_within(start, lo, hi, window.kernel[a], dilation[a])
                count = taps if isinstance(count, int) and count == 1 else taps * count
            else:
                count = count * window.kernel[a]
        if isinstance(count, Expr):
            return convert(total / convert(maximum(count, 1), acc), element_type)
        return convert(total / float(count), element_type)

    return k.compute(shape, element_type, element)


@compute_rule(nn.MaxPool2dOp)
def max_pool2d(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """max over the window's taps inside the input (padding never wins)."""
    return [_pool2d(k, op, inputs[0], take_max=True)]


@compute_rule(nn.AvgPool2dOp)
def avg_pool2d(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """Σ of the window's taps inside the input / the taps counted (those in
    the input, or in the input and its explicit padding)."""
    return [_pool2d(k, op, inputs[0], take_max=False)]


@compute_rule(nn.GlobalMaxPool2dOp)
def global_max_pool2d(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[n, c, 0, 0] = max over H×W of x[n, c]."""
    (x,) = inputs
    shape, element_type = _result(op)
    window = x.shape[2:4]  # (N×C/b×H×W×b: b after them)

    def element(b: Expr, c: Expr, _y: Expr, _x: Expr, *lane: Expr) -> Expr:
        return reduce_max(k, window, lambda i, j: x[[b, c, i, j, *lane]], element_type)

    return [k.compute(shape, element_type, element)]


@compute_rule(nn.GlobalAvgPool2dOp)
def global_avg_pool2d(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """out[n, c, 0, 0] = Σ over H×W of x[n, c] / (H·W)."""
    (x,) = inputs
    shape, element_type = _result(op)
    window = x.shape[2:4]  # (N×C/b×H×W×b: b after them)
    acc = accumulator_type(element_type)

    def element(b: Expr, c: Expr, _y: Expr, _x: Expr, *lane: Expr) -> Expr:
        total = k.reduce("sum", window, lambda i, j: convert(x[[b, c, i, j, *lane]], acc))
        return convert(total / float(pymath.prod(window)), element_type)

    return [k.compute(shape, element_type, element)]


# ---------------------------------------------------------------------------
# Softmax.


def _softmax(k: KernelBuilder, op: GraphOp, x: Tensor, take_log: bool) -> Tensor:
    """m = max over the axis, s = Σ exp(x - m), then exp(x - m) · (1 / s)
    (one division per row, as onnxruntime) or (x - m) - log(s)."""
    axis = get_int(op_props(op), "axis") % x.rank
    element_type = x.element_type
    acc = accumulator_type(element_type)
    reduced = x.shape[:axis] + x.shape[axis + 1 :]
    extent = (x.shape[axis],)

    def value(outer: Sequence[Expr], r: Expr) -> Expr:
        return convert(x[_insert(outer, axis, r)], acc)

    def exp_below_peak(shifted: Expr) -> Expr:
        # x - max is never positive; the minimum says so to tir-expand-math,
        # whose exp then needs no upper clamp and builds one exponent, not two
        # (NaN stays NaN: minimumf propagates it).
        return exp(minimum(shifted, 0.0))

    peak = k.compute(reduced, acc, lambda *o: k.reduce("max", extent, lambda r: value(o, r)))

    def row_total(*o: Expr) -> Expr:
        total = k.reduce("sum", extent, lambda r: exp_below_peak(value(o, r) - peak[o]))
        return log(total) if take_log else 1.0 / total

    scale = k.compute(reduced, acc, row_total)

    def element(*indices: Expr) -> Expr:
        outer = [*indices[:axis], *indices[axis + 1 :]]
        shifted = convert(x[indices], acc) - peak[outer]
        result = shifted - scale[outer] if take_log else exp_below_peak(shifted) * scale[outer]
        return convert(result, element_type)

    return k.compute(x.shape, element_type, element)


@compute_rule(nn.SoftmaxOp)
def softmax(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """exp(x - max) / Σ exp(x - max) over the axis."""
    return [_softmax(k, op, inputs[0], take_log=False)]


@compute_rule(nn.LogSoftmaxOp)
def log_softmax(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """(x - max) - log Σ exp(x - max) over the axis."""
    return [_softmax(k, op, inputs[0], take_log=True)]


# ---------------------------------------------------------------------------
# Pad and resize.


def _fill_constant(value: float, element_type: Attribute) -> Expr:
    """`value` stored into an element_type tensor as numpy does (truncated
    toward zero for integers, wrapped for unsigned ones)."""
    if is_float(element_type):
        return constant(value, element_type)
    if _is_bool(element_type):
        return constant(value != 0, element_type)
    return constant(int(value), scalar_type(element_type))


@compute_rule(nn.PadOp)
def pad(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """Per axis: crop (negative pads), then read the source index of each
    output index: the constant outside (constant), the nearest edge (edge),
    or the mirror image about the edge (reflect)."""
    (x,) = inputs
    shape, element_type = _result(op)
    rank = x.rank
    pads = get_ints(op.properties, "pads")
    mode = get_str(op_props(op), "mode")
    fill = get_float(op_props(op), "value")
    crops = [max(-pads[a], 0) for a in range(rank)]
    kept_sizes = [x.shape[a] - crops[a] - max(-pads[a + rank], 0) for a in range(rank)]
    if min(kept_sizes, default=1) < 1:
        if mode != "constant":
            raise ValueError(
                f"graph.pad: {mode} mode cannot pad an axis cropped to nothing "
                f"(pads {list(pads)}, input {list(x.shape)})"
            )
        # Everything is cropped away: the output is all padding.
        return [k.compute(shape, element_type, lambda *_: _fill_constant(fill, element_type))]

    def element(*indices: Expr) -> Expr:
        sources: list[ExprLike] = []
        conditions: list[Expr] = []
        for axis, o in enumerate(indices):
            before, after = pads[axis], pads[axis + rank]
            crop, kept = crops[axis], kept_sizes[axis]
            if before <= 0 and after <= 0:
                sources.append(affine((o, 1), offset=crop))
                continue
            c = cast(Expr, affine((o, 1), offset=-max(before, 0)))
            if mode == "constant":
                conditions.append(within(c, 0, kept))
                source: ExprLike = clamp(c, kept)
            elif mode == "edge":
                source = clamp(c, kept)
            else:
                mirrored = select(c < 0, -c, c)
                source = select(mirrored > kept - 1, 2 * (kept - 1) - mirrored, mirrored)
            sources.append(affine((source, 1), offset=crop))
        value = x[sources]
        inside = all_of(conditions)
        if inside is None:
            return value
        return select(inside, value, _fill_constant(fill, element_type))

    return [k.compute(shape, element_type, element)]


@dataclass(frozen=True)
class ResizeAxis:
    """How one resized axis maps output indices to input coordinates."""

    in_size: int
    out_size: int
    scale: float
    transformation: str
    roi: tuple[float, float]

    def coordinate(self, y: Expr) -> Expr:
        """The input coordinate (f64) of output index y, with the operations
        of the interpreter, in its order (so that rounding agrees)."""
        in_size, scale, mode = self.in_size, self.scale, self.transformation
        width = scale * in_size
        out = convert(y, f64)
        if mode == "asymmetric":
            return out / scale
        if mode == "align_corners":
            if width == 1:
                return constant(0.0, f64)
            return out * float(in_size - 1) / (width - 1)
        if mode == "tf_crop_and_resize":
            start, end = self.roi
            if width == 1:
                mapped = constant((end - start) * (in_size - 1) / 2, f64)
            else:
                mapped = out * (end - start) * float(in_size - 1) / (width - 1)
            return mapped + start * (in_size - 1)
        if mode == "pytorch_half_pixel" and self.out_size == 1:
            # ONNX's rule (and onnxruntime's): coordinate 0 for a length-1
            # output (onnx.reference takes -0.5, which only cubic tells apart)
            return constant(0.0, f64)
        if mode == "half_pixel_symmetric":
            # ONNX's order of operations, as the interpreter: coordinates on a
            # rounding boundary must round the same way.
            offset = in_size / 2 * (1 - self.out_size / width)
            return (out + 0.5) / scale + offset - 0.5
        return (out + 0.5) / scale - 0.5

    def clamped_index(self, coordinate: Expr) -> Expr:
        """An f64 coordinate clamped into [0, in_size - 1], as an index."""
        bounded = minimum(maximum(coordinate, 0.0), float(self.in_size - 1))
        return convert(bounded, IndexType())

    def nearest(self, coordinate: Expr, nearest_mode: str) -> Expr:
        below = floor(coordinate)
        if nearest_mode == "floor":
            rounded = below
        elif nearest_mode == "ceil":
            rounded = ceil(coordinate)
        else:
            fraction = coordinate - below
            up = fraction > 0.5 if nearest_mode == "round_prefer_floor" else fraction >= 0.5
            rounded = select(up, below + 1.0, below)
        return self.clamped_index(rounded)


def _resized_axes(op: GraphOp, x: Tensor) -> dict[int, ResizeAxis]:
    """The axes the interpreter resizes (it skips those of scale ≈ 1 and
    unchanged size, unless tf_crop_and_resize crops them)."""
    props = op_props(op)
    size = get_ints(props, "size")
    scales = nn.resize_scales(props, x.shape, size)
    roi = nn.resize_roi(props, x.rank)
    transformation = get_str(props, "coordinate_transformation_mode")
    axes: dict[int, ResizeAxis] = {}
    for axis, out_size in enumerate(size):
        span = (roi[axis], roi[axis + x.rank])
        unchanged = pymath.isclose(scales[axis], 1.0) and out_size == x.shape[axis]
        if unchanged and (transformation != "tf_crop_and_resize" or span == (0.0, 1.0)):
            continue
        axes[axis] = ResizeAxis(x.shape[axis], out_size, scales[axis], transformation, span)
    return axes


@dataclass(frozen=True)
class ResizeFilter:
    """Cubic or antialiased Resize along one axis: a window of taps around
    ceil(x) - 1 (ONNX's), weighted by the kernel at their distances."""

    cubic: bool
    cubic_a: float
    exclude_outside: bool
    antialias: bool

    def offsets(self, scale: float) -> range:
        """The tap offsets (as interp/graph/nn.py `filter_taps`)."""
        support = 2.0 if self.cubic else 1.0
        first = pymath.floor(-support / self.stretch(scale)) + 1
        return range(first, 2 - first)

    def stretch(self, scale: float) -> float:
        return min(scale, 1.0) if self.antialias else 1.0

    def normalizes(self) -> bool:
        return self.antialias or self.exclude_outside

    def kernel(self, distance: Expr) -> Expr:
        t = absolute(distance)
        if not self.cubic:
            return maximum(1.0 - t, 0.0)
        inner = select(t < 2.0, cubic_far(t, self.cubic_a), 0.0)
        return select(t <= 1.0, cubic_near(t, self.cubic_a), inner)


def cubic_near(t: Expr, a: float) -> Expr:
    """Keys' cubic kernel at distance t in [0, 1]."""
    return ((t * (a + 2) - (a + 3)) * t) * t + 1.0


def cubic_far(t: Expr, a: float) -> Expr:
    """Keys' cubic kernel at distance t in [1, 2]."""
    return ((t * a - 5 * a) * t + 8 * a) * t - 4 * a


def _resize_filter(op: GraphOp) -> ResizeFilter | None:
    """The filter of a cubic or antialiased resize, None for the two-point
    forms (nearest, linear without antialias)."""
    props = op_props(op)
    mode = get_str(props, "mode")
    antialias = get_bool(props, "antialias")
    if mode != "cubic" and not antialias:
        return None
    return ResizeFilter(
        cubic=mode == "cubic",
        cubic_a=get_float(props, "cubic_coeff_a"),
        exclude_outside=get_bool(props, "exclude_outside"),
        antialias=antialias,
    )


def _saturated(value: Expr, element_type: Attribute) -> Expr:
    """An f64 result stored as `element_type`: integers rounded half to even
    and clipped into their range (cubic overshoots), as the interpreter."""
    if isinstance(element_type, IntegerType) and not _is_bool(element_type):
        width = element_type.width.data
        low, high = (0, 2**width - 1) if is_unsigned(element_type) else _signed_range(width)
        value = minimum(maximum(round_even(value), float(low)), float(high))
    return convert(value, element_type)


def _signed_range(width: int) -> tuple[int, int]:
    return -(2 ** (width - 1)), 2 ** (width - 1) - 1


def _filtered_resize(
    k: KernelBuilder, op: GraphOp, x: Tensor, spec: ResizeFilter
) -> Callable[..., Expr]:
    """The element of a cubic or antialiased resize: a sum over the box of
    the taps of every resized axis (edge clamped) of the product of their
    weights, divided by each axis's weight sum where the filter normalizes."""
    props = op_props(op)
    extrapolation = get_float(props, "extrapolation_value")
    axes = _resized_axes(op, x)
    order = sorted(axes)
    _, element_type = _result(op)

    def element(*indices: Expr) -> Expr:
        if not order:  # every axis keeps its size and scale 1: a copy
            return _saturated(convert(x[list(indices)], f64), element_type)
        coordinates = {a: axes[a].coordinate(indices[a]) for a in order}
        bases = {a: ceil(coordinates[a]) - 1.0 for a in order}
        offsets = {a: spec.offsets(axes[a].scale) for a in order}

        def tap(axis: int, r: Expr) -> Expr:
            """The input coordinate (f64) of tap r of `axis`."""
            return bases[axis] + convert(r, f64) + float(offsets[axis].start)

        def weight(axis: int, r: Expr) -> Expr:
            geometry = axes[axis]
            distance = (tap(axis, r) - coordinates[axis]) * spec.stretch(geometry.scale)
            w = spec.kernel(distance)
            if spec.exclude_outside:
                at = tap(axis, r)
                w = select((at < 0.0) | (at > float(geometry.in_size - 1)), 0.0, w)
            return w

        def term(*rs: Expr) -> Expr:
            source: list[Expr] = list(indices)
            product: Expr | None = None
            for axis, r in zip(order, rs, strict=True):
                source[axis] = axes[axis].clamped_index(tap(axis, r))
                w = weight(axis, r)
                product = w if product is None else product * w
            assert product is not None
            return convert(x[source], f64) * product

        value = k.reduce("sum", [len(offsets[a]) for a in order], term)
        if spec.normalizes():
            for axis in order:
                total = k.reduce("sum", [len(offsets[axis])], partial(weight, axis))
                value = value / select(total.eq(0.0), 1.0, total)
        outside = [
            (coordinates[a] < 0.0) | (coordinates[a] > float(axes[a].in_size - 1))
            for a in order
            if axes[a].transformation == "tf_crop_and_resize"
        ]
        if (anywhere := any_of(outside)) is not None:
            value = select(anywhere, extrapolation, value)
        return _saturated(value, element_type)

    return element


def any_of(conditions: Sequence[Expr]) -> Expr | None:
    """The disjunction of the conditions, None when there are none."""
    result: Expr | None = None
    for c in conditions:
        result = c if result is None else result | c
    return result


@compute_rule(nn.ResizeOp)
def resize(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """Separable over the resized axes, in f64 as the interpreter: axis by
    axis, nearest picks one input index and linear blends the two around
    the coordinate; cubic and antialias sum a window of weighted taps (a
    te.reduce over the box of taps); tf_crop_and_resize puts
    extrapolation_value where the coordinate leaves the input. Integers are
    rounded half to even and saturated.

    A float linear resize of the last axis and others is two stages: the
    last axis first (a gather along each input row, into a tensor of the
    input's other extents), then the other axes, whose reads are then whole
    rows at indices and weights fixed per row (contiguous vectors). The
    gathers run over the smaller tensor, and only two per element instead
    of four for a 2-D resize."""
    (x,) = inputs
    shape, element_type = _result(op)
    spec = _resize_filter(op)
    if spec is not None:
        return [k.compute(shape, element_type, _filtered_resize(k, op, x, spec))]
    props = op_props(op)
    two_point = TwoPointResize(
        axes=_resized_axes(op, x),
        linear=get_str(props, "mode") == "linear",
        nearest_mode=get_str(props, "nearest_mode"),
        extrapolation=get_float(props, "extrapolation_value"),
    )
    order = sorted(two_point.axes)
    last = x.rank - 1
    source = x
    if two_point.linear and is_float(element_type) and len(order) > 1 and order[-1] == last:
        # f32 rows for f32 and narrower: within an f32 ulp of the f64 blend.
        rows_type = f64 if element_type == f64 else f32
        source = k.compute(
            [*x.shape[:last], shape[last]],
            rows_type,
            lambda *i: convert(two_point.element(x, [last], list(i)), rows_type),
            materialize=True,
        )
        order = order[:-1]
    return [
        k.compute(
            shape,
            element_type,
            lambda *i: _saturated(two_point.element(source, order, list(i)), element_type),
        )
    ]


@dataclass(frozen=True)
class TwoPointResize:
    """Nearest, or linear without antialias: each resized axis reads one
    input index (nearest) or blends the two around the coordinate (linear)."""

    axes: dict[int, ResizeAxis]
    linear: bool
    nearest_mode: str
    extrapolation: float

    def element(self, x: Tensor, order: Sequence[int], indices: list[Expr]) -> Expr:
        """The element (f64) at output `indices` once the axes of `order`
        (ascending) are resized from `x`; the other axes read `indices`."""
        reads: dict[int, list[Expr]] = {}
        ratios: dict[int, Expr] = {}
        outside: dict[int, Expr] = {}
        for axis in order:
            geometry = self.axes[axis]
            coordinate = geometry.coordinate(indices[axis])
            if self.linear:
                below = floor(coordinate)
                ratios[axis] = coordinate - below
                reads[axis] = [
                    geometry.clamped_index(below),
                    geometry.clamped_index(below + 1.0),
                ]
            else:
                reads[axis] = [geometry.nearest(coordinate, self.nearest_mode)]
            if geometry.transformation == "tf_crop_and_resize":
                outside[axis] = (coordinate < 0.0) | (coordinate > float(geometry.in_size - 1))

        def resized(done: int, source: list[Expr]) -> Expr:
            """The value once the first `done` axes of `order` are resized,
            at `source` (input indices on those axes)."""
            if done == 0:
                return convert(x[source], f64)
            axis = order[done - 1]

            def at(i: Expr) -> Expr:
                return resized(done - 1, [*source[:axis], i, *source[axis + 1 :]])

            if self.linear:
                ratio = ratios[axis]
                low, high = reads[axis]
                value = at(low) * (1.0 - ratio) + at(high) * ratio
            else:
                value = at(reads[axis][0])
            if axis in outside:
                value = select(outside[axis], self.extrapolation, value)
            return value

        return resized(len(order), indices)


# ---------------------------------------------------------------------------
# Grid sampling.


def safe_index(coordinate: Expr, size: int) -> Expr:
    """An f64 coordinate clamped into [0, size - 1] as an index, NaN to 0
    (ordered comparisons are false on NaN), so a grid of NaN or infinities
    never reads outside the input."""
    low = select(coordinate > 0.0, coordinate, 0.0)
    return convert(select(low < float(size - 1), low, float(size - 1)), IndexType())


def reflect(x: Expr, lo: float, hi: float) -> Expr:
    """x folded into [lo, hi] by reflecting at its ends, as often as needed
    (as interp/graph/nn.py `reflect`)."""
    span = hi - lo
    if span == 0:
        return constant(lo, f64)
    beyond = select(x < lo, lo - x, x - hi)
    folds = floor(beyond / span)
    rest = beyond - folds * span
    half = folds * 0.5
    even = floor(half).eq(half)
    below = select(even, rest + lo, hi - rest)
    above = select(even, hi - rest, rest + lo)
    return select(x < lo, below, select(x > hi, above, x))


@dataclass(frozen=True)
class GridAxis:
    """How grid sampling reads one spatial axis of the input."""

    size: int
    mode: str
    padding: str
    align_corners: bool

    @property
    def bounds(self) -> tuple[float, float]:
        return (0.0, self.size - 1.0) if self.align_corners else (-0.5, self.size - 0.5)

    def coordinate(self, normalized: Expr) -> Expr:
        """The input coordinate (f64) of a grid value in [-1, 1], mapped in
        the grid's float type (f32 for f16) as the interpreter."""
        g = normalized
        if isinstance(g.type, Float16Type | BFloat16Type):
            g = convert(g, f32)
        if self.align_corners:
            mapped = (g + 1.0) / 2.0 * float(self.size - 1)
        else:
            mapped = ((g + 1.0) * float(self.size) - 1.0) / 2.0
        return convert(mapped, f64)

    def taps(self, x: Expr) -> list[tuple[Expr, Expr | None, Expr | None]]:
        """(index, weight, inside) of each tap at coordinate x: the point is
        brought inside first (border clamps, reflection folds), then a tap
        outside the input reads 0 (zeros), its edge (border) or its mirror
        image (reflection)."""
        lo, hi = self.bounds
        last = float(self.size - 1)
        if self.mode == "nearest":
            x = round_even(x)
        if self.padding == "border":
            x = select((x < lo) | (x > hi), minimum(maximum(x, 0.0), last), x)
        elif self.padding == "reflection":
            x = reflect(x, lo, hi)
        if self.mode == "nearest":
            points: list[tuple[Expr, Expr | None]] = [(x, None)]
        else:
            below = floor(x)
            t = x - below
            if self.mode == "linear":
                points = [(below, 1.0 - t), (below + 1.0, t)]
            else:
                points = [
                    (below - 1.0, cubic_far(t + 1.0, -0.75)),
                    (below, cubic_near(t, -0.75)),
                    (below + 1.0, cubic_near(1.0 - t, -0.75)),
                    (below + 2.0, cubic_far(2.0 - t, -0.75)),
                ]
        taps: list[tuple[Expr, Expr | None, Expr | None]] = []
        for at, weight in points:
            inside: Expr | None = None
            if self.padding == "zeros":
                inside = (at >= 0.0) & (at <= last)
            elif self.padding == "reflection":
                folded = reflect(at, lo, hi)
                at = select(folded < 0.0, 0.0, floor(folded))  # truncation toward zero
            taps.append((safe_index(at, self.size), weight, inside))
        return taps


@compute_rule(nn.GridSampleOp)
def grid_sample(k: KernelBuilder, op: GraphOp, inputs: list[Tensor]) -> list[Tensor]:
    """Per output point: its coordinate on each spatial axis from the grid
    (the grid's last axis lists them from the last spatial axis), the taps
    around it on each axis (1 nearest, 2 linear, 4 cubic), and the sum over
    the taps of every axis of their weights' product times the input
    element they name, nested axis by axis in f64."""
    x, grid = inputs
    shape, element_type = _result(op)
    props = op_props(op)
    spatial = x.rank - 2
    axes = [
        GridAxis(
            x.shape[2 + a],
            get_str(props, "mode"),
            get_str(props, "padding_mode"),
            get_bool(props, "align_corners"),
        )
        for a in range(spatial)
    ]

    def element(n: Expr, c: Expr, *point: Expr) -> Expr:
        taps = [
            axis.taps(axis.coordinate(grid[[n, *point, spatial - 1 - a]]))
            for a, axis in enumerate(axes)
        ]

        def blend(axis: int, source: list[Expr]) -> Expr:
            if axis == spatial:
                return convert(x[[n, c, *source]], f64)
            total: Expr | None = None
            for index, weight, inside in taps[axis]:
                value = blend(axis + 1, [*source, index])
                if weight is not None:
                    value = value * weight
                if inside is not None:
                    value = select(inside, value, 0.0)
                total = value if total is None else total + value
            assert total is not None
            return total

        return convert(blend(0, []), element_type)

    return [k.compute(shape, element_type, element)]
