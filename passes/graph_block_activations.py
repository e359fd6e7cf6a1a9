"""graph-block-activations: convs and pools on activations in blocks of
channels (NCHW<b>c), with the layout transforms between them cancelled.

graph-alter-layout blocks a conv's weights by output channels, so that the
micro-kernel's vectors hold b output channels; with NCHW activations its
register tile is then written back across b channel planes, one store per
pixel and channel. In NCHW<b>c (N×C/b×H×W×b) the b channels of a pixel are
one contiguous vector: the tile stores whole, and the next conv reads a
pixel's channels from one cache line (onnxruntime's NCHWc transformer,
TVM's conv2d_NCHWc).

- `graph.conv2d(x, W)` with groups = 1 and W in layout OIHW<b>o ->
  `layout_transform(conv2d(layout_transform(x)))`, the conv's input and
  output in NCHW<b>c (`data_layout`, `out_layout`); where C is not a
  multiple of b (a stem conv of 3 channels), only its output;
- a transform back to NCHW moves below the ops that read it, when all of
  them can take NCHW<b>c: elementwise ops (their constants and one-value
  operands laid out alike), `bias_add` on the channels of a constant bias,
  pools (global ones too), a depthwise conv (groups = C = O, C a multiple
  of b) of a constant weight, its weight then blocked alike (C/b×1×KH×KW×b:
  a lane's taps one vector), a concat along the channels whose inputs are
  all transforms back alike (then a concat along the blocks), the
  transform to NCHW<b>c, which cancels it, and, as the transform's only
  reader, a conv (groups = 1) whose output channels are no whole blocks
  (SqueezeNet's squeeze convs of 16 and 48): it reads NCHW<b>c and writes
  NCHW, ending the region without a transform back.

What remains are transforms at the edges of the blocked region: after a
global pool (a transform of C values), before a concat with an input that
is not blocked, a conv whose input channels are not a multiple of b or
whose output channels are no whole blocks beside other readers, or a
depthwise conv of a weight that is no constant. A trial run on a copy of
the module finds the regions (ops joined by blocked activations); only
those that pay are blocked
(`worth_blocking`: mostly 1x1 convs, and edge transforms small beside the
convs' outputs, as in ResNet-50, DenseNet, SqueezeNet, and MobileNet-v2
but for its 24- and 144-channel blocks; not VGG's 3x3 convs).

Expects: graph-level IR after graph-alter-layout (blocked weights).
Produces: the same graph with those convs and pools blocked; the old
constants become dead (run dce).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from xtc.dialects.graph.base import GraphOp, get_int, int_attr, op_props, shape_of
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.nn import (
    BiasAddOp,
    Conv2dOp,
    GlobalPool2dOp,
    LayoutTransformOp,
    Pool2dOp,
    blocked_array,
    channel_block,
    conv2d_weight_oihw,
    data_layout,
    kernel_layout,
    out_layout,
    output_block,
)
from xtc.dialects.graph.elementwise import AddOp
from xtc.dialects.graph.tensor import ConcatOp
from xtc.passes.graph_alter_layout import blocked_weight
from xtc.passes.graph_sink_transpose import is_elementwise, sink_below_users
from xtc.passes.graph_winograd import takes as takes_winograd


def transform(value: SSAValue, src: str, dst: str) -> LayoutTransformOp:
    props = {"src_layout": StringAttr(src), "dst_layout": StringAttr(dst)}
    return LayoutTransformOp.build_inferred([value], props)


@dataclass(frozen=True)
class BlockConv(RewritePattern):
    """conv2d(x, W: OIHW<b>o), groups = 1 ->
    layout_transform(conv2d{data_layout = out_layout = NCHW<b>c}(layout_transform(x))),
    or, where C is not a multiple of b (a stem conv of 3 channels), the
    conv on x as it is with only its output blocked (out_layout)."""

    block: int
    only: frozenset[Conv2dOp] | None = None
    """The convs to block (all that can be when None)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        if self.only is not None and op not in self.only:
            return
        props = op_props(op)
        if out_layout(props) != "NCHW" or get_int(props, "groups") != 1:
            return
        if output_block(kernel_layout(props)) != self.block:
            return
        layout = f"NCHW{self.block}c"
        ops: list[Operation] = []
        source, source_layout = op.input, "NCHW"
        if shape_of(op.input.type)[1] % self.block == 0:
            source, source_layout = blocked_value(ops, op.input, layout, op), layout
        conv = Conv2dOp.build_inferred(
            [source, op.weight],
            {
                **op.properties,
                "data_layout": StringAttr(source_layout),
                "out_layout": StringAttr(layout),
            },
        )
        rewriter.replace(op, [*ops, conv, transform(conv.output, layout, "NCHW")])


def blocked_constant(ops: list[Operation], value: SSAValue, layout: str) -> SSAValue | None:
    """A constant broadcast against an N×C×H×W tensor, laid out to broadcast
    alike against it in `layout` (a new constant appended to `ops`); None
    when it has more than 4 dimensions."""
    assert isinstance(value.owner, ConstantOp)
    array = value.owner.to_array()
    if array.ndim > 4:
        return None
    array = array.reshape((1,) * (4 - array.ndim) + array.shape)
    if array.shape[1] == 1:
        laid_out = array.reshape(*array.shape, 1)
    else:
        laid_out = blocked_array(array, layout)
    constant = ConstantOp.from_array(np.ascontiguousarray(laid_out), "blocked")
    ops.append(constant)
    return constant.output


def sunk_operand(
    ops: list[Operation], value: SSAValue, user: Operation, through: LayoutTransformOp, layout: str
) -> SSAValue | None:
    """`value`, an operand of an elementwise user of `through`, in `layout`:
    the blocked input of `through` or of a transform alike, a constant laid
    out (or a one-element value as it is); None for any other value."""
    owner = value.owner
    if isinstance(owner, LayoutTransformOp) and LayoutTransformOp.layouts(
        owner.properties
    ) == LayoutTransformOp.layouts(through.properties):
        return owner.input
    if isinstance(owner, ConstantOp):
        return blocked_constant(ops, value, layout)
    if all(d == 1 for d in shape_of(value.type)) and len(shape_of(value.type)) <= 4:
        return value
    if shape_of(value.type) == shape_of(through.output.type):
        return blocked_value(ops, value, layout, user)
    return None


def blocked_value(
    ops: list[Operation], value: SSAValue, layout: str, reader: Operation
) -> SSAValue:
    """`value` (N×C×H×W) in `layout`: the transform of it that an op before
    `reader` already makes (a conv reading the same tensor), else a new
    one appended to `ops`."""
    for use in value.uses:
        user = use.operation
        if (
            isinstance(user, LayoutTransformOp)
            and user.parent is not None
            and user.parent is reader.parent
            and user.is_before_in_block(reader)
            and LayoutTransformOp.layouts(user.properties) == ("NCHW", layout)
        ):
            return user.output
    blocked = transform(value, "NCHW", layout)
    ops.append(blocked)
    return blocked.output


def blocked_depthwise(conv: Conv2dOp, x: SSAValue, layout: str) -> list[Operation] | None:
    """A depthwise conv (groups = C = O, an OIHW weight constant) on `x`,
    its input in `layout`, as the same conv on `x` with its weight blocked
    alike (C/b×1×KH×KW×b) and its output in `layout` (a constant and the
    conv); None for any other conv, or a depthwise one whose C is not a
    multiple of the block."""
    props = op_props(conv)
    block = channel_block(layout)
    channels = shape_of(conv.input.type)[1]
    weight = conv.weight.owner
    if (
        block is None
        or get_int(props, "groups") != channels
        or shape_of(conv.output.type)[1] != channels
        or channels % block
        or kernel_layout(props) != "OIHW"
        or out_layout(props) != "NCHW"
        or not isinstance(weight, ConstantOp)
    ):
        return None
    constant = ConstantOp.from_array(blocked_weight(weight.to_array(), block), "weight")
    blocked_props = {
        **conv.properties,
        "kernel_layout": StringAttr(f"OIHW{block}o"),
        "data_layout": StringAttr(layout),
        "out_layout": StringAttr(layout),
    }
    return [constant, Conv2dOp.build_inferred([x, constant.output], blocked_props)]


def blocked_input_conv(conv: Conv2dOp, x: SSAValue, layout: str) -> Conv2dOp | None:
    """A conv (groups = 1, NCHW in and out) whose output channels are no
    whole block of `layout` (its weight blocked otherwise: BlockConv never
    takes it), as the same conv reading `x` in `layout` and writing NCHW;
    None for any other conv, or one whose C is not a multiple of the block.
    SqueezeNet's squeeze convs of 16 and 48 channels read its blocked fire
    modules and pools so."""
    props = op_props(conv)
    block = channel_block(layout)
    if (
        block is None
        or get_int(props, "groups") != 1
        or data_layout(props) != "NCHW"
        or out_layout(props) != "NCHW"
        or output_block(kernel_layout(props)) == block
        or shape_of(conv.input.type)[1] % block
    ):
        return None
    blocked_props = {**conv.properties, "data_layout": StringAttr(layout)}
    return Conv2dOp.build_inferred([x, conv.weight], blocked_props)


def blocked_concat(concat: ConcatOp, through: LayoutTransformOp) -> ConcatOp | None:
    """A concat along the channels of N×C×H×W tensors that are each a
    transform back from NCHW<b>c alike (`through`'s), as the concat of their
    blocked inputs along the blocks (axis 1 of N×C/b×H×W×b: each input's
    channels are whole blocks); None for any other concat."""
    operands: list[SSAValue] = []
    for value in concat.inputs:
        owner = value.owner
        if not isinstance(owner, LayoutTransformOp) or LayoutTransformOp.layouts(
            owner.properties
        ) != LayoutTransformOp.layouts(through.properties):
            return None
        operands.append(owner.input)
    if get_int(op_props(concat), "axis") % 4 != 1:  # its inputs are N x C x H x W
        return None
    return ConcatOp.build_inferred(operands, {**concat.properties, "axis": int_attr(1)})


def sunk_user(user: Operation, through: LayoutTransformOp) -> list[Operation] | None:
    """The ops that compute `user` of `through` from its blocked input,
    ending in a transform back to NCHW (none when `user` is the transform
    it undoes); None when `user` cannot take the blocked layout."""
    layouts = LayoutTransformOp.layouts(through.properties)
    layout = layouts[0]
    x = through.input
    ops: list[Operation] = []
    if isinstance(user, LayoutTransformOp):
        # the transform back to NCHW<b>c cancels it; another block stops it
        return [] if LayoutTransformOp.layouts(user.properties) == layouts[::-1] else None
    if isinstance(user, (Pool2dOp, GlobalPool2dOp)):
        if data_layout(op_props(user), type(user)) != "NCHW":
            return None
        props = {**user.properties, "data_layout": StringAttr(layout)}
        ops.append(type(user).build_inferred([x], props))
    elif isinstance(user, Conv2dOp):
        if user.input is not through.output:
            return None
        conv = blocked_depthwise(user, x, layout)
        if conv is None:
            # Only as the sole reader: then it extends its producer's region
            # and ends it (its output stays NCHW: no transform back). Beside
            # other readers it would join their regions into one, to be
            # blocked or not as a whole: GoogLeNet's stem, blocked, with the
            # 5x5 convs of its first module, which are not (8-12% slower).
            sole = len({use.operation for use in through.output.uses}) == 1
            reader = blocked_input_conv(user, x, layout) if sole else None
            return None if reader is None else [reader]
        ops += conv
    elif isinstance(user, ConcatOp):
        concat = blocked_concat(user, through)
        if concat is None:
            return None
        ops.append(concat)
    elif isinstance(user, BiasAddOp):
        bias = user.operands[1]
        if user.operands[0] is not through.output or not isinstance(bias.owner, ConstantOp):
            return None
        if get_int(op_props(user), "axis") % 4 != 1:
            return None
        array = bias.owner.to_array().reshape(1, -1, 1, 1)
        constant = ConstantOp.from_array(np.ascontiguousarray(blocked_array(array, layout)), "bias")
        ops += [constant, AddOp.build_inferred([x, constant.output], {})]
    elif is_elementwise(user):
        if shape_of(user.results[0].type) != shape_of(through.output.type):
            return None
        operands = [sunk_operand(ops, value, user, through, layout) for value in user.operands]
        if any(operand is None for operand in operands):
            return None
        assert isinstance(user, GraphOp)
        ops.append(type(user).build_inferred(operands, dict(user.properties)))
    else:
        return None
    ops.append(transform(ops[-1].results[0], layout, "NCHW"))
    return ops


class SinkUnblockBelowUsers(RewritePattern):
    """layout_transform(y: NCHW<b>c -> NCHW) read only by ops that can take
    NCHW<b>c -> each of them on y, followed by the transform back; a
    transform to NCHW<b>c of it -> y. A transform with a user that cannot
    (a flatten, a concat with an input not blocked alike, a depthwise conv
    of a weight that is no constant) stays where it is: moving it below only
    some users would add transforms."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LayoutTransformOp, rewriter: PatternRewriter) -> None:
        if channel_block(LayoutTransformOp.layouts(op.properties)[1]) is not None:
            return
        users = list(dict.fromkeys(use.operation for use in op.output.uses))
        if not users:
            return
        sink_below_users(rewriter, op, users, [sunk_user(user, op) for user in users])


@dataclass(frozen=True)
class GraphBlockActivations(ModulePass):
    """Convs (groups = 1, weights in OIHW<block>o) and the pools, depthwise
    convs, concats and elementwise ops between them on NCHW<block>c
    activations, and the convs of other output channels that alone read
    them, with layout transforms at the edges only, in the regions where
    that pays (see the module docstring and `worth_blocking`).

    Command line: `graph-block-activations`, `graph-block-activations{block=16}`
    (32, the default, is graph-alter-layout's weight block) or
    `graph-block-activations{always=true}` (every region);
    `graph-block-activations{winograd=false}` for a pipeline without
    graph-winograd. Refuses a block < 1."""

    name = "graph-block-activations"

    block: int = 32
    """Channels per block (NCHW<block>c); convs whose weight block differs are left alone."""

    always: bool = False
    """Block every conv that can be, whether or not its region pays
    (`worth_blocking`): for tests and measurements of the layout itself."""

    winograd: bool = True
    """Count the 3x3 convs that graph-winograd (run after this pass) takes
    as paying, as 1x1 convs are."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.block < 1:
            raise PassFailedException(f"{self.name}: block must be at least 1, got {self.block}")
        if self.always:
            block_activations(op, BlockConv(self.block))
            return
        trial = op.clone()
        block_activations(trial, BlockConv(self.block))
        worth = dict(zip(convs(trial), worth_blocking(trial, self.winograd), strict=True))
        chosen = frozenset(c for c, t in zip(convs(op), convs(trial), strict=True) if worth[t])
        block_activations(op, BlockConv(self.block, chosen))


def block_activations(module: ModuleOp, block_conv: BlockConv) -> None:
    patterns = [block_conv, SinkUnblockBelowUsers()]
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(patterns), apply_recursively=True)
    walker.rewrite_module(module)


def convs(module: ModuleOp) -> list[Conv2dOp]:
    """The module's conv2d ops, in order (blocking one keeps its place)."""
    return [op for op in module.walk() if isinstance(op, Conv2dOp)]


def worth_blocking(module: ModuleOp, winograd: bool = True) -> list[bool]:
    """For each conv of `module` (blocked by a trial run of the patterns),
    whether its blocked region pays: of the ops joined by blocked
    activations, at least half the blocked convs are pointwise (1x1), none
    is a windowed conv on a blocked input wider than 3x3, and the layout
    transforms in use at its edges move at most half as many elements as
    its convs write.

    Measured on the bench models (AMD Zen 5, 2 threads): a blocked 1x1 conv
    stores its register tile whole instead of across 32 channel planes,
    which ResNet-50's wide 1x1 convs feel most (they do the fewest
    multiply-adds per output): the model runs 9-10% faster. A blocked 3x3
    conv runs 10-15% slower (its tile broadcasts inputs 128 bytes apart,
    not from one cache line), so VGG's chains of 3x3 convs lose 3-5%. A
    transform is a pass over a tensor: DenseNet's 1x1 convs after each
    concat would each pay one on their widest tensors, and lose 4-7%, as
    MobileNet-v2's between depthwise convs did while those took NCHW only.
    A depthwise conv counts as neither kind: blocked, its lanes are
    channels, as NCHW's are pixels. With its depthwise convs blocked,
    MobileNet-v2 ran 14-19% faster (Intel Xeon, 2 threads, three runs
    alternated: 5.07/6.53/5.92 -> 4.37/5.63/4.81 ms). With concats
    blocked, DenseNet-121 (one region) and SqueezeNet (its fire modules)
    ran about 5% faster (means of 6 and 7 alternated runs, 5 of them
    faster each: 37.0 -> 35.2 ms, 4.95 -> 4.72 ms), GoogLeNet 10-15%
    slower: its regions, joined through the concats, held its 5x5 convs,
    which blocked broadcast 25 taps of inputs 128 bytes apart.

    With `winograd`, a 3x3 conv that graph-winograd will take pays like a
    1x1 conv: blocked, it runs by Winograd 1.3-1.7x faster than direct
    (ResNet-50's at 56, 28 and 14 pixels a side).

    A conv reading a blocked input and writing NCHW (no whole blocks of
    output channels) counts as its kind too: SqueezeNet's squeeze convs
    (16 and 48 channels) so end the regions of its stem and fire modules
    without transforms, and the model ran 11-13% faster (Intel Xeon, 2
    threads, alternated both orders: 5.34 -> 4.67, 5.29 -> 4.69 ms);
    MobileNet-v2's stem and first block, ending in 16- and 24-channel
    projections, 4.5-5.5% (5.58 -> 5.27, 5.79 -> 5.53 ms)."""
    region: dict[Operation, Operation] = {}

    def find(op: Operation) -> Operation:
        while region.get(op, op) is not op:
            op = region[op]
        return op

    for op in module.walk():
        for result in op.results:
            if len(shape_of(result.type)) != 5 or isinstance(op, ConstantOp):
                continue
            for use in result.uses:
                region[find(use.operation)] = find(op)
    pointwise: Counter[Operation] = Counter()
    windowed: Counter[Operation] = Counter()
    wide: Counter[Operation] = Counter()
    written: Counter[Operation] = Counter()
    moved: Counter[Operation] = Counter()
    for op in module.walk():
        if isinstance(op, Conv2dOp) and (
            channel_block(out_layout(op_props(op))) is not None
            or channel_block(data_layout(op_props(op))) is not None
        ):
            _, _, kh, kw = conv2d_weight_oihw(shape_of(op.weight.type), kernel_layout(op_props(op)))
            paying = (kh, kw) == (1, 1) or (winograd and takes_winograd(op))
            if get_int(op_props(op), "groups") == 1:  # a depthwise conv counts as neither
                (pointwise if paying else windowed)[find(op)] += 1
                blocked_input = channel_block(data_layout(op_props(op))) is not None
                if not paying and blocked_input and max(kh, kw) > 3:
                    wide[find(op)] += 1
            written[find(op)] += math.prod(shape_of(op.output.type))
        elif isinstance(op, LayoutTransformOp) and op.output.uses:
            moved[find(op)] += math.prod(shape_of(op.output.type))
    return [
        pointwise[r] >= windowed[r] and not wide[r] and 2 * moved[r] <= written[r]
        for r in (find(c) for c in convs(module))
    ]
