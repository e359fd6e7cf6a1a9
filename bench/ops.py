"""Single operators, xtc against onnxruntime, side by side in one process.

    python bench/ops.py [--ops REGEX] [--threads 2] [--repeat 5] [--quick]
                        [--json out.json] [--list]

Each case is a one-node (or few-node) ONNX model built with `onnx.helper` at a
shape taken from a real network (AlexNet, VGG, ResNet, MobileNet, ShuffleNet,
SqueezeNet, Inception, DenseNet, BERT...), with random weights as
initializers. It is compiled by `xtc.compile` (default opt level), its output
is checked against onnxruntime's (max abs difference <= 1e-3 x max abs of
onnxruntime's output), and both are timed the way bench/models.py times whole
models: blocks of runs alternating between xtc and an onnxruntime session of
the same thread count. Each side's figure is its best block median (the
lowest of the `--repeat` blocks' median run times), so a block that a busy
machine stalled does not count. A block holds enough runs to last about
BLOCK_MS on the slower side (--quick: 3 runs, one block per side).

Rows print as each op completes, grouped by kind (conv, pool, norm, tensor,
matmul, resize, elementwise); a mismatch or a failure to compile or run shows
in its row. The table ends with the geometric mean of xtc/ORT per group and
over all ops. The exit status is 1 when any op mismatches or fails, 2 on bad
arguments."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import TextIO

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).parent))

from models import (  # noqa: E402 - bench/models.py, beside this script
    compare_outputs,
    compile_timed,
    geometric_mean,
    interleaved_medians,
    ort_session,
    positive_int,
    random_inputs,
    time_calls,
    xtc_block,
)

import xtc  # noqa: E402
from xtc.tools.model_builders import GraphBuilder  # noqa: E402

OPSET = 18
BLOCK_MS = 30.0
"""A block of runs lasts about this long: many runs of a 4 us op, a few of a 10 ms one."""
MAX_RUNS_PER_BLOCK = 500
QUICK_RUNS_PER_BLOCK = 3

Shape = Sequence[int]


# --- one-node models -------------------------------------------------------------


def _inputs(shapes: Mapping[str, Shape]) -> list[onnx.ValueInfoProto]:
    return [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
        for name, shape in shapes.items()
    ]


def _image(channels: int, side: int) -> dict[str, Shape]:
    return {"x": [1, channels, side, side]}


def conv(
    c_in: int,
    c_out: int,
    side: int,
    k: int,
    stride: int = 1,
    pad: int = 0,
    groups: int = 1,
    dilation: int = 1,
) -> onnx.ModelProto:
    """Conv with bias on a 1 x c_in x side x side image."""
    b = GraphBuilder()
    w = b.random("w", [c_out, c_in // groups, k, k], (2.0 / (c_in // groups * k * k)) ** 0.5)
    y = b.node(
        "Conv",
        ["x", w, b.random("b", [c_out], 0.1)],
        kernel_shape=[k, k],
        strides=[stride] * 2,
        pads=[pad] * 4,
        group=groups,
        dilations=[dilation] * 2,
    )
    return b.model(_inputs(_image(c_in, side)), [y], OPSET, "conv")


def pool(
    kind: str,
    channels: int,
    side: int,
    k: int,
    stride: int,
    pad: int = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
) -> onnx.ModelProto:
    """MaxPool, AveragePool or LpPool (p=2) over a square window."""
    b = GraphBuilder()
    attrs: dict[str, object] = {
        "kernel_shape": [k, k],
        "strides": [stride] * 2,
        "pads": [pad] * 4,
        "ceil_mode": int(ceil_mode),
    }
    if kind == "AveragePool":
        attrs["count_include_pad"] = int(count_include_pad)
    if kind == "LpPool":
        attrs["p"] = 2
    y = b.node(kind, ["x"], kind.lower(), **attrs)
    return b.model(_inputs(_image(channels, side)), [y], OPSET, kind.lower())


def unary(op: str, shape: Shape, **attrs: object) -> onnx.ModelProto:
    """One node of one input and no weights: GlobalAveragePool, Softmax, LRN..."""
    b = GraphBuilder()
    y = b.node(op, ["x"], op.lower(), **attrs)
    return b.model(_inputs({"x": shape}), [y], OPSET, op.lower())


def layer_norm(rows: int, hidden: int) -> onnx.ModelProto:
    b = GraphBuilder()
    gamma = b.weight("gamma", b.rng.uniform(0.8, 1.2, hidden).astype(np.float32))
    y = b.node("LayerNormalization", ["x", gamma, b.random("beta", [hidden], 0.05)], axis=-1)
    return b.model(_inputs({"x": [1, rows, hidden]}), [y], OPSET, "layer_norm")


def concat(channels: Sequence[int], side: int) -> onnx.ModelProto:
    """Concat along channels of 1 x c x side x side maps."""
    b = GraphBuilder()
    shapes = {f"x{i}": [1, c, side, side] for i, c in enumerate(channels)}
    y = b.node("Concat", list(shapes), axis=1)
    return b.model(_inputs(shapes), [y], OPSET, "concat")


def channel_shuffle(channels: int, side: int, groups: int) -> onnx.ModelProto:
    """ShuffleNet's Reshape (groups, C/groups) - Transpose - Reshape."""
    b = GraphBuilder()
    split = b.weight("split", np.array([1, groups, channels // groups, side, side], np.int64))
    merged = b.weight("merged", np.array([1, channels, side, side], np.int64))
    y = b.node("Transpose", [b.node("Reshape", ["x", split])], perm=[0, 2, 1, 3, 4])
    y = b.node("Reshape", [y, merged])
    return b.model(_inputs(_image(channels, side)), [y], OPSET, "channel_shuffle")


def gemm(m: int, k: int, n: int) -> onnx.ModelProto:
    """A fully connected layer as exporters write it: Gemm with W (n x k), transB=1, bias."""
    b = GraphBuilder()
    w = b.random("w", [n, k], k**-0.5)
    y = b.node("Gemm", ["x", w, b.random("b", [n], 0.1)], transB=1)
    return b.model(_inputs({"x": [m, k]}), [y], OPSET, "gemm")


def matmul_weight(shape: Shape, k: int, n: int) -> onnx.ModelProto:
    """MatMul of an input (..., k) by a k x n weight."""
    b = GraphBuilder()
    y = b.node("MatMul", ["x", b.random("w", [k, n], k**-0.5)])
    return b.model(_inputs({"x": [*shape, k]}), [y], OPSET, "matmul")


def matrix_vector(m: int, k: int) -> onnx.ModelProto:
    """MatMul of an m x k weight by a 1-D input of k."""
    b = GraphBuilder()
    y = b.node("MatMul", [b.random("w", [m, k], k**-0.5), "x"])
    return b.model(_inputs({"x": [k]}), [y], OPSET, "matrix_vector")


def batch_matmul(batch: int, m: int, k: int, n: int) -> onnx.ModelProto:
    """MatMul of two inputs, batch x m x k by batch x k x n (attention)."""
    b = GraphBuilder()
    y = b.node("MatMul", ["a", "b"])
    return b.model(
        _inputs({"a": [1, batch, m, k], "b": [1, batch, k, n]}), [y], OPSET, "batch_matmul"
    )


def resize(mode: str, channels: int, side: int, scale: float) -> onnx.ModelProto:
    b = GraphBuilder()
    scales = b.weight("scales", np.array([1, 1, scale, scale], np.float32))
    y = b.node("Resize", ["x", "", scales], mode=mode)
    return b.model(_inputs(_image(channels, side)), [y], OPSET, f"resize_{mode}")


def add_relu(channels: int, side: int) -> onnx.ModelProto:
    """A residual join: Relu(x + y)."""
    b = GraphBuilder()
    y = b.node("Relu", [b.node("Add", ["x", "y"])])
    shapes = {"x": [1, channels, side, side], "y": [1, channels, side, side]}
    return b.model(_inputs(shapes), [y], OPSET, "add_relu")


def gelu_erf(rows: int, cols: int) -> onnx.ModelProto:
    """x * 0.5 * (1 + erf(x / sqrt(2))), as PyTorch exports GELU."""
    b = GraphBuilder()
    root2 = b.weight("sqrt2", np.array(2**0.5, np.float32))
    erf = b.node("Erf", [b.node("Div", ["x", root2])])
    one = b.weight("one", np.array(1.0, np.float32))
    half = b.weight("half", np.array(0.5, np.float32))
    y = b.node("Mul", [b.node("Mul", ["x", b.node("Add", [erf, one])]), half])
    return b.model(_inputs({"x": [1, rows, cols]}), [y], OPSET, "gelu_erf")


def swish(channels: int, side: int) -> onnx.ModelProto:
    """x * sigmoid(x), EfficientNet's activation as exported."""
    b = GraphBuilder()
    y = b.node("Mul", ["x", b.node("Sigmoid", ["x"])])
    return b.model(_inputs(_image(channels, side)), [y], OPSET, "swish")


def scale_shift_relu6(channels: int, side: int) -> onnx.ModelProto:
    """Per-channel x * scale + shift, then Clip(0, 6): an unfolded BN + ReLU6."""
    b = GraphBuilder()
    scale = b.weight("scale", b.rng.uniform(0.5, 1.5, (channels, 1, 1)).astype(np.float32))
    shift = b.random("shift", [channels, 1, 1], 0.1)
    low = b.weight("low", np.array(0.0, np.float32))
    high = b.weight("high", np.array(6.0, np.float32))
    y = b.node("Clip", [b.node("Add", [b.node("Mul", ["x", scale]), shift]), low, high])
    return b.model(_inputs(_image(channels, side)), [y], OPSET, "scale_shift_relu6")


# --- the cases -------------------------------------------------------------------


@dataclass(frozen=True)
class OpCase:
    """One row of the table: an op at one shape, and where that shape comes from."""

    group: str
    op: str
    shape: str
    source: str
    build: Callable[[], onnx.ModelProto]

    @property
    def label(self) -> str:
        return f"{self.group} {self.op} {self.shape} {self.source}"


def conv_case(
    source: str,
    c_in: int,
    c_out: int,
    side: int,
    k: int,
    stride: int = 1,
    pad: int = 0,
    groups: int = 1,
    dilation: int = 1,
) -> OpCase:
    """A conv case, its label spelled from its parameters (DWConv when depthwise)."""
    depthwise = groups > 1 and groups == c_in == c_out
    op = f"{'DWConv' if depthwise else 'Conv'} {k}x{k}"
    op += f" s{stride}" * (stride > 1) + f" g{groups}" * (1 < groups and not depthwise)
    op += f" d{dilation}" * (dilation > 1) + f" p{pad}" * (pad > 0)
    shape = f"{c_in}x{side}x{side}" if depthwise else f"{c_in}->{c_out} {side}x{side}"
    build = partial(conv, c_in, c_out, side, k, stride, pad, groups, dilation)
    return OpCase("conv", op, shape, source, build)


def pool_case(
    source: str,
    kind: str,
    channels: int,
    side: int,
    k: int,
    stride: int,
    pad: int = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
) -> OpCase:
    """A MaxPool, AveragePool or LpPool case, its label spelled from its parameters."""
    name = {"MaxPool": "MaxPool", "AveragePool": "AvgPool", "LpPool": "LpPool p2"}[kind]
    op = f"{name} {k}x{k} s{stride}" + f" p{pad}" * (pad > 0)
    op += " ceil" * ceil_mode + " incl" * count_include_pad
    build = partial(pool, kind, channels, side, k, stride, pad, ceil_mode, count_include_pad)
    return OpCase("pool", op, f"{channels}x{side}x{side}", source, build)


def _cases() -> list[OpCase]:
    c = OpCase
    lrn = {"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 2.0}
    return [
        # conv: groups 1, 2, 3 and depthwise; strides 1, 2, 4; kernels 1-11; dilation
        conv_case("AlexNet conv1", 3, 96, 224, 11, stride=4, pad=2),
        conv_case("AlexNet conv2", 96, 256, 27, 5, pad=2, groups=2),
        conv_case("AlexNet conv3", 256, 384, 13, 3, pad=1),
        conv_case("AlexNet conv4", 384, 384, 13, 3, pad=1, groups=2),
        conv_case("SqueezeNet 1.0 conv10", 512, 1000, 13, 1),
        conv_case("SqueezeNet fire2 expand", 16, 64, 55, 1),
        conv_case("SqueezeNet fire2 expand3x3", 16, 64, 55, 3, pad=1),
        conv_case("SqueezeNet 1.1 conv1", 3, 64, 224, 3, stride=2),
        conv_case("ResNet stem", 3, 64, 224, 7, stride=2, pad=3),
        conv_case("VGG conv1_2", 64, 64, 224, 3, pad=1),
        conv_case("ResNet-18 layer1", 64, 64, 56, 3, pad=1),
        conv_case("ResNet-50 layer2.0", 128, 128, 56, 3, stride=2, pad=1),
        conv_case("ResNet-50 reduce", 256, 64, 56, 1),
        conv_case("ResNet-50 projection", 512, 1024, 28, 1, stride=2),
        conv_case("Inception-v3 Mixed_5b", 48, 64, 35, 5, pad=2),
        conv_case("DeepLab atrous", 256, 256, 28, 3, pad=2, dilation=2),
        conv_case("ShuffleNet v1 g3", 240, 240, 28, 1, groups=3),
        conv_case("ShuffleNet v1 stage3", 480, 120, 14, 1, groups=3),
        conv_case("ShuffleNet v1", 240, 240, 28, 3, stride=2, pad=1, groups=240),
        conv_case("MobileNet-v2 block2", 144, 144, 56, 3, pad=1, groups=144),
        conv_case("MobileNet-v2 block1", 96, 96, 112, 3, stride=2, pad=1, groups=96),
        conv_case("EfficientNet-B0", 240, 240, 28, 5, pad=2, groups=240),
        conv_case("MobileNet-v2 stem", 3, 32, 224, 3, stride=2, pad=1),
        # pool: max, average, global, Lp; pads, count_include_pad, ceil_mode
        pool_case("AlexNet pool1", "MaxPool", 96, 55, 3, 2),
        pool_case("ResNet stem", "MaxPool", 64, 112, 3, 2, pad=1),
        pool_case("SqueezeNet 1.1 pool1", "MaxPool", 64, 111, 3, 2, ceil_mode=True),
        pool_case("VGG pool1", "MaxPool", 64, 224, 2, 2),
        pool_case("GoogLeNet 3a pool", "MaxPool", 192, 28, 3, 1, pad=1),
        pool_case("ShuffleNet shortcut", "AveragePool", 240, 28, 3, 2, pad=1),
        pool_case("Inception-v3 pool", "AveragePool", 192, 35, 3, 1, pad=1, count_include_pad=True),
        pool_case("DenseNet transition1", "AveragePool", 128, 56, 2, 2),
        pool_case("Caffe-style ceil", "AveragePool", 256, 28, 3, 2, ceil_mode=True),
        pool_case("Lp pooling", "LpPool", 64, 56, 3, 2, pad=1),
        pool_case("Lp pooling", "LpPool", 128, 28, 2, 2),
        c(
            "pool",
            "GlobalAvgPool",
            "2048x7x7",
            "ResNet-50",
            partial(unary, "GlobalAveragePool", [1, 2048, 7, 7]),
        ),
        c(
            "pool",
            "GlobalAvgPool",
            "1000x13x13",
            "SqueezeNet 1.0",
            partial(unary, "GlobalAveragePool", [1, 1000, 13, 13]),
        ),
        c(
            "pool",
            "GlobalMaxPool",
            "512x14x14",
            "VGG conv5",
            partial(unary, "GlobalMaxPool", [1, 512, 14, 14]),
        ),
        # normalisations
        c(
            "norm",
            "LRN 5",
            "96x55x55",
            "AlexNet norm1",
            partial(unary, "LRN", [1, 96, 55, 55], **lrn),
        ),
        c(
            "norm",
            "LRN 5",
            "256x27x27",
            "AlexNet norm2",
            partial(unary, "LRN", [1, 256, 27, 27], **lrn),
        ),
        c("norm", "Softmax", "1x1000", "classifier", partial(unary, "Softmax", [1, 1000], axis=-1)),
        c(
            "norm",
            "Softmax",
            "12x128x128",
            "BERT attention",
            partial(unary, "Softmax", [1, 12, 128, 128], axis=-1),
        ),
        c("norm", "LayerNorm", "128x768", "BERT-base", partial(layer_norm, 128, 768)),
        # data movement
        c("tensor", "Concat 3", "3x 256x28x28", "Inception style", partial(concat, [256] * 3, 28)),
        c("tensor", "Concat 2", "2x 64x55x55", "SqueezeNet fire2", partial(concat, [64, 64], 55)),
        c(
            "tensor",
            "Concat 4",
            "(64+128+32+32)x28x28",
            "GoogLeNet 3a",
            partial(concat, [64, 128, 32, 32], 28),
        ),
        c(
            "tensor",
            "ChannelShuffle g3",
            "240x28x28",
            "ShuffleNet v1",
            partial(channel_shuffle, 240, 28, 3),
        ),
        c(
            "tensor",
            "ChannelShuffle g2",
            "116x28x28",
            "ShuffleNet v2",
            partial(channel_shuffle, 116, 28, 2),
        ),
        # matrix products
        c("matmul", "Gemm", "1x9216 * 9216x4096", "AlexNet fc6", partial(gemm, 1, 9216, 4096)),
        c("matmul", "Gemm", "1x4096 * 4096x1000", "VGG fc8", partial(gemm, 1, 4096, 1000)),
        c("matmul", "Gemm", "1x2048 * 2048x1000", "ResNet-50 fc", partial(gemm, 1, 2048, 1000)),
        c(
            "matmul",
            "MatMul",
            "128x768 * 768x3072",
            "BERT FFN in",
            partial(matmul_weight, [1, 128], 768, 3072),
        ),
        c(
            "matmul",
            "MatMul",
            "128x768 * 768x768",
            "BERT projection",
            partial(matmul_weight, [1, 128], 768, 768),
        ),
        c(
            "matmul",
            "MatMul (vector)",
            "1x768 * 768x3072",
            "one-token decoding",
            partial(matmul_weight, [1], 768, 3072),
        ),
        c(
            "matmul",
            "MatMul (vector)",
            "4096x1024 * 1024",
            "matrix x 1-D vector",
            partial(matrix_vector, 4096, 1024),
        ),
        c(
            "matmul",
            "BatchMatMul",
            "12x 128x64 * 64x128",
            "BERT scores",
            partial(batch_matmul, 12, 128, 64, 128),
        ),
        c(
            "matmul",
            "BatchMatMul",
            "12x 128x128 * 128x64",
            "BERT context",
            partial(batch_matmul, 12, 128, 128, 64),
        ),
        # resize
        c(
            "resize",
            "Resize nearest x2",
            "256x14x14",
            "FPN / YOLOv3 upsample",
            partial(resize, "nearest", 256, 14, 2.0),
        ),
        c(
            "resize",
            "Resize linear x2",
            "64x56x56",
            "segmentation decoder",
            partial(resize, "linear", 64, 56, 2.0),
        ),
        # elementwise chains
        c("elementwise", "Add+Relu", "256x56x56", "ResNet-50 residual", partial(add_relu, 256, 56)),
        c("elementwise", "GELU (erf)", "128x3072", "BERT FFN", partial(gelu_erf, 128, 3072)),
        c(
            "elementwise",
            "x*Sigmoid(x)",
            "32x112x112",
            "EfficientNet swish",
            partial(swish, 32, 112),
        ),
        c(
            "elementwise",
            "Mul+Add+Clip",
            "144x56x56",
            "unfolded BN + ReLU6",
            partial(scale_shift_relu6, 144, 56),
        ),
    ]


CASES = _cases()


# --- measuring -------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """Which ops and how to time them."""

    ops: str
    threads: int
    repeat: int
    quick: bool


@dataclass
class OpRow:
    """One line of the table."""

    group: str
    op: str
    shape: str
    source: str
    compile_s: float | None = None
    xtc_ms: float | None = None
    ort_ms: float | None = None
    ratio: float | None = None
    runs_per_block: int | None = None
    match: str = "ERROR"
    max_abs_diff: float | None = None
    tolerance: float | None = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.match != "ok"


def runs_per_block(calls: Sequence[Callable[[], object]], quick: bool) -> int:
    """How many runs make a block of about BLOCK_MS on the slower side (each
    side's best of three calls)."""
    if quick:
        return QUICK_RUNS_PER_BLOCK
    slowest_ms = max(max(min(time_calls(call, 3)), 1e-4) for call in calls)
    return max(QUICK_RUNS_PER_BLOCK, min(MAX_RUNS_PER_BLOCK, math.ceil(BLOCK_MS / slowest_ms)))


def best_block_medians(
    xtc_runs: Callable[[], list[float]], ort_runs: Callable[[], list[float]], repeat: int
) -> tuple[float, float]:
    """Each side's lowest block median over `repeat` alternating pairs of
    blocks (bench/models.py's interleaved_medians, one pair at a time): a
    block that a busy machine stalled does not set the figure."""
    pairs = [interleaved_medians(xtc_runs, ort_runs, 1) for _ in range(repeat)]
    return min(xtc for xtc, _ in pairs), min(ort for _, ort in pairs)


def bench_op(case: OpCase, config: Config) -> OpRow:
    """Build, compile, check and time one op against onnxruntime."""
    row = OpRow(case.group, case.op, case.shape, case.source)
    model = case.build()
    inputs = random_inputs(model)
    compiled, row.compile_s = compile_timed(model)
    session = ort_session(model, config.threads)
    got = compiled.run(inputs)
    expected = [np.asarray(o) for o in session.run(None, inputs)]
    ok, row.max_abs_diff, row.tolerance = compare_outputs(got, expected)
    row.match = "ok" if ok else "MISMATCH"

    def ort_call() -> object:
        return session.run(None, inputs)

    number = runs_per_block([lambda: compiled.run(inputs), ort_call], config.quick)
    row.runs_per_block = number
    row.xtc_ms, row.ort_ms = best_block_medians(
        xtc_block(compiled, inputs, number),
        lambda: time_calls(ort_call, number, warmup=1),
        1 if config.quick else config.repeat,
    )
    row.ratio = row.xtc_ms / row.ort_ms
    return row


def guarded_bench_op(case: OpCase, config: Config) -> OpRow:
    """The op's row, or an ERROR row naming what went wrong, so one failing
    op does not stop the others."""
    try:
        return bench_op(case, config)
    except Exception as error:  # a benchmark reports failures, it does not crash on them
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return OpRow(
            case.group, case.op, case.shape, case.source, error=f"{type(error).__name__}: {message}"
        )


# --- the table -------------------------------------------------------------------

HEADER = (
    f"{'group':<11} {'op':<22} {'shape':<22} {'compile_s':>9} {'xtc_ms':>9} {'ort_ms':>9} "
    f"{'xtc/ort':>7}  match  source"
)


def _ms(value: float) -> str:
    """Milliseconds to 3 significant figures, at least 3 decimals."""
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def format_row(row: OpRow) -> str:
    """The table line; a failed op shows its error in place of the numbers."""
    start = f"{row.group:<11} {row.op:<22} {row.shape:<22}"
    if row.error is not None:
        return f"{start} ERROR  {row.error}"
    assert row.compile_s is not None and row.xtc_ms is not None and row.ort_ms is not None
    line = (
        f"{start} {row.compile_s:>9.2f} {_ms(row.xtc_ms):>9} {_ms(row.ort_ms):>9} "
        f"{row.ratio:>7.2f}  {row.match:<5}  {row.source}"
    )
    if row.match == "MISMATCH":
        line += f"  (max abs diff {row.max_abs_diff:.3g} > {row.tolerance:.3g})"
    return line


def geomeans(rows: Sequence[OpRow]) -> dict[str, float]:
    """The geometric mean of xtc/ORT per group, in table order, and over all ("all")."""
    by_group: dict[str, list[float]] = {}
    for row in rows:
        if row.ratio is not None:
            by_group.setdefault(row.group, []).append(row.ratio)
    means = {group: geometric_mean(ratios) for group, ratios in by_group.items()}
    every = [ratio for ratios in by_group.values() for ratio in ratios]
    if every:
        means["all"] = geometric_mean(every)
    return means


def summary_lines(rows: Sequence[OpRow]) -> list[str]:
    means = geomeans(rows)
    timed = sum(row.ratio is not None for row in rows)
    per_group = ", ".join(f"{g} {m:.2f}" for g, m in means.items() if g != "all")
    overall = f"{means['all']:.2f}" if "all" in means else "n/a"
    lines = [f"geomean ratio (xtc/ort): {overall} over {timed} op(s)"]
    if per_group:
        lines.append(f"per group: {per_group}")
    return lines


# --- the command line ------------------------------------------------------------


def ops_pattern(text: str) -> str:
    """The --ops value: a regular expression, checked here so a typo is a usage error."""
    try:
        re.compile(text)
    except re.error as error:
        raise argparse.ArgumentTypeError(f"not a regular expression: {text!r} ({error})") from None
    return text


def selected(pattern: str) -> list[OpCase]:
    """The cases whose label (group, op, shape, source) the pattern matches, case-insensitively."""
    regex = re.compile(pattern, re.IGNORECASE)
    return [case for case in CASES if regex.search(case.label)]


def parse_args(argv: Sequence[str] | None) -> tuple[Config, str | None, bool]:
    """The configuration, the --json path and --list; argparse exits 2 on bad arguments."""
    parser = argparse.ArgumentParser(
        prog="bench/ops.py", description="xtc against onnxruntime on single operators."
    )
    parser.add_argument(
        "--ops",
        type=ops_pattern,
        default="",
        metavar="REGEX",
        help="only the ops whose group, op, shape or source matches (case-insensitive)",
    )
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=2,
        help="threads for onnxruntime and xtc (XTC_NUM_THREADS) (default 2)",
    )
    parser.add_argument(
        "--repeat", type=positive_int, default=5, help="alternating blocks per side (default 5)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"one block of {QUICK_RUNS_PER_BLOCK} runs per side: a smoke test",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument("--list", action="store_true", help="list the ops (after --ops) and exit")
    args = parser.parse_args(argv)
    if not selected(args.ops):
        parser.error(f"--ops {args.ops!r} matches no op; see --list")
    config = Config(ops=args.ops, threads=args.threads, repeat=args.repeat, quick=args.quick)
    return config, args.json, args.list


def write_json(path: str, config: Config, rows: Sequence[OpRow]) -> None:
    """Writes the configuration, versions, rows and geometric means to `path`."""
    report: Mapping[str, object] = {
        "config": asdict(config),
        "xtc_version": xtc.__version__,
        "onnxruntime_version": ort.__version__,
        "rows": [asdict(row) for row in rows],
        "geomean_ratio_vs_onnxruntime": geomeans(rows),
    }
    with open(path, "w") as file:
        json.dump(report, file, indent=2)
        file.write("\n")


def emit(line: str, out: TextIO) -> None:
    print(line, file=out, flush=True)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Runs the benchmark; 0 when every op matched, 1 otherwise."""
    stream = sys.stdout if out is None else out
    config, json_path, list_only = parse_args(argv)
    cases = selected(config.ops)
    if list_only:
        for case in cases:
            emit(f"{case.group:<11} {case.op:<22} {case.shape:<22} {case.source}", stream)
        return 0
    os.environ["XTC_NUM_THREADS"] = str(config.threads)
    repeat = 1 if config.quick else config.repeat
    emit(f"threads={config.threads} repeat={repeat} ops={len(cases)}", stream)
    emit(HEADER, stream)
    rows: list[OpRow] = []
    start = time.perf_counter()
    for case in cases:
        row = guarded_bench_op(case, config)
        rows.append(row)
        emit(format_row(row), stream)
    for line in summary_lines(rows):
        emit(line, stream)
    emit(f"took {time.perf_counter() - start:.0f} s", stream)
    if json_path:
        write_json(json_path, config, rows)
    failed = [f"{row.op} {row.shape}" for row in rows if row.failed]
    if failed:
        emit(f"FAILED: {'; '.join(failed)}", stream)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
