"""Default x86 schedules (ops/schedules.py): the recipe each kind of kernel
gets, and the numbers staying the same once every kernel of a model is
scheduled and compiled (`xtc.compile` at -O2 and -O3)."""

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import memref
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, SSAValue

import xtc
from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.frontend.onnx import import_model
from xtc.ops.schedules import default_schedule
from xtc.driver.compiler import compile_graph
from xtc.driver.scheduling import schedule_kernels
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module


def matmul_text(m: int, k: int, n: int) -> str:
    return f"""
func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %c = graph.matmul %a, %b : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  func.return %c : tensor<{m}x{n}xf32>
}}
"""


def unary_text(op: str, rows: int, columns: int) -> str:
    t = f"tensor<{rows}x{columns}xf32>"
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %y = {op} %x : ({t}) -> {t}
  func.return %y : {t}
}}
"""


def conv_blocked_text(size: int, block: int) -> str:
    """A 3x3 conv2d, 8 -> 2·block channels, weights in OIHW<block>o."""
    x, w, y = f"1x8x{size}x{size}", f"2x8x3x3x{block}", f"1x{2 * block}x{size}x{size}"
    return f"""
func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>) -> tensor<{y}xf32> {{
  %c = graph.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW{block}o"}} : (tensor<{x}xf32>, tensor<{w}xf32>) -> tensor<{y}xf32>
  func.return %c : tensor<{y}xf32>
}}
"""


MATMUL = """
func.func @main(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %c = graph.matmul %a, %b : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
  func.return %c : tensor<64x48xf32>
}
"""

CONV_IHWO = """
func.func @main(%x: tensor<1x16x14x14xf32>, %w: tensor<16x3x3x32xf32>) -> tensor<1x32x14x14xf32> {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "IHWO"} : (tensor<1x16x14x14xf32>, tensor<16x3x3x32xf32>) -> tensor<1x32x14x14xf32>
  func.return %c : tensor<1x32x14x14xf32>
}
"""

CONV_BLOCKED = """
func.func @main(%x: tensor<1x16x14x14xf32>, %w: tensor<4x16x3x3x8xf32>) -> tensor<1x32x14x14xf32> {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW8o"} : (tensor<1x16x14x14xf32>, tensor<4x16x3x3x8xf32>) -> tensor<1x32x14x14xf32>
  func.return %c : tensor<1x32x14x14xf32>
}
"""

DEPTHWISE = """
func.func @main(%x: tensor<1x8x16x16xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32>
  func.return %c : tensor<1x8x16x16xf32>
}
"""


DEPTHWISE_14 = DEPTHWISE.replace("16x16", "14x14")

DEPTHWISE_S2 = """
func.func @main(%x: tensor<1x8x34x34xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x17x17xf32> {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 8 : i64} : (tensor<1x8x34x34xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x17x17xf32>
  func.return %c : tensor<1x8x17x17xf32>
}
"""


def recipes(text: str) -> dict[str, list[list[str]]]:
    module = apply_pipeline(parse_module(text), "convert-graph-to-te,convert-te-to-tir")
    return {f.sym_name.data: default_schedule(f) for f in module.ops if f.sym_name.data != "main"}


def test_matmul_gets_a_register_tile_over_output_columns() -> None:
    """48 output columns: one block of three 16-lane vectors in the tile
    (8 rows × 3 vectors, 24 accumulators)."""
    (recipe,) = recipes(MATMUL)["matmul_0"]
    assert recipe[:5] == [
        "tir-split{func=matmul_0 loop=i1 factor=48}",
        "tir-split{func=matmul_0 loop=i1_i factor=16}",
        "tir-reorder{func=matmul_0 order=i1_o,i0,i1_i_o,i1_i_i}",
        "tir-split{func=matmul_0 loop=i0 factor=8}",
        "tir-cache-write{func=matmul_0 loop=i0_o}",
    ]
    assert "tir-unroll{func=matmul_0 loop=i0_i}" in recipe
    assert "tir-unroll{func=matmul_0 loop=i1_i_o}" in recipe
    assert "tir-vectorize{func=matmul_0 loop=i1_i_i}" in recipe
    assert recipe[-1] == "tir-parallel{func=matmul_0 loop=i0_o}"


def test_a_matmul_of_48_columns_matches_numpy_natively() -> None:
    """The three-vector tile computes the product."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32, 48)).astype(np.float32)
    (got,) = compile_graph(parse_module(MATMUL)).run([a, b])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_wide_matmul_gets_a_tile_two_vectors_wide() -> None:
    """64 output columns: 32-column blocks, two 16-lane vectors in the tile
    (8 rows × 2 vectors), the write-back vectorized along the columns."""
    (recipe,) = recipes(matmul_text(64, 32, 64))["matmul_0"]
    assert recipe[:3] == [
        "tir-split{func=matmul_0 loop=i1 factor=32}",
        "tir-split{func=matmul_0 loop=i1_i factor=16}",
        "tir-reorder{func=matmul_0 order=i1_o,i0,i1_i_o,i1_i_i}",
    ]
    assert "tir-split{func=matmul_0 loop=i0 factor=8}" in recipe
    assert "tir-unroll{func=matmul_0 loop=i1_i_o}" in recipe
    assert "tir-vectorize{func=matmul_0 loop=i1_i_i_wb}" in recipe
    assert "tir-cache-read{func=matmul_0 loop=i1_o buffer=1}" in recipe


def test_matrix_vector_product_tiles_the_columns() -> None:
    """One row (M = 1): nothing to block but the columns, so the tile is
    several vectors of them (1000 = 125 vectors of 8, 5 per tile)."""
    (recipe,) = recipes(matmul_text(1, 64, 1000))["matmul_0"]
    assert "tir-split{func=matmul_0 loop=i1 factor=8}" in recipe
    assert "tir-split{func=matmul_0 loop=i1_o factor=5}" in recipe
    assert "tir-cache-write{func=matmul_0 loop=i1_o_o}" in recipe
    assert "tir-unroll{func=matmul_0 loop=i1_o_i}" in recipe
    assert recipe[-1] == "tir-parallel{func=matmul_0 loop=i1_o_o}"


def test_conv_with_ihwo_weights_vectorizes_output_channels_and_blocks_the_row() -> None:
    """32 output channels: two vectors × 7 rows (14 = 2 × 7); the NCHW
    output row is contiguous, so the write-back stores along the rows."""
    padding, conv = recipes(CONV_IHWO)["conv2d_0"]
    # The padding nest is elementwise: its 16-wide rows are one vector.
    assert padding == [
        "tir-vectorize{func=conv2d_0 loop=i3}",
        "tir-parallel{func=conv2d_0 loop=i1}",
    ]
    assert conv[:2] == [
        "tir-split{func=conv2d_0 loop=i1_1 factor=32}",
        "tir-split{func=conv2d_0 loop=i1_1_i factor=16}",
    ]
    assert "tir-split{func=conv2d_0 loop=i3_1 factor=7}" in conv
    assert "tir-cache-write{func=conv2d_0 loop=i3_1_o}" in conv
    assert "tir-reorder{func=conv2d_0 order=i1_1_i_o_wb,i1_1_i_i_wb,i3_1_i_wb}" in conv
    assert "tir-vectorize{func=conv2d_0 loop=i3_1_i_wb}" in conv
    assert conv[-1] == "tir-parallel{func=conv2d_0 loop=i2_1}"


def test_conv_row_without_a_two_vector_divisor_gets_one_vector_of_13_rows() -> None:
    """A 13-wide output row with OIHW32o weights: no row count of a
    two-vector tile divides 13, so the tile is 13 rows × one vector and the
    block's two vectors become an outer loop."""
    _, conv = recipes(conv_blocked_text(13, 32))["conv2d_0"]
    assert "tir-split{func=conv2d_0 loop=i3_1 factor=13}" in conv
    assert "tir-reorder{func=conv2d_0 order=i0_1,i1_1_o,i2_1,i1_1_i_o,i3_1,i1_1_i_i}" in conv
    assert not any("unroll{func=conv2d_0 loop=i1_1_i_o}" in step for step in conv)


def test_conv_row_with_poor_divisors_gets_8_rows_and_a_tiled_tail() -> None:
    """A 34-wide output row (34 = 2 x 17: two rows would divide it): tiles
    of 8 rows x two vectors, and the 2 rows left a tile of their own, the
    loop around both still parallel."""
    _, conv = recipes(conv_blocked_text(34, 32))["conv2d_0"]
    assert "tir-split{func=conv2d_0 loop=i3_1 factor=8}" in conv
    assert "tir-unroll{func=conv2d_0 loop=i1_1_i_o}" in conv
    assert conv[conv.index("tir-split{func=conv2d_0 loop=i3_1_tail factor=2}") :][:5] == [
        "tir-split{func=conv2d_0 loop=i3_1_tail factor=2}",
        "tir-cache-write{func=conv2d_0 loop=i3_1_tail_o}",
        "tir-unroll{func=conv2d_0 loop=i3_1_tail_i}",
        "tir-unroll{func=conv2d_0 loop=i1_1_i_o_i3_1_tail}",
        "tir-vectorize{func=conv2d_0 loop=i1_1_i_i_i3_1_tail}",
    ]
    assert conv[-1] == "tir-parallel{func=conv2d_0 loop=i2_1}"


def test_a_window_whose_shared_broadcasts_spill_moves_its_column_loop_out() -> None:
    """A 3x3 stride-1 conv over a 55-wide row (SqueezeNet's expands): 11
    rows x two vectors, whose kw-shifted broadcasts (13 after LLVM unrolls
    kw) would need 37 registers; kh goes innermost instead. A 27-wide row
    (9 rows: 31 registers) and a stride-2 window keep kw innermost."""
    _, conv = recipes(conv_blocked_text(55, 32))["conv2d_0"]
    write = conv.index("tir-cache-write{func=conv2d_0 loop=i3_1_o}")
    assert conv[write + 1] == "tir-reorder{func=conv2d_0 order=r0,r2,r1}"
    _, narrow = recipes(conv_blocked_text(27, 32))["conv2d_0"]
    assert "tir-split{func=conv2d_0 loop=i3_1 factor=9}" in narrow
    assert not any("order=r" in step for step in narrow)
    (strided,) = recipes(_strided_conv_text(55))["conv2d_0"]
    assert "tir-split{func=conv2d_0 loop=i3 factor=11}" in strided
    assert not any("order=r" in step for step in strided)


def _strided_conv_text(size: int) -> str:
    """conv_blocked_text's 3x3 conv at stride 2 over a (2 size + 1)-wide input."""
    x, w, y = f"1x8x{2 * size + 1}x{2 * size + 1}", "2x8x3x3x32", f"1x64x{size}x{size}"
    attributes = 'strides = array<i64: 2, 2>, kernel_layout = "OIHW32o"'
    return f"""
func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>) -> tensor<{y}xf32> {{
  %c = graph.conv2d %x, %w {{{attributes}}} : (tensor<{x}xf32>, tensor<{w}xf32>) -> tensor<{y}xf32>
  func.return %c : tensor<{y}xf32>
}}
"""


def test_conv_with_blocked_weights_vectorizes_one_block_and_packs_nothing() -> None:
    """OIHW8o: the vector is the block of 8 output channels (not 16), and
    the weights need no packing: each block is already contiguous."""
    _, conv = recipes(CONV_BLOCKED)["conv2d_0"]
    assert conv[0] == "tir-split{func=conv2d_0 loop=i1_1 factor=8}"
    assert "tir-vectorize{func=conv2d_0 loop=i1_1_i}" in conv
    assert not any(step.startswith("tir-cache-read") for step in conv)


GROUPED_BLOCKED = """
func.func @main(%x: tensor<1x16x14x14xf32>, %w: tensor<4x8x3x3x8xf32>) -> tensor<1x32x14x14xf32> {
  %c = graph.conv2d %x, %w {
    padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, kernel_layout = "OIHW8o"
  } : (tensor<1x16x14x14xf32>, tensor<4x8x3x3x8xf32>) -> tensor<1x32x14x14xf32>
  func.return %c : tensor<1x32x14x14xf32>
}
"""


def _loop_variables(value: SSAValue) -> set[str]:
    """The names of the loops whose variables `value` is computed from."""
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        return {owner.loop_name.data} if isinstance(owner, ForOp) else set()
    return {name for operand in value.owner.operands for name in _loop_variables(operand)}


def test_grouped_conv_with_blocked_weights_is_the_dense_micro_kernel() -> None:
    """groups = 2, OIHW8o: the same recipe as a dense blocked conv (the
    block of 8 output channels the vector, the row the register tile), and
    once scheduled the input channel each vector reads comes from the block
    loop, never from the lanes: one group per vector, no gather."""
    _, conv = recipes(GROUPED_BLOCKED)["conv2d_0"]
    assert conv[0] == "tir-split{func=conv2d_0 loop=i1_1 factor=8}"
    assert "tir-vectorize{func=conv2d_0 loop=i1_1_i}" in conv
    assert "tir-unroll{func=conv2d_0 loop=i3_1_i}" in conv
    module = apply_pipeline(parse_module(GROUPED_BLOCKED), "convert-graph-to-te,convert-te-to-tir")
    schedule_kernels(module, "main")
    lanes = next(
        op for op in module.walk() if isinstance(op, ForOp) and op.loop_name.data == "i1_1_i"
    )
    (padded,) = [
        op for op in lanes.body.walk() if isinstance(op, memref.LoadOp) and len(op.indices) == 4
    ]
    assert "i1_1_o" in _loop_variables(padded.indices[1])
    assert "i1_1_i" not in _loop_variables(padded.indices[1])


def conv1x1_text(channels: int, size: int, out: int) -> str:
    """A 1x1 conv2d over a channels×size×size input, weights in OIHW32o."""
    x, w, y = (
        f"1x{channels}x{size}x{size}",
        f"{out // 32}x{channels}x1x1x32",
        f"1x{out}x{size}x{size}",
    )
    return f"""
func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>) -> tensor<{y}xf32> {{
  %c = graph.conv2d %x, %w {{kernel_layout = "OIHW32o"}} : (tensor<{x}xf32>, tensor<{w}xf32>) -> tensor<{y}xf32>
  func.return %c : tensor<{y}xf32>
}}
"""


def test_conv_over_a_large_input_loops_over_its_rows_and_packs_them() -> None:
    """A 1x1 conv whose input costs more to re-read per block of 32 output
    channels (1.4 MiB × 2 blocks) than its weights per output row (40 KiB ×
    48 rows): output rows outside the channel blocks, each input row slab
    packed once for all blocks; with a 160×16×16 input (160 KiB × 2 against
    40 KiB × 16) the blocks stay outside."""
    (conv,) = recipes(conv1x1_text(160, 48, 64))["conv2d_0"]
    assert "tir-reorder{func=conv2d_0 order=i0,i2,i1_o,i3,i1_i_o,i1_i_i}" in conv
    assert "tir-cache-read{func=conv2d_0 loop=i2 buffer=0}" in conv
    assert conv[-1] == "tir-parallel{func=conv2d_0 loop=i2}"
    (small,) = recipes(conv1x1_text(160, 16, 64))["conv2d_0"]
    assert "tir-reorder{func=conv2d_0 order=i0,i1_o,i2,i3,i1_i_o,i1_i_i}" in small
    assert not any(step.startswith("tir-cache-read") for step in small)


def test_elementwise_nest_vectorizes_its_innermost_loop() -> None:
    """An elementwise kernel stored along its last axis (3072 = 192 × 16):
    that axis split by 16 and vectorized, the rows in parallel; a last axis
    no width divides is one vector of its own length from 5 lanes (7:
    DenseNet's 7-wide BN-ReLU rows), and shorter stays scalar (3)."""
    (gelu,) = recipes(unary_text("graph.erf", 128, 3072))["erf_0"]
    assert gelu == [
        "tir-split{func=erf_0 loop=i1 factor=16}",
        "tir-vectorize{func=erf_0 loop=i1_i}",
        "tir-parallel{func=erf_0 loop=i0}",
    ]
    (odd,) = recipes(unary_text("graph.erf", 128, 7))["erf_0"]
    assert odd == ["tir-vectorize{func=erf_0 loop=i1}", "tir-parallel{func=erf_0 loop=i0}"]
    (short,) = recipes(unary_text("graph.erf", 128, 3))["erf_0"]
    assert short == ["tir-parallel{func=erf_0 loop=i0}"]


def pool_text(op: str, size: int, attributes: str, out: int, channels: int = 4) -> str:
    """A 3x3 pooling over a 1 x channels x size×size input."""
    x = f"tensor<1x{channels}x{size}x{size}xf32>"
    y = f"tensor<1x{channels}x{out}x{out}xf32>"
    return f"""
func.func @main(%x: {x}) -> {y} {{
  %y = {op} %x {{kernel = array<i64: 3, 3>, {attributes}}} : ({x}) -> {y}
  func.return %y : {y}
}}
"""


MAX_POOL_27 = pool_text("graph.max_pool2d", 55, "strides = array<i64: 2, 2>", 27)
AVG_POOL_PADDED = pool_text(
    "graph.avg_pool2d", 28, "strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>", 14
)
MAX_POOL_S2_56 = pool_text(
    "graph.max_pool2d", 112, "strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>", 56
)
MAX_POOL_S2_WIDE = pool_text(
    "graph.max_pool2d",
    112,
    "strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>",
    56,
    channels=24,
)
MAX_POOL_S1_56 = pool_text("graph.max_pool2d", 56, "padding = array<i64: 1, 1, 1, 1>", 56)
MAX_POOL_CEIL = pool_text(
    "graph.max_pool2d", 20, "strides = array<i64: 2, 2>, ceil_mode = true", 10
)


def test_a_27_wide_pooled_row_is_three_vectors_of_9() -> None:
    """No width of 16, 8 or 4 divides 27 (AlexNet's 55 -> 27 max pool):
    the row is vectors of its largest divisor up to 16 lanes."""
    (pool,) = recipes(MAX_POOL_27)["max_pool2d_0"]
    assert pool[0] == "tir-split{func=max_pool2d_0 loop=i3 factor=9}"
    assert "tir-vectorize{func=max_pool2d_0 loop=i3_i}" in pool


def test_padded_pooling_reads_a_padded_copy_along_the_row() -> None:
    """Pad first: a pooling whose windows reach past the input first copies
    it into a padded buffer (its own nest), so that the window loads are
    affine in the output column (strided vector loads), with no per-tap
    bounds check or clamp in the vector loop."""
    pad, pool = recipes(AVG_POOL_PADDED)["avg_pool2d_0"]
    assert any(step.startswith("tir-parallel{func=avg_pool2d_0") for step in pad)
    assert "tir-vectorize{func=avg_pool2d_0 loop=i3_1_i}" in pool
    module = apply_pipeline(parse_module(AVG_POOL_PADDED), "convert-graph-to-te,convert-te-to-tir")
    schedule_kernels(module, "main")
    lanes = next(
        op for op in module.walk() if isinstance(op, ForOp) and op.loop_name.data == "i3_1_i"
    )
    names = {op.name for op in lanes.body.walk()}
    assert "memref.load" in names
    assert not names & {"arith.select", "arith.minsi", "arith.maxsi", "arith.cmpi"}


def test_a_padded_copy_no_width_divides_is_vectors_of_16_and_a_tail() -> None:
    """The padded copy's 29-wide rows (no width of 16, 8 or 4 divides them,
    and 29 is prime) are split by 16, the 13 left a peeled tail of one
    vector of 13 lanes, vectorized after the parallel step (MobileNet-v2's
    stride-2 depthwise conv: its 114-wide copy was most of the op's time;
    its tail of 2 stays scalar)."""
    pad, _ = recipes(AVG_POOL_PADDED)["avg_pool2d_0"]
    assert pad[:2] == [
        "tir-split{func=avg_pool2d_0 loop=i3 factor=16}",
        "tir-vectorize{func=avg_pool2d_0 loop=i3_i}",
    ]
    assert pad[-1] == "tir-vectorize{func=avg_pool2d_0 loop=i3_tail}"
    module = apply_pipeline(parse_module(AVG_POOL_PADDED), "convert-graph-to-te,convert-te-to-tir")
    schedule_kernels(module, "main")
    loops = {op.loop_name.data: op for op in module.walk() if isinstance(op, ForOp)}
    assert loops["i3_i"].kind.data == "vectorized" and loops["i3_i"].extent == 16
    assert loops["i3_tail"].kind.data == "vectorized" and loops["i3_tail"].extent == 13
    assert loops["i2"].kind.data == "parallel"
    wide_pad, _ = recipes(MAX_POOL_S2_56)["max_pool2d_0"]
    assert not any("_tail}" in step for step in wide_pad)


def test_a_stride_one_pool_over_small_planes_pads_one_channel_at_a_time() -> None:
    """A 3x3 stride-1 max pool over 7x7 maps (9x9 planes of its padded
    copy, GoogLeNet's 832x7x7) computes its copy per channel; over 14x14
    maps (16x16 planes) or at stride 2 over 9x9 planes it keeps the copy
    a nest of its own."""
    small = pool_text("graph.max_pool2d", 7, "padding = array<i64: 1, 1, 1, 1>", 7, channels=32)
    (pool,) = recipes(small)["max_pool2d_0"]
    assert "tir-compute-at{func=max_pool2d_0 loop=i0 at=i1_1 local=true}" in pool
    wide = pool_text("graph.max_pool2d", 14, "padding = array<i64: 1, 1, 1, 1>", 14, channels=32)
    assert len(recipes(wide)["max_pool2d_0"]) == 2
    strided = pool_text(
        "graph.max_pool2d",
        7,
        "strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>",
        4,
        channels=32,
    )
    assert len(recipes(strided)["max_pool2d_0"]) == 2


def _pool_model(op: str, hw: int, kernel: int, stride: int, pad: int, ceil: bool):  # noqa: ANN202
    node = helper.make_node(
        op,
        ["x"],
        ["y"],
        kernel_shape=[kernel, kernel],
        strides=[stride] * 2,
        pads=[pad] * 4,
        ceil_mode=int(ceil),
    )
    graph = helper.make_graph(
        [node],
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@settings(max_examples=12, deadline=None)
@given(
    op=st.sampled_from(["MaxPool", "AveragePool"]),
    hw=st.integers(4, 40),
    kernel=st.integers(2, 3),
    stride=st.integers(1, 3),
    pad=st.integers(0, 1),
    ceil=st.booleans(),
)
def test_pools_with_padded_rows_of_any_width_match_onnxruntime(
    op: str, hw: int, kernel: int, stride: int, pad: int, ceil: bool
) -> None:
    """Pools whose padded copy's rows leave a tail after vectors of 16 (a
    vector of 5 to 15 lanes, or scalar), any stride, padding and ceil mode,
    against onnxruntime."""
    model = _pool_model(op, hw, kernel, stride, pad, ceil)
    x = np.random.default_rng(hw).standard_normal((1, 3, hw, hw)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    (got,) = xtc.compile(model).run([x])
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_a_strided_window_takes_the_largest_divisor_as_lanes() -> None:
    """A 56-wide output row read at stride 2 (ResNet's stem max pool) is
    vectors of 14, not of 8, the widest dividing width: each strided load
    is deinterleaved whatever its lanes. At stride 1 it keeps 8."""
    _, strided = recipes(MAX_POOL_S2_56)["max_pool2d_0"]
    assert strided[0] == "tir-split{func=max_pool2d_0 loop=i3_1 factor=14}"
    assert "tir-vectorize{func=max_pool2d_0 loop=i3_1_i}" in strided
    _, unit = recipes(MAX_POOL_S1_56)["max_pool2d_0"]
    assert unit[0] == "tir-split{func=max_pool2d_0 loop=i3_1 factor=8}"


def test_a_max_pool_pads_one_channel_at_a_time_once_its_copy_outgrows_l2() -> None:
    """A max pool whose padded copy outgrows L2 (24x113x113, 1.2 MB; ResNet's
    and GoogLeNet's stem pools, 64 channels, 3.3 MB) computes it per channel
    of the pool (tir-compute-at into a local plane): no round trip of the
    whole copy through L3, no fork of its own. A small strided one (4
    channels, 0.2 MB) keeps its copy a nest of its own: small planes lost."""
    (pool,) = recipes(MAX_POOL_S2_WIDE)["max_pool2d_0"]
    assert pool[-3:] == [
        "tir-compute-at{func=max_pool2d_0 loop=i0 at=i1_1 local=true}",
        "tir-split{func=max_pool2d_0 loop=i3_at factor=16}",
        "tir-vectorize{func=max_pool2d_0 loop=i3_at_i}",
    ]
    assert "tir-parallel{func=max_pool2d_0 loop=i1_1}" in pool
    module = apply_pipeline(parse_module(MAX_POOL_S2_WIDE), "convert-graph-to-te,convert-te-to-tir")
    schedule_kernels(module, "main")
    assert not any(op.name == "memref.alloc" for op in module.walk())
    pad, small = recipes(MAX_POOL_S2_56)["max_pool2d_0"]
    assert pad and not any(step.startswith("tir-compute-at") for step in small)


BLOCKED_STEM_POOL = """
func.func @main(%x: tensor<1x2x112x112x32xf32>) -> tensor<1x2x56x56x32xf32> {
  %p = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW32c"} : (tensor<1x2x112x112x32xf32>) -> tensor<1x2x56x56x32xf32>
  func.return %p : tensor<1x2x56x56x32xf32>
}
"""


def test_a_blocked_max_pool_with_two_planes_pads_per_output_row() -> None:
    """ResNet-50's stem pool in NCHW32c: its padded copy (3.3 MB) outgrows
    L2, but it has 2 planes (blocks of 32 channels), too few to share
    among threads (per plane, one thread would copy each: 0.33 ms). It is
    computed per output row of the pool, the parallel loop (the 3 rows of
    the copy each row's windows read), not as a nest of its own (0.21 ->
    0.14 ms alone, 0.37 -> 0.19 ms in ResNet-50, on 2 threads)."""
    (pool,) = recipes(BLOCKED_STEM_POOL)["max_pool2d_0"]
    assert "tir-parallel{func=max_pool2d_0 loop=i2_1}" in pool
    assert pool[-3:] == [
        "tir-compute-at{func=max_pool2d_0 loop=i0 at=i2_1 local=true}",
        "tir-split{func=max_pool2d_0 loop=i4_at factor=16}",
        "tir-vectorize{func=max_pool2d_0 loop=i4_at_i}",
    ]
    lowering = "convert-graph-to-te,convert-te-to-tir"
    module = apply_pipeline(parse_module(BLOCKED_STEM_POOL), lowering)
    schedule_kernels(module, "main")
    assert not any(op.name == "memref.alloc" for op in module.walk())


def _max_pool_model(channels: int, hw: int, kernel: int, stride: int, ceil: bool):  # noqa: ANN202
    node = helper.make_node(
        "MaxPool",
        ["x"],
        ["y"],
        kernel_shape=[kernel, kernel],
        strides=[stride] * 2,
        pads=[1] * 4,
        ceil_mode=int(ceil),
    )
    graph = helper.make_graph(
        [node],
        "max_pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@settings(max_examples=6, deadline=None)
@given(
    channels=st.sampled_from([24, 33, 64]),
    hw=st.integers(105, 118),
    kernel=st.integers(2, 3),
    stride=st.integers(1, 2),
    ceil=st.booleans(),
)
def test_max_pools_padded_one_channel_at_a_time_match_onnxruntime(
    channels: int, hw: int, kernel: int, stride: int, ceil: bool
) -> None:
    """Max pools whose padded copy outgrows L2 (over 1 MiB: computed per
    channel of the pool, odd and even sizes, ceil mode) against onnxruntime."""
    model = _max_pool_model(channels, hw, kernel, stride, ceil)
    x = np.random.default_rng(hw).standard_normal((1, channels, hw, hw)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    (got,) = xtc.compile(model).run([x])
    np.testing.assert_array_equal(got, expected)


def test_depthwise_conv_vectorizes_the_output_row() -> None:
    _, conv = recipes(DEPTHWISE)["conv2d_0"]
    assert conv[0] == "tir-split{func=conv2d_0 loop=i3_1 factor=16}"


def test_a_strided_depthwise_conv_pads_one_channel_at_a_time() -> None:
    """Its padded copy (4x the elements the conv stores) is computed per
    channel of the conv (tir-compute-at into a local plane): no nest, and
    no fork, of its own; its rows still vectorized. A stride-1 one whose
    copy stays in L2 keeps the copy a nest of its own."""
    (conv,) = recipes(DEPTHWISE_S2)["conv2d_0"]
    assert conv[-3:] == [
        "tir-compute-at{func=conv2d_0 loop=i0 at=i1_1 local=true}",
        "tir-split{func=conv2d_0 loop=i3_at factor=4}",
        "tir-vectorize{func=conv2d_0 loop=i3_at_i}",
    ]
    assert "tir-parallel{func=conv2d_0 loop=i1_1}" in conv
    module = apply_pipeline(parse_module(DEPTHWISE_S2), "convert-graph-to-te,convert-te-to-tir")
    schedule_kernels(module, "main")
    loops = {op.loop_name.data: op for op in module.walk() if isinstance(op, ForOp)}
    assert loops["i3_at_i"].kind.data == "vectorized"
    assert loops["i1_1"].kind.data == "parallel"
    assert not any(op.name == "memref.alloc" for op in module.walk())
    pad, _ = recipes(DEPTHWISE)["conv2d_0"]
    assert pad[-1] == "tir-parallel{func=conv2d_0 loop=i1}"


def test_a_14_wide_row_is_one_vector_of_14_lanes() -> None:
    # No width of 16, 8 or 4 divides 14: the whole row is one vector.
    _, conv = recipes(DEPTHWISE_14)["conv2d_0"]
    assert conv[0] == "tir-split{func=conv2d_0 loop=i3_1 factor=14}"
    assert "tir-vectorize{func=conv2d_0 loop=i3_1_i}" in conv
    assert "tir-unroll{func=conv2d_0 loop=i2_1_i}" in conv


@pytest.mark.parametrize(
    "text",
    [
        MATMUL,
        matmul_text(16, 24, 64),
        matmul_text(1, 24, 40),
        CONV_IHWO,
        CONV_BLOCKED,
        conv_blocked_text(13, 32),
        conv_blocked_text(34, 32),
        conv_blocked_text(17, 32),
        conv1x1_text(160, 48, 64),
        unary_text("graph.erf", 16, 48),
        unary_text("graph.exp", 16, 48),
        unary_text("graph.erf", 16, 14),
        unary_text("graph.relu", 16, 7),
        DEPTHWISE,
        DEPTHWISE_14,
        DEPTHWISE_S2,
        GROUPED_BLOCKED,
        MAX_POOL_27,
        AVG_POOL_PADDED,
        MAX_POOL_S2_56,
        MAX_POOL_S2_WIDE,
        MAX_POOL_CEIL,
        BLOCKED_STEM_POOL,
    ],
)
def test_scheduled_kernels_compute_the_same(text: str) -> None:
    module = parse_module(text)
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(a.type.get_shape()).astype(np.float32)
        for a in module.body.block.first_op.body.block.args
    ]  # type: ignore[union-attr]
    (expected,) = interp.run(module, inputs)
    (got,) = compile_graph(module, opt_level=2).run(inputs)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    lowered = apply_pipeline(parse_module(text), "convert-graph-to-te,convert-te-to-tir")
    steps = schedule_kernels(lowered, "main")
    assert steps and all("{func=" in s for s in steps)
    assert 'kind = "vectorized"' in module_to_text(lowered)


def _conv_model(  # noqa: ANN202
    c_in: int, c_out: int, k: int, stride: int, pad: int, groups: int, hw: int, dilation: int = 1
):
    rng = np.random.default_rng(c_in * 100 + c_out)
    w = rng.standard_normal((c_out, c_in // groups, k, k)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "w", "b"],
            ["c"],
            kernel_shape=[k, k],
            strides=[stride] * 2,
            pads=[pad] * 4,
            dilations=[dilation] * 2,
            group=groups,
        ),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@settings(max_examples=10, deadline=None)
@given(
    c_in=st.sampled_from([3, 8, 16]),
    c_out=st.sampled_from([8, 16, 24, 32, 48]),
    k=st.sampled_from([1, 3]),
    stride=st.integers(1, 2),
    hw=st.sampled_from([5, 7, 9, 14, 16]),
    depthwise=st.booleans(),
)
def test_scheduled_convolutions_match_onnxruntime(
    c_in: int, c_out: int, k: int, stride: int, hw: int, depthwise: bool
) -> None:
    groups = c_in if depthwise else 1
    if depthwise:
        c_out = c_in
    model = _conv_model(c_in, c_out, k, stride, k // 2, groups, hw)
    x = np.random.default_rng(hw).standard_normal((1, c_in, hw, hw)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    (got,) = xtc.compile(model).run([x])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))


@settings(max_examples=6, deadline=None)
@given(
    c_out=st.sampled_from([32, 64]),
    stride=st.integers(1, 2),
    hw=st.sampled_from([19, 23, 34, 37, 47, 69]),
)
def test_convolutions_with_tiled_row_tails_match_onnxruntime(
    c_out: int, stride: int, hw: int
) -> None:
    """Output rows with poor divisors (34, 69 wide: 8-row tiles of two
    vectors and a tiled tail) or none (17, 19, 23, 37, 47: 14 rows of one
    vector and a tiled tail), weights blocked, at -O3 against onnxruntime."""
    model = _conv_model(8, c_out, 3, stride, 1, 1, hw)
    x = np.random.default_rng(hw).standard_normal((1, 8, hw, hw)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    (got,) = xtc.compile(model).run([x])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))


@pytest.mark.parametrize(("c_in", "hw"), [(16, 55), (3, 36)])
def test_convolutions_with_the_window_column_moved_out_match_onnxruntime(
    c_in: int, hw: int
) -> None:
    """3x3 stride-1 convs whose 11- or 12-row tiles take kh innermost
    (SqueezeNet's fire2 expand3x3, 16 -> 64 at 55x55), at -O3."""
    model = _conv_model(c_in, 64, 3, 1, 1, 1, hw)
    x = np.random.default_rng(hw).standard_normal((1, c_in, hw, hw)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    (got,) = xtc.compile(model).run([x])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))


@pytest.mark.parametrize(
    ("c_in", "c_out", "k", "stride", "pad", "dilation", "groups", "hw", "layout"),
    [
        (8, 16, 3, 1, 1, 1, 2, 9, "OIHW8o"),
        (12, 48, 1, 1, 0, 1, 3, 7, "OIHW16o"),
        (6, 72, 3, 2, 1, 1, 3, 11, "OIHW8o"),  # 24 a group: blocks of 8, stride 2
        (8, 24, 3, 2, 1, 1, 2, 10, "OIHW4o"),  # 12 a group: blocks of 4, strided
        (8, 24, 3, 1, 2, 2, 2, 10, "OIHW4o"),  # blocks of 4, dilated
        (8, 24, 3, 1, 1, 1, 2, 10, "OIHW"),  # blocks of 4 not taken at stride 1
        (6, 20, 5, 1, 2, 1, 2, 13, "OIHW"),  # 10 a group: no block
        (16, 16, 3, 2, 1, 1, 16, 14, "OIHW"),  # depthwise, stride 2
        (8, 8, 3, 2, 1, 1, 8, 33, "OIHW"),  # depthwise, stride 2, a 35-wide padded copy
        (8, 64, 3, 2, 1, 1, 8, 9, "OIHW8o"),  # depthwise, multiplier 8
    ],
)
def test_grouped_convolutions_match_onnxruntime(
    c_in: int,
    c_out: int,
    k: int,
    stride: int,
    pad: int,
    dilation: int,
    groups: int,
    hw: int,
    layout: str,
) -> None:
    """Grouped convs at -O3 (weights blocked per group where a block fits,
    scheduled as blocked convs), with the bias and relu fused, against
    onnxruntime."""
    model = _conv_model(c_in, c_out, k, stride, pad, groups, hw, dilation)
    module = import_model(model)
    apply_pipeline(module, "graph-alter-layout")
    text = module_to_text(module)
    if layout == "OIHW":
        assert "kernel_layout" not in text
    else:
        assert f'kernel_layout = "{layout}"' in text
    x = np.random.default_rng(hw).standard_normal((1, c_in, hw, hw)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    (got,) = xtc.compile(model).run([x])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))


def _row_model(op: str, shape: list[int], weights: list[np.ndarray]):  # noqa: ANN202
    """One `op` node normalizing the last axis of `shape` (Softmax,
    LayerNormalization with its scale and bias)."""
    names = [f"w{i}" for i in range(len(weights))]
    node = helper.make_node(op, ["x", *names], ["y"], axis=-1)
    graph = helper.make_graph(
        [node],
        "row",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for w, n in zip(weights, names, strict=True)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _layer_norm_model(rows: int, hidden: int):  # noqa: ANN202
    rng = np.random.default_rng(hidden)
    gamma = rng.standard_normal(hidden).astype(np.float32)
    beta = rng.standard_normal(hidden).astype(np.float32)
    return _row_model("LayerNormalization", [rows, hidden], [gamma, beta])


def _model_recipes(model: object) -> dict[str, list[list[str]]]:
    module = import_model(model)  # type: ignore[arg-type]
    apply_pipeline(module, "convert-graph-to-te,convert-te-to-tir")
    kernels = [f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data != "main"]
    return {f.sym_name.data: default_schedule(f) for f in kernels}


def test_row_sums_and_maxima_run_along_the_row() -> None:
    """A reduction reading its rows along the reduction loop (a layer
    norm's mean and variance, a softmax's maximum and sum of exponentials)
    is not vectorized across the rows (one gathered element per lane): the
    rows run in parallel, each row's loop split into partial accumulators
    (tir-rfactor) that are vector lanes, then combined pairwise."""
    mean, variance, _ = _model_recipes(_layer_norm_model(32, 48))["layer_norm_0"]
    assert mean == [
        "tir-split{func=layer_norm_0 loop=r0 factor=16}",
        "tir-rfactor{func=layer_norm_0 loop=r0_i}",
        "tir-vectorize{func=layer_norm_0 loop=r0_i}",
        "tir-vectorize{func=layer_norm_0 loop=r0_i_init}",
        "tir-vectorize{func=layer_norm_0 loop=r0_i_wb8}",
        "tir-vectorize{func=layer_norm_0 loop=r0_i_wb4}",
        "tir-vectorize{func=layer_norm_0 loop=r0_i_wb2}",
        "tir-parallel{func=layer_norm_0 loop=i0}",
    ]
    assert variance[-1] == "tir-parallel{func=layer_norm_0 loop=i0_1}"
    assert "tir-rfactor{func=layer_norm_0 loop=r0_1_i}" in variance
    reuse, maximum, exponentials, _ = _model_recipes(_row_model("Softmax", [2, 16, 32], []))[
        "softmax_0"
    ]
    # the sum stores each exponential into the output, which the last nest scales
    assert reuse == ["tir-reuse-term{func=softmax_0 loop=r0_1 consumer=i0_2}"]
    assert maximum[:2] == [
        "tir-split{func=softmax_0 loop=r0 factor=16}",
        "tir-rfactor{func=softmax_0 loop=r0_i}",
    ]
    assert maximum[-1] == "tir-parallel{func=softmax_0 loop=i1}"
    assert "tir-rfactor{func=softmax_0 loop=r0_1_i}" in exponentials
    assert not any(step.startswith("tir-cache-write") for step in exponentials)
    # 7-wide rows: one vector of 7 partials, combined in order
    _, maximum, _, _ = _model_recipes(_row_model("Softmax", [3, 5, 7], []))["softmax_0"]
    assert maximum[:3] == [
        "tir-rfactor{func=softmax_0 loop=r0}",
        "tir-vectorize{func=softmax_0 loop=r0}",
        "tir-vectorize{func=softmax_0 loop=r0_init}",
    ]


@pytest.mark.parametrize(
    "model",
    [
        _layer_norm_model(32, 48),
        _layer_norm_model(5, 7),
        _row_model("Softmax", [2, 16, 32], []),
        _row_model("Softmax", [3, 5, 7], []),
    ],
    ids=["layer_norm_32x48", "layer_norm_5x7", "softmax_2x16x32", "softmax_3x5x7"],
)
def test_row_reductions_match_onnxruntime(model: object) -> None:
    (shape,) = [
        [d.dim_value for d in i.type.tensor_type.shape.dim]
        for i in model.graph.input  # type: ignore[attr-defined]
    ]
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    session = ort.InferenceSession(
        model.SerializeToString(),  # type: ignore[attr-defined]
        providers=["CPUExecutionProvider"],
    )
    (expected,) = session.run(None, {"x": x})
    (got,) = xtc.compile(model).run([x])  # type: ignore[arg-type]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
