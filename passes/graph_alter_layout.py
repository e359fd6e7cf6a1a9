"""graph-alter-layout: constant weights laid out for vector code.

The x86 micro-kernels vectorize over output channels (conv2d) and output
columns (dense, matmul), so those must be contiguous in the weight. This
pass rewrites the weights once, at compile time, and leaves activations in
NCHW (no layout transform between layers):

- `graph.conv2d(x, W)` with W a constant O×C×KH×KW and groups = 1 ->
  `graph.conv2d(x, W') {kernel_layout = "IHWO"}`, W' = W transposed to
  C×KH×KW×O (grouped and depthwise convolutions keep OIHW: their schedule
  vectorizes along the output row);
- `graph.dense(x, W)` with W a constant N×K -> `graph.matmul(x, Wᵀ)`, Wᵀ a
  constant K×N.

Expects: graph-level IR (after graph-simplify-inference, so that batch norms
are already folded into the weights). Produces: the same graph with those
ops rewritten and the new weights as constants; the old constants become
dead (run dce).
"""

from __future__ import annotations

from dataclasses import dataclass

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

from xtc.dialects.graph.base import get_int, get_str
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.nn import Conv2dOp, DenseOp, MatmulOp


class ConvWeightsOutputChannelsInnermost(RewritePattern):
    """conv2d(x, W: OIHW constant), groups = 1 -> conv2d(x, W: IHWO) {kernel_layout}."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        weight = op.weight.owner
        if not isinstance(weight, ConstantOp) or get_int(op.properties, "groups", 1) != 1:
            return
        if get_str(op.properties, "kernel_layout", "OIHW") != "OIHW":
            return
        transposed = ConstantOp.from_array(
            weight.to_array().transpose(1, 2, 3, 0).copy(), "weight_ihwo"
        )
        props = dict(op.properties)
        props["kernel_layout"] = StringAttr("IHWO")
        conv = Conv2dOp.build_inferred([op.input, transposed.output], props)
        rewriter.replace(op, [transposed, conv])


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
    """Constant conv2d weights to IHWO and dense to matmul with a K×N
    constant weight (see the module docstring for input and output IR)."""

    name = "graph-alter-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [ConvWeightsOutputChannelsInnermost(), DenseAsMatmulWithTransposedWeight()]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
