"""graph-block-activations: convs (depthwise ones too), pools and their epilogues on NCHW<b>c
activations keep every output, on the interpreter (the FileCheck cases)
and natively (random conv chains through the whole compile, and a ResNet
against onnxruntime); only regions mostly of 1x1 convs and worth their
transforms are blocked; the
compile pipeline runs the pass after the weights are blocked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

import xtc
from xtc import interp
from xtc.driver.compiler import GRAPH_PASSES, compile_graph
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module
from xtc.frontend.onnx import import_model
from xtc.testing.graph_op import assert_pipeline_preserves_outputs, filecheck_cases
from xtc.tools.model_builders import densenet, mobilenet_v2, resnet, squeezenet

ROOT = Path(__file__).resolve().parents[2]
FILECHECK = (ROOT / "filecheck" / "passes" / "graph-block-activations.mlir").read_text()
PASSES = "graph-block-activations{block=4 always=true},dce"


def test_filecheck_cases_keep_their_outputs() -> None:
    cases = filecheck_cases(FILECHECK)
    assert len(cases) == 13
    for text in cases:
        assert_pipeline_preserves_outputs(text, PASSES)


def tensor_type(*shape: int) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}f32>"


def weight(rng: np.random.Generator, o: int, c: int, k: int, block: int) -> str:
    """A constant conv weight in layout OIHW<block>o, as graph IR."""
    values = rng.standard_normal((o // block, c, k, k, block)).round(2)
    literal = np.array2string(values, separator=", ", threshold=10**6).replace("\n", "")
    return f"graph.constant dense<{literal}> : {tensor_type(o // block, c, k, k, block)}"


def chain_text(seed: int, c: int, o: int, k: int, stride: int, pad: int, pool: bool) -> str:
    """@main: conv (k x k, stride, pad; c = 3 as a stem) + per-channel bias + relu, an
    optional 3x3 max pool, a 1x1 conv back to c channels, and a residual add
    of the first conv's output when the channels allow; weights in blocks
    of 4 output channels (what graph-alter-layout makes)."""
    rng = np.random.default_rng(seed)
    size = 7
    out = (size + 2 * pad - k) // stride + 1
    x, y = tensor_type(1, c, size, size), tensor_type(1, o, out, out)
    bias = ", ".join(f"{v:.2f}" for v in rng.standard_normal(o))
    lines = [
        f"%w1 = {weight(rng, o, c, k, 4)}",
        f"%w2 = {weight(rng, o, o, 1, 4)}",
        f"%b = graph.constant dense<[{bias}]> : {tensor_type(o)}",
        f"%c1 = graph.conv2d %x, %w1 {{strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>, kernel_layout = \"OIHW4o\"}} : "
        f"({x}, {tensor_type(o // 4, c, k, k, 4)}) -> {y}",
        f"%a1 = graph.bias_add %c1, %b {{axis = 1 : i64}} : ({y}, {tensor_type(o)}) -> {y}",
        f"%r1 = graph.relu %a1 : ({y}) -> {y}",
    ]
    last = "%r1"
    if pool:
        lines.append(
            f"%p = graph.max_pool2d %r1 {{kernel = array<i64: 3, 3>, "
            f"padding = array<i64: 1, 1, 1, 1>}} : ({y}) -> {y}"
        )
        last = "%p"
    lines += [
        f"%c2 = graph.conv2d {last}, %w2 {{kernel_layout = \"OIHW4o\"}} : "
        f"({y}, {tensor_type(o // 4, o, 1, 1, 4)}) -> {y}",
        f"%s = graph.add %c2, %r1 : ({y}, {y}) -> {y}",
        f"%r2 = graph.relu %s : ({y}) -> {y}",
        f"func.return %r2 : {y}",
    ]
    return main_function(x, y, lines)


def main_function(x: str, result: str, lines: list[str]) -> str:
    """@main(%x: x) -> result, its body `lines`."""
    body = "\n  ".join(lines)
    return f"func.func @main(%x: {x}) -> {result} {{\n  {body}\n}}\n"


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 1000),
    c=st.sampled_from([3, 4, 8]),
    o=st.sampled_from([4, 8]),
    k=st.sampled_from([1, 3]),
    stride=st.integers(1, 2),
    pad=st.integers(0, 1),
    pool=st.booleans(),
)
def test_blocked_chains_keep_their_outputs_natively(
    seed: int, c: int, o: int, k: int, stride: int, pad: int, pool: bool
) -> None:
    text = chain_text(seed, c, o, k, stride, pad, pool)
    before = parse_module(text)
    after = apply_pipeline(parse_module(text), PASSES)
    printed = module_to_text(after)
    assert printed.count('out_layout = "NCHW4c"') == 2
    assert printed.count('data_layout = "NCHW4c"') == (3 if pool else 2) - (c == 3)
    # in (none for a stem conv of 3 channels, which reads NCHW) and out
    assert printed.count("graph.layout_transform") == (1 if c == 3 else 2)
    assert_keeps_outputs(before, after, seed, c)


def assert_keeps_outputs(before: ModuleOp, after: ModuleOp, seed: int, channels: int) -> None:
    """`after` gives `before`'s output on a random 7x7 image of `channels`,
    on the interpreter and natively."""
    x = np.random.default_rng(seed).standard_normal((1, channels, 7, 7)).astype(np.float32)
    (expected,) = interp.run(before, [x])
    (interpreted,) = interp.run(after, [x])
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(interpreted, expected, rtol=1e-5, atol=1e-5 * scale)
    (native,) = compile_graph(after).run([x])
    np.testing.assert_allclose(native, expected, rtol=1e-4, atol=1e-4 * scale)


def depthwise_text(seed: int, c: int, k: int, stride: int, pad: int, dilation: int) -> str:
    """@main: a 1x1 conv to c channels, a depthwise conv (k x k, stride, pad,
    dilation; its weight a constant in OIHW) + relu, and a 1x1 conv back to
    4 channels; the 1x1 weights in blocks of 4 output channels."""
    rng = np.random.default_rng(seed)
    size = 7
    out = (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    x, e = tensor_type(1, 4, size, size), tensor_type(1, c, size, size)
    y, z = tensor_type(1, c, out, out), tensor_type(1, 4, out, out)
    taps = rng.standard_normal((c, 1, k, k)).round(2)
    literal = np.array2string(taps, separator=", ", threshold=10**6).replace("\n", "")
    window = (
        f"strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, {pad}, "
        f"{pad}>, dilation = array<i64: {dilation}, {dilation}>, groups = {c} : i64"
    )
    lines = [
        f"%w1 = {weight(rng, c, 4, 1, 4)}",
        f"%w2 = {weight(rng, 4, c, 1, 4)}",
        f"%wd = graph.constant dense<{literal}> : {tensor_type(c, 1, k, k)}",
        f'%e = graph.conv2d %x, %w1 {{kernel_layout = "OIHW4o"}} : '
        f"({x}, {tensor_type(c // 4, 4, 1, 1, 4)}) -> {e}",
        f"%d = graph.conv2d %e, %wd {{{window}}} : ({e}, {tensor_type(c, 1, k, k)}) -> {y}",
        f"%r = graph.relu %d : ({y}) -> {y}",
        f'%p = graph.conv2d %r, %w2 {{kernel_layout = "OIHW4o"}} : '
        f"({y}, {tensor_type(1, c, 1, 1, 4)}) -> {z}",
        f"func.return %p : {z}",
    ]
    return main_function(x, z, lines)


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 1000),
    c=st.sampled_from([4, 8, 12]),
    k=st.sampled_from([3, 5]),
    stride=st.integers(1, 2),
    pad=st.integers(0, 2),
    dilation=st.integers(1, 2),
)
def test_blocked_depthwise_convs_keep_their_outputs_natively(
    seed: int, c: int, k: int, stride: int, pad: int, dilation: int
) -> None:
    assume(7 + 2 * pad > dilation * (k - 1))  # at least one output pixel
    text = depthwise_text(seed, c, k, stride, pad, dilation)
    before = parse_module(text)
    after = apply_pipeline(parse_module(text), PASSES)
    printed = module_to_text(after)
    assert printed.count(f'groups = {c} : i64, kernel_layout = "OIHW4o", data_layout') == 1
    assert printed.count("graph.layout_transform") == 2
    assert_keeps_outputs(before, after, seed, 4)


def narrowing_text(seed: int, c: int, q: int, k: int, pad: int, pool: bool) -> str:
    """@main: a 1x1 conv to c channels (its weight in blocks of 4), an
    optional 2x2 max pool, and a k x k conv (pad) to q channels, its weight
    in ONNX's OIHW: no whole block of 4 when q is not a multiple of 4."""
    rng = np.random.default_rng(seed)
    size = 7
    side = size // 2 if pool else size
    out = side + 2 * pad - k + 1
    x, e = tensor_type(1, 4, size, size), tensor_type(1, c, size, size)
    p, z = tensor_type(1, c, side, side), tensor_type(1, q, out, out)
    taps = rng.standard_normal((q, c, k, k)).round(2)
    literal = np.array2string(taps, separator=", ", threshold=10**6).replace("\n", "")
    lines = [
        f"%w1 = {weight(rng, c, 4, 1, 4)}",
        f"%w2 = graph.constant dense<{literal}> : {tensor_type(q, c, k, k)}",
        f'%e = graph.conv2d %x, %w1 {{kernel_layout = "OIHW4o"}} : '
        f"({x}, {tensor_type(c // 4, 4, 1, 1, 4)}) -> {e}",
    ]
    last = "%e"
    if pool:
        lines.append(
            f"%p = graph.max_pool2d %e {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}} "
            f": ({e}) -> {p}"
        )
        last = "%p"
    lines += [
        f"%s = graph.conv2d {last}, %w2 {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>}} : "
        f"({p}, {tensor_type(q, c, k, k)}) -> {z}",
        f"func.return %s : {z}",
    ]
    return main_function(x, z, lines)


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 1000),
    c=st.sampled_from([4, 8, 12]),
    q=st.sampled_from([1, 2, 3, 5, 6]),
    k=st.sampled_from([1, 3]),
    pad=st.integers(0, 1),
    pool=st.booleans(),
)
def test_a_conv_of_fewer_channels_reads_the_blocked_region_natively(
    seed: int, c: int, q: int, k: int, pad: int, pool: bool
) -> None:
    """The last conv, the only reader of the blocked activations, reads them
    blocked and writes NCHW: one transform (the input's), the same outputs
    on the interpreter and natively."""
    text = narrowing_text(seed, c, q, k, pad, pool)
    before = parse_module(text)
    after = apply_pipeline(parse_module(text), PASSES)
    printed = module_to_text(after)
    convs = [line for line in printed.splitlines() if "graph.conv2d" in line]
    assert sum('data_layout = "NCHW4c"}' in line for line in convs) == 1
    assert printed.count("graph.layout_transform") == 1
    assert_keeps_outputs(before, after, seed, 4)


def test_a_resnet_runs_blocked_and_matches_onnxruntime() -> None:
    """Every conv of a small ResNet-50 is blocked (NCHW32c, the default
    block; the 3-channel stem only its output), and its pools, with one
    transform, out of the global pool, and
    the compiled model matches onnxruntime; ResNet-18 (mostly 3x3 convs)
    stays NCHW."""
    plain = resnet(18, image=32, classes=10)
    graph = apply_pipeline(import_model(plain), "graph-alter-layout,graph-block-activations")
    assert "data_layout" not in module_to_text(graph)
    model = resnet(50, image=32, classes=10)
    text = blocked_graph(model)
    blocked = [line for line in text.splitlines() if '_layout = "NCHW32c"' in line]
    assert sum("graph.conv2d" in line for line in blocked) == 53
    assert sum("graph.max_pool2d" in line or "global_avg_pool2d" in line for line in blocked) == 2
    assert text.count("graph.layout_transform") == 1
    assert_matches_onnxruntime(model)


def test_a_mobilenet_runs_its_depthwise_convs_blocked_and_matches_onnxruntime() -> None:
    """MobileNet-v2's depthwise convs on blocks of 32 channels run on
    NCHW32c activations (their weights blocked alike), so the 1x1 convs
    between them are blocked too: the stem and its depthwise conv, read by
    the 16-channel projection, and from the first block of 96 channels on,
    one region, but for the 144-channel blocks (not multiples of 32), which
    stay NCHW; the projections to 16 and 24 channels read blocked
    activations and write NCHW; the compiled model matches onnxruntime."""
    model = mobilenet_v2(image=32, classes=10)
    text = blocked_graph(model)
    convs = [line for line in text.splitlines() if "graph.conv2d" in line]
    depthwise = [line for line in convs if "groups = 1 :" not in line]
    assert (len(convs), len(depthwise)) == (52, 17)
    assert sum('out_layout = "NCHW32c"' in line for line in convs) == 45
    assert sum('out_layout = "NCHW32c"' in line for line in depthwise) == 15
    reading_blocked = [line for line in convs if 'data_layout = "NCHW32c"}' in line]
    assert len(reading_blocked) == 2
    assert text.count("graph.layout_transform") == 1
    assert_matches_onnxruntime(model)


def test_densenet_and_squeezenet_concats_run_blocked_and_match_onnxruntime() -> None:
    """A concat along the channels of blocked tensors, each of whole blocks,
    is blocked too (along the blocks): a DenseNet of growth 32 is one
    blocked region, every concat of it blocked; so are SqueezeNet's fire
    modules (their 1x1 and 3x3 expands concatenated), whose squeeze convs
    of 16 and 48 channels and classifier (10 classes) read the blocked
    concats and pools and write NCHW: no transform is left; both compiled models
    match onnxruntime."""
    dense = densenet(blocks=(2, 2), growth=32, stem=64, image=32, classes=10)
    text = blocked_graph(dense)
    concats = [line for line in text.splitlines() if "graph.concat" in line]
    assert len(concats) == 4 and all("{axis = 1 : i64}" in line for line in concats)
    assert all("x32xf32>) ->" in line for line in concats)
    assert text.count("graph.layout_transform") == 1
    assert_matches_onnxruntime(dense)
    squeeze = squeezenet(image=32, classes=10)
    text = blocked_graph(squeeze)
    concats = [line for line in text.splitlines() if "graph.concat" in line]
    assert len(concats) == 8 and all("x32xf32>) ->" in line for line in concats)
    assert "graph.layout_transform" not in text
    assert_matches_onnxruntime(squeeze)


def blocked_graph(model: onnx.ModelProto) -> str:
    """The model's graph after the compile's graph passes up to this one."""
    passes = GRAPH_PASSES[: GRAPH_PASSES.index("graph-block-activations") + 1]
    return module_to_text(apply_pipeline(import_model(model), ",".join(passes) + ",dce"))


def assert_matches_onnxruntime(model: onnx.ModelProto) -> None:
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    name = model.graph.input[0].name
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {name: x})
    got = xtc.compile(model, cache=False).run({name: x})
    got = next(iter(got.values())) if isinstance(got, dict) else got[0]
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * scale)


def test_compile_pipeline_blocks_activations_after_the_weights() -> None:
    position = GRAPH_PASSES.index("graph-block-activations")
    assert GRAPH_PASSES.index("graph-alter-layout") < position
    assert position < GRAPH_PASSES.index("graph-fuse-ops")
