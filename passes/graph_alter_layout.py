"""graph-alter-layout: constant weights laid out for vector code.

The x86 micro-kernels vectorize over output channels (conv2d) and output
columns (dense, matmul), so those must be contiguous in the weight. This
pass rewrites the weights once, at compile time, and leaves activations in
NCHW (no layout transform between layers):

- `graph.conv2d(x, W)` with W a constant O×C×KH×KW and groups = 1 ->
  `graph.conv2d(x, W') {kernel_layout = "OIHW<b>o"}`, W' the O/b×C×KH×KW×b
  blocks of b output channels (b = `block`, 32 by default, else the
  largest of its halves down to 4 that divides O), so that one block's
  weights are one contiguous run the micro-kernel streams (TVM's OIHW32o,
  with activations kept NCHW); when none divides O, `kernel_layout = "IHWO"`
  (C×KH×KW×O);
- a grouped conv (groups > 1, depthwise included) the same way, b dividing
  O/groups so that every block lies in one group: the kernel is then a loop
  over blocks of dense convs, each block reading the input channels of its
  group. A block under 8 is taken only for a window that moves more than
  one column at a time (stride or dilation along W) or an unpadded 1x1
  window (its schedule vectorizes the output row, the rows within the
  block: ShuffleNet's 240->60 in 3 groups 4.7x faster); a grouped conv with no
  such block (one output channel per group, as in most depthwise convs)
  keeps OIHW, its schedule vectorizing along the output row;
- `graph.dense(x, W)` with W a constant N×K -> `graph.matmul(x, Wᵀ)`, Wᵀ a
  constant K×N, one per W however many denses read it; but a dense of one
  row and K of at least MIN_ROW_REDUCTION (a classifier at batch 1) keeps
  W: each output then sums one contiguous weight row.

Expects: graph-level IR (after graph-simplify-inference, so that batch norms
are already folded into the weights). Produces: the same graph with those
ops rewritten and the new weights as constants; the old constants become
dead (run dce).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from xtc.dialects.graph.base import get_int, get_ints, get_str, op_props, shape_of
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.nn import Conv2dOp, DenseOp, MatmulOp


def blocked_weight(weight: np.ndarray, block: int) -> np.ndarray:
    """An O×C×KH×KW weight as O/block×C×KH×KW×block (layout OIHW<block>o):
    a view (ConstantOp.from_array copies it once, in that order)."""
    o, c, kh, kw = weight.shape
    return weight.reshape(o // block, block, c, kh, kw).transpose(0, 2, 3, 4, 1)


def block_sizes(block: int) -> list[int]:
    """The block sizes tried, largest first: `block`, then its halves down
    to MIN_BLOCK (a 4-lane vector)."""
    sizes = [block]
    while sizes[-1] % 2 == 0 and sizes[-1] // 2 >= MIN_BLOCK:
        sizes.append(sizes[-1] // 2)
    return sizes


MIN_BLOCK = 4


MIN_GROUPED_BLOCK = 8
"""The smallest block a grouped conv takes when it slides with stride and
dilation 1 along its rows, but for an unpadded 1x1 window: a block of 4
lanes is slower than the kernel vectorized along the contiguous output row
(ResNeXt's 4 channels per group)."""


def grouped_block(
    weight_shape: tuple[int, ...],
    groups: int,
    block: int,
    row_step: int,
    pointwise: bool = False,
) -> int | None:
    """The block size for a conv of `groups` groups with an O×C/groups×KH×KW
    weight: the largest of `block_sizes(block)` that divides the output
    channels of one group (so that no block straddles two groups), None
    when none does, or when it is below MIN_GROUPED_BLOCK and the window
    moves one column at a time (`row_step`: stride × dilation along W) and
    is not `pointwise` (1x1, unpadded: its micro-kernel's rows then lie
    within one block, its vectors along the output row)."""
    per_group = weight_shape[0] // groups
    found = next((b for b in block_sizes(block) if per_group % b == 0), None)
    small = found is not None and found < MIN_GROUPED_BLOCK
    if found is None or (groups > 1 and small and row_step == 1 and not pointwise):
        return None
    return found


@dataclass(frozen=True)
class ConvWeightsOutputChannelsInnermost(RewritePattern):
    """conv2d(x, W: OIHW constant) -> conv2d(x, W': OIHW<b>o) {kernel_layout},
    b dividing the output channels of a group; with groups = 1 and no such b,
    W': IHWO. A grouped conv no block fits keeps OIHW."""

    block: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        weight = op.weight.owner
        if not isinstance(weight, ConstantOp):
            return
        if get_str(op_props(op), "kernel_layout") != "OIHW":
            return
        props = op_props(op)
        groups = get_int(props, "groups")
        strides = get_ints(props, "strides")
        dilation = get_ints(props, "dilation")
        array = weight.view()
        pointwise = array.shape[2:] == (1, 1) and not any(get_ints(props, "padding"))
        block = grouped_block(
            array.shape, groups, self.block, strides[1] * dilation[1], pointwise
        )
        if block is None and groups > 1:
            return
        if block is None:
            layout, array = "IHWO", array.transpose(1, 2, 3, 0)
        else:
            layout, array = f"OIHW{block}o", blocked_weight(array, block)
        laid_out = ConstantOp.from_array(array, f"weight_{layout.lower()}")
        props = dict(op.properties)
        props["kernel_layout"] = StringAttr(layout)
        conv = Conv2dOp.build_inferred([op.input, laid_out.output], props)
        rewriter.replace(op, [laid_out, conv])


MIN_ROW_REDUCTION = 1024
"""The shortest K for which a one-row dense (a matrix-vector product) keeps
its N×K weight: each output sums one contiguous weight row in vector
partial sums, where the K×N weight's column blocks step down rows N floats
apart. Measured in the models (Intel Xeon, 2 threads, perf's share of the
run): ResNet-50's 2048->1000 classifier took 1.33-1.39% as a matmul and
1.00% as a dense; MobileNet-v2 (K = 1280), AlexNet (9216, 4096) and VGG-16
(25088) ran unchanged; the LSTM bench model's 128-long rows ran 15-20%
slower as denses (64 partial sums, two steps each)."""


def reads_whole_rows(op: DenseOp) -> bool:
    """Whether a dense keeps its N×K weight: one row of K >= MIN_ROW_REDUCTION."""
    *rows, k = shape_of(op.input.type)
    return prod(rows) == 1 and k >= MIN_ROW_REDUCTION


class DenseAsMatmulWithTransposedWeight(RewritePattern):
    """dense(x, W: N×K constant) -> matmul(x, Wᵀ: K×N constant), for every
    dense that reads W at once: one Wᵀ, placed right after W, serves them
    all (an unrolled recurrence reads the same R at each of its steps; a
    copy per step would stream a new weight from memory at every step).
    A dense that `reads_whole_rows` keeps W."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DenseOp, rewriter: PatternRewriter) -> None:
        weight = op.weight.owner
        if not isinstance(weight, ConstantOp) or reads_whole_rows(op):
            return
        transposed = ConstantOp.from_array(weight.view().T, "weight_kn")
        rewriter.insert(transposed, InsertPoint.after(weight))
        users = [use.operation for use in weight.output.uses]
        readers = [
            u
            for u in users
            if isinstance(u, DenseOp) and u.weight == weight.output and not reads_whole_rows(u)
        ]
        for reader in readers:
            matmul = MatmulOp.build_inferred([reader.input, transposed.output], {})
            rewriter.replace(reader, matmul)


@dataclass(frozen=True)
class GraphAlterLayout(ModulePass):
    """Constant conv2d weights to blocks of `block` output channels (a
    grouped conv's within each group; IHWO where no block divides a dense
    conv's) and dense to matmul with a K×N constant weight, but a one-row
    dense over a long K (see the module docstring for input and output IR).

    Command line: `graph-alter-layout` or `graph-alter-layout{block=8}`
    (32, the default, is two AVX-512 vectors of f32). Refuses a block < 1."""

    name = "graph-alter-layout"

    block: int = 32
    """Output channels per weight block (OIHW<block>o); at least 1."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.block < 1:
            raise PassFailedException(f"{self.name}: block must be at least 1, got {self.block}")
        patterns = [
            ConvWeightsOutputChannelsInnermost(self.block),
            DenseAsMatmulWithTransposedWeight(),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
