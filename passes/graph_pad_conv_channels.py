"""graph-pad-conv-channels: a conv whose output channels no vector (or no
activation block) divides computes a few zero channels more, then drops
them.

The conv micro-kernel runs over blocks of 16 output channels, one AVX-512
vector (graph-alter-layout blocks the weight by the largest of 32, 16, 8
and 4 that divides O). SqueezeNet's classifier has 1000: blocks of 8, half
a vector, and its 1x1 512->1000 conv on 13x13 took 0.758 ms (2.15x
onnxruntime) where the same conv with 1008 channels takes 0.395 ms (1.13x).

- `graph.conv2d(x, W)` with W a constant O×C×KH×KW f32 weight in OIHW,
  groups = 1, O not a multiple of `block` and the zero channels up to the
  next multiple of `block` at most one in MAX_BLOCK_PADDED_FRACTION of O,
  or else O not a multiple of `multiple` and the zero channels up to its
  next multiple at most one in MAX_PADDED_FRACTION of O ->
  `graph.slice(graph.conv2d(x, W'), channels 0..O)`, W' the weight with
  those zero output channels appended.

`block` is the activations' block (graph-block-activations, NCHW32c, two
vectors): SqueezeNet's 1000 classes as 1024 channels (2.4% more work)
join the blocked region of the fire modules before them, where 1008 (a
multiple of 16 only) left that conv, its input and its global pool on NCHW
with two layout transforms: the model ran 2.5-3% faster (Intel Xeon, 2
threads, alternated, both orders: 4.76 -> 4.68 and 5.86 -> 5.71 ms).
Blocks of 32 that cost more are not taken: MobileNet-v2's 144 channels as
160 (11% more) ran 1-4% slower; GoogLeNet's 208 as 224 and 144 as 160 no
faster.

Expects: graph-level IR before graph-alter-layout (the weight still OIHW).
Produces: the same graph with those convs padded and sliced; the old
weights become dead (run dce). graph-sink-slice then moves the slice past
the conv's epilogue, so that the epilogue fuses into the padded conv.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from xtc.dialects.graph.base import elem, get_int, get_str, ints_attr, op_props
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.nn import Conv2dOp
from xtc.dialects.graph.tensor import SliceOp

MAX_PADDED_FRACTION = 8
"""Pad only when the zero channels are at most 1/8 of the real ones (1000
-> 1008 adds 0.8% work; 10 classes -> 16 would add 60%)."""


MAX_BLOCK_PADDED_FRACTION = 32
"""Pad to a whole activation block only when the zero channels are at most
1/32 of the real ones (1000 -> 1024 adds 2.4% work)."""


def padded_channels(channels: int, multiple: int, block: int | None = None) -> int | None:
    """The output channels to compute instead of `channels`: the next
    multiple of `block` when that pads at most 1 / MAX_BLOCK_PADDED_FRACTION
    of them, else the next multiple of `multiple` when that pads at most
    1 / MAX_PADDED_FRACTION; None when neither pads anything or pays."""
    if block is not None and channels % block:
        padded = _next_multiple(channels, block)
        if (padded - channels) * MAX_BLOCK_PADDED_FRACTION <= channels:
            return padded
    padded = _next_multiple(channels, multiple)
    if padded == channels or (padded - channels) * MAX_PADDED_FRACTION > channels:
        return None
    return padded


def _next_multiple(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


@dataclass(frozen=True)
class PadConvOutputChannels(RewritePattern):
    """conv2d(x, W: O×C×KH×KW) -> slice(conv2d(x, W: O'×C×KH×KW), axis 1, 0..O),
    O' = O rounded up to `block` or `multiple` (padded_channels), the new
    channels' weights zero."""

    multiple: int
    block: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        weight = op.weight.owner
        if not isinstance(weight, ConstantOp):
            return
        props = op_props(op)
        if get_str(props, "kernel_layout") != "OIHW" or get_int(props, "groups") != 1:
            return
        if not isinstance(elem(op.weight.type), Float32Type):
            return
        array = weight.view()
        channels = array.shape[0]
        padded = padded_channels(channels, self.multiple, self.block)
        if padded is None:
            return
        zeros = ((0, padded - channels), (0, 0), (0, 0), (0, 0))
        padded_weight = ConstantOp.from_array(np.pad(array, zeros), "weight_padded")
        conv = Conv2dOp.build_inferred([op.input, padded_weight.output], dict(op.properties))
        kept = SliceOp.build_inferred(
            [conv.output],
            {"starts": ints_attr((0,)), "ends": ints_attr((channels,)), "axes": ints_attr((1,))},
        )
        rewriter.replace(op, [padded_weight, conv, kept])


@dataclass(frozen=True)
class GraphPadConvChannels(ModulePass):
    """Constant-weight f32 convs (groups = 1) with output channels no
    `block` or no `multiple` divides computed over the next multiple of
    `block` where that adds at most 1/32 of them, else of `multiple`, the
    extra channels sliced off (see the module docstring for input and
    output IR).

    Command line: `graph-pad-conv-channels` or
    `graph-pad-conv-channels{multiple=8 block=64}` (16, the default
    multiple, is one AVX-512 vector of f32; 32, the default block,
    graph-block-activations' block). Refuses a multiple or block < 1."""

    name = "graph-pad-conv-channels"

    multiple: int = 16
    """Output channels are padded to a multiple of this; at least 1."""

    block: int = 32
    """Output channels are padded to a multiple of this instead where that
    pads at most 1/32 of them; at least 1."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for option, value in (("multiple", self.multiple), ("block", self.block)):
            if value < 1:
                raise PassFailedException(f"{self.name}: {option} must be at least 1, got {value}")
        walker = PatternRewriteWalker(PadConvOutputChannels(self.multiple, self.block))
        walker.rewrite_module(op)
