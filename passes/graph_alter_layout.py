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
  (C×KH×KW×O). Grouped and depthwise convolutions keep OIHW: their schedule
  vectorizes along the output row;
- `graph.dense(x, W)` with W a constant N×K -> `graph.matmul(x, Wᵀ)`, Wᵀ a
  constant K×N.

Expects: graph-level IR (after graph-simplify-inference, so that batch norms
are already folded into the weights). Produces: the same graph with those
ops rewritten and the new weights as constants; the old constants become
dead (run dce).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from xtc.dialects.graph.base import get_int, get_str, op_props
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.nn import Conv2dOp, DenseOp, MatmulOp


def blocked_weight(weight: np.ndarray, block: int) -> np.ndarray:
    """An O×C×KH×KW weight as O/block×C×KH×KW×block (layout OIHW<block>o)."""
    o, c, kh, kw = weight.shape
    return weight.reshape(o // block, block, c, kh, kw).transpose(0, 2, 3, 4, 1).copy()


def block_sizes(block: int) -> list[int]:
    """The block sizes tried, largest first: `block`, then its halves down
    to MIN_BLOCK (a 4-lane vector)."""
    sizes = [block]
    while sizes[-1] % 2 == 0 and sizes[-1] // 2 >= MIN_BLOCK:
        sizes.append(sizes[-1] // 2)
    return sizes


MIN_BLOCK = 4


@dataclass(frozen=True)
class ConvWeightsOutputChannelsInnermost(RewritePattern):
    """conv2d(x, W: OIHW constant), groups = 1 -> conv2d(x, W': OIHW<b>o)
    {kernel_layout}, or W': IHWO when no block size divides O."""

    block: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        weight = op.weight.owner
        if not isinstance(weight, ConstantOp) or get_int(op_props(op), "groups") != 1:
            return
        if get_str(op_props(op), "kernel_layout") != "OIHW":
            return
        array = weight.to_array()
        block = next((b for b in block_sizes(self.block) if array.shape[0] % b == 0), None)
        if block is None:
            layout, array = "IHWO", array.transpose(1, 2, 3, 0).copy()
        else:
            layout, array = f"OIHW{block}o", blocked_weight(array, block)
        laid_out = ConstantOp.from_array(array, f"weight_{layout.lower()}")
        props = dict(op.properties)
        props["kernel_layout"] = StringAttr(layout)
        conv = Conv2dOp.build_inferred([op.input, laid_out.output], props)
        rewriter.replace(op, [laid_out, conv])


class DenseAsMatmulWithTransposedWeight(RewritePattern):
    """dense(x, W: N×K constant) -> matmul(x, Wᵀ: K×N constant)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DenseOp, rewriter: PatternRewriter) -> None:
        weight = op.weight.owner
        if not isinstance(weight, ConstantOp):
            return
        transposed = ConstantOp.from_array(weight.to_array().T.copy(), "weight_kn")
        matmul = MatmulOp.build_inferred([op.input, transposed.output], {})
        rewriter.replace(op, [transposed, matmul])


@dataclass(frozen=True)
class GraphAlterLayout(ModulePass):
    """Constant conv2d weights to blocks of `block` output channels (IHWO
    where no block divides) and dense to matmul with a K×N constant weight
    (see the module docstring for input and output IR).

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
