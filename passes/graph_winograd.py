"""graph-winograd: a blocked stride-1 3×3 conv computed by Winograd's minimal
filtering F(m×m, 3×3) (Lavin and Gray, 2016): each m×m output tile costs α²
products per input and output channel (α = m + 2) instead of 9m², the
weight transformed once, here, at compile time.

- `graph.conv2d(x, W)` with W a constant f32 weight in "OIHW<b>o", 3×3,
  strides and dilation 1, groups 1, `data_layout` = `out_layout` =
  "NCHW<b>c", an output of at least `min_size` × `min_size` and a
  transformed input of at most 16 MiB (MAX_TRANSFORMED_BYTES) ->
  `graph.winograd_conv2d(x, U, Bᵀ, Aᵀ)`, U = G W Gᵀ laid out
  α×α×K/b×C×b, Bᵀ and Aᵀ constants. m is 4 (α = 6, 4× fewer products)
  unless 2 (α = 4, 2.25×) wastes less on the last, partial tiles, or
  F(4, 3) would make too few tiles to use its weights well (MIN_GEMM_ROWS).

Expects: graph-level IR after graph-block-activations (the convs blocked).
Produces: the same graph with those convs replaced; the old weights become
dead (run dce). F(4, 3)'s transforms lose a few bits of f32 precision (a
relative error of about 1e-6 where the direct conv has 1e-7).
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

from xtc.dialects.graph.base import (
    elem,
    get_int,
    get_ints,
    ints_attr,
    op_props,
    shape_of,
)
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.nn import (
    Conv2dOp,
    WinogradConv2dOp,
    channel_block,
    data_layout,
    kernel_layout,
    out_layout,
    output_block,
)


@dataclass(frozen=True)
class Transforms:
    """F(m, 3)'s matrices: Bᵀ α×α (input), G α×3 (weight), Aᵀ m×α (output)."""

    input: np.ndarray
    weight: np.ndarray
    output: np.ndarray


TRANSFORMS = {
    2: Transforms(
        input=np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]),
        weight=np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]]),
        output=np.array([[1, 1, 1, 0], [0, 1, -1, -1]]),
    ),
    4: Transforms(
        input=np.array(
            [
                [4, 0, -5, 0, 1, 0],
                [0, -4, -4, 1, 1, 0],
                [0, 4, -4, -1, 1, 0],
                [0, -2, -1, 2, 1, 0],
                [0, 2, -1, -2, 1, 0],
                [0, 4, 0, -5, 0, 1],
            ]
        ),
        weight=np.array(
            [
                [1 / 4, 0, 0],
                [-1 / 6, -1 / 6, -1 / 6],
                [-1 / 6, 1 / 6, -1 / 6],
                [1 / 24, 1 / 12, 1 / 6],
                [1 / 24, -1 / 12, 1 / 6],
                [0, 0, 1],
            ]
        ),
        output=np.array(
            [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]
        ),
    ),
}
"""The transforms of F(2, 3) and F(4, 3), interpolation points 0, ±1 (and
±2) and ∞."""


MIN_GEMM_ROWS = 32
"""The fewest F(4, 3) tiles taken: the batched product reads each of its
transformed weights (4× the conv's) once per tile, and with fewer tiles it
waits on them. Measured on ResNet-50's 3×3 convs in the model (Intel Xeon,
2 threads, share of the run): at 14×14 (16 F(4) tiles of 256 channels)
F(4, 3) took 11.5-12.5%, F(2, 3) 9.7-10.0% and the direct conv 11.8-12.1%;
at 28×28 (49 F(4) tiles) F(4, 3) took 4.2-4.4% where F(2, 3) took 5.4-5.6%."""


def tile_size(height: int, width: int, batch: int = 1) -> int:
    """m for an output of batch × height × width: 4, unless F(4, 3) makes
    fewer than MIN_GEMM_ROWS tiles (a 14×14 output: 16), or F(2, 3)'s
    products over its whole tiles are fewer (a 2×2 output: one tile of 16
    against one of 36)."""

    def tiles(m: int) -> int:
        return batch * -(-height // m) * -(-width // m)

    if tiles(4) < MIN_GEMM_ROWS:
        return 2
    return min((4, 2), key=lambda m: tiles(m) * (m + 2) ** 2)


def transformed_weight(weight: np.ndarray, transforms: Transforms) -> np.ndarray:
    """A 3×3 weight in "OIHW<b>o" (K/b×C×3×3×b) as U = G W Gᵀ, α×α×K/b×C×b:
    one matrix product, (G ⊗ G) (α²×9) times the weight's 9 taps by its
    K·C·b values, in f64 (5x faster than the three-operand einsum it
    replaces: ResNet-50's largest weight 0.35 -> 0.07 s)."""
    g = transforms.weight
    alpha = g.shape[0]
    blocks, channels, _, _, block = weight.shape
    taps = weight.transpose(2, 3, 0, 1, 4).reshape(9, -1).astype(np.float64)
    u = (np.kron(g, g) @ taps).astype(np.float32)
    return u.reshape(alpha, alpha, blocks, channels, block)


MIN_SIZE = 8
"""The default smallest output side rewritten. Measured on ResNet-50's convs
(AMD Zen 5, 2 threads): 512 channels at 7x7 take 0.61 ms by F(4, 3) (four
tiles of 8x8 for 49 outputs) against 0.46 ms direct; at 14x14, 0.27 ms
against 0.46."""


MAX_TRANSFORMED_BYTES = 16 << 20
"""The largest transformed input (α² values per tile and input channel, in
f32) rewritten: past the L3 cache its stages stream from memory. Measured
on VGG-16 (AMD Zen 5, 32 MB L3, 2 threads): 64 channels at 224×224 (29 MB)
took 28.5 ms by F(4, 3) against 17.4 ms direct (blocked); 128 channels at
112×112 (14 MB) took 7.2 ms against 15.9."""


def takes(op: Conv2dOp, min_size: int = MIN_SIZE) -> bool:
    """Whether graph-winograd rewrites the conv: a constant f32 3×3 weight,
    strides and dilation 1, groups 1, input and output in the weight's
    block "NCHW<b>c", an output of at least min_size on each side and a
    transformed input of at most MAX_TRANSFORMED_BYTES."""
    if not isinstance(op.weight.owner, ConstantOp) or not isinstance(
        elem(op.weight.type), Float32Type
    ):
        return False
    props = op_props(op)
    layout = data_layout(props)
    block = channel_block(layout)
    if block is None or out_layout(props) != layout:
        return False
    if output_block(kernel_layout(props)) != block or get_int(props, "groups") != 1:
        return False
    if get_ints(props, "strides") != (1, 1) or get_ints(props, "dilation") != (1, 1):
        return False
    batch, _, height, width, _ = shape_of(op.output.type)
    _, channels, kh, kw, _ = shape_of(op.weight.type)
    if (kh, kw) != (3, 3) or min(height, width) < min_size:
        return False
    m = tile_size(height, width, batch)
    tiles = batch * -(-height // m) * -(-width // m)
    return (m + 2) ** 2 * channels * tiles * 4 <= MAX_TRANSFORMED_BYTES


@dataclass(frozen=True)
class ConvToWinograd(RewritePattern):
    """conv2d(x, W) -> winograd_conv2d(x, G W Gᵀ, Bᵀ, Aᵀ) for a blocked
    stride-1 3×3 f32 conv whose output is at least min_size on each side."""

    min_size: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        if not takes(op, self.min_size):
            return
        weight = op.weight.owner
        assert isinstance(weight, ConstantOp)  # takes() checked it
        array = weight.view()
        props = op_props(op)
        batch, _, height, width, _ = shape_of(op.output.type)
        transforms = TRANSFORMS[tile_size(height, width, batch)]
        ops = [
            ConstantOp.from_array(transformed_weight(array, transforms), "weight_winograd"),
            ConstantOp.from_array(transforms.input.astype(np.float32), "winograd_input"),
            ConstantOp.from_array(transforms.output.astype(np.float32), "winograd_output"),
        ]
        conv = WinogradConv2dOp.build_inferred(
            [op.input, *(c.output for c in ops)],
            {"padding": ints_attr(get_ints(props, "padding")), "data_layout": props["data_layout"]},
        )
        rewriter.replace(op, [*ops, conv])


@dataclass(frozen=True)
class GraphWinograd(ModulePass):
    """Blocked stride-1 3×3 f32 convs as graph.winograd_conv2d (see the module
    docstring for input and output IR).

    Command line: `graph-winograd` or `graph-winograd{min_size=8}`: convs
    whose output is smaller than min_size on a side stay direct (their
    partial tiles waste much of the saving). Refuses a min_size < 1."""

    name = "graph-winograd"

    min_size: int = MIN_SIZE
    """The smallest output height and width a conv is rewritten at; at least 1."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_size < 1:
            raise PassFailedException(
                f"{self.name}: min_size must be at least 1, got {self.min_size}"
            )
        PatternRewriteWalker(ConvToWinograd(self.min_size)).rewrite_module(op)
